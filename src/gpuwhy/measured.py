"""Measured roofline ceilings from the newest bench profile of a GPU.

`gpuwhy bench` saves a device profile per GPU UUID (see :mod:`gpuwhy.profile`):
sustained DRAM bandwidth, event-timed launch overhead and, after
`bench --compute` or `--sweep`, the measured compute ceilings per precision.
`classify --measured` (and `compare --measured`, `llm --measured`) turn the
newest one into :class:`~gpuwhy.model.roofline.Ceilings`.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import UsageError
from .model.ceilings import sheet_precision
from .model.roofline import Ceilings


def find_profile(sheet_name: str | None = None, uuid: str | None = None, folder: Path | None = None,
                 need: str | None = None, nvml_match=None):
    """The newest profile of the GPU ``uuid``, else the newest whose ``sheet`` is ``sheet_name``
    (or whose GPU name ``nvml_match(name)`` accepts).

    ``need`` names a field the profile must have set (e.g. ``"dram_bandwidth_gbs"``).
    Returns a :class:`~gpuwhy.profile.DeviceProfile` or None.
    """
    from . import profile as prof

    if uuid:
        p = prof.latest_profile(uuid, folder, need)
        if p is not None:
            return p
    if not sheet_name and nvml_match is None:
        return None
    root = folder or prof.profiles_dir()
    best = None
    for path in root.glob("GPU-*/*.json") if root.is_dir() else ():
        try:
            p = prof.DeviceProfile.from_dict(json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if need and getattr(p, need, None) is None:
            continue
        hit = (sheet_name and p.sheet == sheet_name) or (nvml_match is not None and bool(p.name) and nvml_match(p.name))
        if hit and (best is None or p.date > best.date):
            best = p
    return best


def measured_ceilings(sheet, dtype: str = "fp32", tensor_cores: bool = True, uuid: str | None = None,
                      folder: Path | None = None) -> tuple[Ceilings, list[str]]:
    """Ceilings from the newest profile of ``sheet``'s GPU, with notes on what fell back to the sheet.

    Bandwidth (B/s) and launch overhead (s) come from the profile; the compute
    ceiling from the profile's measured peak for the precision when it has one,
    else the sheet's dense peak (and a note says so).

    Raises:
        UsageError: when no profile exists for this GPU (run `gpuwhy bench` on it
            first), or the profile has no DRAM bandwidth; and see
            :func:`~gpuwhy.model.ceilings.sheet_precision`.
    """
    p = find_profile(sheet.name, uuid, folder)
    if p is None:
        raise UsageError(f"no bench profile for the {sheet.name}; run `gpuwhy bench --sweep` on that GPU first, or drop --measured")
    if p.dram_bandwidth_gbs is None:
        raise UsageError(f"the newest bench profile of the {sheet.name} ({p.date}) has no DRAM bandwidth; run `gpuwhy bench --quick`")
    prec = sheet_precision(sheet, dtype, tensor_cores)
    notes: list[str] = []
    peaks = getattr(p, "peak_tflops_measured", None) or {}
    if prec in peaks and peaks[prec]:
        peak = peaks[prec] * 1e12
        src = f"measured profile {p.date}"
    else:
        peak = sheet.peak_flops(prec)
        src = f"measured bandwidth ({p.date}), sheet {prec} peak"
        notes.append(f"the profile has no measured {prec} peak (run `gpuwhy bench --compute`); the sheet's dense peak is used")
    lo = p.launch_overhead_s
    if lo is None:
        from .model.roofline import DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE

        lo, lo_src = DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE
    else:
        lo_src = f"measured, event-timed ({p.date})"
    return Ceilings(peak_flops=peak, bandwidth=p.dram_bandwidth_gbs * 1e9, launch_overhead_s=lo, precision=prec,
                    gpu=sheet.name, source=src, launch_overhead_source=lo_src), notes
