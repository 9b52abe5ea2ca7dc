"""An XProf trace (what ``jax.profiler.trace`` writes) as the CUPTI records of
:mod:`gpuwhy.importers.cupti.records`: pure, no I/O.

The trace is a Chrome trace in XProf's own spelling (seen in JAX 0.11.2's ``perfetto_trace.json.gz``
and ``<host>.trace.json.gz`` of an H100 run, 2026-12-07):

- processes named ``/device:GPU:N`` hold the GPU's work, one thread per stream named ``Stream #14(...)``;
  each activity's ``args`` carry ``correlation_id`` and ``kernel_details`` (``grid:x,y,z block:x,y,z``),
  ``memcpy_details`` (``kind_src:pageable kind_dst:device size:4 async:1``) or ``Memset_details``
  (``kind:device num_bytes:8 async:1``), ``cuda_graph_id`` for graph nodes; copies are named
  ``MemcpyH2D``, ``MemcpyD2H``, ``MemcpyD2D``, ``MemcpyP2P`` or ``MemcpyOther``, memsets ``Memset N``.
  Other threads of that process (XProf's derived lines) are not activities and are skipped.
- the process ``/host:CPU`` holds the host: CUDA API calls carry the ``correlation_id`` of their work but
  are named after it (a kernel launch is named after the kernel, a copy ``MemcpyD2H``), so a call is named
  here by what it started: ``cuLaunchKernel``, ``cuGraphLaunch``, ``cuMemcpyHtoDAsync_v2`` (or the
  blocking ``cuMemcpyHtoD_v2`` where the details say ``async:0``), ``cuMemsetD8Async``; calls without
  work keep their own driver name (``cuMemHostAlloc``, ``cuGraphCreate (CudaGraph:3)`` -> ``cuGraphCreate``).
  JAX's blocking waits for a result (``np.asarray(jax.Array)``: the host waits for the GPU, then copies)
  become calls of that name, which :data:`gpuwhy.importers.timeline.activities.SYNC_NAMES` lists. Every
  other host event is a range (XLA's ``PjitFunction(step)``, its compiler's ``PJRT_Client_Compile``, ...),
  except the Python tracer's frames (names starting ``$``), which are counted and left out: host time
  outside CUDA calls is host work without them.

Times are us in the trace and ns in the records (rounded to 1 ns).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

#: A process of the trace that holds one GPU's work: ``/device:GPU:0``.
GPU_PROCESS = re.compile(r"^/device:GPU:(\d+)")
#: The process of the host's events.
HOST_PROCESS = "/host:CPU"
#: Other accelerators XProf writes (a TPU trace has no CUDA work to judge).
OTHER_DEVICE = re.compile(r"^/device:(TPU|CPU):\d+")
_STREAM = re.compile(r"^Stream #(\d+)")
_DETAIL = re.compile(r"(\w+):(\S+)")
_API = re.compile(r"^(cu[A-Z]\w*)(?: \(.*\))?$")
#: XProf's copy names -> CUPTI's copy kinds.
COPY_KINDS = {"MemcpyH2D": "HTOD", "MemcpyD2H": "DTOH", "MemcpyD2D": "DTOD", "MemcpyP2P": "PTOP"}
#: XProf's memory kinds -> CUPTI's.
MEMORY_KINDS = {"pageable": "PAGEABLE", "pinned": "PINNED", "device": "DEVICE", "managed": "MANAGED"}
#: The driver calls each copy kind is made with (async, blocking).
_COPY_CALLS = {"HTOD": ("cuMemcpyHtoDAsync_v2", "cuMemcpyHtoD_v2"), "DTOH": ("cuMemcpyDtoHAsync_v2", "cuMemcpyDtoH_v2"),
               "DTOD": ("cuMemcpyDtoDAsync_v2", "cuMemcpyDtoD_v2"), "PTOP": ("cuMemcpyPeerAsync", "cuMemcpyPeer")}
#: JAX's host ranges in which the host waits for a result on the GPU (a blocking call of JAX's own).
HOST_WAITS = frozenset({"np.asarray(jax.Array)"})


@dataclass
class Converted:
    """The records and what the conversion saw: ``start_ns``/``stop_ns`` (the trace's first and last
    time), ``pid`` (the host process), ``devices`` (index -> name: XProf writes no GPU name, so ""),
    ``records`` (see :mod:`gpuwhy.importers.cupti.records`), ``frames`` (Python-tracer frames left out),
    ``other_devices`` (non-GPU devices seen: ``TPU``, ...), ``skipped_lines`` (derived lines of a GPU
    process, by thread name)."""

    start_ns: int = 0
    stop_ns: int = 0
    pid: int = 0
    devices: dict = field(default_factory=dict)
    records: list = field(default_factory=list)
    frames: int = 0
    other_devices: set = field(default_factory=set)
    skipped_lines: set = field(default_factory=set)


def details(text) -> dict:
    """``"kind_src:device size:4 async:1"`` -> ``{"kind_src": "device", "size": "4", "async": "1"}``."""
    return dict(_DETAIL.findall(text)) if isinstance(text, str) else {}


def _int(v, default: int = 0) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _dim3(text) -> list[int]:
    parts = str(text).split(",")
    return [_int(p) for p in parts] if len(parts) == 3 else [0, 0, 0]


def _ns(ts_us) -> int:
    """us (a number, or its text) -> ns.

    Raises:
        ValueError: not a number, or not finite (``1e999``, ``Infinity``, ``NaN`` parse as JSON).
    """
    v = float(ts_us)
    if not math.isfinite(v):
        raise ValueError(f"time {ts_us!r} us is not a finite number")
    return int(round(v * 1000.0))


def is_xprof(events: Iterable[Mapping]) -> bool:
    """True when the trace's process names are XProf's (``/device:GPU:N``, ``/host:CPU``, ...)."""
    for e in events:
        if isinstance(e, Mapping) and e.get("ph") == "M" and e.get("name") == "process_name":
            name = str((e.get("args") or {}).get("name", ""))
            if name == HOST_PROCESS or GPU_PROCESS.match(name) or OTHER_DEVICE.match(name):
                return True
    return False


def convert(events: Iterable[Mapping]) -> Converted:
    """The CUPTI records of an XProf trace's events (see the module docstring).

    Raises:
        ValueError: an event's time is not a number (the caller turns it into one line).
    """
    events = [e for e in events if isinstance(e, Mapping)]
    procs: dict = {}
    threads: dict = {}
    for e in events:
        if e.get("ph") != "M":
            continue
        name = str((e.get("args") or {}).get("name", ""))
        if e.get("name") == "process_name":
            procs[e.get("pid")] = name
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = name
    out = Converted()
    gpus = {}
    for pid, name in procs.items():
        m = GPU_PROCESS.match(name)
        if m:
            gpus[pid] = int(m.group(1))
        elif OTHER_DEVICE.match(name):
            out.other_devices.add(OTHER_DEVICE.match(name).group(1))
        elif name == HOST_PROCESS:
            out.pid = _int(pid)
    work: dict = {}  # correlation id -> ("kernel" | "memcpy" | "memset", copy kind, async)
    host = []
    lo, hi = None, None
    for e in events:
        if e.get("ph") != "X":
            continue
        s = _ns(e["ts"])
        t = s + max(0, _ns(e.get("dur", 0)))
        pid, args, name = e.get("pid"), e.get("args") or {}, str(e.get("name", ""))
        if pid in gpus:
            tname = threads.get((pid, e.get("tid")), "")
            m = _STREAM.match(tname)
            if not m:
                out.skipped_lines.add(tname or str(e.get("tid")))
                continue
            rec = _gpu_record(name, args, s, t, gpus[pid], int(m.group(1)))
            work[rec["corr"]] = (rec["k"], rec.get("copy"), details(args.get("memcpy_details") or
                                                                     args.get("Memset_details")).get("async"))
            out.records.append(rec)
        elif procs.get(pid) == HOST_PROCESS or pid not in procs:
            if name.startswith("$"):
                out.frames += 1
                continue
            host.append((e, s, t))
        else:
            continue
        lo = s if lo is None else min(lo, s)
        hi = t if hi is None else max(hi, t)
    for e, s, t in host:
        out.records.append(_host_record(e, s, t, work, out.pid))
    out.devices = {d: "" for d in sorted(set(gpus.values()))}
    out.start_ns, out.stop_ns = (lo or 0), (hi or 0)
    return out


def _gpu_record(name: str, args: Mapping, s: int, t: int, dev: int, stream: int) -> dict:
    corr = _int(args.get("correlation_id"))
    base = {"start": s, "end": t, "corr": corr, "device": dev, "stream": stream}
    if "memcpy_details" in args:
        d = details(args["memcpy_details"])
        src, dst = MEMORY_KINDS.get(d.get("kind_src", ""), ""), MEMORY_KINDS.get(d.get("kind_dst", ""), "")
        copy = COPY_KINDS.get(name)
        if copy is None:  # MemcpyOther: host to host when both ends are host memory
            copy = "HTOH" if {src, dst} <= {"PAGEABLE", "PINNED"} and src and dst else "UNKNOWN"
        return dict(base, k="memcpy", bytes=_int(d.get("size")), copy=copy, src=src, dst=dst)
    if "Memset_details" in args or name.startswith("Memset"):
        return dict(base, k="memset", bytes=_int(details(args.get("Memset_details")).get("num_bytes")))
    kd = details(args.get("kernel_details"))
    return dict(base, k="kernel", name=name, grid=_dim3(kd.get("grid", "")), block=_dim3(kd.get("block", "")),
                graph=_int(args.get("cuda_graph_id")))


def _host_record(e: Mapping, s: int, t: int, work: Mapping, pid: int) -> dict:
    name, args, tid = str(e.get("name", "")), e.get("args") or {}, _int(e.get("tid"))
    if "correlation_id" in args:
        corr = _int(args["correlation_id"])
        kind, copy, is_async = work.get(corr, (None, None, None))
        own = _API.match(name)
        if own and own.group(1).startswith("cuGraphLaunch"):
            call = "cuGraphLaunch"
        elif kind == "kernel":
            call = "cuLaunchKernel"
        elif kind == "memcpy":
            pair = _COPY_CALLS.get(copy, ("cuMemcpyAsync", "cuMemcpy"))
            call = pair[1] if details(args.get("memcpy_details")).get("async", is_async) == "0" else pair[0]
        elif kind == "memset":
            call = "cuMemsetD8_v2" if is_async == "0" else "cuMemsetD8Async"
        else:
            call = own.group(1) if own else name
        return {"k": "driver", "start": s, "end": t, "name": call, "corr": corr, "pid": pid, "tid": tid}
    own = _API.match(name)
    if own or name in HOST_WAITS:
        return {"k": "driver", "start": s, "end": t, "name": own.group(1) if own else name, "corr": 0, "pid": pid,
                "tid": tid}
    return {"k": "range", "start": s, "end": t, "name": name, "tid": tid}


__all__ = ["COPY_KINDS", "Converted", "GPU_PROCESS", "HOST_PROCESS", "HOST_WAITS", "MEMORY_KINDS", "OTHER_DEVICE",
           "convert", "details", "is_xprof"]
