"""Cache ceilings: L2 read and read+write bandwidth, shared-memory and L1 bandwidth.

``gpuwhy bench --sweep`` runs them after the DRAM sweep and the compute ceilings
(:func:`measure_caches`) and saves the figures in the device profile
(:data:`gpuwhy.profile_sections.CACHES`)::

    from gpuwhy.engine.context import open_device
    from gpuwhy.bench.cache_bandwidth import run_caches

    with open_device("0") as ctx:
        run = run_caches(ctx)      # run.rows: CacheRow per level and working set; run.failures: not reported

Conventions (each row carries its own :attr:`CacheRow.convention`):

- L2 read: ``l2_read_u*`` in ``microbench/cache.cu`` sweeps a buffer of L2/8, L2/4 and
  L2/2 bytes (well inside the L2, far beyond the L1 of every SM together for all but the
  smallest L2s) ``passes`` times with ``ld.global.cg`` (cached in L2 only: no L1 hit can
  lift the figure); bytes = bytes read (16 per vector per pass). The L2 roof is the best
  of these rows.
- L2 read+write: ``l2_copy_u*`` on two arrays of L2/8 each: bytes = read + written.
- shared memory: ``smem_read_b*``, one full wave of blocks (SMs x resident blocks), each
  reading 16-byte vectors of 32 KiB of shared memory without bank conflicts; bytes = bytes
  loaded (8 x 16 per thread per rep, exactly the loads the loop makes). Its clock-derived
  limit is 128 B/clk/SM x SMs x the SM clock NVML reported while the row was timed
  (:func:`gpuwhy.model.roofline.hierarchy.shared_clock_limit`).
- L1: ``l1_read_b*``, the same pattern from a 16 KiB global buffer every block of an SM
  shares (plain ``ld.global``: L1 hits after the first touch); bytes = bytes loaded. L1
  and shared memory are one SRAM per SM, so the same 128 B/clk/SM is its limit.

Every kernel adds the 32-bit words it reads (wrapping), so each launch shape is checked
exactly against numpy before it is timed (:func:`expected_l2_sum`,
:func:`expected_l2_copy`, :func:`expected_sm_sums`), and the last timed launch is checked
again. A launch is calibrated to take about :data:`TARGET_S`; candidate shapes are timed
briefly and the fastest kept, then timed in full with
:func:`gpuwhy.engine.timing.time_gpu`, the SM clock sampled meanwhile.

A figure above what the SMs can load is a broken benchmark (loads hoisted, merged or
dropped by the compiler, or bytes miscounted), never a measurement: a row whose bytes
through the SMs' load pipes exceed 128 B/clk/SM x SMs x the highest SM clock seen while
it ran by more than :data:`LIMIT_TOLERANCE` is refused (:func:`over_limit`), for every
level (for L2 the bound is loose: no L2 figure of any GPU comes near it). Each family
(L2 read, L2 read+write, shared memory, L1) is measured on its own: one that fails its
check or is refused is "not reported" with the reason (:class:`CacheFailure`), and the
others are still reported and saved.

Pure parts (sizes, expected sums, the rows and the result) need no GPU.
"""

from __future__ import annotations

import datetime as _dt
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..engine.timing import Measurement
from ..errors import MeasurementError
from ..model.roofline.hierarchy import SHARED_BYTES_PER_CLOCK, SHARED_LIMIT_SOURCE, shared_clock_limit
from ..units import fmt_counted, fmt_num

SOURCE = "cache.cu"
#: Mirrors of the macros in cache.cu.
SMEM_VECS = 2048
L1_VECS = 1024
VEC_BYTES = 16
LOADS_PER_REP = 8
#: Vectors per chunk (one warp's 16-byte loads: 512 bytes), as GPUWHY_CHUNK_VECS in cache.cu.
CHUNK_VECS = 32
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
#: A figure more than this share above its clock-derived limit is refused: the NVML clock
#: is sampled every few milliseconds, so the clock a launch ran at may be a little above
#: the highest sample; a real measurement never is 3% above the hardware's limit.
LIMIT_TOLERANCE = 0.03

