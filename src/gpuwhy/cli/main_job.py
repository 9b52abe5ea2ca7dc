"""The main job of a bare `gpuwhy` (:func:`gpuwhy.api.main_job.main_job`) and its output."""

from __future__ import annotations


def run_main_job(json_out: bool = False) -> int:
    """Run the main job and print it: the probe and bench tables, or with no GPU the fallback
    classify (the ``main`` or ``classify`` document with ``--json``). Returns the exit code.

    Raises:
        MeasurementError: a GPU error or a wrong kernel result while measuring.
    """
    from ..api.main_job import main_job
    from ..render.output import Format, show

    job = main_job()
    if job.fallback is not None:
        from ..render.classify_view import render_classify

        show("classify", job.fallback, Format(json=json_out), render_classify)
        return 0
    from ..render.bench_view import render_main_job

    show("main", job, Format(json=json_out), render_main_job)
    return 0
