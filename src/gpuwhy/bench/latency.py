"""The memory latency ladder: a dependent pointer chase over growing working sets.

``gpuwhy bench --latency`` (a mode of :mod:`gpuwhy.bench.modes`)::

    from gpuwhy.bench.latency import measure_latency
    result = measure_latency(device="0")          # LatencyResult
    result.level("DRAM").latency_s                 # s per dependent load
    result.littles.need(16).threads_per_sm         # Little's law at 16 B per thread

Method. One thread (one warp launched) follows a chain of 64-bit device
addresses (``microbench/latency.cu``), so each load waits for the previous one
and the time per step is the load-to-use latency of wherever the chain's data
sits. The chain is a random cyclic permutation built in numpy
(:func:`chase_order`): one node per 128-byte cache line (:data:`NODE_BYTES`),
every line of the working set used, consecutive nodes never in neighbouring
lines (each step jumps more than a cache line, so no spatial locality or
next-line prefetch helps). For each working set from 4 KiB to 4 x L2
(:func:`latency_sizes`: 2 points per octave, 8 per octave around the L1 and
L2 capacities):

1. the chain is uploaded and its nodes read once in parallel (``touch_nodes``:
   a working set that fits in the L2 is then resident, without a slow first
   pass of dependent DRAM misses);
2. one untimed pass of the chase over the whole cycle (up to
   ``max(PRIME_CAP, 4 x L2 / 128)`` steps), so the caches hold what a
   program cycling over this working set would find: the state left by the
   upload and by the parallel touch (address order, all SMs, either L2 half)
   is replaced by the chase's own, from this SM;
3. :data:`LAUNCHES` timed launches, each an untimed in-kernel warm-up of
   ``min(nodes, WARM_CAP)`` steps (L1 does not survive between launches)
   then :data:`TIMED_STEPS` timed steps. The walk continues from launch to
   launch around the cycle, so between two uses of a line the chase has
   touched the whole working set;
4. each launch's final address is checked against the cycle walked on the
   host (a wrong chain or a skipped load raises MeasurementError).

Latency per step = %globaltimer ns / steps (median of the launches); SM
cycles per step from clock64 in the kernel; the SM clock sampled through NVML
while the timed launches run (``cycles_at_clock`` = ns x that clock).
:func:`detect_levels` finds the plateaus (L1, L2, the far L2 partition where
a step shows, DRAM) and the working-set sizes where the steps fall.

Caveat: the chase also walks the TLBs. With the 2 MiB pages cuMemAlloc uses,
a per-SM TLB that stops covering the working set adds its miss cost from
that size on; on Hopper such a step could coincide with the far-L2 step near
L2/2. Telling the two apart needs a chase that spreads a small set over many
pages (not done here).

Pure parts need no GPU: sizes, permutation and addresses in
:mod:`gpuwhy.model.roofline.pointer_chase`, level detection and Little's law at the DRAM
latency in :mod:`gpuwhy.model.roofline.latency_levels`.
"""

from __future__ import annotations

import datetime as _dt
import statistics
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import MeasurementError, UsageError
from ..units import fmt_bytes
from ..model.roofline.latency_levels import Level, detect_levels, dram_littles_law  # noqa: F401  (importable from here too)
from ..model.roofline.pointer_chase import (
    ELEM_BYTES,
    LINE_BYTES,
    NODE_BYTES,
    STRIDE_ELEMS,
    build_cycle,
    chain_addresses,
    chase_order,
    cycle_from_order,
    expected_address,
    latency_sizes,
)

SOURCE = "latency.cu"
KERNELS = {"ca": "chase_ca", "cg": "chase_cg"}
LOADS = {"ca": "ld.global (default .ca: L1 and L2)", "cg": "ld.global.cg (L2 only, bypasses L1)"}
TOUCH_KERNEL = "touch_nodes"

