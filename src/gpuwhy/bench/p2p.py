"""GPU-to-GPU bandwidth and latency: ``gpuwhy bench --p2p`` (a mode of :mod:`gpuwhy.bench.modes`).

::

    from gpuwhy.bench.p2p import measure_p2p
    r = measure_p2p("all")                         # P2pResult
    r.matrix("ce", "uni").values[0][1]             # GB/s, GPU 0 -> GPU 1, copy engine
    r.latency_matrix().values[1][0]                # s per dependent load of GPU 0's memory from GPU 1

Method. Every GPU chosen is opened in this process (:func:`gpuwhy.engine.peer.open_devices`;
peer access is a property of two contexts of one process), each with a source buffer of
:data:`NBYTES` filled with its own check pattern (``p2p_fill`` in ``microbench/p2p.cu``, a
hash of the word index and the GPU's seed) and a destination buffer. For every ordered pair
(source, destination), one pair at a time (pairs share NVSwitches, PCIe switches and copy
engines, :func:`gpuwhy.model.multi_gpu.schedule.plan_runs`), with peer access enabled for the
destination to read the source (``cuCtxEnablePeerAccess``; a pair the driver refuses is
marked "no peer access" and not measured):

- copy engine: ``cuMemcpyPeerAsync`` of :data:`NBYTES` on the destination's stream;
- SM copy kernel: ``p2p_copy`` launched on the destination, every thread pulling four
  16-byte vectors from the source's memory before storing them (many bytes in flight);
- both ways at once (each unordered pair): each GPU pulls the other's buffer at the same
  time, on its own stream, joined by events; timed on the first GPU's stream;
- latency: ``chase_cg`` of ``microbench/latency.cu`` run on the reader over a chain of
  64-bit addresses in the owner's memory (:mod:`gpuwhy.model.roofline.pointer_chase`; at least
  :data:`CHASE_BYTES`, twice the owner's L2), one dependent load after another: each load
  goes to the other GPU and its data comes back, so the figure is a remote load's round
  trip (the one-way time is not measured; half of it only for a symmetric link).

The diagonal is each GPU copying and chasing its own memory (the reference). Every
repetition is timed by :func:`gpuwhy.engine.timing.time_gpu` (CUDA events on the timing
GPU's stream); outside the events the destination is poisoned before each copy and checked
word by word against the source's pattern after it (``p2p_check``): a wrong or missing word
raises MeasurementError naming the pair. Each figure is compared with the pair's theoretical
rate (:mod:`gpuwhy.model.multi_gpu.topology`: NVLink version x links, or the slower PCIe link).
Convention (:data:`gpuwhy.model.multi_gpu.topology.CONVENTION`): unidirectional GB/s = bytes copied one
way / time; bidirectional = bytes moved both ways together / time.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import MeasurementError
from ..model.multi_gpu.p2p import (
    MEASURED,
    NO_PEER,
    Matrix,
    assemble_matrix,
    bidirectional_gbs,
    fraction,
    unidirectional_gbs,
)
from ..model.roofline.pointer_chase import (
    ELEM_BYTES,
    NODE_BYTES,
    STRIDE_ELEMS,
    chain_addresses,
    chase_order,
    expected_address,
)
from ..model.multi_gpu.schedule import SHARED, ordered_pairs, unordered_pairs
from ..model.multi_gpu.topology import CONVENTION

SOURCE = "p2p.cu"
#: Bytes per copy, each way (64 MiB: above every L2, tens of microseconds over NVLink).
NBYTES = 64 << 20
BLOCK = 256
#: Timed repetitions: a budget of seconds, and bounds.
BUDGET_S, MIN_REPS, MAX_REPS = 0.02, 3, 20
#: Bytes the latency chain spans at least (else twice the owner's L2), and its steps.
CHASE_BYTES = 64 << 20
CHASE_WARM, CHASE_STEPS, CHASE_LAUNCHES = 64, 2048, 3
CHASE_KERNEL = "chase_cg"
SEED = 0x70327032
#: Poison byte written to a destination before each copy (0xFFFFFFFF words).
POISON = 0xFF
METHODS = {"ce": "copy engine (cuMemcpyPeerAsync on the receiving GPU's stream)",
           "sm": "SM copy kernel on the receiving GPU (16-byte loads of the other GPU's memory, 4 in flight per thread)"}
DIRECTIONS = {"uni": "unidirectional: bytes copied one way / time",
              "bidir": "bidirectional: both GPUs pull at once; bytes moved both ways together / time"}
NOTHING_TO_PAIR = "1 GPU: nothing to pair; its own copies and chase (the diagonal) were measured and checked"


@dataclass(frozen=True)
class P2pGpu:
    """One GPU of the run: nvidia-smi's index, CUDA ordinal, UUID, name."""

    index: int | None
    cuda_ordinal: int | None
    uuid: str | None
    name: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Copy:
    """One copy figure: ``src`` -> ``dst`` (positions; equal on the diagonal), ``method`` (``ce``,
    ``sm``), ``direction`` (``uni``, ``bidir``: then both ways, src < dst), ``status``
    (:data:`~gpuwhy.model.multi_gpu.p2p.MEASURED`, :data:`~gpuwhy.model.multi_gpu.p2p.NO_PEER`), ``gbs`` (by
    :data:`DIRECTIONS`' convention), the timing, the pair's theoretical rate in the same
    convention, and a note."""

    src: int
    dst: int
    method: str
    direction: str
    status: str
    nbytes: int
    gbs: float | None = None
    timing: Any = None
    theoretical_gbs: float | None = None
    note: str = ""

    @property
    def fraction(self) -> float | None:
        """gbs / theoretical (None without either)."""
        return fraction(self.gbs, self.theoretical_gbs)

    def to_dict(self, gpus: Sequence[P2pGpu]) -> dict:
        return {"src_index": gpus[self.src].index, "dst_index": gpus[self.dst].index, "method": self.method,
                "direction": self.direction, "status": self.status, "bytes": self.nbytes, "gbs": self.gbs,
                "time": self.timing.to_dict() if self.timing is not None else None,
                "theoretical_gbs": self.theoretical_gbs, "fraction_of_theoretical": self.fraction, "note": self.note}


