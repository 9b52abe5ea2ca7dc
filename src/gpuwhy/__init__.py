"""gpuwhy: GPU roofline and bottleneck diagnosis.

Public API, the commands' results as objects (each has ``to_dict()``, the command's
``--json``); imports are lazy so ``import gpuwhy`` stays fast (it loads two small modules):

- :func:`classify` -- a workload's FLOPs and bytes against a GPU's roofline.
- :func:`llm` -- the roofline of LLM inference: decode and prefill, tokens/s, batch ridge, KV cache.
- :func:`compare` -- one workload's roofline on several GPUs, ranked.
- :func:`occupancy` -- blocks and warps per SM of a launch configuration.
- :func:`read_ncu` -- an Nsight Compute ``--csv`` export, per kernel on the roofline.
- :func:`read_trace` -- a torch.profiler trace: busy, idle and why.
- :func:`load_spec` -- a GPU spec sheet by name.
- :func:`measure` -- time a callable on the GPU and classify it (needs a GPU).
- :func:`probe` -- what the visible GPUs are (needs the GPU packages).

Each is a thin call of its use case in :mod:`gpuwhy.api` (the CLI calls the same ones).
Errors are the exceptions of :mod:`gpuwhy.errors`, exported here too.
"""

from .errors import CheckFailed, GpuwhyError, MeasurementError, NoDeviceError, SpecError, UsageError
from .version import __version__


def load_spec(name: str, spec_dirs=()):
    """The spec sheet for ``name`` (e.g. ``"H100 SXM"``), matched as ``--gpu`` is
    (:func:`gpuwhy.device.sheet.sheet_for`; :meth:`gpuwhy.specs.SpecLibrary.match`).

    Raises:
        gpuwhy.errors.UsageError: unknown or ambiguous name.
        gpuwhy.errors.SpecError: a malformed sheet.
    """
    from .api.specs import load_spec as _load_spec

    return _load_spec(name, spec_dirs)


def classify(flops=None, bytes=None, gpu=None, dtype="fp32", time=None, launches=1, tensor_cores=True, launch_overhead=None,
             spec_dirs=(), working_set=None, **shape):
    """Classify a workload on ``gpu``'s roofline: its FLOPs and bytes, or a shape to count them from.

    Args:
        flops: FLOPs of the workload (a number, or text such as ``"2.5T"``).
        bytes: bytes moved through DRAM, reads plus writes (number or ``"12GB"``).
        gpu: a GPU name matched against the spec sheets (``"H200"``, ``"rtx 5070"``).
        dtype: precision that picks the compute ceiling (``fp32``, ``bf16``, ...).
        time: measured time in seconds (or text such as ``"850us"``), optional.
        launches: kernel launches the workload takes.
        tensor_cores: use tensor-core peaks for tf32 and narrower types.
        launch_overhead: seconds per launch (default: 5 us, see roofline.py).
        shape: instead of ``flops`` and ``bytes``, the keywords of `gpuwhy classify`'s
            shapes (:func:`gpuwhy.model.kernels.shapes.shape_from_options`): ``gemm="MxNxK"``
            (or a tuple) with ``batch``, ``accumulate`` and ``tile=(TM, TN)``;
            ``attention="B,H,S,D"`` (or a tuple) with ``causal``, ``kv_heads``, ``q_len``;
            ``elementwise=N`` with ``inputs``, ``outputs``, ``flops_per_element``.
        working_set: distinct bytes the workload touches (number or ``"32MiB"``): when it
            fits in the L2, the workload is judged against the L2 roof.

    Returns:
        gpuwhy.api.classify.Classification with ``.verdict`` and ``.remedies`` (and
        ``.counts``, ``.shape_advice`` for a shape).

    Raises:
        gpuwhy.errors.UsageError: bad numbers or shapes, unknown GPU or precision,
            both a shape and flops/bytes, or an unknown keyword.

    Example:
        >>> import gpuwhy
        >>> r = gpuwhy.classify(flops=2**28, bytes=12 * 2**28, gpu="rtx 5070")
        >>> r.verdict.regime
        'memory'
        >>> gpuwhy.classify(gemm="8192x8192x8192", dtype="bf16", gpu="H200").counts.flops
        1099511627776.0
    """
    from .api.classify import classify_values

    return classify_values(flops, bytes, gpu, dtype, time, launches, tensor_cores, launch_overhead, spec_dirs, working_set, shape)


def measure(fn, *args, flops=None, bytes=None, dtype=None, gpu=None, **kwargs):
    """Time ``fn(*args, **kwargs)`` on the GPU (CUDA events, warm-up, median, L2 flushed) and classify it.

    FLOPs are counted for PyTorch callables when not given; bytes default to
    inputs + outputs (a lower bound, and the result says so); ``working_set=`` (bytes one
    call touches) judges an L2-resident call against the L2 roof. See
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

    ``device`` is what ``-i`` takes (:mod:`gpuwhy.device.select`: nvidia-smi's index, a list
    ``"0,2"``, ``"cuda:N"``, a UUID or prefix, a PCI bus id, ``"all"``); None: every GPU.

    Returns:
        gpuwhy.device.probe.ProbeReport (``.devices``, ``.software``; ``.to_dict()``).

    Raises:
        gpuwhy.errors.NoDeviceError: no driver or GPU (one line saying which).
    """
    from .api.probe import ProbeRequest
    from .api.probe import probe as _probe

    return _probe(ProbeRequest(device, spec_dirs, list_only=not full))