CONVENTIONS = {
    ("L2", "read"): "bytes read; working set inside the L2, ld.global.cg (L1 bypassed), every SM sweeping it",
    ("L2", "read+write"): "bytes read + bytes written; two L2-resident arrays, ld/st.global.cg",
    ("shared", "read"): "bytes loaded from shared memory; 16-byte vectors, no bank conflicts, one wave of blocks",
    ("L1", "read"): "bytes loaded; a 16 KiB buffer every block of an SM reads (ld.global, L1 hits)",
}


# ------------------------------------------------------------- pure parts ----


def _u32(x: int) -> np.uint32:
    return np.uint32(int(x) & 0xFFFFFFFF)


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


def expected_l2_copy(a_words: np.ndarray, passes: int, shift: int) -> np.ndarray:
    """What ``l2_copy`` leaves in b after ``passes`` passes over a (uint32 words, 4 per
    16-byte vector): b[i] = a[(i + r) mod nvec] + (passes - 1) per word, r = ((passes - 1)
    x shift) mod nvec, the rotation of the last pass (each thread stores at its own index,
    so the last pass is the one left).

    Raises:
        ValueError: no passes, or a word count that is not 4 per vector.
    """
    if passes < 1 or a_words.size % 4:
        raise ValueError(f"passes={passes} must be >= 1 and {a_words.size} words a multiple of 4")
    vecs = a_words.reshape(-1, 4)
    rot = ((int(passes) - 1) * int(shift)) % vecs.shape[0]
    return (np.roll(vecs, -rot, axis=0) + _u32(passes - 1)).reshape(-1)


def expected_sm_sums(vectors: np.ndarray, block: int, reps: int) -> np.ndarray:
    """What thread t of every block of ``smem_read``/``l1_read`` writes (uint32, one per thread).

    ``vectors`` (V, 4) uint32 is split into V/32 chunks of 32 vectors and G = V / 256
    groups; at rep r, lane l of warp w (t = 32 w + l) loads vector 32 (j + G k) + l for
    k < 8, j = (w + r) mod G. The result is the sum of every word it loaded, mod 2^32.

    Raises:
        ValueError: V not a multiple of 256 vectors, or ``block`` not of whole warps.
    """
    nv = vectors.shape[0]
    groups = nv // (CHUNK_VECS * LOADS_PER_REP)
    if groups < 1 or nv % (CHUNK_VECS * LOADS_PER_REP) or block % 32 or block < 32:
        raise ValueError(f"{nv} vectors must be a multiple of 256 and block {block} of whole warps")
    mask = np.uint64(0xFFFFFFFF)
    per_vec = vectors.astype(np.uint64).sum(axis=1)
    # group_sum[j, l]: one rep's words when j = (w + r) mod G, lane l
    group_sum = per_vec.reshape(LOADS_PER_REP, groups, CHUNK_VECS).sum(axis=0) & mask
    w = np.arange(block) // 32
    lane = np.arange(block) % 32
    j = np.arange(groups)
    # reps r < reps with (w + r) mod G == j
    count = reps // groups + (((j[None, :] - w[:, None]) % groups) < reps % groups)
    per_j = (count.astype(np.uint64) * group_sum[:, lane].T) & mask  # (block, G)
    return (per_j.sum(axis=1) & mask).astype(np.uint32)


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
        clock_limit_gbs: the clock-derived limit (shared memory and L1: 128 B/clk/SM x SMs x
            ``sm_clock_mhz``), GB/s, or None.
        sm_clock_max_mhz: the highest NVML SM clock seen during the timed launches, or None.
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
    sm_clock_max_mhz: float | None = None

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
                "repeat": self.repeat, "sm_clock_mhz": self.sm_clock_mhz, "sm_clock_max_mhz": self.sm_clock_max_mhz,
                "clock_limit_gbs": self.clock_limit_gbs, "pct_of_limit": self.pct_of_limit,
                "convention": self.convention}