@dataclass(frozen=True)
class Chase:
    """The pointer chase of ``owner``'s memory from ``reader`` (positions): s per dependent load."""

    owner: int
    reader: int
    status: str
    latency_s: float | None = None
    working_set_bytes: int = 0
    steps: int = 0
    launches: int = 0
    note: str = ""

    def to_dict(self, gpus: Sequence[P2pGpu]) -> dict:
        return {"owner_index": gpus[self.owner].index, "reader_index": gpus[self.reader].index, "status": self.status,
                "latency_s": self.latency_s, "working_set_bytes": self.working_set_bytes, "steps": self.steps,
                "launches": self.launches, "note": self.note}


@dataclass(frozen=True)
class P2pResult:
    """Everything one ``gpuwhy bench --p2p`` run measured (positions index ``gpus``)."""

    gpus: tuple[P2pGpu, ...]
    copies: tuple[Copy, ...]
    chases: tuple[Chase, ...]
    nbytes: int
    topology: Any = None
    notes: tuple[str, ...] = ()
    date: str = ""
    duration_s: float = 0.0

    def matrix(self, method: str, direction: str) -> Matrix:
        """GB/s of ``method`` and ``direction`` for every ordered pair (bidirectional figures in both cells of a pair)."""
        vals: dict = {}
        status: dict = {}
        for c in self.copies:
            if c.method != method or c.direction != direction:
                continue
            for key in ((c.src, c.dst), (c.dst, c.src)) if direction == "bidir" else ((c.src, c.dst),):
                vals[key], status[key] = c.gbs, c.status
        return assemble_matrix(len(self.gpus), vals, status)

    def latency_matrix(self) -> Matrix:
        """Seconds per dependent load, owner row, reader column."""
        return assemble_matrix(len(self.gpus), {(c.owner, c.reader): c.latency_s for c in self.chases},
                               {(c.owner, c.reader): c.status for c in self.chases})

    def theoretical(self, direction: str = "uni") -> Matrix:
        """The pairs' theoretical GB/s (None on the diagonal and where unknown)."""
        vals = {}
        for c in self.copies:
            if c.direction == direction and c.src != c.dst and c.theoretical_gbs is not None:
                vals[(c.src, c.dst)] = c.theoretical_gbs
                if direction == "bidir":
                    vals[(c.dst, c.src)] = c.theoretical_gbs
        return assemble_matrix(len(self.gpus), vals)

    def slowest_pair(self) -> Copy | None:
        """The measured one-way copy engine pair furthest below its theoretical rate (else the lowest GB/s)."""
        pairs = [c for c in self.copies if c.src != c.dst and c.direction == "uni" and c.method == "ce" and c.status == MEASURED]
        if not pairs:
            return None
        return min(pairs, key=lambda c: (c.fraction if c.fraction is not None else float("inf"), c.gbs))

    def summary_line(self) -> str:
        """One line to paste into an issue or a CI log."""
        n = len(self.gpus)
        if n == 1:
            local = next((c for c in self.copies if c.method == "ce" and c.status == MEASURED), None)
            tail = f"; local copy {local.gbs:,.0f} GB/s" if local is not None else ""
            return f"gpuwhy bench --p2p: {NOTHING_TO_PAIR}{tail}"
        s = self.slowest_pair()
        worst = "" if s is None else (f"; slowest pair GPU {self.gpus[s.src].index} -> {self.gpus[s.dst].index} "
                                      f"{s.gbs:,.0f} GB/s" + (f" ({s.fraction:.0%} of {s.theoretical_gbs:,.0f})" if s.fraction else ""))
        nopeer = sum(1 for c in self.copies if c.status == NO_PEER and c.direction == "uni" and c.method == "ce")
        return f"gpuwhy bench --p2p: {n} GPUs, {n * (n - 1)} ordered pairs, {nopeer} without peer access{worst}"

    def to_dict(self) -> dict:
        g = self.gpus
        s = self.slowest_pair()
        mats = {f"{m}_{'unidirectional' if d == 'uni' else 'bidirectional'}_gbs": self.matrix(m, d).to_dict()
                for m in METHODS for d in DIRECTIONS}
        mats["theoretical_unidirectional_gbs"] = self.theoretical("uni").to_dict()
        mats["chase_latency_s"] = self.latency_matrix().to_dict()
        return {
            "date": self.date, "gpus": [x.to_dict() for x in g], "bytes_per_copy": self.nbytes,
            "convention": CONVENTION, "methods": dict(METHODS), "directions": dict(DIRECTIONS),
            "matrices": mats, "copies": [c.to_dict(g) for c in self.copies], "chases": [c.to_dict(g) for c in self.chases],
            "slowest_pair": s.to_dict(g) if s is not None else None,
            "topology": self.topology.to_dict() if self.topology is not None else None,
            "notes": list(self.notes), "duration_s": self.duration_s, "summary": self.summary_line(),
        }


