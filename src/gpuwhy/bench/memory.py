"""Memory-bandwidth benchmarks: read, write, copy and vecadd, naive and vectorized.

Each case is one small class: the kernel's name in ``microbench/memory.cu``, its
launch shape, the bytes it moves per launch, its arguments, and a numpy
function that says whether its output is right. The runner checks every case
against numpy at awkward sizes (:data:`CHECK_SIZES`, fresh random non-zero data,
outputs poisoned with NaN and guarded past their end) before timing it; a wrong
result raises :class:`~gpuwhy.errors.MeasurementError` (exit 4).

Timing data is filled on the GPU with non-zero pseudo-random values (never
zeros). Rows whose working set exceeds the L2 rotate among buffer sets so the
bytes cycled between two uses of the same data are at least ``DRAM_FACTOR`` x
L2 (see :mod:`gpuwhy.bench.results` for the byte convention and the regimes).

Pure parts (sizes, shapes, bytes, verify functions) need no GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

import numpy as np

from ..errors import MeasurementError, UsageError
from .results import (
    BandwidthRow,
    CorrectnessCheck,
    CpuComparison,
    buffer_sets_needed,
    classify_regime,
)

SOURCE = "memory.cu"
DTYPES = {"fp32": np.float32, "fp64": np.float64}
SUFFIX = {"fp32": "f32", "fp64": "f64"}
#: Sizes every case is checked at before timing: 1, a prime under a warp, a prime
#: over a million, and one past a power of two (none a multiple of the vector width).
CHECK_SIZES = (1, 31, 1000003, 2**20 + 7)
SWEEP_MIN, SWEEP_MAX = 2**10, 2**28
QUICK_SIZES = (2**10, 2**20, 2**24, 2**28)
BLOCK = 256
VEC_BYTES = 16
#: 16-byte vectors per thread per chunk of the vec16 kernels, by op, and the
#: memory.cu macro that sets each; memory.cu says how the defaults were chosen.
DEFAULT_UNROLLS = {"read": 4, "write": 4, "copy": 1, "vecadd": 1}
UNROLL_MACROS = {"read": "GPUWHY_UNROLL_READ", "write": "GPUWHY_UNROLL_WRITE", "copy": "GPUWHY_UNROLL", "vecadd": "GPUWHY_UNROLL"}
#: Waves of resident blocks in the persistent-grid candidate shape.
PERSISTENT_WAVES = 4
#: Elements after each checked output that must stay untouched (catches overruns).
GUARD = 64
#: The CPU comparison's size (elements): 2^24, large enough to leave the CPU caches.
CPU_ELEMENTS = 2**24


def sweep_sizes(lo: int = SWEEP_MIN, hi: int = SWEEP_MAX, factor: int = 2) -> list[int]:
    """Geometric sizes (elements) from ``lo`` to ``hi`` inclusive, ``x factor`` each step."""
    if lo < 1 or hi < lo or factor < 2:
        raise ValueError("need 1 <= lo <= hi and factor >= 2")
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= factor
    return out


def plan_sets(per_set_bytes: int, want_sets: int, free_bytes: int, extra_bytes: int = 0, fraction: float = 0.8) -> int:
    """Buffer sets to allocate: ``want_sets``, cut so all of them (plus
    ``extra_bytes``) fit in ``fraction`` of the free memory; 0 means the size
    does not fit at all and is skipped."""
    if per_set_bytes <= 0:
        return want_sets
    return max(0, min(want_sets, int((fraction * free_bytes - extra_bytes) // per_set_bytes)))


# ----------------------------------------------------------------- cases ----


@dataclass(frozen=True)
class MemoryCase:
    """A memory kernel: ``op`` in read/write/copy/vecadd, ``variant`` naive or vec16.

    Subclasses set ``op``, ``inputs`` (arrays read) and ``outputs`` (arrays written
    in full) and implement :meth:`args` and :meth:`verify`.
    """

    variant: str = "vec16"
    op: ClassVar[str] = ""
    inputs: ClassVar[int] = 0
    outputs: ClassVar[int] = 0

    @property
    def name(self) -> str:
        return f"{self.op}-{self.variant}"

    @property
    def arrays(self) -> int:
        """Full-size arrays one launch touches."""
        return self.inputs + self.outputs

    def kernel_name(self, dtype: str) -> str:
        """The extern "C" name in memory.cu, e.g. ``read_vec16_f32``."""
        return f"{self.op}_{self.variant}_{SUFFIX[dtype]}"

    def launch_shapes(
        self, n: int, elem_bytes: int, sm_count: int, blocks_per_sm: int, unroll: int | None = None,
        waves: int = PERSISTENT_WAVES, block: int = BLOCK,
    ) -> list[tuple[int, int]]:
        """Candidate (grid, block) shapes, the default first.

        naive: one element per thread, ``ceil(n / 256)`` blocks (the only shape).
        vec16: one block per chunk of ``block x unroll`` vectors (``unroll`` defaults to
        the kernel's, :data:`DEFAULT_UNROLLS`; every block does one
        chunk), then a persistent grid of ``sm_count x blocks_per_sm x waves``
        blocks looping over the chunks, when that is smaller. The bench times the
        candidates briefly and keeps the faster (which one wins depends on the GPU).

        Raises:
            UsageError: a naive kernel (32-bit index) asked for n >= 2^31.
        """
        if self.variant == "naive":
            if n >= 2**31:
                raise UsageError(f"{self.name} uses a 32-bit index (as the course writes it); n={n} must be < 2^31")
            return [(max(1, -(-n // BLOCK)), BLOCK)]
        if unroll is None:
            unroll = DEFAULT_UNROLLS[self.op]
        width = VEC_BYTES // elem_bytes
        chunks = max(1, -(-(n // width) // (block * unroll)))
        full = min(chunks, 2**31 - 1)
        shapes = [(full, block)]
        persistent = sm_count * blocks_per_sm * waves
        if 0 < persistent < full:
            shapes.append((persistent, block))
        return shapes

    def launch_shape(self, n: int, elem_bytes: int, sm_count: int, blocks_per_sm: int, unroll: int | None = None) -> tuple[int, int]:
        """The default (first) of :meth:`launch_shapes`."""
        return self.launch_shapes(n, elem_bytes, sm_count, blocks_per_sm, unroll)[0]

    def bytes_moved(self, n: int, elem_bytes: int, grid: int) -> int:
        """Bytes read + written by one launch over n elements (see results.CONVENTION)."""
        return self.arrays * n * elem_bytes

    def working_set(self, n: int, elem_bytes: int) -> int:
        """Distinct bytes one launch touches (partial sums are negligible and left out)."""
        return self.arrays * n * elem_bytes

    def args(self, bufs: Sequence[int], n: int, dtype: str, partial: int, value: float):
        """Kernel arguments: ``bufs`` are the device pointers of this case's arrays
        (inputs first), ``partial`` a pointer for per-block results."""
        raise NotImplementedError

    def verify(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], value: float) -> str | None:
        """None when ``outputs`` (downloaded) are right for ``inputs``, else what is wrong."""
        raise NotImplementedError

    def make_inputs(self, rng: np.random.Generator, n: int, dtype) -> list[np.ndarray]:
        """Fresh random non-zero inputs for a check (values in [0.5, 1.5))."""
        return random_inputs(rng, n, dtype, self.inputs)

    def _n(self, n: int):
        return np.int32(n) if self.variant == "naive" else np.uint64(n)


def _first_mismatch(got: np.ndarray, want: np.ndarray) -> str | None:
    if got.shape != want.shape:
        return f"shape {got.shape} instead of {want.shape}"
    bad = np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))) | np.isnan(got))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return f"{bad.size} of {got.size} elements wrong; element {i} is {got[i]!r}, expected {want[i]!r}"


@dataclass(frozen=True)
class ReadCase(MemoryCase):
    """Reduction: each block writes the sum of its elements to ``partial[block]``;
    the host adds the partials (the result is used, so no load can be dropped)."""

    op: ClassVar[str] = "read"
    inputs: ClassVar[int] = 1
    outputs: ClassVar[int] = 0

    def bytes_moved(self, n: int, elem_bytes: int, grid: int) -> int:
        return n * elem_bytes + grid * elem_bytes

    def args(self, bufs, n, dtype, partial, value):
        return (bufs[0], self._n(n), partial)

    def make_inputs(self, rng, n, dtype):
        """Random whole numbers 1..8: non-zero, and every partial sum is exact in
        fp32 up to 2^21 elements, so the check can demand the exact total (one
        dropped or doubled element changes it by at least 1)."""
        return [rng.integers(1, 9, size=n).astype(dtype)]

    def verify(self, inputs, outputs, value):
        (a,), (partial,) = inputs, outputs
        if not np.all(np.isfinite(partial)):
            return f"{int(np.sum(~np.isfinite(partial)))} block partial sums were not written (NaN poison left)"
        got = float(np.sum(partial, dtype=np.float64))
        want = float(np.sum(a, dtype=np.float64))
        exact_limit = 2.0**24 if a.dtype == np.float32 else 2.0**53
        if np.all(a == np.round(a)) and float(np.sum(np.abs(a), dtype=np.float64)) < exact_limit:
            tol = 0.0  # whole numbers: the sum is exact in any order
        else:
            tol = (1e-5 if a.dtype == np.float32 else 1e-12) * float(np.sum(np.abs(a), dtype=np.float64))
        if abs(got - want) > tol:
            return f"sum is {got!r}, expected {want!r}"
        return None


@dataclass(frozen=True)
class WriteCase(MemoryCase):
    """``a[i] = v + (T)(i & 1023)``: index-dependent, so a wrong index shows."""

    op: ClassVar[str] = "write"
    inputs: ClassVar[int] = 0
    outputs: ClassVar[int] = 1

    def args(self, bufs, n, dtype, partial, value):
        return (bufs[0], self._n(n), DTYPES[dtype](value))

    @staticmethod
    def expected(n: int, dtype, value: float) -> np.ndarray:
        t = np.dtype(dtype).type
        return t(value) + (np.arange(n, dtype=np.int64) & 1023).astype(dtype)

    def verify(self, inputs, outputs, value):
        (a,) = outputs
        return _first_mismatch(a, self.expected(a.size, a.dtype, value))


@dataclass(frozen=True)
class CopyCase(MemoryCase):
    """``b[i] = a[i]``."""

    op: ClassVar[str] = "copy"
    inputs: ClassVar[int] = 1
    outputs: ClassVar[int] = 1

    def args(self, bufs, n, dtype, partial, value):
        return (bufs[0], bufs[1], self._n(n))

    def verify(self, inputs, outputs, value):
        return _first_mismatch(outputs[0], inputs[0])


@dataclass(frozen=True)
class VecaddCase(MemoryCase):
    """``c[i] = a[i] + b[i]`` (the naive variant is the course's kernel as written there)."""

    op: ClassVar[str] = "vecadd"
    inputs: ClassVar[int] = 2
    outputs: ClassVar[int] = 1

    def args(self, bufs, n, dtype, partial, value):
        return (bufs[0], bufs[1], bufs[2], self._n(n))

    def verify(self, inputs, outputs, value):
        a, b = inputs
        return _first_mismatch(outputs[0], a + b)


ALL_CASES: tuple[MemoryCase, ...] = tuple(
    cls(variant) for cls in (ReadCase, WriteCase, CopyCase, VecaddCase) for variant in ("naive", "vec16")
)
CASE_NAMES = tuple(c.name for c in ALL_CASES)
FAMILIES = ("read", "write", "copy", "vecadd")


def select_cases(kernels: Sequence[str] | None) -> list[MemoryCase]:
    """Cases for ``--kernel`` values: a family (``read``: both variants), a case
    name (``vecadd-naive``), or ``all``; comma-separated values allowed.
    ``launch`` selects no memory case.

    Raises:
        UsageError: an unknown name (lists the known ones).
    """
    if not kernels:
        return list(ALL_CASES)
    want: list[MemoryCase] = []
    for item in kernels:
        for k in (s.strip().lower() for s in str(item).split(",")):
            if not k:
                continue
            if k == "all":
                picked = list(ALL_CASES)
            elif k == "launch":
                picked = []
            elif k in FAMILIES:
                picked = [c for c in ALL_CASES if c.op == k]
            elif k in CASE_NAMES:
                picked = [c for c in ALL_CASES if c.name == k]
            elif k.replace("_", "-") in CASE_NAMES:
                picked = [c for c in ALL_CASES if c.name == k.replace("_", "-")]
            else:
                known = ", ".join((*FAMILIES, *CASE_NAMES, "launch", "all"))
                raise UsageError(f"unknown --kernel {k!r}; known: {known}")
            want.extend(c for c in picked if c not in want)
    return want


def random_inputs(rng: np.random.Generator, n: int, dtype, count: int) -> list[np.ndarray]:
    """``count`` arrays of n random values in [0.5, 1.5): never zero."""
    return [(rng.random(n, dtype=np.float64) + 0.5).astype(dtype) for _ in range(count)]


# ---------------------------------------------------------------- runner ----


class MemoryBench:
    """Runs memory cases on an open :class:`~gpuwhy.engine.context.GpuContext`.

    Args:
        ctx: the device.
        dtype: ``fp32`` or ``fp64``.
        defines: compile-time tuning macros for memory.cu (part of the cubin cache key);
            the ``GPUWHY_UNROLL*`` macros also set the host's chunk size.
        waves: waves of resident blocks in the persistent-grid candidate shape.
        shapes: ``auto`` (time the candidate shapes briefly, keep the faster),
            ``chunk`` (one block per chunk) or ``persistent``.
        block: threads per block of the vec16 kernels (naive ones use 256, as the course does).
    """

    def __init__(self, ctx, dtype: str = "fp32", defines: dict | None = None, waves: int = PERSISTENT_WAVES,
                 shapes: str = "auto", block: int = BLOCK):
        if dtype not in DTYPES:
            raise UsageError(f"--dtype {dtype!r} is not one of: {', '.join(DTYPES)}")
        if shapes not in ("auto", "chunk", "persistent"):
            raise ValueError(f"shapes={shapes!r}")
        self.ctx, self.dtype, self.defines, self.waves, self.shape_mode = ctx, dtype, dict(defines or {}), waves, shapes
        self.unrolls = {op: int(self.defines.get(UNROLL_MACROS[op], u)) for op, u in DEFAULT_UNROLLS.items()}
        self.block = int(block)
        self.np_dtype = DTYPES[dtype]
        self.es = np.dtype(self.np_dtype).itemsize
        self._occ: dict[str, int] = {}

    def kernel(self, case: MemoryCase):
        return self.ctx.kernel(SOURCE, case.kernel_name(self.dtype), self.defines or None)

    def shapes(self, case: MemoryCase, n: int) -> list[tuple[int, int]]:
        """Candidate launch shapes for ``case`` at n (see :meth:`MemoryCase.launch_shapes`)."""
        k = case.kernel_name(self.dtype)
        if k not in self._occ:
            self._occ[k] = self.ctx.occupancy(self.kernel(case), self.block if case.variant == "vec16" else BLOCK)
        cands = case.launch_shapes(n, self.es, self.ctx.info.sm_count, self._occ[k], self.unrolls[case.op], self.waves,
                                   self.block)
        if self.shape_mode == "chunk":
            return cands[:1]
        if self.shape_mode == "persistent":
            return cands[-1:]
        return cands

    def shape(self, case: MemoryCase, n: int) -> tuple[int, int]:
        """The default launch shape."""
        return self.shapes(case, n)[0]

    def launch(self, case: MemoryCase, n: int, ptrs: Sequence[int], partial: int, value: float, shape=None) -> None:
        grid, block = shape or self.shape(case, n)
        self.ctx.launch(self.kernel(case), grid, block, *case.args(ptrs, n, self.dtype, partial, value))

    def fill(self, ptr: int, n: int, seed: int) -> None:
        """Fill n elements at ``ptr`` with pseudo-random values in [0.5, 1.5) on the GPU."""
        k = self.ctx.kernel(SOURCE, f"fill_random_{SUFFIX[self.dtype]}", self.defines or None)
        grid = max(1, min(self.ctx.info.sm_count * 8, -(-n // BLOCK)))
        self.ctx.launch(k, grid, BLOCK, ptr, np.uint64(n), np.uint64(seed))

    # ------------------------------------------------------------ checks
    def check(self, case: MemoryCase, sizes: Sequence[int] = CHECK_SIZES, rng: np.random.Generator | None = None) -> CorrectnessCheck:
        """Run ``case`` at each size on fresh random data and compare with numpy.

        Every candidate launch shape is checked, plus (for vec16) a grid of 3
        blocks, so the loops over many chunks and the partial last chunk run too.

        Raises:
            MeasurementError: a wrong element, an unwritten element (NaN poison),
                or a write past the end of an output (guard changed).
        """
        rng = rng or np.random.default_rng()
        ctx = self.ctx
        for n in sizes:
            shapes = list(self.shapes(case, n))
            if case.variant == "vec16" and shapes[0][0] > 3:
                shapes.append((3, self.block))
            grid_max = max(g for g, _ in shapes)
            ins = case.make_inputs(rng, n, self.np_dtype)
            value = float(rng.random() + 0.5)
            nout = case.outputs if case.op != "read" else 1
            out_cap = n if case.op != "read" else grid_max
            bufs, outs = [], []
            try:
                for a in ins:
                    b = ctx.alloc(a.nbytes)
                    bufs.append(b)
                    ctx.upload(b, a)
                for _ in range(nout):
                    b = ctx.alloc((out_cap + GUARD) * self.es)
                    outs.append(b)
                    bufs.append(b)
                ptrs = [b.ptr for b in bufs]
                for grid, block in shapes:
                    out_len = n if case.op != "read" else grid
                    for b in outs:
                        ctx.memset(b, 0xFF)
                    partial = outs[0].ptr if case.op == "read" else 0
                    self.launch(case, n, ptrs, partial, value, (grid, block))
                    ctx.sync(f"running {case.name} {self.dtype} at n={n}")
                    got = [ctx.download(b, self.np_dtype, out_cap + GUARD) for b in outs]
                    where = f"at n={n} (grid {grid} x {block})"
                    for g in got:
                        guard = g[out_len:].view(f"u{self.es}")
                        if not np.all(guard == np.iinfo(guard.dtype).max):
                            raise MeasurementError(
                                f"kernel {case.name} {self.dtype} wrote past the end of its output {where}; "
                                f"the kernel in microbench/{SOURCE} is wrong"
                            )
                    problem = case.verify(ins, [g[:out_len] for g in got], value)
                    if problem:
                        raise MeasurementError(
                            f"kernel {case.name} {self.dtype} gave a wrong result {where}: {problem}; "
                            f"the kernel in microbench/{SOURCE} is wrong (no figure reported)"
                        )
            finally:
                for b in bufs:
                    b.free()
        return CorrectnessCheck(case.name, self.dtype, tuple(sizes))

    # ------------------------------------------------------------ timing
    def time_size(
        self,
        cases: Sequence[MemoryCase],
        n: int,
        *,
        spec_gbs: float | None,
        budget_s: float,
        min_reps: int = 5,
        max_reps: int = 200,
        on_row: Callable[[BandwidthRow | None, str], None] | None = None,
        free_fraction: float = 0.8,
    ) -> tuple[list[BandwidthRow], list[str]]:
        """Time every case at n elements; returns (rows, notes).

        Allocates ``max(arrays)`` x buffer sets once for all cases at this size
        (sets cut to fit ``free_fraction`` of free memory; the size is skipped
        with a note when even one set does not fit), fills them on the GPU,
        and frees them before returning, on every path. Where a case has
        several candidate launch shapes, each is timed briefly (5 repetitions)
        and the faster one is timed in full. Calls shorter than 200 us are
        padded (:meth:`GpuContext.spin`) so the events time the GPU only.
        """
        from ..engine.context import DeviceOutOfMemory
        from ..engine.timing import time_gpu

        ctx, es = self.ctx, self.es
        l2 = ctx.info.l2_bytes
        arrays = max(c.arrays for c in cases)
        want_sets = max(buffer_sets_needed(c.working_set(n, es), l2) for c in cases)
        free, _ = ctx.mem_info()
        per_set = arrays * n * es
        all_shapes = {c.name: self.shapes(c, n) for c in cases}
        partial_bytes = max(g for shapes in all_shapes.values() for g, _ in shapes) * es + 256
        sets = plan_sets(per_set, want_sets, free, partial_bytes, free_fraction)
        notes: list[str] = []

        def skip(note):
            if on_row:
                for _ in cases:
                    on_row(None, note)
            return [], notes + [note]

        if sets < 1:
            return skip(f"n={n} skipped: {arrays} x {per_set // arrays} bytes do not fit in the GPU's free memory")
        if sets < want_sets:
            notes.append(f"n={n}: rotating {sets} buffer sets instead of {want_sets} (free memory)")
        bufs = []
        partial = None
        rows: list[BandwidthRow] = []
        try:
            try:
                for s in range(sets):
                    bufs.append([ctx.alloc(n * es) for _ in range(arrays)])
                partial = ctx.alloc(partial_bytes)
            except DeviceOutOfMemory:
                return skip(f"n={n} skipped: out of GPU memory allocating {sets} x {per_set} bytes")
            for s, group in enumerate(bufs):
                for j, b in enumerate(group):
                    self.fill(b.ptr, n, seed=1 + s * 16 + j)
            value = 1.25
            stream = ctx.stream
            for case in cases:
                ws = case.working_set(n, es)
                k = min(sets, buffer_sets_needed(ws, l2))
                kern = self.kernel(case)
                argsets = [case.args([b.ptr for b in bufs[s]], n, self.dtype, partial.ptr, value) for s in range(k)]

                def make_fn(grid, block):
                    go = ctx.launcher(kern, grid, block)

                    def fn(i):
                        go(*argsets[i % k])

                    return fn

                shapes = all_shapes[case.name]
                if len(shapes) > 1:
                    probes = [time_gpu(stream, ctx.events, make_fn(*sh), warmup=1, reps=5, pad=ctx.spin).median_s
                              for sh in shapes]
                    shapes = [shapes[probes.index(min(probes))]]
                grid, block = shapes[0]
                m = time_gpu(stream, ctx.events, make_fn(grid, block), warmup=2, budget_s=budget_s, min_reps=min_reps,
                             max_reps=max_reps, pad=ctx.spin)
                row = BandwidthRow(
                    kernel=case.name, op=case.op, variant=case.variant, dtype=self.dtype, elements=n,
                    bytes_moved=case.bytes_moved(n, es, grid), working_set_bytes=ws, buffer_sets=k,
                    regime=classify_regime(ws, k, l2), time=m, spec_bandwidth_gbs=spec_gbs, grid=grid, block=block,
                )
                rows.append(row)
                if on_row:
                    on_row(row, "")
            ctx.sync(f"timing n={n}")
        finally:
            for group in bufs:
                for b in group:
                    b.free()
            if partial is not None:
                partial.free()
        return rows, notes


def cpu_vecadd(n: int | None = None, dtype: str = "fp32", reps: int = 5):
    """numpy ``np.add(a, b, out=c)`` on one CPU core: (Measurement, bytes moved).

    numpy's add is single-threaded; data is random non-zero, touched once
    before timing so page faults stay out.
    """
    import time

    from ..engine.timing import summarize

    n = CPU_ELEMENTS if n is None else n
    t = DTYPES[dtype]
    rng = np.random.default_rng(7)
    a = (rng.random(n, dtype=np.float32) + 0.5).astype(t)
    b = (rng.random(n, dtype=np.float32) + 0.5).astype(t)
    c = np.empty_like(a)
    np.add(a, b, out=c)
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.add(a, b, out=c)
        samples.append(time.perf_counter() - t0)
    if not np.array_equal(c, a + b):
        raise MeasurementError("numpy's vecadd gave a wrong result (the CPU comparison is void)")
    return summarize(samples, warmup=1), 3 * n * a.itemsize


def cpu_comparison(rows: Sequence[BandwidthRow], dtype: str, n: int | None = None) -> CpuComparison:
    """The CPU line, matched with the GPU's naive vecadd (else the vectorized one) at n
    (default :data:`CPU_ELEMENTS`)."""
    n = CPU_ELEMENTS if n is None else n
    m, nbytes = cpu_vecadd(n, dtype)
    gpu = next((r for r in rows if r.op == "vecadd" and r.variant == "naive" and r.elements == n), None)
    gpu = gpu or next((r for r in rows if r.op == "vecadd" and r.elements == n), None)
    return CpuComparison(n, dtype, m, nbytes, gpu.kernel if gpu else None, gpu.time.median_s if gpu else None)


def bytes_for_case(case: MemoryCase, n: int, dtype: str, grid: int) -> int:
    """Bytes moved by ``case`` at n elements of ``dtype`` (a convenience for tests and docs)."""
    return case.bytes_moved(n, np.dtype(DTYPES[dtype]).itemsize, grid)