def llm(params=None, gpu=None, *, model=None, weight_dtype=None, batch=1, context=None, prompt_len=None, kv_dtype=None,
        layers=None, kv_heads=None, head_dim=None, heads=None, sweep_batch=False, spec_dirs=(), models=()):
    """The roofline model of LLM inference on ``gpu``, as ``gpuwhy llm`` computes it.

    Args:
        params: parameter count (``8e9`` or ``"8B"``); or give ``model``.
        gpu: a GPU sheet name (``"H200"``); None: this machine's GPU.
        model: a bundled or ``models`` shape name (``"llama-3-8b"``).
        weight_dtype, kv_dtype: ``fp16|bf16|fp8|int8|int4|fp4|fp32``.
        batch, context, prompt_len: sequences, cached tokens per sequence, prompt tokens.
        layers, kv_heads, head_dim, heads: a shape instead of ``model``.
        sweep_batch: add decode steps at batch 1, 8, 32, ... (``.sweep``).

    Returns:
        gpuwhy.model.llm.result.LlmEstimate (``.decode.tokens_per_s_per_seq``, ``.batch_ridge``, ...).

    Raises:
        UsageError: what ``gpuwhy llm`` refuses (the same one-line messages).
    """
    from .api.llm import estimate_values

    return estimate_values(params, gpu, model=model, weight_dtype=weight_dtype, batch=batch, context=context,
                           prompt_len=prompt_len, kv_dtype=kv_dtype, layers=layers, kv_heads=kv_heads, head_dim=head_dim,
                           heads=heads, sweep_batch=sweep_batch, spec_dirs=spec_dirs, models=models)


def compare(gpus, intensity=None, *, flops=None, bytes=None, dtype="fp32", costs=None, per_watt=False, spec_dirs=()):
    """One workload's roofline on several GPUs, as ``gpuwhy compare`` ranks them.

    Args:
        gpus: sheet names (``["H100", "H200"]``); the first is the baseline of the speed-ups.
        intensity: FLOP/byte; or ``flops`` and ``bytes`` (numbers or text such as ``"2.5T"``).
        dtype: the precision of the compute ceiling.
        costs: ``{"H100": 2.49}``, USD per hour, for throughput per dollar.
        per_watt: add throughput per watt of the sheets' board power.

    Returns:
        gpuwhy.model.roofline.compare.GpuComparison (``.rows``, ``.ranking``; ``to_dict()``).

    Raises:
        UsageError: unknown GPUs or dtype, a GPU listed twice, a bad or missing workload.
    """
    from .api.compare import compare_values

    return compare_values(gpus, intensity, flops=flops, bytes_=bytes, dtype=dtype, costs=costs, per_watt=per_watt,
                          spec_dirs=spec_dirs)


def occupancy(block_size, registers, shared_mem=0, *, gpu=None, arch=None, carveout=None, spec_dirs=()):
    """Theoretical occupancy of a launch, as ``gpuwhy occupancy`` computes it.

    Args:
        block_size: threads per block; registers: per thread; shared_mem: bytes per block.
        gpu: a sheet name; or ``arch`` (``"sm_90"``). carveout: KiB of shared memory preferred.

    Returns:
        gpuwhy.model.kernels.occupancy.Occupancy (``.active_blocks`` per SM, ``.occupancy_pct``, ``.binding``, ``.suggestions``).

    Raises:
        UsageError: neither or both of gpu and arch, an unknown architecture, impossible inputs.
    """
    from .api.occupancy import occupancy_values

    return occupancy_values(block_size, registers, shared_mem, gpu=gpu, arch=arch, carveout=carveout, spec_dirs=spec_dirs)


def read_ncu(path, gpu=None, *, dtype=None, top=10, device=None, spec_dirs=()):
    """An Nsight Compute ``--csv`` export (raw or details page) judged per kernel, as ``gpuwhy ncu``.

    ``gpu``: the sheet (default: from the export's device name); ``device``: only that
    export device; ``top``: kernels per GPU by total time.

    Returns:
        gpuwhy.importers.ncu.NcuReport (``.devices[i].kernels``; ``to_dict()``).

    Raises:
        UsageError: an unreadable or non-ncu file (one line naming it), an unknown GPU.
    """
    from .api.readers import read_ncu as _read_ncu

    return _read_ncu(path, gpu, dtype=dtype, top=top, device=device, spec_dirs=spec_dirs)


def read_trace(path, *, top=10):
    """A torch.profiler Chrome trace (``.json`` or ``.json.gz``) per GPU, as ``gpuwhy trace``.

    Returns:
        gpuwhy.importers.timeline.results.TraceReport (``.verdict``, ``.devices``; ``to_dict()``).

    Raises:
        UsageError: an unreadable or non-trace file.
    """
    from .api.readers import read_trace as _read_trace

    return _read_trace(path, top=top)


__all__ = [
    "__version__",
    "classify", "llm", "compare", "occupancy", "read_ncu", "read_trace", "load_spec", "measure", "probe",
    "GpuwhyError", "UsageError", "SpecError", "NoDeviceError", "MeasurementError", "CheckFailed",
]


def __dir__():
    """The public API only (not the submodules a call has imported)."""
    return sorted(__all__)
