"""The one pass over a trace's events into plain lists (no analysis here).

Events read (categories compared case-insensitively, across PyTorch versions):

- GPU work: ``ph: "X"``, category ``kernel``/``gpu_kernel``, ``gpu_memcpy``/``Memcpy``,
  ``gpu_memset``/``Memset``; the GPU is ``args.device`` (else ``pid``);
  ``ts``/``dur`` in microseconds.
- Runtime calls: ``cuda_runtime``/``Runtime``/``cuda_driver`` (and the same for
  HIP, XPU and PrivateUse1 backends): launches (linked to GPU work by
  ``args.correlation``), host syncs, ``cudaStreamWaitEvent``, copies.
- Host ranges: ``cpu_op``/``operator``, ``user_annotation`` (``ProfilerStep#N``,
  ``enumerate(DataLoader)#...__next__``, ``Optimizer.step#...``),
  ``python_function`` (``with_stack=True``).
- ``cuda_sync`` events (``enable_cuda_sync_events``): which stream each
  ``Stream Wait Event`` made wait; ``overhead`` events (lazy module loading).
- Flow events ``ac2g``/``async_cpu_to_gpu`` (``ph`` ``s``/``f``), and older Kineto's
  ``cat: "async"``, ``name: "launch"`` (its ``ChromeTraceLogger::handleLinkStart``/``handleLinkEnd``),
  link launches when GPU events carry no correlation; instant events mark the capture window.

Dropped here and counted, by reason: GPU events with a missing or
non-positive timestamp, or a missing or negative duration. ``dur: 0`` GPU
events are kept (old traces record whole microseconds).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field


_GPU_CATS = {
    "kernel": 0, "gpu_kernel": 0, "cuda_kernel": 0,
    "memcpy": 1, "gpu_memcpy": 1, "cuda_memcpy": 1,
    "memset": 2, "gpu_memset": 2, "cuda_memset": 2,
}
_RUNTIME_CATS = {
    "runtime", "cuda_runtime", "cuda_driver", "driver", "cuda_api", "hip_runtime", "hip_api",
    "xpu_runtime", "xpu_driver", "privateuse1_runtime", "privateuse1_driver",
}
#: Host range categories: 0 an operator, 1 a user annotation, 2 a Python frame.
_HOST_CATS = {"cpu_op": 0, "operator": 0, "user_annotation": 1, "python_function": 2}
#: Categories of accelerators gpuwhy does not read (their device tracks are not CUDA/ROCm work).
OTHER_DEVICE_CATS = {
    "mtia_ccp_events": "MTIA", "mtia_insight": "MTIA", "mtia_runtime": "MTIA", "hpu_op": "HPU (Gaudi)",
    "mlu_memcpy": "MLU", "mlu_memset": "MLU", "mlu_runtime": "MLU", "gcu_memcpy": "GCU",
    "gcu_memset": "GCU", "gcu_runtime": "GCU",
}
WINDOW_START = "Iteration Start: PyTorch Profiler"
WINDOW_END = "Record Window End"
_OTHER = -1
#: Kind codes of a category (small ints: the pass compares them millions of times): GPU work
#: 0-2, then these; runtime calls and host ranges last, so one comparison picks them.
_FLOW, _SYNC, _OVERHEAD, _DEVICE, _GPU_RANGE, _RUNTIME, _OP, _ANNOTATION, _FRAME = 3, 4, 5, 6, 7, 9, 10, 11, 12
_HOST_CODE = {0: _OP, 1: _ANNOTATION, 2: _FRAME}


def is_gpu_work(cat) -> bool:
    """True for the categories of GPU work (kernel, memcpy, memset, in any of their spellings)."""
    return _cat_kind(cat) in (0, 1, 2)


def _cat_kind(cat) -> int:
    """0/1/2 GPU work (kernel, memcpy, memset), or one of the codes above, or _OTHER."""
    if not isinstance(cat, str):
        return _OTHER
    c = cat.strip().lower()
    if c in _GPU_CATS:
        return _GPU_CATS[c]
    if c in _RUNTIME_CATS:
        return _RUNTIME
    if c in _HOST_CATS:
        return _HOST_CODE[_HOST_CATS[c]]
    if "ac2g" in c or "cpu_to_gpu" in c:
        return _FLOW
    if c == "cuda_sync":
        return _SYNC
    if c == "overhead":
        return _OVERHEAD
    if c in OTHER_DEVICE_CATS:
        return _DEVICE
    if c == "gpu_user_annotation":
        return _GPU_RANGE
    return _OTHER


#: Timestamps and durations at or above this (us: 31,700 years) are not times (Infinity, 1e308).
_MAX_US = 1e18
#: Events per block of :func:`scan`: the GPU work and flow events of a block are read right after it,
#: while its events are still in the processor's cache.
_BLOCK = 1024


def _key(x):
    """``x`` as a dict key: itself when hashable (None, numbers, strings), else its text."""
    if x is None or type(x) is int or type(x) is str or type(x) is float:
        return x
    try:
        hash(x)
    except TypeError:
        return str(x)
    return x


def _host_figures(s: "Scan", name: str, args: dict) -> None:
    """Keep a host range's FLOPs (``args.flops``, summed by External id) and cost-model figures
    (``args.cost``; see :attr:`Scan.ext_costs`) by its External id."""
    x = _key(args.get("External id"))
    if x is None:
        return
    fv = _num(args.get("flops")) if args.get("flops") else None
    if fv:
        s.ext_flops[x] = s.ext_flops.get(x, 0.0) + fv
    if "cost" not in args:
        return
    fl, nb = _num(args.get("flops")), _num(args.get("bytes accessed"))
    s.ext_costs[x] = {"name": str(name), "flops": fl if fl and fl > 0 else None,
                      "bytes": nb if nb and nb > 0 else None, "cost": str(args.get("cost")),
                      "dtype": args.get("dtype") if isinstance(args.get("dtype"), str) else None,
                      "matmul": args.get("matmul precision") if isinstance(args.get("matmul precision"), str) else None,
                      "flops_from": args.get("flops from") if isinstance(args.get("flops from"), str) else None,
                      "flops_note": args.get("flops note") if isinstance(args.get("flops note"), str) else None}


def _num(x) -> float | None:
    """``x`` as a float: numbers and numeric text; None for anything else (true/false, objects,
    non-finite text, integers beyond float range)."""
    if type(x) is float:
        return x
    if type(x) is int:
        try:
            return float(x)
        except OverflowError:
            return None
    if isinstance(x, str):
        try:
            v = float(x)
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def device_of(args: dict, pid) -> str:
    """The GPU an event ran on: ``args.device``, else its ``pid``, as a string of digits when it has them."""
    d = args.get("device")
    if d is None:
        d = pid
    if isinstance(d, float) and d.is_integer():
        d = int(d)
    if isinstance(d, str):
        digits = "".join(ch for ch in d if ch.isdigit())
        return digits or d
    return str(d)


def _bounds_of(s, ev) -> None:
    """Widen ``s.other_lo``/``s.other_hi`` to a timed event the pass keeps nothing else of (rare: the
    profiler's own span, instant events), so the capture's extent counts it."""
    ts = _num(ev.get("ts"))
    if ts is None:
        return
    d = _num(ev.get("dur"))
    end = ts + (d if d is not None and d > 0 else 0.0)
    s.other_lo = ts if s.other_lo is None else min(s.other_lo, ts)
    s.other_hi = end if s.other_hi is None else max(s.other_hi, end)


@dataclass
class Scan:
    """What the pass keeps, in file order (times in us): index ``i`` of the ``g_*`` fields is one GPU
    event, of ``r_*`` one runtime call, of ``h_*`` one host range. Numbers go in typed arrays
    (``array('d')``/``'q'``/``'b'``: 8 bytes each, no Python object kept alive, read by numpy without
    a copy), ids and keys of any JSON type in lists."""

    g_dev: list = field(default_factory=list)
    g_ts: array = field(default_factory=lambda: array("d"))
    g_dur: array = field(default_factory=lambda: array("d"))
    g_kind: array = field(default_factory=lambda: array("b"))
    g_corr: list = field(default_factory=list)
    g_name: array = field(default_factory=lambda: array("q"))
    g_stream: list = field(default_factory=list)
    g_ext: list = field(default_factory=list)
    g_grid: list = field(default_factory=list)
    g_block: list = field(default_factory=list)
    g_bytes: dict = field(default_factory=dict)  # GPU index of a memcpy -> bytes
    flow_key: dict = field(default_factory=dict)  # GPU index without correlation -> (pid, tid, ts)
    names: dict = field(default_factory=dict)  # GPU work name -> id
    r_ts: array = field(default_factory=lambda: array("d"))
    r_dur: array = field(default_factory=lambda: array("d"))
    r_name: array = field(default_factory=lambda: array("q"))
    r_corr: list = field(default_factory=list)
    r_thread: array = field(default_factory=lambda: array("q"))
    r_names: dict = field(default_factory=dict)
    h_ts: array = field(default_factory=lambda: array("d"))
    h_dur: array = field(default_factory=lambda: array("d"))
    h_name: array = field(default_factory=lambda: array("q"))
    h_kind: array = field(default_factory=lambda: array("b"))
    h_thread: array = field(default_factory=lambda: array("q"))
    h_names: dict = field(default_factory=dict)
    threads: dict = field(default_factory=dict)  # tid -> thread id
    thread_pid: list = field(default_factory=list)  # thread id -> pid
    corr_runtime: dict = field(default_factory=dict)  # correlation -> runtime index
    wait_stream: dict = field(default_factory=dict)  # correlation of a wait call -> the stream it made wait
    flow_start: dict = field(default_factory=dict)
    flow_end: dict = field(default_factory=dict)
    ext_flops: dict = field(default_factory=dict)
    #: External id -> a cost model's figures of a host range that carries ``args.cost`` (a jitted JAX
    #: call under `gpuwhy run --tracer cupti`): ``name``, ``flops``, ``bytes``, ``cost``, ``dtype``, ``matmul``,
    #: ``flops_from``, ``flops_note`` (None where the range does not say).
    ext_costs: dict = field(default_factory=dict)
    other_devices: dict = field(default_factory=dict)  # accelerator name -> events
    lazy_loads: int = 0
    lazy_load_us: float = 0.0
    dropped: dict = field(default_factory=dict)
    events: int = 0
    runtime: int = 0
    host_bad_ts: int = 0
    win_start: float | None = None
    win_end: float | None = None
    #: Ranges of the GPU track (``gpu_user_annotation``: torch.profiler's copy of each step), (name, start, end).
    gpu_ranges: list = field(default_factory=list)
    #: First start and last end (us) of the timed events of no other use (the profiler's own span), or None.
    other_lo: float | None = None
    other_hi: float | None = None


def scan(events, into: Scan | None = None) -> Scan:
    """One pass over ``events`` (a list of trace event dicts) into a :class:`Scan` (``into``, to add
    the next piece of a trace read in pieces, in order; else a new one).

    Written for speed (nine events in ten are host ranges or runtime calls, and this loop runs once
    per event of a trace of millions): local names only, the common case (a float ``ts``, an int
    ``tid``) tested first, no call per event. GPU work and flow events are put aside, in order, and
    read after each block of events by loops of their own (:func:`_gpu_work`, :func:`_flows`).
    """
    s = Scan() if into is None else into
    kinds: dict = {}  # category -> kind code
    devices: dict = {}  # (args.device, pid) -> GPU
    later: list = []  # the block's GPU events and non-objects (what adds to s.dropped), in order
    flows: list = []  # the block's flow events (ph s/f/t)
    later_, flows_ = later.append, flows.append
    r_names, h_names, threads = s.r_names, s.h_names, s.threads
    r_ts, r_dur, r_name, r_corr, r_thread = s.r_ts.append, s.r_dur.append, s.r_name.append, s.r_corr.append, s.r_thread.append
    h_ts, h_dur, h_name, h_kind, h_thread = s.h_ts.append, s.h_dur.append, s.h_name.append, s.h_kind.append, s.h_thread.append
    n_rt = n_rt0 = len(s.r_ts)
    bad_host = bad_runtime = 0
    corr_runtime, thread_pid = s.corr_runtime, s.thread_pid
    RUNTIME, OP, MAX = _RUNTIME, _OP, _MAX_US
    type_, float_, int_, str_, dict_ = type, float, int, str, dict  # locals: read ~10 times per event
    for lo in range(0, len(events), _BLOCK):
        for ev in events[lo:lo + _BLOCK]:
            try:
                ph = ev.get("ph")
            except AttributeError:  # not a JSON object
                later_(ev)
                continue
            if ph == "X":
                cat = ev.get("cat")
                try:
                    k = kinds[cat]
                except KeyError:
                    k = kinds[cat] = _cat_kind(cat)  # _OTHER for no category or one that is not text
                except TypeError:  # a category that is a list or an object
                    continue
                if k >= RUNTIME:  # a runtime call or a host range: the common case, kept short
                    ts = ev.get("ts")
                    if type_(ts) is not float_ and type_(ts) is not int_:
                        ts = _num(ts)
                        if ts is None:
                            ts = -1.0
                    if not 0 < ts < MAX:
                        bad_host += 1
                        if k == RUNTIME:
                            bad_runtime += 1
                        continue
                    d = ev.get("dur")
                    if type_(d) is not float_ and type_(d) is not int_:
                        d = _num(d)
                        if d is None:
                            d = 0.0
                    if not 0 <= d < MAX:
                        d = 0.0
                    tid = ev.get("tid")
                    if type_(tid) is not int_ and type_(tid) is not str_:
                        tid = _key(tid)
                    th = threads.get(tid)
                    if th is None:
                        th = threads[tid] = len(thread_pid)
                        thread_pid.append(_key(ev.get("pid")))
                    nm = ev.get("name")
                    if type_(nm) is not str_:
                        nm = str_(nm)
                    args = ev.get("args")
                    if k == RUNTIME:
                        nid = r_names.get(nm)
                        if nid is None:
                            nid = r_names[nm] = len(r_names)
                        c = args.get("correlation") if type_(args) is dict_ else None
                        if c is not None:
                            if type_(c) is not int_:
                                c = _key(c)
                            corr_runtime[c] = n_rt
                        n_rt += 1
                        r_ts(ts)
                        r_dur(d)
                        r_name(nid)
                        r_corr(c)
                        r_thread(th)
                        continue
                    nid = h_names.get(nm)
                    if nid is None:
                        nid = h_names[nm] = len(h_names)
                    h_ts(ts)
                    h_dur(d)
                    h_name(nid)
                    h_kind(k - OP)
                    h_thread(th)
                    if type_(args) is dict_ and ("flops" in args or "cost" in args):
                        _host_figures(s, nm, args)
                elif k > 2:
                    _other_complete(s, ev, k, cat)
                elif k < 0:
                    _bounds_of(s, ev)
                else:  # GPU work (k: 0 kernel, 1 memcpy, 2 memset)
                    later_(ev)
            elif ph == "s" or ph == "f" or ph == "t":
                flows_(ev)
            elif ph == "i" or ph == "I" or ph == "R":
                _instant(s, ev)
            elif ph != "M" and ph is not None:  # counters and other timed events: only the capture's extent
                _bounds_of(s, ev)
        if later:
            _gpu_work(s, later, kinds, devices)
            later.clear()
        if flows:
            _flows(s, flows, kinds)
            flows.clear()
    s.events += len(events)
    s.runtime += n_rt - n_rt0 + bad_runtime
    s.host_bad_ts += bad_host
    return s


def _other_complete(s: Scan, ev: dict, k: int, cat: str) -> None:
    """A complete event (``ph: X``) of kind ``k`` 3-7 (few: cuda_sync, overhead, another
    accelerator's, a GPU-track range; a flow category: nothing but its extent) into ``s``."""
    _bounds_of(s, ev)
    if k == _SYNC:
        args = ev.get("args")
        if type(args) is not dict:
            args = {}
        if ev.get("name") == "Stream Wait Event" or args.get("cuda_sync_kind") == "Stream Wait Event":
            c = _key(args.get("correlation"))
            st = _key(args.get("stream"))
            if c is not None and st is not None:
                s.wait_stream[c] = st
    elif k == _OVERHEAD:
        if ev.get("name") == "Lazy Function Loading":
            d = ev.get("dur")
            if type(d) is not float:
                d = _num(d)
            s.lazy_loads += 1
            if d is not None and 0 < d < _MAX_US:
                s.lazy_load_us += d
    elif k == _DEVICE:
        acc = OTHER_DEVICE_CATS[cat.strip().lower()]
        s.other_devices[acc] = s.other_devices.get(acc, 0) + 1
    elif k == _GPU_RANGE:
        ts, d = _num(ev.get("ts")), _num(ev.get("dur"))
        if ts is not None and d is not None:
            s.gpu_ranges.append((str(ev.get("name", "")), ts, ts + d))


def _instant(s: Scan, ev: dict) -> None:
    """An instant event (``ph`` i/I/R): its time widens the capture's extent; the profiler's
    window marks set ``s.win_start``/``s.win_end`` (us)."""
    _bounds_of(s, ev)
    nm = ev.get("name")
    if nm == WINDOW_START or nm == WINDOW_END:
        ts = _num(ev.get("ts"))
        if ts and ts > 0:
            if nm == WINDOW_START:
                s.win_start = ts if s.win_start is None else min(s.win_start, ts)
            else:
                s.win_end = ts if s.win_end is None else max(s.win_end, ts)


def _gpu_work(s: Scan, later: list, kinds: dict, devices: dict) -> None:
    """The GPU events :func:`scan` put aside (file order) into the ``g_*`` fields of ``s`` (one
    index each; times in us), or counted in ``s.dropped`` by reason; an item of ``later`` that is
    not an event object is counted there in its place. ``kinds``: the pass's category -> kind
    cache (it holds each event's); ``devices``: its (args.device, pid) -> GPU cache."""
    names, dropped = s.names, s.dropped
    g_dev, g_ts, g_dur, g_kind, g_corr, g_name, g_stream, g_ext = (
        s.g_dev.append, s.g_ts.append, s.g_dur.append, s.g_kind.append, s.g_corr.append, s.g_name.append,
        s.g_stream.append, s.g_ext.append)
    n_gpu = len(s.g_ts)
    MAX = _MAX_US
    type_, float_, int_, str_, dict_ = type, float, int, str, dict
    for ev in later:
        try:
            k = kinds[ev.get("cat")]
        except AttributeError:
            dropped["not an event object"] = dropped.get("not an event object", 0) + 1
            continue
        ts = ev.get("ts")
        if type_(ts) is not float_ and type_(ts) is not int_:
            ts = _num(ts)
        d = ev.get("dur")
        if type_(d) is not float_ and type_(d) is not int_:
            d = _num(d)
        if ts is None or not 0 < ts < MAX:
            reason = "GPU events with a missing or non-positive timestamp"
        elif d is None or d != d:
            reason = "GPU events without a duration"
        elif d < 0:
            reason = "GPU events with a negative duration"
        elif d >= MAX:
            reason = "GPU events with a timestamp far outside the rest of the trace"
        else:
            reason = None
        if reason is not None:
            dropped[reason] = dropped.get(reason, 0) + 1
            continue
        args = ev.get("args")
        if type_(args) is not dict_:
            args = {}
        nm = ev.get("name") or "(unnamed)"
        if type_(nm) is not str_:
            nm = str_(nm)
        nid = names.get(nm)
        if nid is None:
            nid = names[nm] = len(names)
        c = args.get("correlation")
        if c is not None and type_(c) is not int_:
            c = _key(c)
        pid = ev.get("pid")
        if type_(pid) is not int_:
            pid = _key(pid)
        if c is None:
            s.flow_key[n_gpu] = (pid, _key(ev.get("tid")), ts)
        if k == 1:
            b = args.get("bytes")
            if b is not None:
                s.g_bytes[n_gpu] = b
        dk = args.get("device")
        if type_(dk) is not int_:
            dk = _key(dk)
        dk = (dk, pid)
        dv = devices.get(dk)
        if dv is None:
            dv = devices[dk] = device_of(args, pid)
        n_gpu += 1
        g_dev(dv)
        g_ts(ts)
        g_dur(d)
        g_kind(k)
        g_corr(c)
        g_name(nid)
        st = args.get("stream", ev.get("tid"))
        g_stream(st if type_(st) is int_ else _key(st))
        x = args.get("External id")
        g_ext(x if type_(x) is int_ else _key(x))
        if k == 0:
            s.g_grid.append(args.get("grid"))
            s.g_block.append(args.get("block"))
        else:
            s.g_grid.append(None)
            s.g_block.append(None)


def _flows(s: Scan, flows: list, kinds: dict) -> None:
    """The flow events :func:`scan` put aside (``ph`` s/f/t, in file order) of a flow category
    (``ac2g``: launch -> GPU work) into ``s.flow_start`` (id -> ts, us) and ``s.flow_end``
    ((pid, tid, ts) -> id); ``kinds``: the pass's category -> kind cache."""
    flow_start, flow_end = s.flow_start, s.flow_end
    FLOW = _FLOW
    type_, float_, int_, str_ = type, float, int, str
    for ev in flows:
        cat = ev.get("cat")
        if type_(cat) is not str_:
            continue
        k = kinds.get(cat)
        if k is None:
            k = kinds[cat] = _cat_kind(cat)
        if k != FLOW and not (cat.strip().lower() == "async" and ev.get("name") == "launch"):
            continue  # older Kineto wrote the launch -> GPU work flow as cat "async", name "launch"
        fid = ev.get("id")
        if type_(fid) is not int_:
            fid = _key(fid)
        ts = ev.get("ts")
        if type_(ts) is not float_:
            ts = _num(ts)
        if fid is None or ts is None:
            continue
        if ev.get("ph") == "s":
            flow_start[fid] = ts
        else:
            pid, tid = ev.get("pid"), ev.get("tid")
            flow_end[(pid if type_(pid) is int_ else _key(pid), tid if type_(tid) is int_ else _key(tid), ts)] = fid


__all__ = [
    "OTHER_DEVICE_CATS",
    "Scan",
    "device_of",
    "scan",
]
