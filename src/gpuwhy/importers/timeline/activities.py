"""The one timeline structure every profiler source is reduced to: columnar GPU and host activities.

A reader (:mod:`gpuwhy.importers.kineto` for torch.profiler traces; Nsight Systems and
CUPTI readers follow the same contract) builds one :class:`Timeline`; the analysis
(:mod:`gpuwhy.importers.timeline.analyze`) takes nothing else. Times are microseconds in
the source's clock; index ``i`` of the ``gpu_*`` columns is one GPU activity, of ``api_*``
one CUDA runtime or driver call, of ``range_*`` one host range. Numbers are numpy arrays;
ids of any type (streams, correlation ids, external ids) are lists.

GPU activities: ``gpu_kind`` is :data:`KERNEL`, :data:`MEMCPY` or :data:`MEMSET`; a copy has
its direction (``gpu_copy``: :data:`HTOD`, :data:`DTOH`, ...), the host memory it touches
(``gpu_memory``: :data:`PAGEABLE`, :data:`PINNED`, ...) and ``gpu_bytes`` (NaN unknown).
A GPU activity is linked to the API call that launched it by ``gpu_corr`` (the call's
``api_corr``); a source that links launches otherwise gives the launch time in
``gpu_launch_us`` (NaN where none). ``gpu_op`` is the id of the host operator that
launched it (its FLOPs, when known, in ``op_flops``; a cost model's figures of the call, a
jitted JAX function's, in ``op_costs``: ``name``, ``flops`` and ``bytes`` a call or None, ``cost``
(``cost_analysis`` or why there are none), ``dtype``, ``matmul`` (the matmul precision asked),
``flops_from`` (whose count the FLOPs are: ``compiled``, ``lowered``, ``jaxpr``; None: the cost
model's), ``flops_note`` (what to know of that count, or None)).

Host ranges: ``range_kind`` is :data:`OPERATOR` (a framework operator), :data:`ANNOTATION`
(a user range: ``ProfilerStep#N`` steps, DataLoader calls, NVTX) or :data:`FRAME` (a
Python frame, kept to name callers). API calls and ranges carry a thread (``*_thread``:
an index into ``thread_pid``, the process of each thread). Steps are the annotations whose
name starts with ``step_prefix`` (``ProfilerStep#N`` unless a reader or
:func:`~gpuwhy.importers.timeline.steps.steps_from` says otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: GPU activity kinds.
KERNEL, MEMCPY, MEMSET = 0, 1, 2
#: Copy directions (``gpu_copy``); :data:`NOT_A_COPY` for kernels and memsets.
NOT_A_COPY, HTOD, DTOH, DTOD, HTOH, PTOP, OTHER_COPY = 0, 1, 2, 3, 4, 5, 6
COPY_NAMES = {HTOD: "HtoD", DTOH: "DtoH", DTOD: "DtoD", HTOH: "HtoH", PTOP: "PtoP", OTHER_COPY: "copy"}
#: Host memory a copy reads or writes (``gpu_memory``).
UNKNOWN_MEMORY, PAGEABLE, PINNED, DEVICE_MEMORY, MANAGED = 0, 1, 2, 3, 4
MEMORY_NAMES = {UNKNOWN_MEMORY: "unknown", PAGEABLE: "pageable", PINNED: "pinned", DEVICE_MEMORY: "device",
                MANAGED: "managed"}
#: Host range kinds (``range_kind``).
OPERATOR, ANNOTATION, FRAME = 0, 1, 2
#: The name prefix of step annotations torch.profiler writes (``ProfilerStep#3``).
STEP_PREFIX = "ProfilerStep#"

#: CUDA/HIP API calls that block the host until the GPU is done (or a blocking copy).
SYNC_NAMES = frozenset({
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
    "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
    "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH", "cuMemcpyHtoD", "cudaStreamWaitEvent_host",
    "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy", "hipMemcpyDtoH",
    "hipMemcpyHtoD", "hipMemcpyWithStream", "hipCtxSynchronize",
    # JAX's own blocking wait for a result, as its profiler names it (`float(x)`, `np.asarray(x)`)
    "np.asarray(jax.Array)",
})
#: API calls that make a stream wait on an event.
WAIT_NAMES = frozenset({"cudaStreamWaitEvent", "cuStreamWaitEvent", "hipStreamWaitEvent"})
#: API calls that replay a CUDA graph.
GRAPH_LAUNCH_NAMES = frozenset({"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch", "cudaGraphLaunch_v10000"})
#: API calls that launch one kernel each (CUDA runtime and driver, HIP): each should have its kernel in
#: the trace with the same correlation id (graph launches are left out: one launches many kernels).
KERNEL_LAUNCH_NAMES = frozenset({
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernelExC_v11060", "cudaLaunchCooperativeKernel",
    "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "hipLaunchKernel", "hipModuleLaunchKernel",
    "hipExtLaunchKernel", "hipExtModuleLaunchKernel", "hipLaunchCooperativeKernel",
})
#: API calls that allocate or free memory (one-time work in a steady loop).
MALLOC_NAMES = frozenset({"cudaMalloc", "cudaHostAlloc", "cudaMallocHost", "cudaFree", "cuMemAlloc_v2", "cuMemCreate",
                          "hipMalloc", "hipHostMalloc", "hipFree", "cudaMallocAsync"})
#: Host ranges in which a just-in-time compiler ran (one-time work): XLA's ``XlaCompile:#module=jit_step#`` and its
#: phases on the compiler's threads, as JAX writes them into a CUPTI or Nsight trace (seen on an H100, JAX 0.11,
#: 2026-12-07), and PJRT's compile calls and XLA's compile phases in JAX's own profiler trace (also those its
#: autotuner runs inside an executable's first run); not ``XlaModule`` or ``Thunk``, which run a compiled executable.
COMPILE_PREFIXES = ("XlaCompile", "XlaEmit", "XlaOptimize", "XlaPass", "XlaMemoryScheduler", "XlaBufferAssignment",
                    "XlaCreateGpuExecutable", "XlaAutotun",
                    # the same compiles as JAX's own profiler (XProf) names them (JAX 0.11.2, H100, 2026-12-07)
                    "PjRtCApiClient::CompileAndLoad", "PJRT_Client_Compile", "PjRtStreamExecutorClient::Compile",
                    "backend_compile_and_load", "CompileToBackendResult", "CompileModuleToLlvmIr", "CompileSingleModule",
                    "OptimizeHloModule", "Compiling IR:", "PTX->CUBIN")


#: Host ranges that are one call of a jitted function: XProf's ``PjitFunction(step)``, and the ``jax.jit step``
#: ranges `gpuwhy run --tracer cupti` writes. A call inside which a compile starts is a first call: warm-up.
JIT_CALL_PREFIXES = ("PjitFunction(", "jax.jit ")


def is_jit_call(name) -> bool:
    """True for a host range that is one call of a jitted function (:data:`JIT_CALL_PREFIXES`)."""
    return isinstance(name, str) and name.startswith(JIT_CALL_PREFIXES)


def framework_of(t: "Timeline") -> str | None:
    """The framework whose host ranges the timeline holds: ``"jax"`` (jitted calls, XLA's ``XlaModule``
    ranges), None otherwise (PyTorch's words are the remedies' own)."""
    if any(isinstance(n, str) and (n.startswith(JIT_CALL_PREFIXES) or n.startswith("XlaModule")) for n in t.range_names):
        return "jax"
    return None


def is_compile(name) -> bool:
    """True for a host range in which a JIT compiler ran (:data:`COMPILE_PREFIXES`)."""
    return isinstance(name, str) and name.startswith(COMPILE_PREFIXES)


#: The one range each compile of an XLA module writes, naming the module: ``XlaCompile:#module=jit_step#`` (a
#: CUPTI or Nsight trace) and ``PjRtCApiClient::CompileAndLoad(jit_step)`` (JAX's own profiler, JAX 0.11.2 on an
#: H100 and 0.10.2's CPU client alike, 2026-12-07); counted to tell a program that compiles again every step.
COMPILE_CALL_PREFIXES = ("XlaCompile:", "PjRtCApiClient::CompileAndLoad(")


def compiled_module(name) -> str | None:
    """The module a compile range (:data:`COMPILE_CALL_PREFIXES`) compiled (``jit_step``); None for any other
    range (the name itself where a compile range names no module)."""
    if not (isinstance(name, str) and name.startswith(COMPILE_CALL_PREFIXES)):
        return None
    if "#module=" in name:
        return name.split("#module=", 1)[1].split("#", 1)[0]
    if name.endswith(")") and "(" in name:
        return name[name.index("(") + 1:-1]
    return name


#: The trace's top-level key under which `gpuwhy run` writes what its tracer cost the host:
#: ``{"event_us": us per recorded host event, "events": n, "plain_us": ..., "traced_us": ...}``.
TRACER_KEY = "gpuwhy_tracer"


def _f8(n: int = 0) -> np.ndarray:
    return np.zeros(n, dtype=np.float64)


@dataclass
class Timeline:
    """GPU and host activities of one capture (see the module docstring; times in us).

    Besides the columns: ``wait_stream`` maps the correlation id of a stream-wait call to the
    stream it made wait (when the source says); ``gpu_ranges`` are step ranges mirrored on the GPU
    track (``(name, start, end)``: the GPU work a step launched); ``window`` the capture window's
    ``(start, end)`` when the source marks one (either may be None); ``bounds`` the first start and last
    end of the source's timed records that hold no activity (the profiler's own span), for the
    capture's extent; ``lazy_loads`` /
    ``lazy_load_us`` one-time module loads; ``other_devices`` events of accelerators gpuwhy does
    not read, by name; ``dropped`` activities a reader dropped, by reason; ``events`` /
    ``api_events`` / ``host_bad_ts`` counts of what the source held; ``tracer_event_us`` the host
    time (us) the tracer added per recorded host event, where the source says (`gpuwhy run` can measure
    it and writes it into its trace: :data:`TRACER_KEY`).
    """

    gpu_device: list = field(default_factory=list)
    gpu_start: np.ndarray = field(default_factory=_f8)
    gpu_dur: np.ndarray = field(default_factory=_f8)
    gpu_kind: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    gpu_name: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    gpu_names: list = field(default_factory=list)
    gpu_stream: list = field(default_factory=list)
    gpu_corr: list = field(default_factory=list)
    gpu_bytes: np.ndarray = field(default_factory=_f8)
    gpu_copy: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    gpu_memory: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    gpu_op: list = field(default_factory=list)
    gpu_grid: list = field(default_factory=list)
    gpu_block: list = field(default_factory=list)
    gpu_launch_us: np.ndarray = field(default_factory=_f8)
    api_start: np.ndarray = field(default_factory=_f8)
    api_dur: np.ndarray = field(default_factory=_f8)
    api_name: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    api_names: list = field(default_factory=list)
    api_corr: list = field(default_factory=list)
    api_thread: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    range_start: np.ndarray = field(default_factory=_f8)
    range_dur: np.ndarray = field(default_factory=_f8)
    range_name: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    range_names: list = field(default_factory=list)
    range_kind: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    range_thread: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    thread_pid: list = field(default_factory=list)
    op_flops: dict = field(default_factory=dict)
    op_costs: dict = field(default_factory=dict)
    wait_stream: dict = field(default_factory=dict)
    gpu_ranges: list = field(default_factory=list)
    window: tuple = (None, None)
    bounds: tuple = (None, None)
    lazy_loads: int = 0
    lazy_load_us: float = 0.0
    other_devices: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)
    events: int = 0
    api_events: int = 0
    host_bad_ts: int = 0
    device_names: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    step_prefix: str = STEP_PREFIX
    tracer_event_us: float | None = None

    @property
    def gpu_count(self) -> int:
        return int(self.gpu_start.size)

    def corr_api(self) -> dict:
        """Correlation id -> index of the API call that carries it (the last one, where ids repeat)."""
        return {c: i for i, c in enumerate(self.api_corr) if c is not None}

    def api_ids(self, names) -> np.ndarray:
        """The ids (into ``api_names``) of the API call names in ``names``."""
        return np.asarray([i for i, n in enumerate(self.api_names) if n in names], dtype=np.int64)


def extent(t: Timeline) -> tuple[float, float] | None:
    """``(first start, last end)`` (us) over everything ``t`` holds, None when it holds nothing timed."""
    lo, hi = [], []
    for s, d in ((t.gpu_start, t.gpu_dur), (t.api_start, t.api_dur), (t.range_start, t.range_dur)):
        if s.size:
            lo.append(float(s.min()))
            hi.append(float((s + np.maximum(d, 0.0)).max()))
    for _, s, e in t.gpu_ranges:
        lo.append(s)
        hi.append(max(s, e))
    for x in t.window:
        if x is not None:
            lo.append(x)
            hi.append(x)
    if t.bounds[0] is not None:
        lo.append(t.bounds[0])
        hi.append(t.bounds[1])
    return (min(lo), max(hi)) if lo else None


def from_activities(gpu: list[dict], api: list[dict] = (), ranges: list[dict] = (), **extra) -> Timeline:
    """A :class:`Timeline` from plain records: what a reader hands over, and how tests build one by hand.

    ``gpu``: dicts with ``device``, ``start``, ``dur`` (us), ``kind`` (``kernel``/``memcpy``/``memset``),
    ``name``, and optionally ``stream``, ``corr``, ``bytes``, ``copy`` (``HtoD``, ``DtoH``, ``DtoD``,
    ``HtoH``, ``PtoP``), ``memory`` (``pageable``, ``pinned``, ``device``, ``managed``), ``op``,
    ``launch_us``, ``grid`` and ``block`` (``(x, y, z)``). ``api``: dicts with ``start``, ``dur``, ``name``, and optionally ``corr``,
    ``thread`` (any id; its process in ``pid``). ``ranges``: dicts with ``start``, ``dur``, ``name``,
    ``kind`` (``operator``/``annotation``/``frame``), optionally ``thread`` and ``pid``. ``extra``
    sets the other fields (``wait_stream``, ``op_flops``, ``window``, ...).

    Raises:
        ValueError: a record without a start or duration, or of an unknown kind.
    """
    kinds = {"kernel": KERNEL, "memcpy": MEMCPY, "memset": MEMSET}
    copies = {v.lower(): k for k, v in COPY_NAMES.items()}
    memories = {"pageable": PAGEABLE, "pinned": PINNED, "device": DEVICE_MEMORY, "managed": MANAGED}
    rkinds = {"operator": OPERATOR, "annotation": ANNOTATION, "frame": FRAME}
    t = Timeline(**extra)
    threads: dict = {}

    def thread(rec) -> int:
        key = rec.get("thread", 0)
        if key not in threads:
            threads[key] = len(t.thread_pid)
            t.thread_pid.append(rec.get("pid", 0))
        return threads[key]

    def ids(values, table: list) -> np.ndarray:
        index = {n: i for i, n in enumerate(table)}
        for v in values:
            if v not in index:
                index[v] = len(table)
                table.append(v)
        return np.asarray([index[v] for v in values], dtype=np.int64)

    try:
        t.gpu_device = [str(g["device"]) for g in gpu]
        t.gpu_start = np.asarray([float(g["start"]) for g in gpu], dtype=np.float64)
        t.gpu_dur = np.asarray([float(g["dur"]) for g in gpu], dtype=np.float64)
        t.gpu_kind = np.asarray([kinds[g["kind"]] for g in gpu], dtype=np.int8)
        t.gpu_name = ids([str(g["name"]) for g in gpu], t.gpu_names)
        t.gpu_stream = [g.get("stream", 0) for g in gpu]
        t.gpu_corr = [g.get("corr") for g in gpu]
        t.gpu_bytes = np.asarray([float(g.get("bytes", np.nan)) for g in gpu], dtype=np.float64)
        t.gpu_copy = np.asarray([copies[g["copy"].lower()] if g.get("copy") else NOT_A_COPY for g in gpu], dtype=np.int8)
        t.gpu_memory = np.asarray([memories[g["memory"]] if g.get("memory") else UNKNOWN_MEMORY for g in gpu],
                                  dtype=np.int8)
        t.gpu_op = [g.get("op") for g in gpu]
        t.gpu_grid = [g.get("grid") for g in gpu]
        t.gpu_block = [g.get("block") for g in gpu]
        t.gpu_launch_us = np.asarray([float(g.get("launch_us", np.nan)) for g in gpu], dtype=np.float64)
        t.api_start = np.asarray([float(a["start"]) for a in api], dtype=np.float64)
        t.api_dur = np.asarray([float(a["dur"]) for a in api], dtype=np.float64)
        t.api_name = ids([str(a["name"]) for a in api], t.api_names)
        t.api_corr = [a.get("corr") for a in api]
        t.api_thread = np.asarray([thread(a) for a in api], dtype=np.int64)
        t.range_start = np.asarray([float(r["start"]) for r in ranges], dtype=np.float64)
        t.range_dur = np.asarray([float(r["dur"]) for r in ranges], dtype=np.float64)
        t.range_name = ids([str(r["name"]) for r in ranges], t.range_names)
        t.range_kind = np.asarray([rkinds[r.get("kind", "operator")] for r in ranges], dtype=np.int8)
        t.range_thread = np.asarray([thread(r) for r in ranges], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"a timeline record lacks {exc} or has an unknown kind") from None
    t.events = t.events or len(gpu) + len(api) + len(ranges)
    t.api_events = t.api_events or len(api)
    return t


def crop(t: Timeline, lo: float, hi: float) -> Timeline:
    """A copy of ``t`` holding only what lies in ``[lo, hi]`` (us): activities and ranges that cross an
    edge are clipped to it, those wholly outside are dropped (one that ends at ``lo`` or starts at
    ``hi`` is kept, with no length), and so are capture markers and GPU-track step ranges outside it;
    but the API call (or flow-linked launch time) of a GPU activity kept is kept as it is, so work
    queued before the window stays linked to its launch."""
    from dataclasses import replace

    def keep(start, dur):
        end = start + np.maximum(dur, 0.0)
        return ~((end < lo) | (start > hi))

    def clip(start, dur, m):
        s, d = start[m], dur[m]
        e = s + np.maximum(d, 0.0)
        s2, e2 = np.maximum(s, lo), np.minimum(e, hi)
        crossing = ((s < lo) & (e >= lo)) | ((e > hi) & (s <= hi))  # wholly outside: a kept launch, as it is
        return np.where(crossing, s2, s), np.where(crossing, np.maximum(e2 - s2, 0.0), d)

    g = keep(t.gpu_start, t.gpu_dur)
    a = keep(t.api_start, t.api_dur)
    # the launch calls of work kept in the window stay (unclipped), wherever they lie: work queued before
    # the window is still linked to its launch (else its gap would read "unexplained")
    kept_corr = {c for c, k in zip(t.gpu_corr, g.tolist()) if k and c is not None}
    if kept_corr:
        a |= np.fromiter((c in kept_corr for c in t.api_corr), dtype=bool, count=len(t.api_corr))
    r = keep(t.range_start, t.range_dur)
    gi, ai = np.flatnonzero(g).tolist(), np.flatnonzero(a).tolist()
    gs, gd = clip(t.gpu_start, t.gpu_dur, g)
    as_, ad = clip(t.api_start, t.api_dur, a)
    rs, rd = clip(t.range_start, t.range_dur, r)
    flow = t.gpu_launch_us[g]  # a kept activity's flow-linked launch time stays, like its launch call
    w0, w1 = t.window
    return replace(
        t,
        gpu_device=[t.gpu_device[i] for i in gi], gpu_start=gs, gpu_dur=gd, gpu_kind=t.gpu_kind[g],
        gpu_name=t.gpu_name[g], gpu_stream=[t.gpu_stream[i] for i in gi], gpu_corr=[t.gpu_corr[i] for i in gi],
        gpu_bytes=t.gpu_bytes[g], gpu_copy=t.gpu_copy[g], gpu_memory=t.gpu_memory[g],
        gpu_op=[t.gpu_op[i] for i in gi], gpu_grid=[t.gpu_grid[i] for i in gi],
        gpu_block=[t.gpu_block[i] for i in gi], gpu_launch_us=flow,
        api_start=as_, api_dur=ad, api_name=t.api_name[a], api_corr=[t.api_corr[i] for i in ai],
        api_thread=t.api_thread[a],
        range_start=rs, range_dur=rd, range_name=t.range_name[r], range_kind=t.range_kind[r],
        range_thread=t.range_thread[r],
        gpu_ranges=[(n, max(s, lo), min(e, hi)) for n, s, e in t.gpu_ranges if not (e < lo or s > hi)],
        window=(w0 if w0 is not None and lo <= w0 <= hi else None, w1 if w1 is not None and lo <= w1 <= hi else None),
        bounds=(None, None),
        op_flops=dict(t.op_flops), op_costs=dict(t.op_costs), wait_stream=dict(t.wait_stream), dropped=dict(t.dropped),
        device_names=dict(t.device_names), notes=list(t.notes),
    )


__all__ = [
    "ANNOTATION", "COMPILE_CALL_PREFIXES", "COPY_NAMES", "DEVICE_MEMORY", "DTOD", "DTOH", "FRAME", "GRAPH_LAUNCH_NAMES", "HTOD", "HTOH", "KERNEL_LAUNCH_NAMES",
    "JIT_CALL_PREFIXES", "KERNEL", "MALLOC_NAMES", "MANAGED", "MEMORY_NAMES", "MEMCPY", "MEMSET", "NOT_A_COPY", "OPERATOR", "OTHER_COPY", "PAGEABLE",
    "PINNED", "PTOP", "STEP_PREFIX", "SYNC_NAMES", "Timeline", "UNKNOWN_MEMORY", "WAIT_NAMES", "compiled_module", "crop", "extent", "framework_of", "from_activities", "is_compile",
    "is_jit_call",
]
