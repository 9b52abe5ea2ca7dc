"""The verdict of one GPU from its idle breakdown, and the remedies that follow each cause.

- too little to judge: fewer than :data:`MIN_GPU_EVENTS` GPU activities or a
  span under :data:`MIN_SPAN_S` (one kernel, a few launches: no pattern);
- starved: idle at least :data:`IDLE_OVERHEAD_PCT` % of the steady span (the
  span less warm-up), or of the median step when the trace has at least
  :data:`MIN_STEPS` ``ProfilerStep#N`` ranges (so one slow step does not decide);
  the verdict then names the largest steady cause (by median step time when
  there are steps): ``overhead-bound`` (waiting on the host to launch, or gaps
  between queued work), ``host-sync-bound``, ``data-loading-bound``,
  ``pageable-copy-bound``, ``stream-wait-bound``, ``idle-unattributed``;
- busy, but at least :data:`PAGEABLE_BUSY_PCT` % of the GPU time in host-to-device
  copies from pageable memory: ``pageable-copy-bound``;
- launch-sized kernels (more than :data:`SHORT_MAJORITY_PCT` % of kernels shorter
  than :data:`SHORT_KERNEL_S`, holding more than half the kernel time) without
  idle time: ``overhead-bound`` too, when they are launched one by one; when
  most of their time comes from CUDA-graph replays the host's launch cost is
  already gone and the GPU is busy: ``gpu-bound``, with fusion as the remedy;
- else ``gpu-bound``: the time is in the kernels.
"""

from __future__ import annotations
from ...units import fmt_g, fmt_num, fmt_time
from .results import CAUSE_LABELS

#: Idle share of the span (percent) from which a GPU is starved.
IDLE_OVERHEAD_PCT = 30.0
#: Share of kernels (percent) shorter than SHORT_KERNEL_S from which "most kernels are launch-sized".
SHORT_MAJORITY_PCT = 50.0
#: Kernels shorter than this are launch-sized (the same 10 us as gpuwhy.model.roofline.classify.SHORT_KERNEL_S).
SHORT_KERNEL_S = 10e-6
#: Fewer GPU activities than this, or a span shorter than MIN_SPAN_S, is too little to judge.
MIN_GPU_EVENTS = 4
MIN_SPAN_S = 50e-6
#: A busy GPU spending this share (percent) of its GPU time in pageable host-to-device copies is copy-bound.
PAGEABLE_BUSY_PCT = 50.0
#: Steps needed before the median step decides.
MIN_STEPS = 3

VERDICT_OF_CAUSE = {
    "host_launch": "overhead-bound",
    "queued": "overhead-bound",
    "host_sync": "host-sync-bound",
    "data_loading": "data-loading-bound",
    "pageable_copy": "pageable-copy-bound",
    "stream_wait": "stream-wait-bound",
    "unexplained": "idle-unattributed",
}

#: Measured on the H200 by `gpuwhy bench --link` (docs/results/2026-11-29-h200.md): H2D GB/s.
H200_PINNED_H2D_GBS = 55.3
H200_PAGEABLE_H2D_GBS = 7.7