#: How each level is written in sentences.
LEVEL_WORDS = {"L2": "L2", "shared": "shared memory", "L1": "L1"}


def load_pipe_bytes(row: CacheRow) -> int:
    """The bytes of ``row`` that went through the SMs' load pipes: all of them for a read,
    the read half of an L2 read+write."""
    return row.bytes_moved // 2 if row.op == "read+write" else row.bytes_moved


def over_limit(row: CacheRow, sm_count: int, clock_mhz: float | None) -> str | None:
    """Why ``row`` must not be reported, or None when it is plausible.

    The SMs load at most 128 B/clk/SM (:data:`~gpuwhy.model.roofline.hierarchy.SHARED_BYTES_PER_CLOCK`)
    from shared memory, L1 or any level behind them: a row whose load-pipe bytes
    (:func:`load_pipe_bytes`) per second exceed that x ``sm_count`` x ``clock_mhz`` (the
    highest SM clock seen while it ran) by more than :data:`LIMIT_TOLERANCE` measured a
    broken kernel or counted bytes wrong. None when ``clock_mhz`` is unknown (nothing to
    check against).
    """
    if not clock_mhz or not clock_mhz > 0 or not row.time.median_s > 0:
        return None
    limit = shared_clock_limit(sm_count, clock_mhz) / 1e9
    gbs = load_pipe_bytes(row) / row.time.median_s / 1e9
    if gbs <= limit * (1.0 + LIMIT_TOLERANCE):
        return None
    what = f"{LEVEL_WORDS.get(row.level, row.level)} {row.op}" if row.level == "L2" else LEVEL_WORDS.get(row.level, row.level)
    read = " (bytes read)" if row.op == "read+write" else ""
    return (f"{what}: {row.kernel} measured {gbs:,.0f} GB/s{read}, {gbs / limit:.2f}x the {limit:,.0f} GB/s that "
            f"{SHARED_BYTES_PER_CLOCK} B/clk/SM x {sm_count} SMs x {clock_mhz:,.0f} MHz allows: the kernel's loads were "
            "hoisted, merged or dropped, or its bytes are miscounted; not reported")


@dataclass(frozen=True)
class CacheFailure:
    """A family that was measured but not reported: ``level`` and ``op`` as in
    :class:`CacheRow`, ``reason`` the one line saying why (a wrong result, a figure above
    the clock-derived limit, a CUDA error)."""

    level: str
    op: str
    reason: str

    def to_dict(self) -> dict:
        return {"level": self.level, "op": self.op, "reason": self.reason}


@dataclass(frozen=True)
class CacheResult:
    """What one cache-ceiling run measured. ``device`` is a
    :class:`~gpuwhy.engine.context.DeviceInfo`; ``sm_clock`` the summary of every NVML
    sample (:func:`gpuwhy.bench.compute.sample_summary`); ``l2_near_bytes`` where the
    latency ladder put the near-L2 partition's edge (None: no ladder, or no far step);
    ``failures`` the families not reported, with why."""

    device: Any
    rows: tuple[CacheRow, ...]
    checks: tuple[str, ...] = ()
    sm_clock: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    date: str = ""
    duration_s: float = 0.0
    l2_near_bytes: int | None = None
    failures: tuple[CacheFailure, ...] = ()

    @property
    def failure(self) -> MeasurementError | None:
        """The error to raise once the result is printed and saved (exit 4): one family or
        more not reported; None when all were."""
        if not self.failures:
            return None
        what = "; ".join(f.reason for f in self.failures)
        return MeasurementError(f"{fmt_counted(len(self.failures), 'cache ceiling')} not reported: {what}")

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
                if any(f.level == level and (op is None or f.op == op) for f in self.failures):
                    parts.append(f"{word} not reported")
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
                "not_reported": [f.to_dict() for f in self.failures], "summary": self.summary_line()}


# ------------------------------------------------------------------ runner ----


def _median(xs) -> float | None:
    xs = [float(x) for x in xs if x]
    return statistics.median(xs) if xs else None


