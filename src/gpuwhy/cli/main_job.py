"""The main job of a bare `gpuwhy`: probe and bench the GPU, or with no GPU a spec-sheet classify."""

from __future__ import annotations

from ..errors import NoDeviceError

#: What a bare `gpuwhy` classifies when there is no GPU: the course's vecadd on its card.
FALLBACK_EXAMPLE = "vecadd"
FALLBACK_GPU = "GeForce RTX 5070"


def run_main_job(json_out: bool = False) -> int:
    """The main job. With a GPU: probe it, then `bench --quick` (DRAM bandwidth and
    launch overhead, saved as its profile). With no GPU: classify the vecadd
    example on the RTX 5070 sheet, and say why.

    Returns the exit code.

    Raises:
        MeasurementError: a GPU error or a wrong kernel result while measuring.
    """
    from ..device.probe import probe_devices
    from ..render.console import note

    try:
        report = probe_devices()
        reason = None
    except NoDeviceError as exc:
        report, reason = None, str(exc)
    if report is None:
        return _fallback_classify(json_out, reason)
    from ..bench.runner import BenchOptions, run_bench

    note("probing the GPU, then `gpuwhy bench --quick` (DRAM bandwidth, launch overhead)")
    bench = run_bench(BenchOptions(mode="quick"))
    if json_out:
        from ..render.jsonout import emit

        emit("main", {"probe": report, "bench": bench})
        return 0
    from ..render.bench_view import render_bench
    from ..render.probe_view import render_probe

    render_probe(report)
    render_bench(bench)
    note("next: `gpuwhy bench --sweep` for the full sweep and compute ceilings; `gpuwhy classify --measured` to use them")
    return 0


def _fallback_classify(json_out: bool, reason: str) -> int:
    from ..api.classify import example_workload, run_classify
    from ..render.console import note

    wl, dtype, desc = example_workload(FALLBACK_EXAMPLE)
    note(f"no GPU here ({reason}); showing a spec-sheet classify of the example {FALLBACK_EXAMPLE!r} on the {FALLBACK_GPU} sheet")
    result = run_classify(wl, FALLBACK_GPU, dtype, example=FALLBACK_EXAMPLE)
    if json_out:
        from ..render.jsonout import emit

        emit("classify", result)
        return 0
    from ..render.console import out
    from ..render.tables import render_classification

    out().print(f"example {FALLBACK_EXAMPLE}: {desc}")
    render_classification(result)
    return 0
