"""The remedies, each with the shares of the window it removes or shrinks and by how much.

A remedy's effect is an upper bound: the time it could remove if it worked perfectly. The window's
speed-up it gives is at most ``judged / floor``, the floor being the larger of the GPU time and the
host time it leaves (:func:`gpuwhy.verdict.engine.floor_after`; never below Amdahl's ``judged /
(judged - removed)``). What each removes:

- ``cuda_graph``: all launch overhead (host time in launch calls, operators' dispatch and the glue
  between them) and the queue latency between queued kernels outside graphs already replayed; not
  host work outside CUDA calls, not data loading, not the kernels' own time.
- ``bigger_launches``: the same shares as ``cuda_graph``, by fewer launches per unit of work.
- ``move_host_work``: all host work outside CUDA calls (off the critical path: every N steps, in
  another thread, after the next step's GPU work is queued).
- ``remove_syncs``: all time the host spent blocked in syncs and the host work they gated (each
  sync's wait, taken from the host windows after it until the next sync:
  :func:`gpuwhy.importers.timeline.gaps.carry_lead`).
- ``more_loader_workers``: all GPU idle time while the main process built batches, down to the
  step's own time, and (its ``pin_memory=True``) the pageable copies' share; nothing where no
  DataLoader ran.
- ``pin_memory``: the host's staging of pageable copies, and of each pageable copy's own time the
  part a copy at the pinned rate would not take: ``exposed x (1 - achieved / pinned)``.
- ``overlap_copies``: the copies' time not hidden under kernels.
- ``reorder_dependency``: all queued work's waits longer than launch latency.
- ``overlap_communication``: collectives' time not hidden under compute.
- ``lower_precision``: for compute-bound kernels whose precision has a faster one on this GPU,
  ``t - FLOPs / faster peak`` (or ``t - t x roof% x peak / faster peak`` without a FLOP count).
- ``fuse``: memory-bound and launch-sized kernels fused into one kernel per chain: all their time
  but that of the cheapest of them at its roof, once per chain (chains: the window's steps, else
  its CUDA-graph replays, else the fewest launches of any of them).
- ``more_parallelism``: latency-bound kernels brought to their roof: ``t x (1 - roof%)``.
- ``faster_kernels``: compute-, memory- and issue-bound kernels brought to their roof:
  ``t x (1 - roof%)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from .causes import Cause
from .figures import KernelFigure, WindowFigures

#: A kernel's precision -> the faster precisions it may drop to (the fastest on the GPU is taken).
LOWER_PRECISION = {
    "fp64": ("fp32", "tf32", "bf16", "fp16"),
    "fp32": ("tf32", "bf16", "fp16"),
    "tf32": ("bf16", "fp16"),
    "bf16": ("fp8",),
    "fp16": ("fp8",),
}


@dataclass(frozen=True)
class Remedy:
    """One remedy: its ``key``, what to do (``text``; ``text_if_graphs`` instead where the window already
    replays CUDA graphs), and the function that gives the seconds it removes from each share of a
    window (``effect``)."""

    key: str
    text: str
    effect: Callable[[WindowFigures, Mapping[Cause, float]], dict[Cause, float]]
    text_if_graphs: str | None = None

    def text_for(self, w: WindowFigures) -> str:
        """What to do in window ``w``, in the words of its framework (:data:`FRAMEWORK_TEXT`)."""
        if w.graphs and self.text_if_graphs:
            return in_words(f"{self.key}_if_graphs", w.framework, self.text_if_graphs).format(graphs=w.graphs)
        return in_words(self.key, w.framework, self.text)


def _all(*causes: Cause):
    def effect(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
        return {c: shares.get(c, 0.0) for c in causes}
    return effect


def _graph(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
    """All launch overhead, and the queue latency outside the graphs the window already replays."""
    return {Cause.LAUNCH_OVERHEAD: shares.get(Cause.LAUNCH_OVERHEAD, 0.0),
            Cause.QUEUE_LATENCY: max(shares.get(Cause.QUEUE_LATENCY, 0.0) - w.graph_queue_s, 0.0)}


def _loader(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
    """The data loading, and with it (the workers' pin_memory=True) the pageable copies' share; nothing
    without a DataLoader in the window."""
    if shares.get(Cause.DATA_LOADING, 0.0) <= 0:
        return {}
    return {Cause.DATA_LOADING: shares[Cause.DATA_LOADING], Cause.PAGEABLE_COPY: shares.get(Cause.PAGEABLE_COPY, 0.0)}


def _pin(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
    """The staging (idle) part of the pageable share, and each pageable copy's shrink at the pinned rate."""
    staged = w.idle.get(Cause.PAGEABLE_COPY, 0.0)
    shrink = 0.0
    for c in w.copies:
        link = w.links.get(c.direction)
        if c.memory != "pageable" or c.exposed_s <= 0:
            continue
        rate = c.gbs
        if link is None or rate is None:
            shrink += c.exposed_s  # no rate to compare with: at most all of it
        elif rate < link.gbs:
            shrink += c.exposed_s * (1.0 - rate / link.gbs)
    return {Cause.PAGEABLE_COPY: min(staged + shrink, shares.get(Cause.PAGEABLE_COPY, 0.0))}


def _faster_time(k: KernelFigure, peaks: Mapping[str, float]) -> float | None:
    """The least time (s) kernel ``k``'s FLOPs can take at the fastest lower precision, None when none applies."""
    lower = [peaks[p] for p in LOWER_PRECISION.get(k.precision or "", ()) if peaks.get(p)]
    if not lower:
        return None
    fast = max(lower)
    if k.flops:
        return k.flops / fast
    cur = peaks.get(k.precision or "")
    if k.roof_pct is not None and cur:
        return k.total_s * min(k.roof_pct, 100.0) / 100.0 * cur / fast
    return None


def _lower_precision(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
    out = 0.0
    for k in w.kernels:
        if k.regime != "compute":
            continue
        t = _faster_time(k, w.peaks)
        if t is not None and t < k.total_s:
            out += k.total_s - t
    return {Cause.COMPUTE_BOUND: min(out, shares.get(Cause.COMPUTE_BOUND, 0.0))}


def _fuse(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
    """A chain of memory-bound and launch-sized kernels fused: one kernel per chain (a step, a graph replay,
    else the rarest kernel's launches) that takes at least the cheapest memory-bound kernel's time at its
    measured roof (the fused kernel still reads the chain's input and writes its output once, what the
    cheapest link of a chain over same-sized tensors moves), or, with no memory-bound kernel measured,
    the cheapest kernel's time; the rest goes. Elementwise kernels whose regime was not measured (an ncu
    pass measures the top few) are links of the same chains and go too, once a measured chain is there.
    One launch per chain is no chain: nothing."""
    ks = [k for k in w.kernels if k.cause in (Cause.MEMORY_BOUND, Cause.LAUNCH_SIZED) and k.launches > 0]
    if not ks:
        return {}
    ks += [k for k in w.kernels if k.cause is Cause.KERNELS and k.kind == "elementwise" and k.launches > 0]
    chains = w.steps or w.graphs or min(k.launches for k in ks)
    if sum(k.launches for k in ks) < 2 * chains:  # one launch per chain is no chain: faster_kernels' job
        return {}
    timed = [k for k in ks if k.cause is Cause.MEMORY_BOUND and k.roof_pct is not None]
    floor = chains * (min(k.mean_s * min(k.roof_pct, 100.0) / 100.0 for k in timed) if timed
                      else min(k.mean_s for k in ks))
    total = sum(k.total_s for k in ks)
    removed = max(total - floor, 0.0)
    if removed <= 0:
        return {}
    out: dict[Cause, float] = {}
    for k in ks:  # spread over the two shares by their time
        c = k.cause
        out[c] = out.get(c, 0.0) + removed * k.total_s / total
    return {c: min(v, shares.get(c, 0.0)) for c, v in out.items()}


def _to_roof(*regimes: str):
    def effect(w: WindowFigures, shares: Mapping[Cause, float]) -> dict[Cause, float]:
        out: dict[Cause, float] = {}
        for k in w.kernels:
            if k.regime in regimes and k.roof_pct is not None and not k.launch_sized:
                c = k.cause
                out[c] = out.get(c, 0.0) + k.total_s * (1.0 - min(max(k.roof_pct, 0.0), 100.0) / 100.0)
        return {c: min(v, shares.get(c, 0.0)) for c, v in out.items()}
    return effect


CATALOGUE: tuple[Remedy, ...] = (
    Remedy("cuda_graph",
           "Capture the step in a CUDA graph (torch.cuda.graphs, or torch.compile(mode=\"reduce-overhead\")): one "
           "launch replaces many, so the host's launch and dispatch time and the gaps between queued kernels go; "
           "Python work outside the captured ops stays.",
           _graph,
           "The trace already replays CUDA graphs ({graphs:,} graph launches): capture more of the step in them (the "
           "eager launches between replays are what the GPU waits for), or fewer, larger graph nodes."),
    Remedy("bigger_launches",
           "Give each launch more work: larger batches, merged small tensors, foreach or fused optimizers "
           "(torch.optim.AdamW(fused=True)); the launches per unit of work fall.",
           _all(Cause.LAUNCH_OVERHEAD, Cause.QUEUE_LATENCY)),
    Remedy("move_host_work",
           "Take the host work off the critical path: do it every N steps, in another thread, or after the next "
           "step's GPU work is queued (find it with torch.profiler(with_stack=True) or py-spy); CUDA graphs do not "
           "remove it.",
           _all(Cause.HOST_WORK)),
    Remedy("remove_syncs",
           "Take the syncs out of the step: no .item(), .cpu(), .tolist(), print(tensor) or torch.cuda.synchronize() "
           "per step; keep values on the GPU (torch.where) and read them every N steps, or copy them with "
           "non_blocking=True into pinned memory and read them a step later.",
           _all(Cause.HOST_SYNC)),
    Remedy("more_loader_workers",
           "Build batches ahead in worker processes: DataLoader(num_workers=N, pin_memory=True, "
           "persistent_workers=True, prefetch_factor=2-4).",
           _loader),
    Remedy("pin_memory",
           "Copy from pinned memory: tensor.pin_memory() once (or DataLoader(pin_memory=True)), then "
           ".to('cuda', non_blocking=True): the host stops staging and the copy runs at the link's pinned rate.",
           _pin),
    Remedy("overlap_copies",
           "Overlap the copies with compute: issue them on a side stream with non_blocking=True from pinned memory "
           "and wait on them only where the data is used; or keep the data on the GPU between steps.",
           _all(Cause.COPY)),
    Remedy("reorder_dependency",
           "Start the waiting work sooner: record the event as soon as its producer is queued and wait on it just "
           "before the consumer needs it; give the waiting stream independent work meanwhile; drop waits that are "
           "not needed.",
           _all(Cause.DEPENDENCY_WAIT)),
    Remedy("overlap_communication",
           "Overlap collectives with compute: bucketed gradients (DDP bucket_cap_mb), async_op=True, FSDP "
           "prefetch; communication hidden under kernels costs nothing.",
           _all(Cause.COMMUNICATION)),
    Remedy("lower_precision",
           "Run the compute-bound kernels in lower precision on the tensor cores: torch.autocast(dtype=torch.bfloat16) "
           "or torch.backends.cuda.matmul.allow_tf32 = True (fp8 with Transformer Engine where bf16 already runs).",
           _lower_precision),
    Remedy("fuse",
           "Fuse the chains of memory-bound and launch-sized kernels (torch.compile, or one hand-written kernel): "
           "each kernel reads and writes its tensors again; fused, intermediates stay on chip.",
           _fuse),
    Remedy("more_parallelism",
           "Put more bytes in flight in the latency-bound kernels: a grid of several blocks per SM, more independent "
           "loads per thread, vector loads (Little's law).",
           _to_roof("latency")),
    Remedy("faster_kernels",
           "Bring the kernels to their roof: a tuned library kernel (cuBLAS, cuDNN, FlashAttention) or better tiling "
           "and access patterns; gpuwhy ncu says per kernel what holds it.",
           _to_roof("compute", "memory", "issue")),
)
BY_KEY: dict[str, Remedy] = {r.key: r for r in CATALOGUE}

#: The remedies in a framework's own words, where they differ from the catalogue's (PyTorch's), by
#: :attr:`~.figures.WindowFigures.framework` and remedy key (``KEY_if_graphs``: instead of the remedy's
#: ``text_if_graphs``, where the window already replays CUDA graphs); ``warmup``, ``unexplained``: the next steps
#: for those causes (:func:`next_step`); ``too_little``: what to do when a GPU holds too little to judge.
FRAMEWORK_TEXT: dict[str, dict[str, str]] = {
    "jax": {
        "cuda_graph": "Put the whole step in one jitted function, so one executable launches it, and let XLA replay "
                      "it as a CUDA graph (its command buffers: the XLA flag xla_gpu_enable_command_buffer): the host's "
                      "launch and dispatch time and the gaps between queued kernels go; Python work outside stays.",
        "cuda_graph_if_graphs": "XLA already replays CUDA graphs here ({graphs:,} graph launches: its command "
                                "buffers): put more of the step in them: the whole step in one jitted function, more "
                                "kinds of work in the graphs (the XLA flag xla_gpu_enable_command_buffer lists them) "
                                "and shorter runs of kernels too (xla_gpu_graph_min_graph_size); the eager launches "
                                "between replays are what the GPU waits for.",
        "bigger_launches": "Give each launch more work: larger batches, or several steps in one jitted call "
                           "(jax.lax.scan or fori_loop over the steps); the launches per unit of work fall.",
        "move_host_work": "Take the host work off the critical path: do it every N steps or in another thread, after "
                          "the next step is dispatched (JAX dispatches asynchronously; find the work with jax.profiler's "
                          "Python tracer or py-spy).",
        "remove_syncs": "Take the syncs out of the step: no float(x), x.item(), np.asarray(x), print(x) or "
                        "x.block_until_ready() per step; keep values on the device (jnp.where, lax.cond) and fetch them "
                        "every N steps, or start the copy with x.copy_to_host_async() and read it a step later.",
        "pin_memory": "Copy from pinned memory: put the input in pinned host memory (a sharding with "
                      "memory_kind='pinned_host') or prefetch the next batch with jax.device_put while this one runs.",
        "fuse": "Fuse the chains of memory-bound and launch-sized kernels: jit the whole step (XLA fuses within one "
                "executable), or one hand-written kernel (Pallas); fused, intermediates stay on chip.",
        "lower_precision": "Run the compute-bound kernels in lower precision on the tensor cores: bfloat16 inputs "
                           "(jnp.bfloat16) or jax.default_matmul_precision('bfloat16').",
        "warmup": "Leave warm-up out of the window: start jax.profiler after the first steps (XLA compiles each new "
                  "shape once), or gpuwhy run --skip-first TIME.",
        "unexplained": "Trace with jax.profiler.trace(LOGDIR, create_perfetto_trace=True) or gpuwhy run --tracer "
                       "cupti: both link each kernel to the launch call that started it.",
        "too_little": "Profile more of the program: several steps after warm-up, e.g. jax.profiler.start_trace after "
                      "the first steps and stop_trace a few steps later.",
    },
}


def in_words(key: str, framework: str | None, default: str) -> str:
    """``default`` (PyTorch's words), or ``framework``'s own under ``key`` where :data:`FRAMEWORK_TEXT` has them."""
    return FRAMEWORK_TEXT.get(framework or "", {}).get(key, default)


def next_step(cause: Cause, framework: str | None) -> str:
    """What to do about a share no remedy shrinks (:data:`NEXT_STEP`), in ``framework``'s words where they differ
    (:data:`FRAMEWORK_TEXT` under the cause's value: ``warmup``, ``unexplained``)."""
    return in_words(cause.value, framework, NEXT_STEP[cause])


#: What to do about shares no remedy shrinks (not fixes: next steps).
NEXT_STEP: dict[Cause, str] = {
    Cause.KERNELS: ("Measure the kernels' regimes: gpuwhy run --kernels (an ncu pass over the top kernels), or "
                    "gpuwhy ncu on an export; a trace has no FLOP or byte counts."),
    Cause.WARMUP: ("Leave warm-up out of the window: --steps N (the last N ProfilerStep ranges) or --skip-first, or "
                   "torch.profiler.schedule(wait=1, warmup=1, active=3)."),
    Cause.UNEXPLAINED: ("Record with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a recent PyTorch so "
                        "launches carry correlation ids."),
}


__all__ = ["BY_KEY", "CATALOGUE", "FRAMEWORK_TEXT", "LOWER_PRECISION", "NEXT_STEP", "Remedy", "in_words", "next_step"]
