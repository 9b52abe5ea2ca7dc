"""The host link: host-to-device and device-to-host copy bandwidth, pinned and pageable.

``gpuwhy bench --link`` (a mode of :mod:`gpuwhy.bench.modes`)::

    from gpuwhy.bench.link import measure_link
    result = measure_link(device="0")      # LinkResult
    result.curve("h2d", "pinned").plateau_gbs
    result.ratio("h2d")                     # pinned / pageable at the plateau

Method. Copies through the engine (:meth:`~gpuwhy.engine.context.GpuContext.copier`:
the driver's ``cuMemcpyHtoDAsync`` / ``cuMemcpyDtoHAsync`` on the engine's stream)
between ``cuMemAlloc`` device buffers and

- pinned host memory from ``cuMemHostAlloc`` (:meth:`~gpuwhy.engine.context.GpuContext.pinned`;
  page-locked: the GPU's copy
  engines read and write it directly by DMA; what PyTorch's
  ``pin_memory=True`` allocates), and
- pageable host memory: ordinary numpy arrays. The driver cannot DMA from
  pages the OS may move, so it copies them through a pinned staging buffer of
  its own, in chunks, with the CPU doing the extra copy; for the host the call
  returns only when the data is staged (H2D) or has arrived (D2H).

Sizes 4 KiB to 1 GiB (x2 steps). Before anything is timed, every path is
checked: data with a pattern of prime period is copied to the GPU and back
(and both ways at once for the bidirectional case) into a poisoned buffer,
and compared byte for byte, guard bytes included (MeasurementError if not).

Timing (median of repetitions, after a warm-up copy):

- pinned: CUDA events around each copy, queued behind a short spin kernel so
  the events time the copy on the GPU, not the host's submission
  (:func:`gpuwhy.engine.timing.time_gpu`); also a host-clock figure (copy +
  stream synchronize) for the pinned-vs-pageable ratio;
- pageable: host clock around copy + stream synchronize (events would miss
  the CPU's staging work, which is the point of the comparison);
- bidirectional (pinned): H2D on the engine's stream and D2H on a second
  stream, started together and joined by events; bytes counted both ways.

The link's theoretical rate comes from ``gpuwhy probe`` (PCIe generation x
width, :func:`pcie_theoretical_gbs`); on Grace systems (NVLink-C2C) there is
no PCIe formula and the rate is n/a with a note.

Every host and device allocation is freed on every path.
"""

from __future__ import annotations

import datetime as _dt
import math
import platform
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import MeasurementError
from ..model.multi_gpu.links import PCIE_ENCODING, PCIE_GT_PER_S, PCIE_SOURCE, pcie_theoretical_gbs  # noqa: F401  (their home is model/links)
from ..units import fmt_g, fmt_num

#: NVLink-C2C between Grace and the GPU: 900 GB/s total, both directions
#: (NVIDIA GH200 Grace Hopper Superchip datasheet/whitepaper).
C2C_NOTE = ("NVLink-C2C to the Grace CPU (900 GB/s total both ways per NVIDIA's GH200 datasheet): "
            "not PCIe, so no gen x width rate; n/a")
C2C_NAMES = ("GH200", "GB200", "GB300", "GRACE")

LINK_MIN, LINK_MAX = 4 * 1024, 1 << 30
#: Sizes the copy paths are checked at before timing (odd sizes included).
CHECK_SIZES = (4096, 4096 + 13, 1_000_003)
#: Period of the check pattern (a prime: any offset error shows).
PATTERN_PERIOD = 1_048_573
POISON = 0xA5
GUARD = 64
#: Per-row timing budget (s of timed repetitions) and repetition bounds.
BUDGET_S, MIN_REPS, MAX_REPS = 0.02, 3, 100
#: How the two memories are timed (printed with the results).
TIMING = {"pinned": "CUDA events (GPU time of the copy)", "pageable": "host clock around copy + stream synchronize"}
DIRECTIONS = ("h2d", "d2h", "bidir")
MEMORIES = ("pinned", "pageable")

#: The host clock used for host-timed copies (tests replace it with a fake device's clock).
host_clock: Callable[[], float] = time.perf_counter