#: Mirror of GPUWHY_CHASE_UNROLL in latency.cu (timed steps must be a multiple).
UNROLL = 8
#: Timed steps per launch (0.5 ms at 30 ns, 10 ms at 600 ns; %globaltimer
#: granularity of up to 1 us stays under 0.2%).
TIMED_STEPS = 16384
#: Untimed steps at the start of every launch (covers a full pass of any
#: working set up to 1 MiB, four times the largest L1 of current GPUs).
WARM_CAP = 8192
#: The untimed priming pass covers the whole cycle up to max(PRIME_CAP, 4 x L2
#: lines) steps: 2^21 steps = 256 MiB of lines (4.3 x an H200's L2, so for
#: larger sets no line from the upload survives in the L2). On an H200 the
#: priming passes take ~7 s of a ~12 s run (one pass at each working set).
PRIME_CAP = 1 << 21
LAUNCHES = 3
SEED = 0x6770_7568  # fixed: the same chains on every run
#: Nanoseconds of spin before the first point, so the SM clock has left idle.
CLOCK_RAMP_NS = 200_000_000


# ----------------------------------------------------------- results ----


@dataclass(frozen=True)
class LatencyPoint:
    """One working set's measurement.

    Attributes:
        working_set_bytes: bytes of the chase (nodes x 128 B; every line used).
        nodes: chase nodes (cache lines).
        steps: timed steps per launch; launches: timed launches.
        latency_s: median over launches of %globaltimer time / steps, s per load.
        min_s, max_s: the launches' range, s per load.
        cycles: median clock64 cycles per load (None if the counter read 0).
        sm_clock_mhz: median NVML SM clock sampled during this point's launches.
        level: the level this point belongs to, or ``transition``.
    """

    working_set_bytes: int
    nodes: int
    steps: int
    launches: int
    latency_s: float
    min_s: float
    max_s: float
    cycles: float | None = None
    sm_clock_mhz: float | None = None
    level: str = ""

    @property
    def cycles_at_clock(self) -> float | None:
        """latency_s x the sampled SM clock, cycles (None without a clock sample)."""
        return self.latency_s * self.sm_clock_mhz * 1e6 if self.sm_clock_mhz else None

    @property
    def implied_clock_mhz(self) -> float | None:
        """clock64 cycles / ns: the clock the SM actually ran at, MHz."""
        return self.cycles / self.latency_s / 1e6 if self.cycles else None

    def to_dict(self) -> dict:
        return {
            "working_set_bytes": self.working_set_bytes,
            "nodes": self.nodes,
            "steps": self.steps,
            "launches": self.launches,
            "latency_s": self.latency_s,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "cycles": self.cycles,
            "cycles_at_clock": self.cycles_at_clock,
            "sm_clock_mhz": self.sm_clock_mhz,
            "implied_clock_mhz": self.implied_clock_mhz,
            "level": self.level,
        }