# ------------------------------------------------------------------- runner ----


class _Gpu:
    """One open GPU's buffers and kernels."""

    def __init__(self, ctx, nbytes: int, seed: int, chase_bytes: int):
        self.ctx, self.seed = ctx, seed
        ctx.activate()
        self.copy_k = ctx.kernel(SOURCE, "p2p_copy")
        self.fill_k = ctx.kernel(SOURCE, "p2p_fill")
        self.check_k = ctx.kernel(SOURCE, "p2p_check")
        self.chase_k = ctx.kernel("latency.cu", CHASE_KERNEL)
        self.grid = max(1, int(ctx.info.sm_count) * ctx.occupancy(self.copy_k, BLOCK))
        self.src = ctx.alloc(nbytes)
        self.dst = ctx.alloc(nbytes)
        self.bad = ctx.alloc(8)
        self.chain = ctx.alloc(chase_bytes)
        self.state = ctx.alloc(8)
        self.rec = ctx.alloc(24 * CHASE_LAUNCHES)
        self.words = nbytes // 4
        ctx.memset(self.bad, 0)
        ctx.launch(self.fill_k, self.grid, BLOCK, self.src.ptr, np.uint64(self.words), np.uint32(seed))
        self.order = None

    def enqueue_check(self, seed: int) -> None:
        """Count the destination's words that differ from ``seed``'s pattern into ``bad``."""
        self.ctx.launch(self.check_k, self.grid, BLOCK, self.dst.ptr, np.uint64(self.words), np.uint32(seed), self.bad.ptr)

    def poison(self) -> None:
        self.ctx.memset(self.dst, POISON)

    def take_bad(self) -> int:
        """The mismatches counted so far (waits for the stream); the counter is reset."""
        n = int(self.ctx.download(self.bad, np.uint64, 1)[0])
        self.ctx.memset(self.bad, 0)
        return n