# ------------------------------------------------------------- pure ----


def link_sizes(lo: int = LINK_MIN, hi: int = LINK_MAX, factor: int = 2) -> list[int]:
    """Transfer sizes (bytes) from ``lo`` to ``hi`` inclusive, x ``factor`` each step."""
    if lo < 1 or hi < lo or factor < 2:
        raise ValueError("need 1 <= lo <= hi and factor >= 2")
    out, n = [], int(lo)
    while n <= hi:
        out.append(n)
        n *= factor
    return out


def bandwidth_gbs(nbytes: float, seconds: float) -> float:
    """nbytes / seconds in GB/s (1e9 B/s)."""
    return float(nbytes) / float(seconds) / 1e9


def plateau_gbs(sizes: Sequence[int], gbs: Sequence[float], top: int = 3) -> float:
    """The large-transfer bandwidth: median of the ``top`` largest sizes' GB/s.

    Raises:
        ValueError: no points.
    """
    if not len(sizes):
        raise ValueError("no points")
    pairs = sorted(zip(sizes, gbs))[-top:]
    vals = sorted(g for _, g in pairs)
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else 0.5 * (vals[mid - 1] + vals[mid])


def half_bandwidth_bytes(sizes: Sequence[int], gbs: Sequence[float], plateau: float) -> float | None:
    """Transfer size at which bandwidth first reaches half the plateau (n_1/2), bytes;
    interpolated linearly in GB/s against log2(size). None if never reached;
    the smallest size when it is already there."""
    pairs = sorted(zip(sizes, gbs))
    half = 0.5 * plateau
    for k, (n, g) in enumerate(pairs):
        if g >= half:
            if k == 0:
                return float(n)
            (n0, g0) = pairs[k - 1]
            t = (half - g0) / (g - g0) if g != g0 else 1.0
            return float(2.0 ** (math.log2(n0) + t * (math.log2(n) - math.log2(n0))))
    return None


def pinned_pageable_ratio(pinned_gbs: float | None, pageable_gbs: float | None) -> float | None:
    """pinned / pageable bandwidth (how many times faster pinned memory copies); None if either is missing."""
    if not pinned_gbs or not pageable_gbs:
        return None
    return float(pinned_gbs) / float(pageable_gbs)


def fill_pattern(view: np.ndarray, seed: int = 9) -> None:
    """Fill a uint8 array with random bytes repeating every :data:`PATTERN_PERIOD` bytes (a prime)."""
    block = np.random.default_rng(seed).integers(1, 256, size=PATTERN_PERIOD, dtype=np.uint8)
    n = view.size
    for off in range(0, n, PATTERN_PERIOD):
        k = min(PATTERN_PERIOD, n - off)
        view[off : off + k] = block[:k]


# ------------------------------------------------------------ results ----


@dataclass(frozen=True)
class LinkInfo:
    """What the host link is and its theoretical per-direction rate.

    Attributes:
        kind: ``pcie``, ``c2c`` (NVLink-C2C on Grace systems) or ``unknown``.
        gen, width: the link's maximum generation and width (PCIe), None if unread.
        gen_current, width_current: as trained when probed (an idle link may sit at
            a lower generation to save power).
        gen_gpu_max: the highest generation the GPU supports.
        theoretical_gbs: per direction, 1e9 B/s (None for C2C or unknown).
        note: one line for the reader; source: where the formula comes from.
    """

    kind: str = "unknown"
    gen: int | None = None
    width: int | None = None
    gen_current: int | None = None
    width_current: int | None = None
    gen_gpu_max: int | None = None
    theoretical_gbs: float | None = None
    note: str = ""
    source: str = ""

    @property
    def label(self) -> str:
        if self.kind == "pcie" and self.gen and self.width:
            return f"PCIe gen {self.gen} x{self.width}"
        if self.kind == "c2c":
            return "NVLink-C2C"
        return "unknown link"

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["label"] = self.label
        return d