@dataclass(frozen=True)
class LatencyResult:
    """Everything one ``gpuwhy bench --latency`` run measured.

    ``device`` is a :class:`~gpuwhy.engine.context.DeviceInfo`; ``sm_clock`` the
    summary of the NVML samples (:func:`gpuwhy.bench.compute.sample_summary`);
    ``littles`` Little's law for the measured DRAM latency (None without a DRAM
    level or a bandwidth); ``course`` the course's worked example.
    """

    device: Any
    mode: str
    points: tuple[LatencyPoint, ...]
    levels: tuple[Level, ...]
    sm_clock: dict
    littles: Any = None
    course: Any = None
    nvrtc: str = ""
    duration_s: float = 0.0
    date: str = ""
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    health_before: Any = None
    health_after: Any = None
    node_bytes: int = NODE_BYTES
    seed: int = SEED

    @property
    def load(self) -> str:
        return LOADS.get(self.mode, self.mode)

    def level(self, name: str) -> Level | None:
        """The level called ``name`` (``L1``, ``L2``, ``L2 far``, ``DRAM``), or None."""
        return next((lv for lv in self.levels if lv.name == name), None)

    def summary_line(self) -> str:
        """One line to paste into an issue or a CI log."""
        d = self.device
        parts = [f"gpuwhy bench --latency: {d.name} ({d.arch}, {self.load.split(' (')[0]})"]
        for lv in self.levels:
            cyc = f", {lv.cycles:.0f} cycles" if lv.cycles else ""
            where = f" to {fmt_bytes(lv.edge_bytes)}" if lv.edge_bytes else f" from {fmt_bytes(lv.first_bytes)}"
            parts.append(f"{lv.name} {lv.latency_s * 1e9:.0f} ns{cyc}{where}")
        if not self.levels:
            parts.append("no plateau found")
        if self.littles is not None:
            ll = self.littles
            parts.append(f"Little's law: {ll.bandwidth_gbs:.0f} GB/s x {ll.latency_s * 1e9:.0f} ns = "
                         f"{ll.bytes_in_flight / 1e6:.2f} MB in flight, {ll.bytes_in_flight_per_sm / 1e3:.1f} KB/SM")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {
            "date": self.date,
            "device": self.device.to_dict() if hasattr(self.device, "to_dict") else self.device,
            "mode": self.mode,
            "load": self.load,
            "node_bytes": self.node_bytes,
            "seed": self.seed,
            "nvrtc": self.nvrtc,
            "sm_clock": dict(self.sm_clock),
            "levels": [lv.to_dict() for lv in self.levels],
            "points": [p.to_dict() for p in self.points],
            "littles_law": self.littles.to_dict() if self.littles is not None else None,
            "littles_law_course_example": self.course.to_dict() if self.course is not None else None,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "health_before": self.health_before.to_dict() if self.health_before is not None else None,
            "health_after": self.health_after.to_dict() if self.health_after is not None else None,
            "duration_s": self.duration_s,
            "summary": self.summary_line(),
        }


# ------------------------------------------------------------ runner ----


def _median(xs):
    xs = [float(v) for v in xs if v]
    return statistics.median(xs) if xs else None


