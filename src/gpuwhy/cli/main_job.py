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
    """Probe the GPU when there is one; otherwise classify the vecadd example on the RTX 5070 sheet.

    Returns the exit code.
    """
    from ..diagnose import example_workload, run_classify
    from ..device.probe import local_sheet
    from ..render.console import note

    try:
        sheet = local_sheet(())
        reason = None
    except NoDeviceError as exc:
        sheet, reason = None, str(exc)
    wl, dtype, desc = example_workload(FALLBACK_EXAMPLE)
    if sheet is None:
        note(f"no GPU here ({reason}); showing a spec-sheet classify of the example {FALLBACK_EXAMPLE!r} on the {FALLBACK_GPU} sheet")
        gpu = FALLBACK_GPU
    else:
        note(f"probed {sheet.name}; classifying the example {FALLBACK_EXAMPLE!r} on its sheet (run `gpuwhy bench --quick` to measure)")
        gpu = sheet
    result = run_classify(wl, gpu, dtype, example=FALLBACK_EXAMPLE)
    if json_out:
        from ..render.jsonout import emit

        emit("classify", result)
        return 0
    from ..render.console import out
    from ..render.tables import render_classification

    out().print(f"example {FALLBACK_EXAMPLE}: {desc}")
    render_classification(result)
    return 0
