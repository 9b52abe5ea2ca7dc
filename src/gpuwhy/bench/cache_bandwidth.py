"""Cache ceilings: L2 read and read+write bandwidth, shared-memory and L1 bandwidth.

``gpuwhy bench --sweep`` runs them after the DRAM sweep and the compute ceilings
(:func:`measure_caches`) and saves the figures in the device profile
(:func:`gpuwhy.profiles.record_caches`)::

    from gpuwhy.engine.context import open_device
    from gpuwhy.bench.cache_bandwidth import run_caches

    with open_device("0") as ctx:
        rows, notes, samples = run_caches(ctx)        # CacheRow per level and working set

Conventions (each row carries its own :attr:`CacheRow.convention`):

- L2 read: ``l2_read_u*`` in ``microbench/cache.cu`` sweeps a buffer of L2/8, L2/4 and
  L2/2 bytes (well inside the L2, far beyond the L1 of every SM together for all but the
  smallest L2s) ``passes`` times with ``ld.global.cg`` (cached in L2 only: no L1 hit can
  lift the figure); bytes = bytes read (16 per vector per pass). The L2 roof is the best
  of these rows.
- L2 read+write: ``l2_copy_u*`` on two arrays of L2/8 each: bytes = read + written.
- shared memory: ``smem_read_b*``, one full wave of blocks (SMs x resident blocks), each
  reading 16-byte vectors of 32 KiB of shared memory without bank conflicts; bytes = bytes
  loaded. Its clock-derived limit is 128 B/clk/SM x SMs x the SM clock NVML reported
  while the row was timed (:func:`gpuwhy.model.hierarchy.shared_clock_limit`).
- L1: ``l1_read_b*``, the same pattern from a 16 KiB global buffer every block of an SM
  shares (``ld.global.ca``: L1 hits after the first touch); bytes = bytes loaded. No
  documented clock limit (L1 and shared memory are one SRAM per SM; the shared-memory
  limit is an upper bound).

Every kernel adds the 32-bit words it reads (wrapping), so each launch shape is checked
exactly against numpy before it is timed (:func:`expected_l2_sum`,
:func:`expected_sm_sums`), and the last timed launch is checked again. A launch is
calibrated to take about :data:`TARGET_S`; candidate shapes are timed briefly and the
fastest kept, then timed in full with :func:`gpuwhy.engine.timing.time_gpu`, the SM clock
sampled meanwhile.

Pure parts (sizes, expected sums, the rows and the result) need no GPU.
"""

from __future__ import annotations

import datetime as _dt
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..engine.timing import Measurement
from ..errors import MeasurementError
from ..model.hierarchy import SHARED_BYTES_PER_CLOCK, SHARED_LIMIT_SOURCE, shared_clock_limit
from ..units import fmt_num

SOURCE = "cache.cu"
#: Mirrors of the macros in cache.cu.
SMEM_VECS = 2048
L1_VECS = 1024
VEC_BYTES = 16
LOADS_PER_REP = 8
#: Rotation of the L2 sweeps between passes, in 16-byte vectors (a multiple of 32, so
#: warps stay aligned to 512-byte segments).
SHIFT_VECS = 32 * 97
#: L2 working sets, as fractions of the L2 (read); the read+write row uses two arrays of L2/8.
L2_FRACTIONS = (1 / 8, 1 / 4, 1 / 2)
COPY_FRACTION = 1 / 8
#: Candidate launch shapes: (vectors per thread in flight U, threads per block) for L2;
#: threads per block for shared memory and L1.
L2_SHAPES = ((4, 256), (8, 256), (4, 512), (8, 512), (2, 1024))
SM_BLOCKS = (1024, 512)
#: Wall time of one timed launch (s), and the timed repetitions' budget.
TARGET_S = 2e-3
BUDGET_S = 0.04
SEED = 0x9E37

