"""The main job of a bare `gpuwhy`, and the probed GPU for commands given no --gpu."""

from __future__ import annotations

from typing import Iterable

from ..errors import NoDeviceError, UsageError

#: What a bare `gpuwhy` classifies when there is no GPU: the course's vecadd on its card.
FALLBACK_EXAMPLE = "vecadd"
FALLBACK_GPU = "GeForce RTX 5070"


def probed_gpu_name(spec_dirs: Iterable[str] = ()):
    """The spec sheet of the first visible GPU, for commands run without --gpu.

    Raises:
        UsageError: when there is no GPU (or no sheet matches it); the message says
            to pass --gpu.
    """
    from ..device.probe import local_sheet

    try:
        return local_sheet(spec_dirs)
    except NoDeviceError as exc:
        raise UsageError(f"no --gpu given and no GPU to probe ({exc}); pass --gpu NAME (see `gpuwhy specs list`)") from None


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
    from ..diagnose import example_workload, run_classify
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
