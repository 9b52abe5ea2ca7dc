"""Pick the roofline ceilings for a workload from a spec sheet.

The precision rule: ``--dtype`` picks the compute ceiling. Tensor cores are
used for tf32 and narrower types unless ``tensor_cores=False``; fp64 uses the
CUDA-core FP64 rate unless ``fp64_tensor`` is asked for by name.
"""

from __future__ import annotations

from ...errors import UsageError
from ...specs import PRECISIONS, Sheet
from .classify import DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE, Ceilings

#: Names ``--dtype`` accepts.
DTYPES = ("fp64", "fp64_tensor", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")
_TENSOR_ONLY = ("fp8", "int8", "fp4", "fp64_tensor")


def precision_words(key: str) -> str:
    """A ``peak_tflops`` key as a user reads it: ``bf16_nontensor`` is "bf16 on CUDA cores (--no-tensor-cores)"."""
    if key.endswith("_nontensor"):
        return f"{key.removesuffix('_nontensor')} on CUDA cores (--no-tensor-cores)"
    return key


def missing_peak(sheet: Sheet, key: str, extra: str = "") -> UsageError:
    """The error for a sheet without the ``key`` peak: what it has, and for a CUDA-core peak the way out."""
    have = ", ".join(k for k in PRECISIONS if k in sheet.peak_tflops)
    fix = "; drop --no-tensor-cores (or add the figure to a sheet in --specs DIR)" if key.endswith("_nontensor") else ""
    return UsageError(f"the {sheet.name} sheet has no {precision_words(key)} peak{extra}; it has: {have}{fix}")


def sheet_precision(sheet: Sheet, dtype: str, tensor_cores: bool = True) -> str:
    """The ``peak_tflops`` key of ``sheet`` that bounds ``dtype`` work.

    Raises:
        UsageError: for an unknown dtype, a type that only runs on tensor cores
            with ``tensor_cores=False``, or a precision the sheet lacks (the
            message names the ones it has).
    """
    d = dtype.lower().strip()
    if d not in DTYPES:
        raise UsageError(f"unknown dtype {dtype!r}; use one of: {', '.join(DTYPES)}")
    if not tensor_cores:
        if d in _TENSOR_ONLY:
            raise UsageError(f"{d} runs only on tensor cores; drop --no-tensor-cores or pick fp32/fp16/bf16")
        d = {"tf32": "fp32", "fp16": "fp16_nontensor", "bf16": "bf16_nontensor"}.get(d, d)
    if d not in sheet.peak_tflops:
        raise missing_peak(sheet, d)
    return d


def ceilings_from_sheet(
    sheet: Sheet,
    dtype: str = "fp32",
    tensor_cores: bool = True,
    launch_overhead_s: float | None = None,
    launch_overhead_source: str | None = None,
) -> Ceilings:
    """Roofline ceilings from a sheet's DRAM bandwidth and dense peak for ``dtype``.

    ``launch_overhead_s`` (seconds) defaults to
    :data:`~gpuwhy.model.roofline.classify.DEFAULT_LAUNCH_OVERHEAD_S`.

    Raises:
        UsageError: see :func:`sheet_precision`.
    """
    prec = sheet_precision(sheet, dtype, tensor_cores)
    if launch_overhead_s is None:
        lo, lo_src = DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE
    else:
        lo, lo_src = launch_overhead_s, launch_overhead_source or "--launch-overhead"
    return Ceilings(
        peak_flops=sheet.peak_flops(prec),
        bandwidth=sheet.bandwidth_bytes_per_s,
        launch_overhead_s=lo,
        precision=prec,
        gpu=sheet.name,
        source=sheet.origin_words,
        launch_overhead_source=lo_src,
    )


def ceilings_from_profile(profile, sheet: Sheet, dtype: str = "fp32", tensor_cores: bool = True) -> tuple[Ceilings, list[str]]:
    """Ceilings measured by `gpuwhy bench` (a :class:`~gpuwhy.profiles.DeviceProfile`), with
    notes on what fell back to ``sheet``.

    Bandwidth (``dram_bandwidth_gbs``, 1e9 B/s) and launch overhead (s) come from the
    profile; the compute ceiling from its measured peak for the precision
    (``peak_tflops_measured``, TFLOP/s) when it has one, else the sheet's dense peak
    (and a note says so); no measured launch overhead: the 5 us default.

    Raises:
        UsageError: the profile has no DRAM bandwidth; and see :func:`sheet_precision`.
    """
    if profile.dram_bandwidth_gbs is None:
        raise UsageError(f"the newest bench profile of the {sheet.name} ({profile.date}) has no DRAM bandwidth; "
                         "run `gpuwhy bench --quick`")
    prec = sheet_precision(sheet, dtype, tensor_cores)
    notes: list[str] = []
    peaks = getattr(profile, "peak_tflops_measured", None) or {}
    if peaks.get(prec):
        peak = peaks[prec] * 1e12
        src = f"measured profile {profile.date}"
    else:
        peak = sheet.peak_flops(prec)
        src = f"measured bandwidth ({profile.date}), sheet {prec} peak"
        notes.append(f"the profile has no measured {prec} peak (run `gpuwhy bench --compute`); the sheet's dense peak is used")
    if profile.launch_overhead_s is None:
        lo, lo_src = DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE
    else:
        lo, lo_src = profile.launch_overhead_s, f"measured, event-timed ({profile.date})"
    return Ceilings(peak_flops=peak, bandwidth=profile.dram_bandwidth_gbs * 1e9, launch_overhead_s=lo, precision=prec,
                    gpu=sheet.name, source=src, launch_overhead_source=lo_src), notes