CONVENTIONS = {
    ("L2", "read"): "bytes read; working set inside the L2, ld.global.cg (L1 bypassed), every SM sweeping it",
    ("L2", "read+write"): "bytes read + bytes written; two L2-resident arrays, ld/st.global.cg",
    ("shared", "read"): "bytes loaded from shared memory; 16-byte vectors, no bank conflicts, one wave of blocks",
    ("L1", "read"): "bytes loaded; a 16 KiB buffer every block of an SM reads (ld.global.ca, L1 hits)",
}


# ------------------------------------------------------------- pure parts ----


def l2_working_sets(l2_bytes: int) -> list[int]:
    """The L2 read working sets in bytes: :data:`L2_FRACTIONS` of ``l2_bytes``, each a
    multiple of 512 bytes (32 vectors)."""
    return [max(512, int(l2_bytes * f) // 512 * 512) for f in L2_FRACTIONS]


def expected_l2_sum(words: np.ndarray, passes: int) -> int:
    """The sum of every block's partial of ``l2_read``: passes x (sum of the 32-bit words) mod 2^32."""
    total = int(np.sum(words.astype(np.uint64), dtype=np.uint64)) & 0xFFFFFFFF
    return (total * int(passes)) & 0xFFFFFFFF


def smem_pattern(seed: int = SEED) -> np.ndarray:
    """The shared-memory contents ``smem_read`` writes: (SMEM_VECS, 4) uint32,
    word c of vector i = (4i + c) x 2654435761 + seed mod 2^32 (``fill_word`` in cache.cu)."""
    i = np.arange(SMEM_VECS * 4, dtype=np.uint64)
    return ((i * np.uint64(2654435761) + np.uint64(seed)) & np.uint64(0xFFFFFFFF)).astype(np.uint32).reshape(SMEM_VECS, 4)


def expected_sm_sums(vectors: np.ndarray, block: int, reps: int) -> np.ndarray:
    """What thread t of every block of ``smem_read``/``l1_read`` writes: reps x the sum of
    the words of vectors (t + k x block) mod V for k < 8, mod 2^32 (uint32, one per thread).

    Raises:
        ValueError: 8 x block not a multiple of V (the loads would not repeat per rep).
    """
    nv = vectors.shape[0]
    if (LOADS_PER_REP * block) % nv:
        raise ValueError(f"8 x block {block} is not a multiple of {nv} vectors")
    per_vec = vectors.astype(np.uint64).sum(axis=1)
    t = np.arange(block)[:, None]
    idx = (t + np.arange(LOADS_PER_REP)[None, :] * block) % nv
    group = per_vec[idx].sum(axis=1) & np.uint64(0xFFFFFFFF)
    return ((group * np.uint64(reps)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def passes_for(target_s: float, probe_s: float, probe_passes: int, limit: int = 1 << 30) -> int:
    """Passes (or reps) so one launch takes about ``target_s``, from a probe of ``probe_passes``."""
    if not probe_s > 0:
        return probe_passes
    return int(max(probe_passes, min(limit, round(probe_passes * target_s / probe_s))))


@dataclass(frozen=True)
class CacheRow:
    """One cache-bandwidth measurement.

    Attributes:
        level: ``L2``, ``shared`` or ``L1``.
        op: ``read`` or ``read+write``.
        kernel: the kernel in cache.cu (``l2_read_u4``).
        working_set_bytes: distinct bytes one launch touches (per SM for shared and L1).
        bytes_moved: bytes per launch by :attr:`convention`.
        time: per-launch :class:`~gpuwhy.engine.timing.Measurement` (s).
        grid, block: the launch shape; repeat: passes (L2) or reps of 8 loads (shared, L1).
        sm_clock_mhz: median NVML SM clock during the timed launches, or None.
        clock_limit_gbs: the clock-derived limit (shared memory), GB/s, or None.
    """

    level: str
    op: str
    kernel: str
    working_set_bytes: int
    bytes_moved: int
    time: Measurement
    grid: int
    block: int
    repeat: int
    sm_clock_mhz: float | None = None
    clock_limit_gbs: float | None = None

    @property
    def gbs(self) -> float:
        """Bandwidth at the median time, GB/s (1e9 B/s)."""
        return self.bytes_moved / self.time.median_s / 1e9

    @property
    def pct_of_limit(self) -> float | None:
        return 100.0 * self.gbs / self.clock_limit_gbs if self.clock_limit_gbs else None

    @property
    def convention(self) -> str:
        return CONVENTIONS.get((self.level, self.op), "")

    def to_dict(self) -> dict:
        return {"level": self.level, "op": self.op, "kernel": self.kernel, "working_set_bytes": self.working_set_bytes,
                "bytes_moved": self.bytes_moved, "median_s": self.time.median_s, "cv": self.time.cv,
                "reps": self.time.reps, "gbs": self.gbs, "grid": self.grid, "block": self.block,
                "repeat": self.repeat, "sm_clock_mhz": self.sm_clock_mhz, "clock_limit_gbs": self.clock_limit_gbs,
                "pct_of_limit": self.pct_of_limit, "convention": self.convention}


@dataclass(frozen=True)
class CacheResult:
    """What one cache-ceiling run measured. ``device`` is a
    :class:`~gpuwhy.engine.context.DeviceInfo`; ``sm_clock`` the summary of every NVML
    sample (:func:`gpuwhy.bench.compute.sample_summary`); ``l2_near_bytes`` where the
    latency ladder put the near-L2 partition's edge (None: no ladder, or no far step)."""

    device: Any
    rows: tuple[CacheRow, ...]
    checks: tuple[str, ...] = ()
    sm_clock: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    date: str = ""
    duration_s: float = 0.0
    l2_near_bytes: int | None = None

    def best(self, level: str, op: str | None = None) -> CacheRow | None:
        """The fastest row of ``level`` (and ``op``), or None."""
        rows = [r for r in self.rows if r.level == level and (op is None or r.op == op)]
        return max(rows, key=lambda r: r.gbs) if rows else None

    def summary_line(self) -> str:
        parts = []
        for level, op, word in (("L2", "read", "L2 read"), ("L2", "read+write", "L2 read+write"),
                                ("shared", None, "shared memory"), ("L1", None, "L1")):
            r = self.best(level, op)
            if r is None:
                continue
            s = f"{word} {r.gbs:,.0f} GB/s"
            if r.pct_of_limit is not None:
                s += f" ({r.pct_of_limit:.1f}% of {r.clock_limit_gbs:,.0f} at {r.sm_clock_mhz:,.0f} MHz)"
            elif level == "L2" and op == "read":
                s += f" ({fmt_num(r.working_set_bytes / 2**20)} MiB working set)"
            parts.append(s)
        return "caches: " + ("; ".join(parts) if parts else "nothing measured")

    def to_dict(self) -> dict:
        best = {f"{lv}_{op or 'read'}".replace("+", "_"): (r.gbs if r else None)
                for lv, op in (("L2", "read"), ("L2", "read+write"), ("shared", None), ("L1", None))
                for r in (self.best(lv, op),)}
        return {"date": self.date, "device": self.device.to_dict() if hasattr(self.device, "to_dict") else self.device,
                "rows": [r.to_dict() for r in self.rows], "best_gbs": best, "checks": list(self.checks),
                "sm_clock": dict(self.sm_clock), "shared_limit_rule": SHARED_LIMIT_SOURCE,
                "l2_near_bytes": self.l2_near_bytes, "notes": list(self.notes), "duration_s": self.duration_s,
                "summary": self.summary_line()}


# ------------------------------------------------------------------ runner ----


def _median(xs) -> float | None:
    xs = [float(x) for x in xs if x]
    return statistics.median(xs) if xs else None


class _Timer:
    """Calibrate and time one kernel family on an open context, sampling the clock."""

    def __init__(self, ctx, sample: Callable[[], tuple] | None, target_s: float, budget_s: float):
        self.ctx, self.sample, self.target_s, self.budget_s = ctx, sample, target_s, budget_s
        self.samples: list = []

    def probe(self, fn: Callable[[int], None]) -> float:
        from ..engine.timing import time_gpu

        return time_gpu(self.ctx.stream, self.ctx.events, fn, warmup=1, reps=3, estimate=False).median_s

    def full(self, fn: Callable[[int], None]) -> tuple[Measurement, float | None]:
        from ..engine.timing import collect, time_gpu

        hook, samples = collect(self.sample)
        m = time_gpu(self.ctx.stream, self.ctx.events, fn, warmup=2, budget_s=self.budget_s, min_reps=5, max_reps=50,
                     sample=hook, interval_s=0.002)
        if hook is not None and not samples:  # the launches ended before the first poll: read the clock right after
            hook()
        self.samples.extend(samples)
        return m, _median(s[0] for s in samples if s)


def _u32(x: int) -> np.uint32:
    return np.uint32(int(x) & 0xFFFFFFFF)


def _l2_rows(ctx, timer: _Timer, rng: np.random.Generator, prog, checks: list[str]) -> list[CacheRow]:
    """L2 read at each working set, then L2 read+write."""
    l2 = int(ctx.info.l2_bytes)
    sms = int(ctx.info.sm_count)
    rows: list[CacheRow] = []
    shapes = []
    for u, block in L2_SHAPES:
        k = ctx.kernel(SOURCE, f"l2_read_u{u}")
        shapes.append((u, block, sms * ctx.occupancy(k, block)))
    max_grid = max(g for _, _, g in shapes)
    sizes = l2_working_sets(l2)
    with ctx.alloc(max(sizes)) as buf, ctx.alloc(4 * max_grid) as part:
        # correctness: every shape, a small odd-sized buffer (remainders) and 3 passes
        small = 3 * 1024 + 17
        words = rng.integers(0, 2**32, size=small * 4, dtype=np.uint64).astype(np.uint32)
        ctx.upload(buf, words)
        for u, block, grid in shapes:
            k = ctx.kernel(SOURCE, f"l2_read_u{u}")
            ctx.memset(part, 0)
            ctx.launch(k, grid, block, buf.ptr, np.uint64(small), np.uint32(3), np.uint64(SHIFT_VECS % small), part.ptr)
            got = int(ctx.download(part, np.uint32, grid).astype(np.uint64).sum()) & 0xFFFFFFFF
            want = expected_l2_sum(words, 3)
            if got != want:
                raise MeasurementError(f"l2_read_u{u} ({grid} x {block}) summed 0x{got:08x}, expected 0x{want:08x}: "
                                       f"the kernel in microbench/{SOURCE} is wrong (no L2 figure reported)")
        checks.append(f"l2_read: {len(shapes)} launch shapes, sum of {small:,} vectors x 3 passes exact")
        for ws in sizes:
            prog(description=f"L2 read, {fmt_num(ws / 2**20)} MiB")
            nvec = ws // VEC_BYTES
            words = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
            ctx.upload(buf, words)
            rows.append(_time_l2_read(ctx, timer, buf, part, nvec, words, shapes))
            prog(advance=1)
        prog(description="L2 read+write")
        rows.append(_time_l2_copy(ctx, timer, buf, rng, l2, shapes, checks))
        prog(advance=1)
    return rows


def _time_l2_read(ctx, timer: _Timer, buf, part, nvec: int, words: np.ndarray, shapes) -> CacheRow:
    shift = np.uint64(SHIFT_VECS % nvec)
    best = None
    probe_passes = 4
    for u, block, grid in shapes:
        go = ctx.launcher(ctx.kernel(SOURCE, f"l2_read_u{u}"), grid, block)
        t = timer.probe(lambda i, go=go: go(buf.ptr, np.uint64(nvec), np.uint32(probe_passes), shift, part.ptr))
        if best is None or t < best[0]:
            best = (t, u, block, grid)
    t, u, block, grid = best
    passes = passes_for(timer.target_s, t, probe_passes)
    go = ctx.launcher(ctx.kernel(SOURCE, f"l2_read_u{u}"), grid, block)
    m, clk = timer.full(lambda i: go(buf.ptr, np.uint64(nvec), np.uint32(passes), shift, part.ptr))
    got = int(ctx.download(part, np.uint32, grid).astype(np.uint64).sum()) & 0xFFFFFFFF
    if got != expected_l2_sum(words, passes):
        raise MeasurementError(f"the timed l2_read_u{u} launches over {nvec * VEC_BYTES:,} bytes gave a wrong sum "
                               "(no L2 figure reported)")
    ws = nvec * VEC_BYTES
    return CacheRow("L2", "read", f"l2_read_u{u}", ws, ws * passes, m, grid, block, passes, clk)


def _time_l2_copy(ctx, timer: _Timer, buf, rng, l2: int, shapes, checks: list[str]) -> CacheRow:
    nvec = max(512, int(l2 * COPY_FRACTION) // 512 * 512) // VEC_BYTES
    shift = np.uint64(SHIFT_VECS % nvec)
    a_words = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
    ctx.upload(buf, a_words)
    with ctx.alloc(nvec * VEC_BYTES) as out:
        best = None
        for u, block, grid in shapes:
            go = ctx.launcher(ctx.kernel(SOURCE, f"l2_copy_u{u}"), grid, block)
            ctx.memset(out, 0xFF)
            go(buf.ptr, out.ptr, np.uint64(nvec), np.uint32(3), shift)
            got = ctx.download(out, np.uint32, nvec * 4)
            if not np.array_equal(got, a_words + np.uint32(2)):
                raise MeasurementError(f"l2_copy_u{u} ({grid} x {block}) wrote a wrong result: the kernel in "
                                       f"microbench/{SOURCE} is wrong (no L2 read+write figure reported)")
            t = timer.probe(lambda i, go=go: go(buf.ptr, out.ptr, np.uint64(nvec), np.uint32(4), shift))
            if best is None or t < best[0]:
                best = (t, u, block, grid)
        checks.append(f"l2_copy: {len(shapes)} launch shapes, b = a + (passes - 1) exact on {nvec:,} vectors")
        t, u, block, grid = best
        passes = passes_for(timer.target_s, t, 4)
        go = ctx.launcher(ctx.kernel(SOURCE, f"l2_copy_u{u}"), grid, block)
        m, clk = timer.full(lambda i: go(buf.ptr, out.ptr, np.uint64(nvec), np.uint32(passes), shift))
        got = ctx.download(out, np.uint32, nvec * 4)
        if not np.array_equal(got, a_words + _u32(passes - 1)):
            raise MeasurementError("the timed l2_copy launches wrote a wrong result (no L2 read+write figure reported)")
    ws = 2 * nvec * VEC_BYTES
    return CacheRow("L2", "read+write", f"l2_copy_u{u}", ws, ws * passes, m, grid, block, passes, clk)


def _sm_row(ctx, timer: _Timer, level: str, rng, checks: list[str]) -> CacheRow:
    """Shared memory (``smem_read_b*``) or L1 (``l1_read_b*``): check each block size, keep the faster, time it."""
    sms = int(ctx.info.sm_count)
    name = "smem_read" if level == "shared" else "l1_read"
    vecs = smem_pattern() if level == "shared" else rng.integers(0, 2**32, size=(L1_VECS, 4), dtype=np.uint64).astype(np.uint32)
    shapes = []
    for block in SM_BLOCKS:
        k = ctx.kernel(SOURCE, f"{name}_b{block}")
        shapes.append((block, sms * ctx.occupancy(k, block)))
    max_threads = max(g * b for b, g in shapes)
    with ctx.alloc(max_threads * 4) as out, ctx.alloc(L1_VECS * VEC_BYTES) as src:
        if level == "L1":
            ctx.upload(src, vecs)

        def args(reps):
            return (src.ptr, out.ptr, np.uint32(reps)) if level == "L1" else (out.ptr, np.uint32(reps), np.uint32(SEED))

        def verify(block, grid, reps, what):
            got = ctx.download(out, np.uint32, grid * block).reshape(grid, block)
            want = expected_sm_sums(vecs, block, reps)
            bad = np.nonzero(np.any(got != want[None, :], axis=1))[0]
            if bad.size:
                raise MeasurementError(f"{name}_b{block} {what}: block {int(bad[0])} read wrong data; the kernel in "
                                       f"microbench/{SOURCE} is wrong (no {level} figure reported)")

        best = None
        for block, grid in shapes:
            go = ctx.launcher(ctx.kernel(SOURCE, f"{name}_b{block}"), grid, block)
            ctx.memset(out, 0xFF)
            go(*args(3))
            verify(block, grid, 3, "at 3 reps")
            t = timer.probe(lambda i, go=go: go(*args(64)))
            if best is None or t < best[0]:
                best = (t, block, grid)
        checks.append(f"{name}: {len(shapes)} block sizes, every thread's sum exact")
        t, block, grid = best
        reps = passes_for(timer.target_s, t, 64)
        go = ctx.launcher(ctx.kernel(SOURCE, f"{name}_b{block}"), grid, block)
        m, clk = timer.full(lambda i: go(*args(reps)))
        verify(block, grid, reps, f"at {reps} reps (timed)")
    nbytes = grid * block * reps * LOADS_PER_REP * VEC_BYTES
    limit = shared_clock_limit(sms, clk) / 1e9 if (level == "shared" and clk) else None
    ws = (SMEM_VECS if level == "shared" else L1_VECS) * VEC_BYTES
    return CacheRow(level, "read", f"{name}_b{block}", ws, nbytes, m, grid, block, reps, clk, limit)


def run_caches(ctx, *, sample: Callable[[], tuple] | None = None, progress: Callable[..., None] | None = None,
               target_s: float = TARGET_S, budget_s: float = BUDGET_S, rng: np.random.Generator | None = None,
               ) -> tuple[list[CacheRow], list[str], list, list[str]]:
    """Measure the cache ceilings on an open :class:`~gpuwhy.engine.context.GpuContext`.

    Args:
        sample: returns (SM clock MHz, power W, clock-event mask), e.g.
            :meth:`gpuwhy.device.sample.ClockSampler.sample`; polled while the timed launches run.
        progress: ``progress(total=, advance=, description=)``.
        target_s: wall time of one timed launch; budget_s: of a row's timed launches.

    Returns:
        (rows, checks, clock samples, notes).

    Raises:
        MeasurementError: a kernel gave a wrong result, or a CUDA error.
    """
    prog = progress or (lambda **kw: None)
    rng = rng or np.random.default_rng()
    timer = _Timer(ctx, sample, target_s, budget_s)
    checks: list[str] = []
    notes: list[str] = []
    prog(total=len(L2_FRACTIONS) + 3, description="cache ceilings")
    rows = _l2_rows(ctx, timer, rng, prog, checks)
    for level in ("shared", "L1"):
        prog(description=f"{level} bandwidth")
        rows.append(_sm_row(ctx, timer, level, rng, checks))
        prog(advance=1)
    if sample is None or not any(r.sm_clock_mhz for r in rows):
        notes.append("no SM clock samples (NVML unavailable): no clock-derived shared-memory limit")
    notes.append(f"shared-memory limit: {SHARED_BYTES_PER_CLOCK} B/clk/SM; {SHARED_LIMIT_SOURCE}")
    return rows, checks, timer.samples, notes


def time_l2_read(ctx, working_set_bytes: int, *, sample: Callable[[], tuple] | None = None,
                 rng: np.random.Generator | None = None, target_s: float = TARGET_S,
                 budget_s: float = BUDGET_S) -> CacheRow:
    """One L2 read row at ``working_set_bytes`` (rounded down to 512 bytes), every launch
    shape checked first, exactly as :func:`run_caches` times it (for peer comparisons).

    Raises:
        MeasurementError: a wrong sum, or a CUDA error.
    """
    rng = rng or np.random.default_rng()
    timer = _Timer(ctx, sample, target_s, budget_s)
    sms = int(ctx.info.sm_count)
    shapes = [(u, b, sms * ctx.occupancy(ctx.kernel(SOURCE, f"l2_read_u{u}"), b)) for u, b in L2_SHAPES]
    nvec = max(512, int(working_set_bytes) // 512 * 512) // VEC_BYTES
    words = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
    with ctx.alloc(nvec * VEC_BYTES) as buf, ctx.alloc(4 * max(g for _, _, g in shapes)) as part:
        ctx.upload(buf, words)
        return _time_l2_read(ctx, timer, buf, part, nvec, words, shapes)


def time_shared(ctx, *, sample: Callable[[], tuple] | None = None, rng: np.random.Generator | None = None,
                target_s: float = TARGET_S, budget_s: float = BUDGET_S) -> CacheRow:
    """One shared-memory row (every block size checked first), as :func:`run_caches` times it."""
    timer = _Timer(ctx, sample, target_s, budget_s)
    return _sm_row(ctx, timer, "shared", rng or np.random.default_rng(), [])


def l2_partition_notes(rows: Sequence[CacheRow], near_bytes: int | None) -> list[str]:
    """Which L2 read rows fit in the near L2 partition the latency ladder found."""
    if not near_bytes:
        return []
    inside = [r for r in rows if r.level == "L2" and r.op == "read" and r.working_set_bytes <= near_bytes]
    outside = [r for r in rows if r.level == "L2" and r.op == "read" and r.working_set_bytes > near_bytes]
    txt = (f"the latency ladder puts the near-L2 partition's edge at {fmt_num(near_bytes / 2**20)} MiB: "
           f"{len(inside)} L2 read row(s) fit in it, {len(outside)} reach the far partition")
    if inside and outside:
        a, b = max(inside, key=lambda r: r.gbs), max(outside, key=lambda r: r.gbs)
        txt += f" (best {a.gbs:,.0f} vs {b.gbs:,.0f} GB/s)"
    return [txt]


def measure_caches(device: str | None = None, *, progress: Callable[..., None] | None = None) -> CacheResult:
    """Open the GPU, measure the cache ceilings with the SM clock sampled, return a :class:`CacheResult`.

    Raises:
        NoDeviceError: no GPU (exit 3); MeasurementError: a wrong result or CUDA error (exit 4).
    """
    from ..device.sample import ClockSampler
    from ..engine.context import open_device
    from .compute import sample_summary

    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    with open_device(device) as ctx:
        info = ctx.info
        with ClockSampler(info.uuid) as clock:
            rows, checks, samples, notes = run_caches(ctx, sample=clock.sample, progress=progress)
    near = None
    try:
        from ..profiles import latest_profile

        prof = latest_profile(info.uuid, need="latency_date")
        near = prof.l2_near_bytes if prof is not None else None
    except Exception:  # the profile store is a cache: never a reason to fail
        near = None
    notes = l2_partition_notes(rows, near) + list(notes)
    return CacheResult(info, tuple(rows), tuple(checks), sample_summary(samples), tuple(notes), date,
                       time.perf_counter() - t0, near)
