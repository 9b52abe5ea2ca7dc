"""gpuwhy: GPU roofline and bottleneck diagnosis.

Public API (imports are lazy so ``import gpuwhy`` stays fast):

- :func:`classify` -- a workload's FLOPs and bytes against a GPU's roofline.
- :func:`load_spec` -- a GPU spec sheet by name.
- :func:`measure` -- time a callable on the GPU and classify it.
- :func:`probe` -- what the visible GPUs are.
"""

from __future__ import annotations

from .version import __version__


def load_spec(name: str, spec_dirs=()):
    """The spec sheet for ``name`` (e.g. ``"H100 SXM"``), matched as ``--gpu`` is
    (:func:`gpuwhy.device.sheet.sheet_for`; :meth:`gpuwhy.specs.SpecLibrary.match`).

    Raises:
        gpuwhy.errors.UsageError: unknown or ambiguous name.
        gpuwhy.errors.SpecError: a malformed sheet.
    """
    from .device.sheet import sheet_for
    from .errors import UsageError

    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"load_spec needs a GPU name such as 'H200' (see `gpuwhy specs list`), got {name!r}")
    return sheet_for(name, spec_dirs=spec_dirs).sheet


def classify(flops, bytes, gpu, dtype="fp32", time=None, launches=1, tensor_cores=True, launch_overhead=None, spec_dirs=()):
    """Classify a workload on ``gpu``'s roofline.

    Args:
        flops: FLOPs of the workload (a number, or text such as ``"2.5T"``).
        bytes: bytes moved through DRAM, reads plus writes (number or ``"12GB"``).
        gpu: a GPU name matched against the spec sheets (``"H200"``, ``"rtx 5070"``).
        dtype: precision that picks the compute ceiling (``fp32``, ``bf16``, ...).
        time: measured time in seconds (or text such as ``"850us"``), optional.
        launches: kernel launches the workload takes.
        tensor_cores: use tensor-core peaks for tf32 and narrower types.
        launch_overhead: seconds per launch (default: 5 us, see roofline.py).

    Returns:
        gpuwhy.api.classify.Classification with ``.verdict`` and ``.remedies``.

    Raises:
        gpuwhy.errors.UsageError: bad numbers, unknown GPU or precision.

    Example:
        >>> import gpuwhy
        >>> r = gpuwhy.classify(flops=2**28, bytes=12 * 2**28, gpu="rtx 5070")
        >>> r.verdict.regime
        'memory'
    """
    from .api.classify import run_classify
    from .model.roofline import Workload
    from .units import parse_count, parse_quantity, parse_time

    wl = Workload(
        flops=parse_quantity(flops, "flops", unit="FLOP"),
        bytes=parse_quantity(bytes, "bytes", unit="B"),
        launches=parse_count(launches, "launches"),
        time_s=None if time is None else parse_time(time),
    )
    lo = None if launch_overhead is None else parse_time(launch_overhead, "launch overhead")
    return run_classify(wl, gpu, dtype, tensor_cores, lo, spec_dirs)


def measure(fn, *args, flops=None, bytes=None, dtype=None, gpu=None, **kwargs):
    """Time ``fn(*args, **kwargs)`` on the GPU (CUDA events, warm-up, median, L2 flushed) and classify it.

    FLOPs are counted for PyTorch callables when not given; bytes default to
    inputs + outputs (a lower bound, and the result says so). See
    :func:`gpuwhy.api.measure.measure` for every option.

    Returns:
        gpuwhy.api.measure.MeasuredClassification (``.verdict``, ``.remedies``, ``.measurement``).

    Raises:
        gpuwhy.errors.NoDeviceError: no GPU; gpuwhy.errors.UsageError: missing counts, bad values.

    Example:
        >>> import torch, gpuwhy                                        # doctest: +SKIP
        >>> a = torch.randn(2**28, device="cuda"); b = torch.randn_like(a)
        >>> print(gpuwhy.measure(torch.add, a, b))
    """
    from .api.measure import measure as _measure

    return _measure(fn, *args, flops=flops, bytes=bytes, dtype=dtype, gpu=gpu, **kwargs)


def probe(device=None, spec_dirs=(), full=True):
    """Probe the visible GPUs (NVML + CUDA driver); see :func:`gpuwhy.device.probe.probe_devices`.

    Returns:
        gpuwhy.device.probe.ProbeReport (``.devices``, ``.software``; ``.to_dict()``).

    Raises:
        gpuwhy.errors.NoDeviceError: no driver or GPU (one line saying which).
    """
    from .device.probe import probe_devices

    return probe_devices(device, spec_dirs, full=full)


__all__ = ["__version__", "classify", "load_spec", "measure", "probe"]