class _Timer:
    """Calibrate and time one kernel family on an open context, sampling the clock, and
    refuse a row above the clock-derived limit (:func:`over_limit`).

    ``ceiling_mhz`` is the clock to check against when no sample was taken (the GPU's
    highest SM clock: NVML's maximum or the sheet's boost clock), or None."""

    def __init__(self, ctx, sample: Callable[[], tuple] | None, target_s: float, budget_s: float,
                 ceiling_mhz: float | None = None):
        self.ctx, self.sample, self.target_s, self.budget_s = ctx, sample, target_s, budget_s
        self.ceiling_mhz = ceiling_mhz
        self.samples: list = []

    def probe(self, fn: Callable[[int], None]) -> float:
        from ..engine.timing import time_gpu

        return time_gpu(self.ctx.stream, self.ctx.events, fn, warmup=1, reps=3, estimate=False).median_s

    def full(self, fn: Callable[[int], None]) -> tuple[Measurement, float | None, float | None]:
        """(measurement, median SM clock MHz, highest SM clock MHz) of the timed launches."""
        from ..engine.timing import collect, time_gpu

        hook, samples = collect(self.sample)
        m = time_gpu(self.ctx.stream, self.ctx.events, fn, warmup=2, budget_s=self.budget_s, min_reps=5, max_reps=50,
                     sample=hook, interval_s=0.002)
        if hook is not None and not samples:  # the launches ended before the first poll: read the clock right after
            hook()
        self.samples.extend(samples)
        clocks = [float(s[0]) for s in samples if s and s[0]]
        return m, _median(clocks), (max(clocks) if clocks else None)

    def checked(self, row: CacheRow) -> CacheRow:
        """``row``, unless it is above the clock-derived limit.

        Raises:
            MeasurementError: the figure is impossible (the reason from :func:`over_limit`).
        """
        why = over_limit(row, int(self.ctx.info.sm_count), row.sm_clock_max_mhz or self.ceiling_mhz)
        if why:
            raise MeasurementError(why)
        return row


def _l2_shapes(ctx, kind: str) -> list[tuple[int, int, int]]:
    """(U, block, grid) of each :data:`L2_SHAPES` for ``l2_read`` or ``l2_copy``: a full wave."""
    sms = int(ctx.info.sm_count)
    return [(u, b, sms * ctx.occupancy(ctx.kernel(SOURCE, f"{kind}_u{u}"), b)) for u, b in L2_SHAPES]


def _l2_read_rows(ctx, timer: _Timer, rng: np.random.Generator, prog, checks: list[str]) -> list[CacheRow]:
    """L2 read at each working set of :func:`l2_working_sets`, every launch shape checked first."""
    shapes = _l2_shapes(ctx, "l2_read")
    sizes = l2_working_sets(int(ctx.info.l2_bytes))
    rows: list[CacheRow] = []
    with ctx.alloc(max(sizes)) as buf, ctx.alloc(4 * max(g for _, _, g in shapes)) as part:
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
    m, clk, clk_max = timer.full(lambda i: go(buf.ptr, np.uint64(nvec), np.uint32(passes), shift, part.ptr))
    got = int(ctx.download(part, np.uint32, grid).astype(np.uint64).sum()) & 0xFFFFFFFF
    if got != expected_l2_sum(words, passes):
        raise MeasurementError(f"the timed l2_read_u{u} launches over {nvec * VEC_BYTES:,} bytes gave a wrong sum "
                               "(no L2 figure reported)")
    ws = nvec * VEC_BYTES
    return timer.checked(CacheRow("L2", "read", f"l2_read_u{u}", ws, ws * passes, m, grid, block, passes, clk,
                                  sm_clock_max_mhz=clk_max))