def _timed(ctx, fn, between) -> Any:
    from ..engine.timing import time_gpu

    return time_gpu(ctx.stream, ctx.events, fn, between=between, warmup=1, budget_s=BUDGET_S, min_reps=MIN_REPS,
                    max_reps=MAX_REPS)


def _label(gpus: Sequence[P2pGpu], i: int) -> str:
    g = gpus[i]
    return f"GPU {g.index if g.index is not None else 'cuda:%s' % g.cuda_ordinal}"


def _one_way(src: _Gpu, dst: _Gpu, method: str, nbytes: int, what: str):
    """Time ``nbytes`` from ``src``'s buffer into ``dst``'s by ``method`` on ``dst``'s stream; every copy checked."""
    from ..engine.peer import peer_copier

    ctx = dst.ctx
    ctx.activate()
    pending = [False]
    if method == "ce":
        copier = peer_copier(ctx)

        def go() -> None:
            copier(dst.dst.ptr, ctx, src.src.ptr, src.ctx, nbytes, what)
    else:
        launch = ctx.launcher(dst.copy_k, dst.grid, BLOCK)
        args = (src.src.ptr, dst.dst.ptr, np.uint64(nbytes // 16))

        def go() -> None:
            launch(*args)

    def between(i: int) -> None:
        if pending[0]:
            dst.enqueue_check(src.seed)
            pending[0] = False
        dst.poison()

    def fn(i: int) -> None:
        go()
        pending[0] = True

    m = _timed(ctx, fn, between)
    if pending[0]:
        dst.enqueue_check(src.seed)
    bad = dst.take_bad()
    if bad:
        raise MeasurementError(f"the {method} copy {what} left {bad:,} wrong 32-bit words (of {nbytes // 4:,} per copy, "
                               f"over {m.reps + m.warmup + 3} copies); nothing reported")
    return m


def _both_ways(a: _Gpu, b: _Gpu, method: str, nbytes: int, what: str):
    """Each of ``a`` and ``b`` pulls the other's buffer at once (own streams, joined by events); timed on ``a``."""
    from ..engine.peer import peer_copier, wait_for

    pending = [False]
    b.ctx.activate()
    ready_b, join = b.ctx.device.create_event(), b.ctx.device.create_event()
    a.ctx.activate()
    fork = a.ctx.device.create_event()
    copiers = {id(a): peer_copier(a.ctx), id(b): peer_copier(b.ctx)}

    def pull(x: _Gpu, y: _Gpu) -> None:
        """``x`` pulls ``y``'s buffer into its own, on its own stream (``x`` current)."""
        if method == "ce":
            copiers[id(x)](x.dst.ptr, x.ctx, y.src.ptr, y.ctx, nbytes, what)
        else:
            x.ctx.launch(x.copy_k, x.grid, BLOCK, y.src.ptr, x.dst.ptr, np.uint64(nbytes // 16))

    def between(i: int) -> None:
        for x, y in ((a, b), (b, a)):  # b last: it stays current for its record
            x.ctx.activate()
            if pending[0]:
                x.enqueue_check(y.seed)
            x.poison()
        b.ctx.stream.record(ready_b)
        a.ctx.activate()
        wait_for(a.ctx.stream, ready_b, what)  # a's start event comes after b's poison
        pending[0] = False

    def fn(i: int) -> None:
        a.ctx.stream.record(fork)
        b.ctx.activate()
        wait_for(b.ctx.stream, fork, what)
        pull(b, a)
        b.ctx.stream.record(join)
        a.ctx.activate()
        pull(a, b)
        wait_for(a.ctx.stream, join, what)
        pending[0] = True

    try:
        a.ctx.activate()
        m = _timed(a.ctx, fn, between)
        for x, y in ((b, a), (a, b)):
            x.ctx.activate()
            if pending[0]:
                x.enqueue_check(y.seed)
        bad = b.take_bad() + a.take_bad()
    finally:
        for ev in (fork, ready_b, join):
            with contextlib.suppress(Exception):
                ev.close()
    if bad:
        raise MeasurementError(f"the {method} copies {what} left {bad:,} wrong 32-bit words; nothing reported")
    return m


def _chain(owner: _Gpu, rng: np.random.Generator) -> None:
    """Upload a random single-cycle chase over the owner's chain buffer (one node per 128-byte line)."""
    ws = owner.chain.nbytes // NODE_BYTES * NODE_BYTES
    order = chase_order(ws // NODE_BYTES, rng)
    owner.ctx.upload(owner.chain, chain_addresses(order, ws // ELEM_BYTES, STRIDE_ELEMS, owner.chain.ptr))
    owner.order, owner.ws = order, ws


def _chase(owner: _Gpu, reader: _Gpu, what: str) -> float:
    """Seconds per dependent load of ``owner``'s chain from ``reader``; every launch's end checked."""
    from ..engine.timing import time_gpu

    ctx = reader.ctx
    ctx.activate()
    base = owner.chain.ptr
    ctx.upload(reader.state, np.array([expected_address(owner.order, STRIDE_ELEMS, base, 0)], dtype=np.uint64))

    def fn(i: int) -> None:
        ctx.launch(reader.chase_k, 1, 1, reader.state.ptr, np.uint64(CHASE_WARM), np.uint64(CHASE_STEPS), reader.rec.ptr + 24 * i)

    m = time_gpu(ctx.stream, ctx.events, fn, warmup=0, reps=CHASE_LAUNCHES, estimate=False)
    recs = ctx.download(reader.rec, np.uint64, 3 * CHASE_LAUNCHES).reshape(CHASE_LAUNCHES, 3)
    for r in range(CHASE_LAUNCHES):
        want = expected_address(owner.order, STRIDE_ELEMS, base, (r + 1) * (CHASE_WARM + CHASE_STEPS))
        if int(recs[r, 2]) != want:
            raise MeasurementError(f"the pointer chase {what} ended launch {r + 1} at 0x{int(recs[r, 2]):x}, expected "
                                   f"0x{want:x}: the loads did not follow the chain; nothing reported")
    ns = recs[:, 1].astype(np.float64) / CHASE_STEPS
    if np.all(ns > 0):
        return float(np.median(ns)) * 1e-9
    return float(np.median(m.samples_s)) / (CHASE_WARM + CHASE_STEPS)  # %globaltimer did not advance: CUDA events


def _theory(topo, gpus: Sequence[P2pGpu]) -> Callable[[int, int, str], float | None]:
    """``rate(src, dst, direction)``: the pair's theoretical GB/s from the topology (by UUID), None when unknown."""
    pos = {g.uuid: i for i, g in enumerate(topo.gpus)} if topo is not None else {}

    def rate(s: int, d: int, direction: str) -> float | None:
        if s == d or gpus[s].uuid not in pos or gpus[d].uuid not in pos:
            return None
        p = topo.pair(pos[gpus[s].uuid], pos[gpus[d].uuid])
        return p.uni_gbs if direction == "uni" else p.bidir_gbs

    return rate


def measure_p2p(device: str | None = None, *, nbytes: int | None = None, progress: Callable[..., None] | None = None) -> P2pResult:
    """Measure every ordered pair of the GPUs ``device`` names (``-i`` forms; None: every GPU), see
    the module docstring; prints nothing.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: ``device`` names no visible GPU.
        MeasurementError: a copy or a chase gave a wrong result, or a CUDA error (exit 4).
    """
    from ..device.select import resolve
    from ..device.topology import read_topology
    from ..engine.peer import can_access_peer, enable_peer_access, open_devices, require_context

    prog = progress or (lambda **kw: None)
    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    text = device or "all"
    nbytes = int(nbytes or NBYTES) // 16 * 16
    sel = resolve(text)
    gpus = tuple(P2pGpu(d.nvml_index, d.cuda_ordinal, d.uuid, d.name) for d in sel.devices)
    topo = read_topology(text)
    rate = _theory(topo, gpus)
    n = len(gpus)
    notes = [f"one pair at a time: pairs share {SHARED['p2p']}"] if n > 1 else [NOTHING_TO_PAIR]
    notes += [x for x in topo.notes if x != "1 GPU: nothing to pair"]
    copies: list[Copy] = []
    chases: list[Chase] = []
    pairs = ordered_pairs(n)
    prog(total=n + len(pairs) + len(unordered_pairs(n)), description="GPU-to-GPU copies")
    with open_devices([d.uuid or d.cuda_ordinal for d in sel.devices]) as ctxs:
        for c in ctxs:
            require_context(c)
        rng = np.random.default_rng(SEED)
        ours = []
        for k, c in enumerate(ctxs):
            chase_bytes = max(CHASE_BYTES, 2 * int(c.info.l2_bytes)) // NODE_BYTES * NODE_BYTES
            ours.append(_Gpu(c, nbytes, SEED + k + 1, chase_bytes))
        for g in ours:
            _chain(g, rng)
        peer = {(s, d): s == d or can_access_peer(ctxs[d], ctxs[s]) for s in range(n) for d in range(n)}
        for s, d in [(i, i) for i in range(n)] + pairs:
            what = f"{_label(gpus, s)} -> {_label(gpus, d)}"
            prog(description=f"copies {what}")
            if not peer[(s, d)]:
                for m in METHODS:
                    copies.append(Copy(s, d, m, "uni", NO_PEER, nbytes, theoretical_gbs=rate(s, d, "uni"),
                                       note="cuDeviceCanAccessPeer: no; the driver would stage a copy through host memory"))
                chases.append(Chase(s, d, NO_PEER, note="no peer access"))
                prog(advance=1)
                continue
            enable_peer_access(ctxs[d], ctxs[s])
            for m in METHODS:
                t = _one_way(ours[s], ours[d], m, nbytes, what)
                copies.append(Copy(s, d, m, "uni", MEASURED, nbytes, unidirectional_gbs(nbytes, t.median_s), t, rate(s, d, "uni"),
                                   "within one GPU: each byte is read and written in its DRAM" if s == d else ""))
            lat = _chase(ours[s], ours[d], what)
            chases.append(Chase(s, d, MEASURED, lat, ours[s].ws, CHASE_STEPS, CHASE_LAUNCHES,
                                "its own memory" if s == d else "a remote load's round trip"))
            prog(advance=1)
        for a, b in unordered_pairs(n):
            what = f"{_label(gpus, a)} <-> {_label(gpus, b)}"
            prog(description=f"copies {what}")
            if not (peer[(a, b)] and peer[(b, a)]):
                for m in METHODS:
                    copies.append(Copy(a, b, m, "bidir", NO_PEER, nbytes, theoretical_gbs=rate(a, b, "bidir"),
                                       note="no peer access in at least one direction"))
                prog(advance=1)
                continue
            enable_peer_access(ctxs[a], ctxs[b])
            for m in METHODS:
                t = _both_ways(ours[a], ours[b], m, nbytes, what)
                copies.append(Copy(a, b, m, "bidir", MEASURED, nbytes, bidirectional_gbs(nbytes, t.median_s), t, rate(a, b, "bidir")))
            prog(advance=1)
    return P2pResult(gpus, tuple(copies), tuple(chases), nbytes, topo, tuple(notes), date, time.perf_counter() - t0)