REMEDIES = {
    "host_launch": (
        "Capture the step in a CUDA graph (torch.cuda.graphs, or torch.compile(mode=\"reduce-overhead\")): one launch replaces many.",
        "Fuse the small ops with torch.compile (or a fused kernel) so fewer, larger kernels run.",
        "Give each launch more work: larger batches or merged small tensors; fused/foreach optimizers (fused=True).",
    ),
    "host_sync": (
        ("Take the syncs out of the step: no .item(), .cpu(), .tolist(), print(tensor) or torch.cuda.synchronize() per step; "
        "keep the loss on the GPU and read it every N steps."),
        "Where a value must reach the host, copy it with .to('cpu', non_blocking=True) into pinned memory and read it a step later.",
        "Avoid ops that sync implicitly (torch.nonzero, boolean-mask indexing, .unique() sizes) or give them a static size.",
    ),
    "data_loading": (
        "DataLoader(num_workers=N): build batches in N worker processes (start at the CPU cores per GPU, often 4-8).",
        "pin_memory=True, so batches land in pinned memory and .to('cuda', non_blocking=True) overlaps the copy.",
        "persistent_workers=True, so workers are not restarted every epoch.",
        "prefetch_factor=2-4 batches per worker, so a slow batch is hidden behind the queue.",
        "Move per-sample CPU work (augmentation, decoding) to the GPU or cache it.",
    ),
    "pageable_copy": (
        (f"Copy from pinned memory: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to('cuda', non_blocking=True); "
        f"on the H200 pinned host-to-device copies run at {fmt_g(H200_PINNED_H2D_GBS)} GB/s against {fmt_g(H200_PAGEABLE_H2D_GBS)} GB/s "
        "from pageable memory (gpuwhy bench --link, docs/results/2026-11-29-h200.md)."),
        "Keep data on the GPU between steps rather than copying it again.",
    ),
    "stream_wait": (
        "Record the event as soon as the producer's work is queued and wait on it just before the consumer needs it (later wait_stream).",
        "Balance the streams: give the waiting stream independent work to run meanwhile, or merge short streams into one.",
        "For communication streams: overlap collectives with compute (bucketed gradients, async_op=True) so compute does not wait on them.",
    ),
    "queued": (
        ("The work was already queued: the gaps are GPU-side launch latency between small, dependent kernels; fuse them "
        "(torch.compile) so fewer, larger kernels run."),
        "Inside CUDA graphs the gaps remain per node: fewer, larger nodes shrink them.",
    ),
    "warmup": (
        "Profile after warm-up: torch.profiler.schedule(wait=1, warmup=1, active=3), or run a few steps before the profiled ones.",
    ),
    "unexplained": (
        "Record with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a recent PyTorch so launches carry correlation ids.",
    ),
    # Not causes: the remedies that lead when the evidence says so.
    "host_launch_outside_ops": (
        ("Most of the wait is host time outside any profiled operator (Python between ops, time.sleep, I/O, logging, "
         "metrics): find it (torch.profiler with_stack=True, or py-spy) and take it off the step: every N steps, in "
         "another thread, or after the next step's GPU work is queued."),
    ),
    "short_kernels_in_graphs": (
        ("Fuse the chain of small kernels inside the graph (torch.compile the captured function, or a fused kernel): "
         "each small kernel reads and writes its tensors again, so fewer, larger kernels move less data and pay the "
         "per-node cost fewer times."),
    ),
}

GPU_BOUND_NEXT = (
    ("Hand the top kernels to the roofline: profile them with ncu (command in docs/diagnose.md) and run "
    "`gpuwhy ncu report.csv`, or `gpuwhy classify --flops F --bytes B --time T` per kernel."),
)
TOO_LITTLE_NEXT = (
    "Profile more of the program: several steps after warm-up, e.g. torch.profiler.schedule(wait=1, warmup=1, active=3).",
)


def amdahl_x(span_s: float, removed_s: float) -> float:
    """The most a span of ``span_s`` can shrink (x) when ``removed_s`` of it goes to zero: span / (span - removed)."""
    left = span_s - removed_s
    return span_s / left if left > 0 else float("inf")


def choose(kind_counts: int, span_s: float, steady_idle_pct: float, steady_causes: dict, step_idle_pct: float | None,
           step_causes: dict | None, short_flag: bool, pageable_busy_pct: float = 0.0,
           short_in_graphs: bool = False) -> tuple[str, str | None]:
    """(verdict, cause key or None) for one GPU; see the module docstring.

    ``steady_causes``: idle seconds per cause without warm-up; ``step_*``: the
    median step's idle share and per-cause seconds (None without enough steps);
    ``pageable_busy_pct``: share of the summed GPU time in host-to-device copies
    from pageable memory; ``short_in_graphs``: most of the launch-sized kernels'
    time comes from CUDA-graph replays.
    """
    if kind_counts < MIN_GPU_EVENTS or span_s < MIN_SPAN_S:
        return "too-little-to-judge", None
    idle_pct = step_idle_pct if step_idle_pct is not None else steady_idle_pct
    causes = step_causes if step_causes is not None else steady_causes
    if idle_pct >= IDLE_OVERHEAD_PCT and causes:
        key = max((k for k in causes if k != "warmup"), key=lambda k: causes[k], default=None)
        if key is not None and causes[key] > 0:
            return VERDICT_OF_CAUSE[key], key
    if pageable_busy_pct >= PAGEABLE_BUSY_PCT:
        return "pageable-copy-bound", "pageable_copy"
    if short_flag and not short_in_graphs:
        return "overhead-bound", "short_kernels"
    return "gpu-bound", None


def _fmt_us(us: float) -> str:
    return fmt_time(us * 1e-6)


