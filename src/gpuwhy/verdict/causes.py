"""What the GPU waits for: one typed set of causes, each with its wording, the verdict it gives
when it holds the most time, and whether it is GPU idle or busy time.

Causes that need different fixes are different causes (the engine's first rule):

- idle, host side: ``launch_overhead`` (host time inside launch calls and the framework's
  dispatch: CUDA graphs, fusion and bigger launches remove it) vs ``host_work`` (stretches of
  :data:`gpuwhy.importers.timeline.host.HOST_WORK_MIN_US` or more in which the host issued no
  GPU work: Python work, I/O, logging, CPU-tensor ops, sleeps; CUDA graphs do not remove it); ``host_sync`` (the
  host blocked in a sync, and the host work it then gates); ``data_loading``;
  ``pageable_copy`` (the host staging copies from pageable memory, and those copies' own time);
- idle, queued work that did not start: ``queue_latency`` (gaps within GPU-side launch latency)
  vs ``dependency_wait`` (longer: another stream's event, a collective, a host callback);
- busy: ``copy`` (copies not hidden under kernels), ``communication`` (collectives not hidden
  under compute), ``memset``, kernels by regime (``compute_bound``, ``memory_bound`` at a level,
  ``latency_bound``, ``issue_bound``), ``launch_sized`` kernels, and ``kernels`` whose regime was
  not measured;
- ``warmup`` (one-time work: listed, never judged), ``unexplained`` (no launch linked).
"""

from __future__ import annotations

from enum import Enum


class Cause(str, Enum):
    """One kind of waiting (the value is the key in ``--json``)."""

    LAUNCH_OVERHEAD = "launch_overhead"
    HOST_WORK = "host_work"
    HOST_SYNC = "host_sync"
    DATA_LOADING = "data_loading"
    PAGEABLE_COPY = "pageable_copy"
    DEPENDENCY_WAIT = "dependency_wait"
    QUEUE_LATENCY = "queue_latency"
    WARMUP = "warmup"
    UNEXPLAINED = "unexplained"
    COPY = "copy"
    COMMUNICATION = "communication"
    MEMSET = "memset"
    COMPUTE_BOUND = "compute_bound"
    MEMORY_BOUND = "memory_bound"
    LATENCY_BOUND = "latency_bound"
    ISSUE_BOUND = "issue_bound"
    LAUNCH_SIZED = "launch_sized"
    KERNELS = "kernels"

    def __str__(self) -> str:
        return self.value


#: The causes of GPU idle time a timeline's gaps are split into, in the order they are described.
IDLE = (Cause.LAUNCH_OVERHEAD, Cause.HOST_WORK, Cause.HOST_SYNC, Cause.DATA_LOADING, Cause.PAGEABLE_COPY,
        Cause.DEPENDENCY_WAIT, Cause.QUEUE_LATENCY, Cause.WARMUP, Cause.UNEXPLAINED)

#: Idle causes that are host time (the host was doing or waiting on something else): once a fix makes the
#: host faster than the GPU, what is left of them may run while the GPU works.
HOST_SIDE = frozenset({Cause.LAUNCH_OVERHEAD, Cause.HOST_WORK, Cause.HOST_SYNC, Cause.DATA_LOADING, Cause.PAGEABLE_COPY})

#: Each cause in words (a share's label).
LABEL: dict[Cause, str] = {
    Cause.LAUNCH_OVERHEAD: "launch overhead (launch calls, dispatch)",
    Cause.HOST_WORK: "host work issuing no GPU work (Python, I/O)",
    Cause.HOST_SYNC: "host blocked in a sync",
    Cause.DATA_LOADING: "data loading (DataLoader)",
    Cause.PAGEABLE_COPY: "copies from pageable memory",
    Cause.DEPENDENCY_WAIT: "queued work waiting on a dependency",
    Cause.QUEUE_LATENCY: "GPU-side launch latency between queued work",
    Cause.WARMUP: "warm-up (first calls)",
    Cause.UNEXPLAINED: "unexplained (no launch linked)",
    Cause.COPY: "copies not hidden under kernels",
    Cause.COMMUNICATION: "communication not hidden under compute",
    Cause.MEMSET: "memsets",
    Cause.COMPUTE_BOUND: "compute-bound kernels",
    Cause.MEMORY_BOUND: "memory-bound kernels",
    Cause.LATENCY_BOUND: "latency-bound kernels",
    Cause.ISSUE_BOUND: "issue-bound kernels",
    Cause.LAUNCH_SIZED: "launch-sized kernels (< 10 us)",
    Cause.KERNELS: "kernels (regime not measured)",
}

#: The verdict a window gets when a cause holds the most time.
VERDICT: dict[Cause, str] = {
    Cause.LAUNCH_OVERHEAD: "overhead-bound",
    Cause.HOST_WORK: "host-bound",
    Cause.HOST_SYNC: "host-sync-bound",
    Cause.DATA_LOADING: "data-loading-bound",
    Cause.PAGEABLE_COPY: "pageable-copy-bound",
    Cause.DEPENDENCY_WAIT: "dependency-wait-bound",
    Cause.QUEUE_LATENCY: "overhead-bound",
    Cause.WARMUP: "warm-up",
    Cause.UNEXPLAINED: "idle-unattributed",
    Cause.COPY: "copy-bound",
    Cause.COMMUNICATION: "communication-bound",
    Cause.MEMSET: "gpu-bound",
    Cause.COMPUTE_BOUND: "compute-bound",
    Cause.MEMORY_BOUND: "memory-bound",
    Cause.LATENCY_BOUND: "latency-bound",
    Cause.ISSUE_BOUND: "issue-bound",
    Cause.LAUNCH_SIZED: "overhead-bound",
    Cause.KERNELS: "gpu-bound",
}

#: The causes of GPU busy time (the rest are idle time).
BUSY = frozenset({Cause.COPY, Cause.COMMUNICATION, Cause.MEMSET, Cause.COMPUTE_BOUND, Cause.MEMORY_BOUND,
                  Cause.LATENCY_BOUND, Cause.ISSUE_BOUND, Cause.LAUNCH_SIZED, Cause.KERNELS})
#: Kernel regimes as the roofline names them -> their cause.
REGIME: dict[str, Cause] = {
    "compute": Cause.COMPUTE_BOUND, "memory": Cause.MEMORY_BOUND, "latency": Cause.LATENCY_BOUND,
    "issue": Cause.ISSUE_BOUND, "overhead": Cause.LAUNCH_SIZED,
}


def label(cause: Cause | str, level: str | None = None) -> str:
    """``cause`` in words; a memory-bound share names its level (``memory-bound kernels (L2)``)."""
    c = Cause(cause)
    text = LABEL[c]
    return f"{text} ({level})" if c is Cause.MEMORY_BOUND and level else text


__all__ = ["BUSY", "HOST_SIDE", "IDLE", "LABEL", "REGIME", "VERDICT", "Cause", "label"]
