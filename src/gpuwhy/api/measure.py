"""``gpuwhy.measure`` (this module: ``gpuwhy.api.measure``): time a callable on the GPU and judge it on the roofline.

::

    import torch, gpuwhy
    a = torch.randn(2**28, device="cuda"); b = torch.randn_like(a)
    r = gpuwhy.measure(torch.add, a, b)          # FLOPs counted, bytes = inputs + output
    print(r)                                     # one line: regime, rates, % of the roof
    r.verdict.regime, r.verdict.sol_pct, r.time_s

How it measures:

- PyTorch callables (any argument is a ``torch.Tensor``): CUDA events from
  ``torch.cuda.Event`` on the tensors' device's current stream. Anything else:
  events from ``cuda.core`` on the device's default stream (the callable must
  enqueue its work there, as CuPy and plain cuda.core launches do by default).
- Warm-up calls first, then 3 timed calls estimate the time and pick the
  repetition count (:func:`gpuwhy.engine.timing.choose_reps`: a 0.5 s budget,
  10 to 100 repetitions); the figure is the median.
- Before every repetition (outside the events) a buffer of at least twice the
  L2 size is overwritten, so each repetition starts with a cold L2 and
  reads its inputs from DRAM; except when ``working_set`` fits in the L2
  (:func:`gpuwhy.model.roofline.hierarchy.place_working_set`): then the L2 is left warm and
  the call is judged against the L2 roof.
- FLOPs, when ``flops`` is not given, for PyTorch callables: the operator
  formulas of ``torch.utils.flop_counter.FlopCounterMode`` (matmul,
  convolution, attention; an FMA is 2 FLOPs) plus one FLOP per output element
  of every other pointwise operator (``torch.Tag.pointwise``; copies and fills
  count none). Other callables must pass ``flops``. A PyTorch call whose FLOPs no formula counts
  (``layer_norm``, ``softmax``'s fused kernels) is judged by its bytes and time against the
  memory roofs only, and says so.
- Bytes, when ``bytes`` is not given: the bytes of the distinct input and
  output arrays (anything with ``nbytes``, or a tensor's ``numel() *
  element_size()``). That is a lower bound on DRAM traffic (intermediates,
  re-reads and in-place writes are not counted) and the result says so.

The result is the :class:`~gpuwhy.api.classify.Classification` ``classify`` gives
(same verdict, remedies, sheet) with the measurement attached:
:class:`MeasuredClassification`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..device.sheet import sheet_for
from ..errors import GpuwhyError, MeasurementError, NoDeviceError, UsageError
from ..units import fmt_num, fmt_pct
from .classify import Classification, run_classify

#: Keyword names ``measure`` keeps for itself (the rest go to ``fn``).
RESERVED = ("flops", "bytes", "dtype", "gpu", "launches", "measured", "warmup", "reps", "flush_l2", "spec_dirs", "name",
            "working_set", "launch", "bytes_per_thread")
#: Time budget for the timed repetitions, and their bounds.
BUDGET_S = 0.5
MIN_REPS = 10
MAX_REPS = 100
#: Smallest L2-flush buffer (bytes), used when the L2 size is unknown.
MIN_FLUSH_BYTES = 64 * 2**20

_DTYPES = {
    "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16", "fp16": "fp16", "float32": "fp32",
    "float": "fp32", "fp32": "fp32", "float64": "fp64", "double": "fp64", "fp64": "fp64", "int8": "int8",
    "uint8": "int8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8",
    "float4_e2m1fn_x2": "fp4",
}
_NOT_FLOPS = ("copy", "_to_copy", "fill", "zero", "clone", "lift_fresh", "detach", "alias", "empty", "_copy_from",
              "view", "expand", "slice", "select", "as_strided", "t", "transpose", "permute", "reshape")


@dataclass(frozen=True)
class MeasuredClassification(Classification):
    """A :class:`~gpuwhy.api.classify.Classification` of a measured callable.

    Attributes (besides ``verdict``, ``remedies``, ``sheet``, ``dtype``):
        measurement: the repetitions' statistics (seconds), a
            :class:`gpuwhy.engine.timing.Measurement`; the verdict uses its median.
        flops_source: where the FLOP count came from.
        bytes_source: where the byte count came from.
        bytes_is_lower_bound: True when the bytes are inputs + outputs only.
        timer: ``"torch.cuda.Event"`` or ``"cuda.core events"``.
        l2_flush_bytes: the buffer overwritten before each repetition (0: no flush).
        notes: what the numbers leave out.
    """

    measurement: Any = None
    flops_source: str = ""
    bytes_source: str = ""
    bytes_is_lower_bound: bool = False
    timer: str = ""
    l2_flush_bytes: int = 0
    notes: tuple[str, ...] = ()

    @property
    def time_s(self) -> float:
        """The median time of one call, seconds."""
        return self.measurement.median_s

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["measurement"] = self.measurement.to_dict() if self.measurement is not None else None
        d["flops_source"] = self.flops_source
        d["bytes_source"] = self.bytes_source
        d["bytes_is_lower_bound"] = self.bytes_is_lower_bound
        d["timer"] = self.timer
        d["l2_flush_bytes"] = self.l2_flush_bytes
        d["notes"] = list(self.notes)
        return d

    def summary(self) -> str:
        """One line: the regime, the achieved rates and the share of the roof."""
        from ..model.roofline.hierarchy import regime_text
        from ..units import fmt_si, fmt_time

        v = self.verdict
        lb = " (bytes: lower bound)" if self.bytes_is_lower_bound else ""
        level = getattr(v.ceilings, "level", "DRAM")
        roof = (f"{v.sol_pct:.0f}% of the roof" if v.sol_pct is not None else "the L2 roof unknown") + (
            f", memory roof {level}" if level != "DRAM" else "")
        why = ""
        lat = getattr(self.hierarchy, "latency", None)
        if lat is not None:
            why = f"; {lat.cause}"
        flops = (f"{fmt_num(v.arithmetic_intensity)} FLOP/byte, {fmt_si(v.achieved_flops, 'FLOP/s')}, "
                 if v.flops_counted else "FLOPs not counted (memory roofs only), ")
        return (
            f"{v.workload.name}: {regime_text(v.regime)} on the {self.sheet.name} ({self.dtype}), "
            f"{fmt_time(self.time_s)} median of {self.measurement.reps}, {flops}"
            f"{fmt_si(v.achieved_bandwidth, 'B/s')}{lb}, {roof} ({v.ceilings.source}){why}"
        )

    def __str__(self) -> str:
        return self.summary()


# --------------------------------------------------------------------------- pure helpers


def _leaves(obj, depth: int = 0) -> Iterable[Any]:
    if depth > 4:
        return
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _leaves(x, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _leaves(x, depth + 1)
    elif obj is not None:
        yield obj


def is_torch_tensor(x: Any) -> bool:
    """True for a ``torch.Tensor`` (without importing torch)."""
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "data_ptr") and hasattr(x, "element_size")


def _array_bytes(x: Any) -> tuple[tuple, int] | None:
    """``(identity key, nbytes)`` of an array-like, or None for anything else."""
    if is_torch_tensor(x):
        n = int(x.numel()) * int(x.element_size())
        return ("ptr", int(x.data_ptr()), n), n
    nb = getattr(x, "nbytes", None)
    if isinstance(nb, int) and not isinstance(nb, bool) and nb >= 0:
        ptr = None
        dp = getattr(x, "data_ptr", None)
        if callable(dp):
            ptr = dp()
        else:
            for attr in ("__cuda_array_interface__", "__array_interface__"):
                iface = getattr(x, attr, None)
                if isinstance(iface, dict) and isinstance(iface.get("data"), (tuple, list)):
                    ptr = iface["data"][0]
                    break
        key = ("ptr", int(ptr), nb) if isinstance(ptr, int) else ("id", id(x), nb)
        return key, nb
    return None


def bytes_lower_bound(args: tuple, kwargs: dict, result: Any) -> tuple[float, int, int]:
    """``(bytes, inputs, outputs)``: the bytes of the distinct arrays in the arguments and the result.

    Arrays are anything with an integer ``nbytes`` (NumPy, CuPy) or a
    ``torch.Tensor``; nested lists, tuples and dicts are searched. An output
    that is one of the inputs (an in-place op) is counted once. This is a
    lower bound on DRAM traffic: it leaves out intermediates and re-reads.
    """
    seen: set = set()
    total = 0
    counts = [0, 0]
    for which, objs in ((0, (args, kwargs)), (1, (result,))):
        for leaf in _leaves(objs):
            got = _array_bytes(leaf)
            if got is None:
                continue
            key, n = got
            if key in seen:
                continue
            seen.add(key)
            total += n
            counts[which] += 1
    return float(total), counts[0], counts[1]


def infer_dtype(args: tuple, kwargs: dict) -> str | None:
    """The gpuwhy dtype (``bf16``, ``fp32``, ...) of the largest array argument, or None.

    Reads ``str(x.dtype)`` (``torch.bfloat16``, ``float32``); unknown types give None.
    """
    best = None
    for leaf in _leaves((args, kwargs)):
        got = _array_bytes(leaf)
        dt = getattr(leaf, "dtype", None)
        if got is None or dt is None:
            continue
        name = str(dt).split(".")[-1].lower()
        d = _DTYPES.get(name)
        if d and (best is None or got[1] > best[0]):
            best = (got[1], d)
    return best[1] if best else None


# --------------------------------------------------------------------------- torch parts


def _count_flops_torch(call: Callable[[], Any]) -> tuple[float, str, Any, bool]:
    """Run ``call`` once under FlopCounterMode and a pointwise counter.

    Returns ``(flops, source, result, has_matmul)``.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import FlopCounterMode

    class _Pointwise(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.flops = 0
            self.ops: dict[str, int] = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            try:
                pointwise = torch.Tag.pointwise in func.tags
            except Exception:
                pointwise = False
            base = func.__name__.split(".")[0].rstrip("_")
            if pointwise and base not in _NOT_FLOPS:
                n = sum(int(t.numel()) for t in _leaves(out) if isinstance(t, torch.Tensor))
                self.flops += n
                self.ops[base] = self.ops.get(base, 0) + n
            return out

    fc = FlopCounterMode(display=False)
    pw = _Pointwise()
    with fc, pw:
        result = call()
    mm = int(fc.get_total_flops())
    total = mm + pw.flops
    parts = []
    if mm:
        parts.append(f"{fmt_num(mm, 4)} from torch.utils.flop_counter (matmul/conv/attention formulas)")
    if pw.flops:
        ops = ", ".join(sorted(pw.ops))
        parts.append(f"{fmt_num(pw.flops, 4)} from pointwise ops ({ops}; 1 FLOP per output element)")
    return float(total), "; ".join(parts) or "torch.utils.flop_counter counted none", result, mm > 0


def _time(call, index: int, via_torch: bool, warmup: int, reps: int | None, flush_bytes: int):
    """(Measurement, the last call's result): :func:`gpuwhy.engine.timing.time_gpu` of ``call``
    with the L2 flushed before every repetition."""
    from ..engine.context import callable_timing
    from ..engine.timing import time_gpu

    last = [None]

    def fn(i: int) -> None:
        last[0] = call()

    with callable_timing(index, via_torch=via_torch, flush_bytes=flush_bytes) as (stream, events, between):
        m = time_gpu(stream, events, fn, between=between, warmup=warmup, budget_s=BUDGET_S, min_reps=MIN_REPS,
                     max_reps=MAX_REPS, reps=reps)
    return m, last[0]


# --------------------------------------------------------------------------- device and sheet


def _torch_device(args: tuple, kwargs: dict) -> int:
    import torch

    if not torch.cuda.is_available():
        raise NoDeviceError("PyTorch sees no CUDA GPU (torch.cuda.is_available() is False); gpuwhy.measure needs one")
    index = None
    for leaf in _leaves((args, kwargs)):
        if is_torch_tensor(leaf):
            if not leaf.is_cuda:
                raise UsageError(f"gpuwhy.measure times GPU work but a tensor argument is on {leaf.device}; move it with .cuda()")
            if index is None:
                index = leaf.device.index if leaf.device.index is not None else torch.cuda.current_device()
    return int(index if index is not None else torch.cuda.current_device())


def _resolve_sheet(gpu, index: int, spec_dirs):
    """(sheet, uuid or None) for the measured device: ``gpu``'s sheet, else the probed device's."""
    if gpu is not None:
        return sheet_for(gpu, spec_dirs=spec_dirs).sheet, None
    from ..na import is_na
    from ..device.probe import device_sheet

    try:
        choice, d = device_sheet(f"cuda:{index}", spec_dirs)  # torch's index is a CUDA ordinal
    except NoDeviceError as exc:
        if "found " not in str(exc):
            raise
        raise NoDeviceError(f"{exc}; pass gpu='NAME' (see `gpuwhy specs list`)") from None
    uuid = None if is_na(d.identity.uuid) else str(d.identity.uuid)
    return choice.sheet, uuid


def _launch(launch) -> tuple[int, int] | None:
    """``(grid, block)`` of positive whole numbers (a grid/block given as a 1-tuple or a
    number of blocks is accepted as its product), or None.

    Raises:
        UsageError: anything else.
    """
    if launch is None:
        return None
    try:
        grid, block = launch

        def total(x):
            if isinstance(x, (tuple, list)):
                n = 1
                for v in x:
                    n *= int(v)
                return n
            return int(x)

        g, b = total(grid), total(block)
    except (TypeError, ValueError):
        raise UsageError(f"launch must be (grid, block), e.g. (1024, 256), got {launch!r}") from None
    if g < 1 or b < 1:
        raise UsageError(f"launch (grid, block) must be positive, got {launch!r}")
    return g, b


# --------------------------------------------------------------------------- the API


def measure(
    fn: Callable,
    *args,
    flops: float | str | None = None,
    bytes: float | str | None = None,  # noqa: A002 (the public name the issue asks for)
    dtype: str | None = None,
    gpu=None,
    launches: int = 1,
    measured: bool = False,
    warmup: int = 3,
    reps: int | None = None,
    flush_l2: bool | None = None,
    spec_dirs: Iterable[str] = (),
    name: str | None = None,
    working_set: float | str | None = None,
    launch: tuple[int, int] | None = None,
    bytes_per_thread: float | None = None,
    **kwargs,
) -> MeasuredClassification:
    """Time ``fn(*args, **kwargs)`` on the GPU and classify it on the roofline.

    Args:
        fn: the callable; it must enqueue GPU work (PyTorch ops on CUDA tensors,
            or work on the device's default stream for other callables).
        flops: FLOPs of one call (number or text such as ``"1.1T"``); default:
            counted for PyTorch callables (see the module docstring), required otherwise;
            where none are counted (``layer_norm``), judged by bytes and time against the
            memory roofs only, and the verdict says the FLOPs were not counted.
        bytes: DRAM bytes of one call, reads plus writes; default: the bytes of
            the distinct input and output arrays, a lower bound (the result says so).
        dtype: precision that picks the compute ceiling (``bf16``, ``fp32``, ...);
            default: the largest array's type (fp32 matmuls with TF32 allowed: ``tf32``).
        gpu: a spec-sheet name or :class:`~gpuwhy.specs.Sheet`; default: the
            sheet of the GPU the work runs on.
        launches: kernel launches per call (the overhead term of the model).
        measured: judge against this GPU's newest ``gpuwhy bench`` profile (DRAM
            bandwidth, launch overhead, measured compute peaks), the same ceilings
            as ``gpuwhy classify --measured`` (:func:`gpuwhy.api.classify.run_classify`).
        warmup: untimed calls first. reps: timed calls (default: a 0.5 s budget,
            10 to 100). flush_l2: overwrite 2x the L2 before each timed call (default:
            yes, unless ``working_set`` fits in the L2).
        working_set: distinct bytes one call touches (number or ``"24MiB"``): one that
            fits in the L2 is timed warm and judged against the L2 roof.
        launch: ``(grid, block)`` of the kernel the call launches, and
        bytes_per_thread: bytes each thread has in flight (8 for a one-element-per-thread
            vecadd's two 4-byte loads): with them a kernel far below its roof is told
            why (a grid too small for the SMs, too few bytes in flight per thread).
        name: the workload's label (default: ``fn``'s name).
        kwargs: passed to ``fn`` (the names above are gpuwhy's).

    Returns:
        :class:`MeasuredClassification` (``.verdict``, ``.remedies``,
        ``.measurement``, ``.summary()``).

    Raises:
        UsageError: no ``flops`` for a non-PyTorch callable, no ``bytes`` and no
            array arguments, bad numbers, an unknown GPU or
            dtype, a CPU tensor, ``measured=True`` with no bench profile.
        NoDeviceError: no GPU, driver or CUDA (``torch.cuda.is_available()`` False).
        MeasurementError: a CUDA error during the timing.

    Example:
        >>> import torch, gpuwhy                                    # doctest: +SKIP
        >>> a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        >>> r = gpuwhy.measure(torch.matmul, a, a)
        >>> r.verdict.regime
        'compute'
    """
    from ..model.roofline.classify import Workload

    given = _Given.check(fn, args, kwargs, flops, bytes, launches, warmup, reps, working_set, launch, bytes_per_thread)

    def call():
        return fn(*args, **kwargs)

    notes: list[str] = []
    index = _device_index(args, kwargs, given.is_torch)
    sheet, uuid = _resolve_sheet(gpu, index, spec_dirs)
    f, flops_source, result, has_matmul = _flops(fn, call, given.flops)
    dev_uuid, flush_bytes, ws = _l2_plan(index, given.is_torch, sheet, given.working_set, flush_l2, notes)
    m, last, timer = _timed(call, index, given.is_torch, warmup, reps, flush_bytes)
    if result is None:
        result = last
    b, lower, bytes_source = _bytes_of(args, kwargs, result, given.bytes, notes)
    d = _dtype_of(dtype, args, kwargs, has_matmul, notes)
    if measured:
        uuid = uuid or dev_uuid
    label = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "fn"
    wl = Workload(flops=f, bytes=b, launches=given.launches, time_s=m.median_s, name=str(label))
    judged = run_classify(wl, sheet, d, measured=measured, uuid=uuid, spec_dirs=spec_dirs, working_set=ws,
                          launch=given.launch, bytes_per_thread=bytes_per_thread)
    return MeasuredClassification(
        verdict=judged.verdict, remedies=judged.remedies, sheet=sheet, dtype=d, example=None,
        spec_ridge_point=judged.spec_ridge_point, hierarchy=judged.hierarchy, measurement=m,
        flops_source=flops_source, bytes_source=bytes_source, bytes_is_lower_bound=lower, timer=timer,
        l2_flush_bytes=flush_bytes, notes=tuple(notes) + judged.notes,
    )


# --------------------------------------------------------------------------- the steps of measure


@dataclass(frozen=True)
class _Given:
    """:func:`measure`'s arguments checked and parsed: FLOPs and bytes (None: to count), launches,
    the working set in bytes (or None), the launch ``(grid, block)`` (or None), and whether the
    call is a PyTorch one (a tensor among its arguments)."""

    flops: float | None
    bytes: float | None
    launches: int
    working_set: float | None
    launch: tuple[int, int] | None
    is_torch: bool

    @staticmethod
    def check(fn, args, kwargs, flops, bytes_, launches, warmup, reps, working_set, launch, bytes_per_thread) -> "_Given":
        """Raises: UsageError: no callable, a bad number, or nothing to count FLOPs or bytes from."""
        from ..units import parse_count, parse_quantity

        if not callable(fn):
            raise UsageError(f"gpuwhy.measure needs a callable, got {type(fn).__name__}")
        f_given = None if flops is None else parse_quantity(flops, "flops", unit="FLOP")
        b_given = None if bytes_ is None else parse_quantity(bytes_, "bytes", unit="B")
        n_launch = parse_count(launches, "launches")
        if warmup < 0 or (reps is not None and reps < 1):
            raise UsageError("warmup must be >= 0 and reps >= 1")
        ws_given = None if working_set is None else parse_quantity(working_set, "working_set")
        launch_shape = _launch(launch)
        if bytes_per_thread is not None and not (isinstance(bytes_per_thread, (int, float)) and bytes_per_thread > 0):
            raise UsageError(f"bytes_per_thread must be a positive number, got {bytes_per_thread!r}")
        is_torch = any(is_torch_tensor(x) for x in _leaves((args, kwargs)))
        if not is_torch and f_given is None:
            raise UsageError(
                "gpuwhy.measure counts FLOPs only for PyTorch callables (tensor arguments); pass flops=N for this callable"
            )
        if not is_torch and b_given is None and not any(_array_bytes(x) for x in _leaves((args, kwargs))):
            raise UsageError("no array arguments to take the bytes from; pass bytes=N (DRAM reads plus writes of one call)")
        return _Given(f_given, b_given, n_launch, ws_given, launch_shape, is_torch)


def _device_index(args: tuple, kwargs: dict, is_torch: bool) -> int:
    """The CUDA ordinal the call runs on: its tensors' device, else 0 (the driver initialised).

    Raises:
        NoDeviceError: no GPU. UsageError: a CPU tensor.
    """
    if is_torch:
        return _torch_device(args, kwargs)
    from ..engine.context import init_driver

    try:
        init_driver()
    except NoDeviceError as exc:
        raise NoDeviceError(f"gpuwhy.measure needs a GPU and found none ({str(exc).split(';')[0]})") from None
    return 0


def _flops(fn, call, given: float | None) -> tuple[float | None, str, Any, bool]:
    """(FLOPs, where from, the counting call's result or None, whether a matmul ran): ``given``, else
    counted (:func:`_count_flops_torch`); None FLOPs when none were counted (an operator no formula
    covers, ``layer_norm``): the call is then judged by its bytes and time against the memory roofs
    (:func:`gpuwhy.model.roofline.classify.classify`), and the source says so."""
    if given is not None:
        return given, "given", None, False
    f_count, source, result, has_matmul = _count_flops_torch(call)
    if f_count <= 0:
        return None, f"not counted ({source}): judged against the memory roofs only; pass flops=N", result, has_matmul
    return f_count, source, result, has_matmul


def _l2_plan(index: int, is_torch: bool, sheet, ws: float | None, flush_l2: bool | None, notes: list[str]):
    """(device UUID, bytes to overwrite before each repetition (0: none), the working set to judge
    against): the L2 is flushed unless the working set fits in it (``flush_l2`` overrides, with a
    note either way, added to ``notes``)."""
    from ..engine.context import device_identity

    dev_uuid, l2 = device_identity(index, via_torch=is_torch)
    l2_resident = False
    if ws is not None:
        from ..model.roofline.hierarchy import place_working_set

        l2_resident = place_working_set(ws, l2 or int(sheet.l2_bytes)).level == "L2"
    if flush_l2 is None:
        flush_l2 = not l2_resident
        if l2_resident:
            notes.append("the L2 is not flushed between repetitions: the working set fits in it and is timed there")
    elif flush_l2 and l2_resident:
        notes.append("flush_l2=True: every repetition starts from DRAM, so the call is judged against DRAM "
                     "although its working set fits in the L2")
        ws = None
    flush_bytes = max(2 * (l2 or int(sheet.l2_bytes)), MIN_FLUSH_BYTES) if flush_l2 else 0
    return dev_uuid, flush_bytes, ws


def _timed(call, index: int, is_torch: bool, warmup: int, reps: int | None, flush_bytes: int):
    """(Measurement, the last call's result, the timer's name) of :func:`_time`.

    Raises:
        MeasurementError: a CUDA error or out of GPU memory while timing.
    """
    try:
        m, last = _time(call, index, is_torch, warmup, reps, flush_bytes)
    except GpuwhyError:
        raise
    except Exception as exc:
        from ..engine.context import as_gpuwhy_error

        err = as_gpuwhy_error(exc, "timing the callable")
        if err is None and type(exc).__name__ in ("OutOfMemoryError",):
            err = MeasurementError(f"out of GPU memory while timing: {str(exc).splitlines()[0]}")
        if err is None:
            raise
        raise err from None
    return m, last, "torch.cuda.Event" if is_torch else "cuda.core events"


def _bytes_of(args: tuple, kwargs: dict, result, given: float | None, notes: list[str]) -> tuple[float, bool, str]:
    """(bytes, whether a lower bound, where from): ``given``, else inputs + outputs (noted).

    Raises:
        UsageError: no bytes in the arguments and result.
    """
    if given is not None:
        return given, False, "given"
    b, n_in, n_out = bytes_lower_bound(args, kwargs, result)
    if b <= 0:
        raise UsageError("the arguments and result hold no bytes; pass bytes=N")
    notes.append("bytes are a lower bound (inputs + outputs): intermediates, re-reads and in-place writes are not counted")
    return b, True, f"inputs + outputs: {n_in} input and {n_out} output arrays (a lower bound on DRAM traffic)"


def _dtype_of(dtype: str | None, args: tuple, kwargs: dict, has_matmul: bool, notes: list[str]) -> str:
    """``dtype``, else the largest array's; fp32 matmuls with TF32 allowed are judged as tf32 (noted)."""
    d = dtype or infer_dtype(args, kwargs) or "fp32"
    if dtype is None and d == "fp32" and has_matmul:
        try:
            import torch

            if torch.backends.cuda.matmul.allow_tf32:
                d = "tf32"
                notes.append("fp32 matmuls with torch.backends.cuda.matmul.allow_tf32: judged against the tf32 peak")
        except Exception:
            pass
    return d


__all__ = ["measure", "MeasuredClassification", "bytes_lower_bound", "infer_dtype", "is_torch_tensor", "RESERVED"]