def link_info_from(name: str | None, gen: int | None, width: int | None, gen_current: int | None = None,
                   width_current: int | None = None, gen_gpu_max: int | None = None,
                   machine: str | None = None) -> LinkInfo:
    """A :class:`LinkInfo` from probed values (pure).

    A Grace-based part (name containing GH200/GB200/GB300, or an aarch64 host
    whose GPU reports no PCIe link) is C2C with no theoretical rate; otherwise
    PCIe at the link's maximum generation and width.
    """
    upper = (name or "").upper()
    if any(k in upper for k in C2C_NAMES) or (machine in ("aarch64", "arm64") and not (gen and width) and "GH" in upper):
        return LinkInfo("c2c", gen, width, gen_current, width_current, gen_gpu_max, None, C2C_NOTE, "")
    if gen and width:
        try:
            rate = pcie_theoretical_gbs(gen, width)
        except ValueError as exc:
            return LinkInfo("unknown", gen, width, gen_current, width_current, gen_gpu_max, None, str(exc), "")
        payload, line = PCIE_ENCODING[int(gen)]
        note = f"PCIe gen {gen} x{width}: {fmt_g(PCIE_GT_PER_S[int(gen)])} GT/s x {payload}/{line} x {width} lanes / 8 = {rate:.2f} GB/s per direction"
        if gen_gpu_max and gen_gpu_max > gen:
            note += f"; the GPU supports gen {gen_gpu_max} but the slot/host links at most gen {gen}"
        return LinkInfo("pcie", int(gen), int(width), gen_current, width_current, gen_gpu_max, rate, note, PCIE_SOURCE)
    return LinkInfo("unknown", gen, width, gen_current, width_current, gen_gpu_max, None,
                    "PCIe generation/width not readable (NVML); no theoretical rate", "")


@dataclass(frozen=True)
class LinkRow:
    """One direction x memory x size.

    Attributes:
        direction: ``h2d``, ``d2h`` or ``bidir`` (both at once, two streams).
        memory: ``pinned`` or ``pageable``.
        size_bytes: bytes per copy (each way for bidir).
        time: the reported timing (events for pinned, host clock for pageable), s per copy.
        host_time: host clock around copy + synchronize, s (the same as ``time`` for pageable).
        timing: how ``time`` was taken.
    """

    direction: str
    memory: str
    size_bytes: int
    time: Any
    host_time: Any = None
    timing: str = ""

    @property
    def bytes_moved(self) -> int:
        return self.size_bytes * (2 if self.direction == "bidir" else 1)

    @property
    def gbs(self) -> float:
        return bandwidth_gbs(self.bytes_moved, self.time.median_s)

    @property
    def host_gbs(self) -> float | None:
        return bandwidth_gbs(self.bytes_moved, self.host_time.median_s) if self.host_time is not None else None

    def to_dict(self) -> dict:
        return {
            "direction": self.direction,
            "memory": self.memory,
            "size_bytes": self.size_bytes,
            "bytes_moved": self.bytes_moved,
            "median_s": self.time.median_s,
            "min_s": self.time.min_s,
            "cv": self.time.cv,
            "reps": self.time.reps,
            "gbs": self.gbs,
            "timing": self.timing,
            "host_median_s": self.host_time.median_s if self.host_time is not None else None,
            "host_gbs": self.host_gbs,
        }