def run_latency(
    ctx,
    *,
    sizes: Sequence[int] | None = None,
    l1_bypass: bool = False,
    seed: int = SEED,
    sample: Callable[[], tuple] | None = None,
    progress: Callable[..., None] | None = None,
    timed_steps: int | None = None,
    launches: int | None = None,
    warm_cap: int | None = None,
    prime_cap: int | None = None,
    ramp_ns: int | None = None,
) -> tuple[list[LatencyPoint], list[Level], list, list[str]]:
    """Measure the ladder on an open :class:`~gpuwhy.engine.context.GpuContext`.

    Args:
        sizes: working sets in bytes (multiples of 128, at least 640); default
            :func:`latency_sizes` for the device's L2.
        l1_bypass: chase with ``ld.global.cg`` (L2 and DRAM only).
        sample: returns (SM clock MHz, power W, clock-event mask), e.g.
            :meth:`gpuwhy.device.sample.ClockSampler.sample`; polled while the timed
            launches run.
        progress: ``progress(total=, advance=, description=)`` (keywords optional).
        timed_steps, launches, warm_cap, prime_cap, ramp_ns: default to the module's
            :data:`TIMED_STEPS`, :data:`LAUNCHES`, :data:`WARM_CAP`, :data:`PRIME_CAP`,
            :data:`CLOCK_RAMP_NS` (read at call time).

    Returns:
        (points, levels, clock samples, notes).

    Raises:
        UsageError: a size that is not a multiple of 128 bytes or below 640.
        MeasurementError: the chase ended at a wrong address, or a CUDA error.
    """
    from ..engine.timing import collect, time_gpu

    prog = progress or (lambda **kw: None)
    timed_steps = TIMED_STEPS if timed_steps is None else int(timed_steps)
    launches = LAUNCHES if launches is None else int(launches)
    warm_cap = WARM_CAP if warm_cap is None else int(warm_cap)
    prime_cap = PRIME_CAP if prime_cap is None else int(prime_cap)
    ramp_ns = CLOCK_RAMP_NS if ramp_ns is None else int(ramp_ns)
    mode = "cg" if l1_bypass else "ca"
    l2 = int(ctx.info.l2_bytes) or 4 << 20
    sizes = _checked_sizes(sizes or latency_sizes(l2))
    if timed_steps % UNROLL or timed_steps <= 0:
        raise ValueError(f"timed_steps={timed_steps} must be a positive multiple of {UNROLL}")
    notes: list[str] = []
    sizes = _sizes_that_fit(ctx, sizes, notes)
    chase = ctx.kernel(SOURCE, KERNELS[mode])
    touch = ctx.kernel(SOURCE, TOUCH_KERNEL)
    rng = np.random.default_rng(seed)
    prog(total=len(sizes), description="pointer chase")
    if ramp_ns:
        ctx.spin(int(ramp_ns))  # let the SM clock leave idle before the first point
        ctx.sync("ramping the clock")
    points: list[LatencyPoint] = []
    all_samples: list = []
    touch_grid = max(1, int(ctx.info.sm_count) * 4)
    with ctx.alloc(max(sizes)) as buf, ctx.alloc(8) as state, ctx.alloc(24 * launches) as rec, ctx.alloc(8) as sink:
        base = int(buf.ptr)
        for ws in sizes:
            prog(description=f"pointer chase, working set {fmt_bytes(ws)}")
            nodes = ws // NODE_BYTES
            order = chase_order(nodes, rng)
            host = chain_addresses(order, ws // ELEM_BYTES, STRIDE_ELEMS, base)
            ctx.upload(buf, host)
            del host
            ctx.upload(state, np.array([expected_address(order, STRIDE_ELEMS, base, 0)], dtype=np.uint64))
            ctx.launch(touch, touch_grid, 256, base, np.uint64(nodes), np.uint64(STRIDE_ELEMS), int(sink.ptr))
            prime = min(nodes, max(int(prime_cap), 4 * l2 // NODE_BYTES))
            if prime:
                ctx.launch(chase, 1, 1, int(state.ptr), np.uint64(prime), np.uint64(0), int(rec.ptr))
            warm = min(nodes, int(warm_cap))

            def fn(i, warm=warm):
                ctx.launch(chase, 1, 1, int(state.ptr), np.uint64(warm), np.uint64(timed_steps), int(rec.ptr) + 24 * i)

            hook, samples = collect(sample)
            m = time_gpu(ctx.stream, ctx.events, fn, warmup=0, reps=launches, estimate=False, sample=hook)
            recs = ctx.download(rec, np.uint64, 3 * launches).reshape(launches, 3)
            final = int(ctx.download(state, np.uint64, 1)[0])
            _check_chase(recs, final, order, base, prime, warm + timed_steps, KERNELS[mode], ws)
            per, cyc = _step_times(recs, m.samples_s, warm, timed_steps, notes)
            clk = _median(s[0] for s in samples if s)
            all_samples.extend(samples)
            points.append(LatencyPoint(
                working_set_bytes=int(ws), nodes=int(nodes), steps=int(timed_steps), launches=int(launches),
                latency_s=float(np.median(per)), min_s=float(np.min(per)), max_s=float(np.max(per)),
                cycles=float(np.median(cyc)) if np.all(cyc > 0) else None, sm_clock_mhz=clk,
            ))
            prog(advance=1)
    levels = detect_levels([p.working_set_bytes for p in points], [p.latency_s for p in points],
                           l2_bytes=int(ctx.info.l2_bytes) or None, l1_cached=not l1_bypass)
    points, levels = attach_levels(points, levels)
    return points, levels, all_samples, notes


def _checked_sizes(sizes: Sequence[int]) -> list[int]:
    """``sizes`` (bytes) sorted without repeats.

    Raises:
        UsageError: a size that is not a multiple of :data:`NODE_BYTES` or below 5 nodes.
    """
    sizes = sorted(set(int(s) for s in sizes))
    bad = [s for s in sizes if s % NODE_BYTES or s < 5 * NODE_BYTES]
    if bad:
        raise UsageError(f"working set {bad[0]} bytes is not a multiple of {NODE_BYTES} of at least {5 * NODE_BYTES}")
    return sizes


def _sizes_that_fit(ctx, sizes: list[int], notes: list[str]) -> list[int]:
    """The working sets (bytes) that fit in 80% of the GPU's free memory; a note when some do not.

    Raises:
        MeasurementError: none fits.
    """
    free, _total = ctx.mem_info()
    fit = [s for s in sizes if s <= 0.8 * free]
    if len(fit) < len(sizes):
        notes.append(f"working sets above {fmt_bytes(0.8 * free)} skipped: {len(sizes) - len(fit)} of {len(sizes)} do not fit in 80% of free GPU memory")
        sizes = fit
    if not sizes:
        raise MeasurementError(f"no working set fits in the GPU's free memory ({fmt_bytes(free)})")
    return sizes


def _check_chase(recs, final: int, order, base: int, prime: int, per_launch: int, kernel: str, ws: int) -> None:
    """Check that every launch ended where the chain says (``recs[r, 2]``, after ``prime`` steps and
    ``per_launch`` steps per launch) and that the state holds the last launch's end.

    Raises:
        MeasurementError: the kernel did not follow the chain (nothing is reported).
    """
    for r in range(len(recs)):
        want = expected_address(order, STRIDE_ELEMS, base, prime + (r + 1) * per_launch)
        got = int(recs[r, 2])
        if got != want:
            raise MeasurementError(
                f"the pointer chase ({kernel}) over {fmt_bytes(ws)} ended launch {r + 1} at 0x{got:x}, "
                f"expected 0x{want:x}: the kernel did not follow the chain; nothing reported"
            )
    if final != int(recs[-1, 2]):
        raise MeasurementError(f"the pointer chase over {fmt_bytes(ws)} left its state at 0x{final:x}, expected 0x{int(recs[-1, 2]):x}")


def _step_times(recs, event_samples_s, warm: int, timed_steps: int, notes: list[str]):
    """(seconds per step, SM cycles per step) of each launch, from its ``%globaltimer`` and
    ``clock64`` records (``recs[r, 1]`` ns, ``recs[r, 0]`` cycles over ``timed_steps``); when the
    timer did not advance, from the CUDA-event times of whole launches (``warm`` steps included),
    with a note."""
    ns = recs[:, 1].astype(np.float64) / timed_steps
    cyc = recs[:, 0].astype(np.float64) / timed_steps
    if np.all(ns > 0):
        return ns * 1e-9, cyc
    per = np.asarray(event_samples_s) / (warm + timed_steps)  # %globaltimer did not advance
    if not any("globaltimer" in n for n in notes):
        notes.append("%globaltimer did not advance; latencies from CUDA events over whole launches (warm-up steps included)")
    return per, cyc


def attach_levels(points: Sequence[LatencyPoint], levels: Sequence[Level], clock_mhz: float | None = None):
    """Label each point with its level (``transition`` between plateaus) and fill
    each level's median cycles and cycles at the clock; returns (points, levels)."""
    label = {i: lv.name for lv in levels for i in lv.indices}
    pts = [replace(p, level=label.get(i, "transition")) for i, p in enumerate(points)]
    out = []
    for lv in levels:
        ps = [pts[i] for i in lv.indices]
        cyc = _median(p.cycles for p in ps)
        clk = clock_mhz or _median(p.sm_clock_mhz for p in ps)
        out.append(replace(lv, cycles=cyc, cycles_at_clock=lv.latency_s * clk * 1e6 if clk else None))
    return pts, out


def dram_bandwidth_for(info, spec_dirs: Sequence[str] = (), gpu: str | None = None) -> tuple[float | None, str]:
    """(GB/s, where it came from): the newest `gpuwhy bench` profile of this GPU, else the spec sheet."""
    try:
        from ..profiles import latest_profile

        prof = latest_profile(info.uuid, need="dram_bandwidth_gbs")
    except Exception:
        prof = None
    if prof is not None and prof.dram_bandwidth_gbs:
        return float(prof.dram_bandwidth_gbs), f"measured by `gpuwhy bench` on {prof.date} ({prof.dram_kernel or 'vec16'})"
    from ..device.sheet import sheet_for
    from ..errors import GpuwhyError

    try:
        sheet = sheet_for(gpu, device=info, spec_dirs=spec_dirs).sheet
    except GpuwhyError:
        sheet = None
    if sheet is not None:
        return float(sheet.memory_bandwidth_gbs), f"the {sheet.name} spec sheet (run `gpuwhy bench` to use a measured figure)"
    return None, ""


def measure_latency(
    device: str | None = None,
    spec_dirs: Sequence[str] = (),
    *,
    l1_bypass: bool = False,
    gpu: str | None = None,
    sizes: Sequence[int] | None = None,
    progress: Callable[..., None] | None = None,
) -> LatencyResult:
    """Open the GPU, run the ladder, add Little's law; prints nothing.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: a bad device, sheet name or size.
        MeasurementError: a wrong chase result or a CUDA error (exit 4).
    """
    from ..device.sample import ClockSampler, health_warnings, sample
    from ..engine.context import open_device
    from ..model.roofline.littles_law import course_example
    from .compute import sample_summary
    from .preflight import open_and_sample

    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    index, uuid, before = open_and_sample(device)
    notes: list[str] = []
    if before is None:
        notes.append("NVML unavailable: no SM clock samples; cycles come from clock64 only")
    with open_device(index) as ctx:
        info = ctx.info
        with ClockSampler(info.uuid) as clock:
            points, levels, samples, run_notes = run_latency(ctx, sizes=sizes, l1_bypass=l1_bypass,
                                                             sample=clock.sample, progress=progress)
    after = sample(uuid, index) if before is not None else None
    notes.extend(run_notes)
    summ = sample_summary(samples)
    points, levels = attach_levels(points, levels, summ.get("sm_clock_mhz"))
    names = [lv.name for lv in levels]
    if "DRAM" not in names:
        notes.append(f"no DRAM level found (largest working set {fmt_bytes(max(p.working_set_bytes for p in points))}); no Little's law")
    if "L2 far" not in names and "L2" in names:
        notes.append("no far-L2 step showed (a single L2 latency up to the DRAM step)")
    dram_i = names.index("DRAM") if "DRAM" in names else -1
    if dram_i > 0 and levels[dram_i - 1].edge_bytes and info.l2_bytes:
        edge = levels[dram_i - 1].edge_bytes
        notes.append(f"the step to DRAM falls at a working set of {fmt_bytes(edge)}: {100 * edge / info.l2_bytes:.0f}% of the "
                     f"{fmt_bytes(info.l2_bytes)} L2 the driver reports")
    bw, src = dram_bandwidth_for(info, spec_dirs, gpu)
    littles = dram_littles_law(levels, info, bw, src)
    if littles is None and "DRAM" in names:
        notes.append("no DRAM bandwidth known (no profile, no spec sheet): run `gpuwhy bench` for Little's law")
    warnings = health_warnings(before, after)
    return LatencyResult(
        device=info, mode="cg" if l1_bypass else "ca", points=tuple(points), levels=tuple(levels), sm_clock=summ,
        littles=littles, course=course_example(), nvrtc=_nvrtc_text(), duration_s=time.perf_counter() - t0,
        date=date, notes=tuple(notes), warnings=tuple(warnings), health_before=before, health_after=after,
    )


def _nvrtc_text() -> str:
    try:
        from ..engine.compile import nvrtc_version

        return "%d.%d" % nvrtc_version()
    except Exception:
        return "n/a"
