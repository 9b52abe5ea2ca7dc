"""The main job of a bare `gpuwhy`: probe and bench the GPU, or with no GPU a spec-sheet classify."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: What a bare `gpuwhy` classifies when there is no GPU: the course's vecadd on its card.
FALLBACK_EXAMPLE = "vecadd"
FALLBACK_GPU = "GeForce RTX 5070"


@dataclass(frozen=True)
class MainJob:
    """What the main job found: the ``probe`` report and the ``bench`` result (`bench --quick`,
    saved as the GPU's profile), or, with no GPU, the ``fallback`` classify of the example."""

    probe: Any = None
    bench: Any = None
    fallback: Any = None

    def to_dict(self) -> dict:
        """The ``main`` document's body: ``probe`` and ``bench`` (with no GPU the fallback is a ``classify`` document)."""
        return {"probe": self.probe, "bench": self.bench}


def main_job() -> MainJob:
    """With a GPU: probe it, then `bench --quick` (DRAM bandwidth and launch overhead, saved as its
    profile). With no GPU: classify the vecadd example on the RTX 5070 sheet, and say why
    (:func:`gpuwhy.notices.note`).

    Raises:
        MeasurementError: a GPU error or a wrong kernel result while measuring.
    """
    from ..device.probe import probe_devices
    from ..errors import NoDeviceError
    from ..notices import note

    try:
        report = probe_devices()
    except NoDeviceError as exc:
        return MainJob(fallback=_fallback_classify(str(exc)))
    from ..bench.runner import BenchOptions, run_bench

    note("probing the GPU, then `gpuwhy bench --quick` (DRAM bandwidth, launch overhead)")
    return MainJob(probe=report, bench=run_bench(BenchOptions(mode="quick")))


def _fallback_classify(reason: str):
    from ..notices import note
    from .classify import run_classify
    from .examples import example_workload

    wl, dtype, desc = example_workload(FALLBACK_EXAMPLE)
    note(f"no GPU here ({reason}); showing a spec-sheet classify of the example {FALLBACK_EXAMPLE!r} on the {FALLBACK_GPU} sheet")
    from dataclasses import replace

    return replace(run_classify(wl, FALLBACK_GPU, dtype, example=FALLBACK_EXAMPLE), example_description=desc)