def _l2_copy_row(ctx, timer: _Timer, rng: np.random.Generator, checks: list[str]) -> CacheRow:
    """L2 read+write: two arrays of L2/8, every launch shape checked (3 passes), the fastest timed."""
    shapes = _l2_shapes(ctx, "l2_copy")
    nvec = max(512, int(int(ctx.info.l2_bytes) * COPY_FRACTION) // 512 * 512) // VEC_BYTES
    shift = SHIFT_VECS % nvec
    a_words = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
    with ctx.alloc(nvec * VEC_BYTES) as src, ctx.alloc(nvec * VEC_BYTES) as out:
        ctx.upload(src, a_words)
        best = None
        want3 = expected_l2_copy(a_words, 3, shift)
        for u, block, grid in shapes:
            go = ctx.launcher(ctx.kernel(SOURCE, f"l2_copy_u{u}"), grid, block)
            ctx.memset(out, 0xFF)
            go(src.ptr, out.ptr, np.uint64(nvec), np.uint32(3), np.uint64(shift))
            got = ctx.download(out, np.uint32, nvec * 4)
            if not np.array_equal(got, want3):
                bad = int(np.count_nonzero(got.reshape(-1, 4) != want3.reshape(-1, 4)))
                raise MeasurementError(f"l2_copy_u{u} ({grid} x {block}) wrote a wrong result ({bad:,} of {nvec * 4:,} "
                                       f"words): the kernel in microbench/{SOURCE} is wrong (no L2 read+write figure "
                                       "reported)")
            t = timer.probe(lambda i, go=go: go(src.ptr, out.ptr, np.uint64(nvec), np.uint32(4), np.uint64(shift)))
            if best is None or t < best[0]:
                best = (t, u, block, grid)
        checks.append(f"l2_copy: {len(shapes)} launch shapes, b[i] = a[(i + rotation) mod n] + (passes - 1) exact on "
                      f"{nvec:,} vectors")
        t, u, block, grid = best
        passes = passes_for(timer.target_s, t, 4)
        go = ctx.launcher(ctx.kernel(SOURCE, f"l2_copy_u{u}"), grid, block)
        m, clk, clk_max = timer.full(lambda i: go(src.ptr, out.ptr, np.uint64(nvec), np.uint32(passes), np.uint64(shift)))
        got = ctx.download(out, np.uint32, nvec * 4)
        if not np.array_equal(got, expected_l2_copy(a_words, passes, shift)):
            raise MeasurementError("the timed l2_copy launches wrote a wrong result (no L2 read+write figure reported)")
    ws = 2 * nvec * VEC_BYTES
    return timer.checked(CacheRow("L2", "read+write", f"l2_copy_u{u}", ws, ws * passes, m, grid, block, passes, clk,
                                  sm_clock_max_mhz=clk_max))


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

        def args(reps):  # the last argument is the kernels' `zero` (0: see cache.cu)
            if level == "L1":
                return (src.ptr, out.ptr, np.uint32(reps), np.uint32(0))
            return (out.ptr, np.uint32(reps), np.uint32(SEED), np.uint32(0))

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
            go(*args(11))  # 11 reps: every group of chunks, some twice
            verify(block, grid, 11, "at 11 reps")
            t = timer.probe(lambda i, go=go: go(*args(64)))
            if best is None or t < best[0]:
                best = (t, block, grid)
        checks.append(f"{name}: {len(shapes)} block sizes, every thread's sum exact")
        t, block, grid = best
        reps = passes_for(timer.target_s, t, 64)
        go = ctx.launcher(ctx.kernel(SOURCE, f"{name}_b{block}"), grid, block)
        m, clk, clk_max = timer.full(lambda i: go(*args(reps)))
        verify(block, grid, reps, f"at {reps} reps (timed)")
    nbytes = grid * block * reps * LOADS_PER_REP * VEC_BYTES
    limit = shared_clock_limit(sms, clk) / 1e9 if clk else None
    ws = (SMEM_VECS if level == "shared" else L1_VECS) * VEC_BYTES
    return timer.checked(CacheRow(level, "read", f"{name}_b{block}", ws, nbytes, m, grid, block, reps, clk, limit,
                                  sm_clock_max_mhz=clk_max))


class CacheRun(NamedTuple):
    """What :func:`run_caches` returns: the reported rows, the checks made, the clock
    samples, notes, and the families not reported (:class:`CacheFailure`)."""

    rows: list
    checks: list
    samples: list
    notes: list
    failures: list


def run_caches(ctx, *, sample: Callable[[], tuple] | None = None, progress: Callable[..., None] | None = None,
               target_s: float = TARGET_S, budget_s: float = BUDGET_S, rng: np.random.Generator | None = None,
               clock_ceiling_mhz: float | None = None) -> CacheRun:
    """Measure the cache ceilings on an open :class:`~gpuwhy.engine.context.GpuContext`.

    Each family (L2 read, L2 read+write, shared memory, L1) is measured on its own: a wrong
    result, a figure above the clock-derived limit or a CUDA error in one makes it a
    :class:`CacheFailure` and the next one still runs.

    Args:
        sample: returns (SM clock MHz, power W, clock-event mask), e.g.
            :meth:`gpuwhy.device.sample.ClockSampler.sample`; polled while the timed launches run.
        progress: ``progress(total=, advance=, description=)``.
        target_s: wall time of one timed launch; budget_s: of a row's timed launches.
        clock_ceiling_mhz: the GPU's highest SM clock (:func:`clock_ceiling`), the clock the
            limit check uses when no sample was taken.

    Returns:
        a :class:`CacheRun`.
    """
    from ..engine.context import as_gpuwhy_error

    prog = progress or (lambda **kw: None)
    rng = rng or np.random.default_rng()
    timer = _Timer(ctx, sample, target_s, budget_s, clock_ceiling_mhz)
    checks: list[str] = []
    notes: list[str] = []
    failures: list[CacheFailure] = []
    rows: list[CacheRow] = []
    advanced = [0]

    def step(**kw):  # progress, counting the advances so a failed family still fills its share
        advanced[0] += kw.get("advance", 0)
        prog(**kw)

    step(total=len(L2_FRACTIONS) + 3, description="cache ceilings")
    families = (("L2", "read", len(L2_FRACTIONS), lambda: _l2_read_rows(ctx, timer, rng, step, checks)),
                ("L2", "read+write", 1, lambda: [_l2_copy_row(ctx, timer, rng, checks)]),
                ("shared", "read", 1, lambda: [_sm_row(ctx, timer, "shared", rng, checks)]),
                ("L1", "read", 1, lambda: [_sm_row(ctx, timer, "L1", rng, checks)]))
    for level, op, steps, measure in families:
        before = advanced[0]
        step(description=f"{LEVEL_WORDS[level]} {op}")
        try:
            rows.extend(measure())
        except Exception as exc:  # a wrong result, an impossible figure, a CUDA error: this family only
            err = as_gpuwhy_error(exc)
            if not isinstance(err, MeasurementError):
                raise
            failures.append(CacheFailure(level, op, str(err)))
        step(advance=steps - (advanced[0] - before))
    if sample is None or not any(r.sm_clock_mhz for r in rows):
        notes.append("no SM clock samples (NVML unavailable): no clock-derived shared-memory limit")
        if not clock_ceiling_mhz:
            notes.append("no SM clock known at all: the figures were not checked against the 128 B/clk/SM limit")
    notes.append(f"shared-memory limit: {SHARED_BYTES_PER_CLOCK} B/clk/SM; {SHARED_LIMIT_SOURCE}")
    return CacheRun(rows, checks, timer.samples, notes, failures)


def clock_ceiling(ctx) -> float | None:
    """The highest SM clock of the open device, MHz: NVML's maximum, else the spec sheet's
    boost clock, else None (never raises)."""
    try:
        from ..device.sample import sample

        s = sample(ctx.info.uuid, int(ctx.info.index))
        if s is not None and s.max_sm_clock_mhz:
            return float(s.max_sm_clock_mhz)
    except Exception:  # NVML is optional
        pass
    try:
        from ..device.sheet import sheet_for

        sheet = sheet_for(device=ctx.info).sheet
        return float(sheet.boost_clock_mhz) if sheet is not None and sheet.boost_clock_mhz else None
    except Exception:  # an unknown GPU has no sheet
        return None


def time_l2_read(ctx, working_set_bytes: int, *, sample: Callable[[], tuple] | None = None,
                 rng: np.random.Generator | None = None, target_s: float = TARGET_S,
                 budget_s: float = BUDGET_S, clock_ceiling_mhz: float | None = None) -> CacheRow:
    """One L2 read row at ``working_set_bytes`` (rounded down to 512 bytes), every launch
    shape checked first, exactly as :func:`run_caches` times it (for peer comparisons).

    Raises:
        MeasurementError: a wrong sum, a figure above the clock-derived limit, or a CUDA error.
    """
    rng = rng or np.random.default_rng()
    timer = _Timer(ctx, sample, target_s, budget_s, clock_ceiling_mhz)
    shapes = _l2_shapes(ctx, "l2_read")
    nvec = max(512, int(working_set_bytes) // 512 * 512) // VEC_BYTES
    words = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
    with ctx.alloc(nvec * VEC_BYTES) as buf, ctx.alloc(4 * max(g for _, _, g in shapes)) as part:
        ctx.upload(buf, words)
        return _time_l2_read(ctx, timer, buf, part, nvec, words, shapes)


def time_shared(ctx, *, sample: Callable[[], tuple] | None = None, rng: np.random.Generator | None = None,
                target_s: float = TARGET_S, budget_s: float = BUDGET_S, clock_ceiling_mhz: float | None = None,
                level: str = "shared") -> CacheRow:
    """One shared-memory (or, with ``level="L1"``, L1) row, every block size checked first,
    as :func:`run_caches` times it.

    Raises:
        MeasurementError: a wrong sum, a figure above the clock-derived limit, or a CUDA error.
    """
    timer = _Timer(ctx, sample, target_s, budget_s, clock_ceiling_mhz)
    return _sm_row(ctx, timer, level, rng or np.random.default_rng(), [])


def l2_partition_notes(rows: Sequence[CacheRow], near_bytes: int | None) -> list[str]:
    """Which L2 read rows fit in the near L2 partition the latency ladder found."""
    if not near_bytes:
        return []
    inside = [r for r in rows if r.level == "L2" and r.op == "read" and r.working_set_bytes <= near_bytes]
    outside = [r for r in rows if r.level == "L2" and r.op == "read" and r.working_set_bytes > near_bytes]
    txt = (f"the latency ladder puts the near-L2 partition's edge at {fmt_num(near_bytes / 2**20)} MiB: "
           f"{fmt_counted(len(inside), 'L2 read row')} fit in it, {len(outside)} reach the far partition")
    if inside and outside:
        a, b = max(inside, key=lambda r: r.gbs), max(outside, key=lambda r: r.gbs)
        txt += f" (best {a.gbs:,.0f} vs {b.gbs:,.0f} GB/s)"
    return [txt]


def measure_caches(device: str | None = None, *, progress: Callable[..., None] | None = None) -> CacheResult:
    """Open the GPU, measure the cache ceilings with the SM clock sampled, return a
    :class:`CacheResult` (a family that failed is in its ``failures``, not raised).

    Raises:
        NoDeviceError: no GPU (exit 3); MeasurementError: a CUDA error outside the families (exit 4).
    """
    from ..device.sample import ClockSampler
    from ..engine.context import open_device
    from .compute import sample_summary

    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    with open_device(device) as ctx:
        info = ctx.info
        ceiling = clock_ceiling(ctx)
        with ClockSampler(info.uuid) as clock:
            run = run_caches(ctx, sample=clock.sample, progress=progress, clock_ceiling_mhz=ceiling)
    near = None
    try:
        from ..profiles import latest_profile

        prof = latest_profile(info.uuid, need="latency_date")
        near = prof.l2_near_bytes if prof is not None else None
    except Exception:  # the profile store is a cache: never a reason to fail
        near = None
    notes = l2_partition_notes(run.rows, near) + list(run.notes)
    return CacheResult(info, tuple(run.rows), tuple(run.checks), sample_summary(run.samples), tuple(notes), date,
                       time.perf_counter() - t0, near, tuple(run.failures))