@dataclass(frozen=True)
class LinkCurve:
    """Summary of one direction x memory over all sizes.

    floor_s: median time of the smallest copy (the small-transfer latency floor), s.
    floor_bytes: that copy's size. plateau_gbs: :func:`plateau_gbs`. half_bytes:
    :func:`half_bandwidth_bytes`. pct_of_theoretical: plateau / the link's rate
    (x2 for bidir), %, None without a rate.
    """

    direction: str
    memory: str
    floor_s: float
    floor_bytes: int
    plateau_gbs: float
    half_bytes: float | None
    pct_of_theoretical: float | None
    timing: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class LinkResult:
    """Everything one ``gpuwhy bench --link`` run measured (``device``: a DeviceInfo)."""

    device: Any
    link: LinkInfo
    rows: tuple[LinkRow, ...]
    curves: tuple[LinkCurve, ...]
    checks: tuple[str, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    duration_s: float = 0.0
    date: str = ""

    def curve(self, direction: str, memory: str) -> LinkCurve | None:
        return next((c for c in self.curves if c.direction == direction and c.memory == memory), None)

    def ratio(self, direction: str, at: str = "plateau") -> float | None:
        """Pinned / pageable bandwidth for ``direction`` (both host-clock timed, so
        the API overhead counts on both sides): ``at="plateau"`` over the largest
        sizes, ``at="small"`` at the smallest size."""
        pin = [r for r in self.rows if r.direction == direction and r.memory == "pinned" and r.host_time is not None]
        pag = [r for r in self.rows if r.direction == direction and r.memory == "pageable"]
        if not pin or not pag:
            return None
        if at == "small":
            p = min(pin, key=lambda r: r.size_bytes)
            q = next((r for r in pag if r.size_bytes == p.size_bytes), None)
            return pinned_pageable_ratio(p.host_gbs, q.gbs if q else None)
        return pinned_pageable_ratio(plateau_gbs([r.size_bytes for r in pin], [r.host_gbs for r in pin]),
                                     plateau_gbs([r.size_bytes for r in pag], [r.gbs for r in pag]))

    def summary_line(self) -> str:
        d = self.device
        parts = [f"gpuwhy bench --link: {d.name} ({self.link.label}"]
        if self.link.theoretical_gbs:
            parts[0] += f", {self.link.theoretical_gbs:.1f} GB/s per direction theoretical"
        parts[0] += ")"
        for direction in ("h2d", "d2h"):
            c, q = self.curve(direction, "pinned"), self.curve(direction, "pageable")
            if c is None:
                continue
            s = f"{direction.upper()} pinned {c.plateau_gbs:.1f} GB/s"
            if c.pct_of_theoretical is not None:
                s += f" ({c.pct_of_theoretical:.0f}%)"
            if q is not None:
                s += f", pageable {q.plateau_gbs:.1f} GB/s"
            r = self.ratio(direction)
            if r:
                s += f" (pinned {r:.1f}x)"
            parts.append(s)
        b = self.curve("bidir", "pinned")
        if b is not None:
            parts.append(f"both ways {b.plateau_gbs:.1f} GB/s")
        c = self.curve("h2d", "pinned")
        if c is not None:
            parts.append(f"small-copy floor {c.floor_s * 1e6:.1f} us")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {
            "date": self.date,
            "device": self.device.to_dict() if hasattr(self.device, "to_dict") else self.device,
            "link": self.link.to_dict(),
            "timing": dict(TIMING),
            "curves": [c.to_dict() for c in self.curves],
            "pinned_pageable_ratio": {d: {"plateau": self.ratio(d), "small": self.ratio(d, "small")} for d in ("h2d", "d2h")},
            "rows": [r.to_dict() for r in self.rows],
            "checks": list(self.checks),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "duration_s": self.duration_s,
            "summary": self.summary_line(),
        }


def summarize_curves(rows: Sequence[LinkRow], link: LinkInfo) -> list[LinkCurve]:
    """One :class:`LinkCurve` per (direction, memory) present in ``rows``."""
    out = []
    for direction in DIRECTIONS:
        for memory in MEMORIES:
            rs = sorted((r for r in rows if r.direction == direction and r.memory == memory), key=lambda r: r.size_bytes)
            if not rs:
                continue
            sizes, g = [r.size_bytes for r in rs], [r.gbs for r in rs]
            plat = plateau_gbs(sizes, g)
            theo = link.theoretical_gbs * (2 if direction == "bidir" else 1) if link.theoretical_gbs else None
            out.append(LinkCurve(direction, memory, rs[0].time.median_s, rs[0].size_bytes, plat,
                                 half_bandwidth_bytes(sizes, g, plat), 100.0 * plat / theo if theo else None,
                                 rs[0].timing))
    return out


# ------------------------------------------------------------- runner ----


def _time_host(fn: Callable[[], None], clock: Callable[[], float], budget_s: float, min_reps: int, max_reps: int):
    """Median host-clock time of ``fn()`` (one untimed warm-up; repetitions to fill ``budget_s``)."""
    from ..engine.timing import choose_reps, summarize

    fn()
    t0 = clock()
    fn()
    est = clock() - t0
    reps = choose_reps(est, budget_s, min_reps, max_reps)
    xs = [est]
    for _ in range(reps - 1):
        t0 = clock()
        fn()
        xs.append(clock() - t0)
    return summarize(xs, warmup=1)


def run_link(
    ctx,
    link: LinkInfo | None = None,
    *,
    sizes: Sequence[int] | None = None,
    budget_s: float = BUDGET_S,
    min_reps: int = MIN_REPS,
    max_reps: int = MAX_REPS,
    clock: Callable[[], float] | None = None,
    progress: Callable[..., None] | None = None,
) -> tuple[list[LinkRow], list[str], list[str]]:
    """Check, then time every direction x memory x size on an open GpuContext.

    Returns:
        (rows, checks done, notes).

    Raises:
        MeasurementError: a copy that returned wrong bytes, a CUDA error, or
            pinned memory that could not be allocated.
    """
    from ..engine.context import DeviceOutOfMemory

    clk = clock or host_clock
    prog = progress or (lambda **kw: None)
    notes: list[str] = []
    sizes = _sizes_that_fit(ctx, sorted(set(int(s) for s in (sizes or link_sizes()))), notes)
    top = max(sizes)
    h2d, d2h = ctx.copier("h2d"), ctx.copier("d2h")
    pinned = []
    bufs = []
    checks: list[str] = []
    rows: list[LinkRow] = []
    try:
        try:
            for _ in range(2):
                bufs.append(ctx.alloc(top))
        except DeviceOutOfMemory as exc:
            raise MeasurementError(f"two device buffers of {top:,} bytes did not fit ({exc}); close other GPU programs") from None
        dev_a, dev_b = bufs
        for _ in range(2):
            pinned.append(ctx.pinned(top + GUARD))
        p_src_ptr, p_src = pinned[0].ptr, pinned[0].array
        p_dst_ptr, p_dst = pinned[1].ptr, pinned[1].array
        g_src = np.empty(top + GUARD, dtype=np.uint8)
        g_dst = np.empty(top + GUARD, dtype=np.uint8)
        fill_pattern(p_src)
        g_src[:] = p_src
        ptrs = {"pinned": (p_src_ptr, p_dst_ptr, p_src, p_dst), "pageable": (g_src.ctypes.data, g_dst.ctypes.data, g_src, g_dst)}
        checks += _check_round_trips(ctx, ptrs, dev_a, top, h2d, d2h)
        h2d(dev_b.ptr, p_src_ptr, top, "filling the D2H source")
        ctx.sync("filling the D2H source")

        # ---- bidirectional: a second stream, joined to the first by two events
        with ctx.side_stream() as side:
            d2h_side = ctx.copier("d2h", side.stream)

            def both(n):
                side.fork()
                h2d(dev_a.ptr, p_src_ptr, n, "bidirectional H2D")
                d2h_side(p_dst_ptr, dev_b.ptr, n, "bidirectional D2H")
                side.join()

            p_dst[: top + GUARD] = POISON
            ctx.memset(dev_a, 0)
            both(top)
            ctx.sync("copying both ways")
            _compare(p_dst, p_src, top, "bidirectional D2H")
            g_dst[: top + GUARD] = POISON
            d2h(g_dst.ctypes.data, dev_a.ptr, top, "reading back the bidirectional H2D")
            ctx.sync("reading back the bidirectional H2D")
            _compare(g_dst, p_src, top, "bidirectional H2D")
            checks.append(f"pinned, both ways at once on two streams at {top:,} bytes: both copies byte for byte")

            # ---- timing
            copies = _Copies(
                h2d_pinned=lambda n: h2d(dev_a.ptr, p_src_ptr, n, "H2D (pinned)"),
                d2h_pinned=lambda n: d2h(p_dst_ptr, dev_b.ptr, n, "D2H (pinned)"),
                h2d_pageable=lambda n: h2d(dev_a.ptr, g_src.ctypes.data, n, "H2D (pageable)"),
                d2h_pageable=lambda n: d2h(g_dst.ctypes.data, dev_b.ptr, n, "D2H (pageable)"),
                both=both,
            )
            prog(total=len(sizes) * 5, description="host link")
            for n in sizes:
                rows += _time_size(ctx, copies, n, _Budget(clk, budget_s, min_reps, max_reps), prog)
            ctx.sync("finishing the copies")
    finally:
        try:
            ctx.stream.sync()
        except Exception:
            pass
        for h in reversed(pinned):
            h.free()
        for b in bufs:
            b.free()
    return rows, checks, notes


def _sizes_that_fit(ctx, sizes: list[int], notes: list[str]) -> list[int]:
    """The transfer sizes (bytes) whose two device buffers fit in 80% of the GPU's free memory;
    a note when some do not.

    Raises:
        MeasurementError: none fits.
    """
    free, _ = ctx.mem_info()
    fit = [n for n in sizes if 2 * n <= 0.8 * free]
    if len(fit) < len(sizes):
        notes.append(f"sizes above {fit[-1] if fit else 0:,} bytes skipped: two device buffers of that size do not fit in 80% of free GPU memory")
        sizes = fit
    if not sizes:
        raise MeasurementError("no transfer size fits in the GPU's free memory")
    return sizes


def _check_round_trips(ctx, ptrs: dict, dev, top: int, h2d, d2h) -> list[str]:
    """Each memory (``ptrs``: memory -> (source, destination pointers, their arrays)): H2D then D2H
    into a poisoned buffer, at awkward sizes up to ``top`` bytes, byte for byte. Returns what was checked.

    Raises:
        MeasurementError: a copy that returned wrong bytes, or a CUDA error.
    """
    checks = []
    for memory, (src, dst, src_v, dst_v) in ptrs.items():
        done = []
        for n in sorted({c for c in CHECK_SIZES if c <= top} | {top}):
            dst_v[: n + GUARD] = POISON
            ctx.memset(dev, 0)
            h2d(dev.ptr, src, n, f"copying {n} bytes to the GPU ({memory})")
            d2h(dst, dev.ptr, n, f"copying {n} bytes from the GPU ({memory})")
            ctx.sync(f"copying {memory} memory")
            _compare(dst_v, src_v, n, f"{memory} host -> GPU -> host round trip")
            done.append(n)
        checks.append(f"{memory}: H2D then D2H, byte for byte with {GUARD} guard bytes, at {', '.join(f'{n:,}' for n in done)} bytes")
    return checks


@dataclass(frozen=True)
class _Copies:
    """The copies a size is timed with, each ``copy(n)`` of ``n`` bytes on the context's stream:
    pinned and pageable each way, and both ways at once on two streams (``both``)."""

    h2d_pinned: Callable[[int], None]
    d2h_pinned: Callable[[int], None]
    h2d_pageable: Callable[[int], None]
    d2h_pageable: Callable[[int], None]
    both: Callable[[int], None]


@dataclass(frozen=True)
class _Budget:
    """How long each row is timed: the host clock (s), seconds of repetitions and their bounds."""

    clock: Callable[[], float]
    budget_s: float
    min_reps: int
    max_reps: int


def _time_size(ctx, copies: _Copies, n: int, budget: _Budget, prog) -> list[LinkRow]:
    """The five rows of transfer size ``n`` (bytes): pinned H2D and D2H (CUDA events and host
    clock), pageable H2D and D2H (host clock), both ways pinned (both clocks)."""
    from ..engine.timing import time_gpu

    def events(fn):
        return time_gpu(ctx.stream, ctx.events, lambda i: fn(n), warmup=1, budget_s=budget.budget_s,
                        min_reps=budget.min_reps, max_reps=budget.max_reps, pad=ctx.spin)

    def host(fn):
        def run():
            fn(n)
            ctx.sync("timing a copy")
        return _time_host(run, budget.clock, budget.budget_s, budget.min_reps, budget.max_reps)

    rows = []
    for direction, fn in (("h2d", copies.h2d_pinned), ("d2h", copies.d2h_pinned)):
        prog(description=f"{direction.upper()} pinned, {n:,} B")
        m = events(fn)
        rows.append(LinkRow(direction, "pinned", n, m, host(fn), TIMING["pinned"]))
        prog(advance=1)
    for direction, fn in (("h2d", copies.h2d_pageable), ("d2h", copies.d2h_pageable)):
        prog(description=f"{direction.upper()} pageable, {n:,} B")
        hm = host(fn)
        rows.append(LinkRow(direction, "pageable", n, hm, hm, TIMING["pageable"]))
        prog(advance=1)
    prog(description=f"both ways pinned, {n:,} B")
    m = events(copies.both)
    rows.append(LinkRow("bidir", "pinned", n, m, host(copies.both), TIMING["pinned"] + ", two streams"))
    prog(advance=1)
    return rows


def _compare(got: np.ndarray, want: np.ndarray, n: int, what: str, chunk: int = 1 << 26) -> None:
    """Raise MeasurementError unless got[:n] == want[:n] and the guard bytes after n are still poison
    (compared in 64 MiB pieces, so a 1 GiB check needs no 1 GiB temporary)."""
    for off in range(0, n, chunk):
        end = min(n, off + chunk)
        if np.array_equal(got[off:end], want[off:end]):
            continue
        bad = np.flatnonzero(got[off:n] != want[off:n])
        i = off + int(bad[0])
        raise MeasurementError(f"{what} of {n:,} bytes gave {bad.size:,} wrong bytes (first at offset {i}: "
                               f"0x{int(got[i]):02x}, expected 0x{int(want[i]):02x}); nothing timed")
    guard = got[n : n + GUARD]
    if guard.size and np.any(guard != POISON):
        raise MeasurementError(f"{what} of {n:,} bytes wrote past its end (guard bytes changed); nothing timed")


def probe_link(device: str | None, spec_dirs: Sequence[str] = ()) -> LinkInfo:
    """The host link of ``device`` (index or UUID) from ``gpuwhy probe``; an
    ``unknown`` LinkInfo with the reason when it cannot be probed (never raises)."""
    try:
        from ..na import is_na
        from ..device.probe import probe_devices

        rep = probe_devices(device, spec_dirs, full=True)
        d = rep.devices[0]
        h = d.health

        def v(x):
            return None if x is None or is_na(x) else int(x)

        name = None if is_na(d.identity.name) else str(d.identity.name)
        if h is None:
            return link_info_from(name, None, None, machine=platform.machine())
        return link_info_from(name, v(h.pcie_gen_max), v(h.pcie_width_max), v(h.pcie_gen_current),
                              v(h.pcie_width_current), v(h.pcie_gen_gpu_max), machine=platform.machine())
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return LinkInfo(note=f"link not probed ({text}); no theoretical rate")


def measure_link(
    device: str | None = None,
    spec_dirs: Sequence[str] = (),
    *,
    sizes: Sequence[int] | None = None,
    progress: Callable[..., None] | None = None,
) -> LinkResult:
    """Probe the link, open the GPU, check and time every copy path; prints nothing.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: a bad device.
        MeasurementError: a wrong copy or a CUDA error (exit 4).
    """
    from ..device.sample import health_warnings, sample
    from ..engine.context import open_device
    from .preflight import open_and_sample

    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    index, uuid, before = open_and_sample(device)
    with open_device(index) as ctx:
        info = ctx.info
        link = probe_link(info.uuid, spec_dirs)
        rows, checks, notes = run_link(ctx, link, sizes=sizes, progress=progress)
    after = sample(uuid, index) if before is not None else None
    notes = list(notes)
    if link.note and link.kind != "pcie":
        notes.append(link.note)
    if link.kind == "pcie" and link.gen_current and link.gen and link.gen_current < link.gen:
        notes.append(f"the link was at gen {link.gen_current} when probed (idle power saving?); its max is gen {link.gen}")
    notes.append("pageable copies: the driver stages them through its own pinned buffer (a CPU memcpy per chunk); "
                 "they are timed by the host clock around copy + synchronize")
    warnings = health_warnings(before, after)
    return LinkResult(device=info, link=link, rows=tuple(rows), curves=tuple(summarize_curves(rows, link)),
                      checks=tuple(checks), notes=tuple(notes), warnings=tuple(warnings),
                      duration_s=time.perf_counter() - t0, date=date)