def reasons_of(verdict, cause, causes, f) -> tuple[list[str], list[str]]:
    """The reason lines and remedies of one GPU's verdict: ``causes`` its :class:`~.results.IdleCause`
    list, ``f`` its figures (span, idle shares, steps, kernels; us and percent)."""
    span_us, idle_pct = f["span_us"], f["idle_pct"]
    reasons: list[str] = []
    remedies: list[str] = []
    if verdict == "too-little-to-judge":
        reasons.append(f"{f['n_events']} GPU activities over {_fmt_us(span_us)}: too little to judge "
                       f"(a verdict needs {MIN_GPU_EVENTS} and {fmt_time(MIN_SPAN_S)})")
        return reasons, list(TOO_LITTLE_NEXT)
    head = f"idle {idle_pct:.0f}% of its {_fmt_us(span_us)} span"
    if f["idle_us"] > 0 and f["warm_us"] >= 0.05 * f["idle_us"] and idle_pct - f["steady_idle_pct"] >= 1.0:
        head += (f"; {100 * f['warm_us'] / f['idle_us']:.0f}% of that idle time is warm-up, "
                 f"idle {f['steady_idle_pct']:.0f}% without it")
    if f["step_idle_pct"] is not None:
        head += f"; the median of its {len(f['steps'])} steps is idle {f['step_idle_pct']:.0f}%"
    by = {c.key: c for c in causes}
    if cause == "pageable_copy" and cause in by and f["steady_idle_pct"] < IDLE_OVERHEAD_PCT:
        c = by[cause]
        reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span, {f['pageable_busy_pct']:.0f}% of the GPU "
                       "time in host-to-device copies from pageable memory")
        reasons.extend(c.evidence)
        remedies.extend(c.remedies)
    elif cause in by:
        c = by[cause]
        reasons.append(f"{head}; the largest cause: {c.label}, {c.span_pct:.0f}% of the span")
        reasons.extend(c.evidence)
        remedies.extend(c.remedies)
        others = [x for x in causes if x.key != cause and x.key != "warmup" and x.span_pct >= 10.0]
        for x in others[:1]:
            reasons.append(f"next: {x.label}, {x.span_pct:.0f}% of the span")
            remedies.extend(x.remedies[:1])
    elif cause == "short_kernels":
        reasons.append(f"{head}; {f['short_pct']:.0f}% of the {f['n_k']} kernels are shorter than 10 us "
                       f"(median {_fmt_us(f['median_k'] * 1e6)}): launch-sized, the launch overhead is the work")
        remedies.extend(REMEDIES["host_launch"])
    elif f["short_in_graphs"]:
        q = by.get("queued")
        reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span: the time is in the kernels, "
                       f"{f['short_pct']:.0f}% of its {f['n_k']:,} kernels shorter than 10 us (median {_fmt_us(f['median_k'] * 1e6)}) "
                       f"and mostly replayed from CUDA graphs ({f['graph_launches']:,} graph launches): the graphs already "
                       "took the host's launch cost away; what is left is on the GPU, in the small kernels themselves"
                       + (f" and the gaps between graph nodes ({q.span_pct:.0f}% of the span, at most {q.max_speedup_x:.2f}x)"
                          if q is not None else ""))
        remedies.extend(REMEDIES["short_kernels_in_graphs"])
        remedies.extend(GPU_BOUND_NEXT)
    else:
        if f["step_idle_pct"] is not None:
            slow = max(f["steps"], key=lambda x: x.wall_s)
            reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span, and the median of its {len(f['steps'])} "
                           f"steps is busy {100 - f['step_idle_pct']:.0f}%: the time is in the kernels; the slowest step, "
                           f"{slow.name} ({fmt_time(slow.wall_s)}), is idle {slow.idle_pct:.0f}% ({CAUSE_LABELS.get(slow.first_cause, 'none')})")
        else:
            reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span; the time is in the kernels"
                           + (f" (idle {f['steady_idle_pct']:.0f}% after warm-up)" if idle_pct - f["steady_idle_pct"] >= 1.0 else ""))
        remedies.extend(GPU_BOUND_NEXT)
    if "warmup" in by and by["warmup"].span_pct >= 5.0:
        remedies.extend(REMEDIES["warmup"])
    return reasons, remedies


__all__ = [
    "GPU_BOUND_NEXT",
    "H200_PAGEABLE_H2D_GBS",
    "H200_PINNED_H2D_GBS",
    "IDLE_OVERHEAD_PCT",
    "MIN_GPU_EVENTS",
    "MIN_SPAN_S",
    "MIN_STEPS",
    "PAGEABLE_BUSY_PCT",
    "REMEDIES",
    "SHORT_KERNEL_S",
    "SHORT_MAJORITY_PCT",
    "TOO_LITTLE_NEXT",
    "VERDICT_OF_CAUSE",
    "amdahl_x",
    "choose",
    "reasons_of",
]
