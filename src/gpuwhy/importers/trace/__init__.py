"""torch.profiler (kineto) Chrome traces: per GPU, busy vs idle, and why the GPU was idle.

Reads what ``prof.export_chrome_trace(path)`` or ``tensorboard_trace_handler``
writes (``.json``, ``.json.gz``, ``.pt.trace.json``), and answers per GPU:

- span: first GPU activity start to last GPU activity end;
- busy: the union of kernel, memcpy and memset intervals over all streams;
- idle = span - busy, split by cause (:mod:`.causes`): waiting on the host to
  launch, host syncs, data loading, pageable copies, waiting on another stream,
  gaps between queued work, warm-up, and what is left unexplained; each with its
  time, share, evidence and Amdahl bound;
- per ``ProfilerStep#N`` the same, and the median step;
- kernel time by kind (GEMM, attention, ..., communication) and communication
  overlapped with compute;
- the verdict (:mod:`.verdict`) and the remedies that follow its cause.

Modules: :mod:`.read` (file and shape), :mod:`.stream` (the event list parsed
a piece at a time), :mod:`.scan` (one pass over the events), :mod:`.host` (host
state as interval sets), :mod:`.causes` (the idle split), :mod:`.kinds`,
:mod:`.verdict`, :mod:`.analyze` (putting it together), :mod:`.results` (what
comes back).

Performance: the event list is parsed, scanned and freed in pieces of about
64 KB (the whole parsed trace never sits in memory), the pass keeps numbers in
typed arrays, then numpy per GPU (``benchmarks/bench_trace_real.py`` measures a
500 MB trace against a bare ``json.load``).
"""

from __future__ import annotations

from .analyze import analyze_trace, idle_breakdown, load_trace
from .read import events_of, load_trace_json
from .results import (
                      CAUSE_LABELS,
                      CommOverlap,
                      HostOp,
                      IdleBreakdown,
                      IdleCause,
                      KernelKind,
                      TraceGpu,
                      TraceKernel,
                      TraceReport,
                      TraceStep,
)
from .verdict import (
                      IDLE_OVERHEAD_PCT,
                      MIN_GPU_EVENTS,
                      MIN_SPAN_S,
                      SHORT_KERNEL_S,
                      SHORT_MAJORITY_PCT,
)

__all__ = [
    "CAUSE_LABELS",
    "IDLE_OVERHEAD_PCT",
    "MIN_GPU_EVENTS",
    "MIN_SPAN_S",
    "SHORT_KERNEL_S",
    "SHORT_MAJORITY_PCT",
    "CommOverlap",
    "HostOp",
    "IdleBreakdown",
    "IdleCause",
    "KernelKind",
    "TraceGpu",
    "TraceKernel",
    "TraceReport",
    "TraceStep",
    "analyze_trace",
    "events_of",
    "idle_breakdown",
    "load_trace",
    "load_trace_json",
]
