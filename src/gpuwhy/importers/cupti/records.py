"""CUPTI activity records as a Chrome trace in Kineto's spelling: what `gpuwhy run --tracer cupti` writes.

The records are plain dicts, one per CUPTI activity, copied out of CUPTI's buffers by
:mod:`gpuwhy.engine.cupti_tracer` (times in ns on CUPTI's clock); ``k`` says which:

- ``kernel``: ``start``, ``end``, ``name``, ``corr``, ``device``, ``stream``, ``grid`` and ``block``
  (``[x, y, z]``), ``graph`` (the CUDA graph id, 0 outside a graph);
- ``memcpy``: ``start``, ``end``, ``bytes``, ``copy`` (CUPTI's copy kind: ``HTOD``, ``DTOH``, ``DTOD``,
  ``HTOH``, ``PTOP``, ...), ``src``/``dst`` (CUPTI's memory kinds: ``PAGEABLE``, ``PINNED``,
  ``DEVICE``, ``MANAGED``, ...), ``corr``, ``device``, ``stream``;
- ``memset``: ``start``, ``end``, ``bytes``, ``corr``, ``device``, ``stream``;
- ``runtime`` / ``driver``: an API call, ``start``, ``end``, ``name`` (the function, e.g.
  ``cudaLaunchKernel``), ``corr``, ``pid``, ``tid``;
- ``sync``: ``start``, ``end``, ``type`` (``STREAM_WAIT_EVENT``, ``STREAM_SYNCHRONIZE``,
  ``EVENT_SYNCHRONIZE``, ``CONTEXT_SYNCHRONIZE``), ``corr``, ``stream``;
- ``range``: an NVTX push/pop or start/end range, ``start``, ``end``, ``name``, ``tid``;
- ``profiler``: the program started JAX's own profiler (:mod:`gpuwhy.engine.jax_profiler_watch`):
  ``start``, ``name``, ``log_dir``; an instant event in the trace;
- ``jit``: one call of a jitted JAX function (:mod:`gpuwhy.engine.jax_costs`): ``start``, ``end``,
  ``name``, ``tid``, and its executable's ``flops`` and ``bytes`` a call from XLA's cost analysis
  (None unknown), ``dtype``, ``matmul`` (JAX's default matmul precision, None: XLA's), ``error``
  (why there are none), ``flops_from`` (whose count the FLOPs are: ``compiled``, ``lowered`` or
  ``jaxpr``; missing in older records) and ``flops_note`` (what to know of that count; optional).

A ``jit`` call becomes a host range (``user_annotation``) named ``jax.jit NAME`` with ``args``
``External id`` (a number of its own), ``cost`` (``cost_analysis``, or why it failed), ``flops`` and
``bytes accessed`` a call where known, ``dtype``, ``matmul precision``, ``flops from`` and ``flops note`` where
known; each kernel whose launch API call (its ``corr``)
started inside exactly one such call carries that call's ``External id``, as torch.profiler links a
kernel to the operator that launched it (where calls on several threads overlap, the thread of the
launch decides; a launch inside none, or several, is linked to none).

The trace is the one torch.profiler writes (categories ``kernel``, ``gpu_memcpy``, ``gpu_memset``,
``cuda_runtime``, ``cuda_driver``, ``cuda_sync``, ``user_annotation``; GPU events on ``pid`` = device,
``tid`` = stream; ``args.correlation`` links a launch to its work; copies named ``Memcpy HtoD
(Pageable -> Device)``), so :mod:`gpuwhy.importers.kineto` reads it into the same timeline and the
same budget, and Perfetto or chrome://tracing opens it. Times become us since the capture's start
(plus 1 us: the reader keeps positive times only), the ns origin kept as ``baseTimeNanoseconds``.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

#: CUPTI memory kinds as Kineto names them in a copy's name.
MEMORY_WORDS = {
    "PAGEABLE": "Pageable", "PINNED": "Pinned", "DEVICE": "Device", "ARRAY": "Array", "MANAGED": "Managed",
    "DEVICE_STATIC": "Device Static", "MANAGED_STATIC": "Managed Static",
}
#: CUPTI copy kinds as Kineto spells them.
COPY_WORDS = {
    "HTOD": "HtoD", "DTOH": "DtoH", "HTOA": "HtoA", "ATOH": "AtoH", "ATOA": "AtoA", "ATOD": "AtoD",
    "DTOA": "DtoA", "DTOD": "DtoD", "HTOH": "HtoH", "PTOP": "PtoP",
}
#: CUPTI synchronisation types as Kineto names its ``cuda_sync`` events.
SYNC_WORDS = {
    "EVENT_SYNCHRONIZE": "Event Sync", "STREAM_WAIT_EVENT": "Stream Wait Event",
    "STREAM_SYNCHRONIZE": "Stream Sync", "CONTEXT_SYNCHRONIZE": "Context Sync",
}
#: Where the capture began and ended (instant events, as torch.profiler marks its window).
CAPTURE_START, CAPTURE_END = "Iteration Start: PyTorch Profiler", "Record Window End"
_VERSION = re.compile(r"_v\d+$")
_GPU_CAT = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}


class RecordError(ValueError):
    """A record without the fields its kind needs (the message names the record's index and field)."""


def api_name(name: str, runtime: bool) -> str:
    """A runtime API's name without CUPTI's version suffix (``cudaLaunchKernel_v7000`` ->
    ``cudaLaunchKernel``, as torch.profiler writes it); driver names are kept (``cuMemcpyDtoH_v2``
    is the driver's own symbol)."""
    return _VERSION.sub("", name) if runtime else name


def copy_name(copy: str, src: str, dst: str) -> str:
    """Kineto's name of a copy, e.g. ``Memcpy HtoD (Pageable -> Device)``; unknown kinds as ``Unknown``."""
    return (f"Memcpy {COPY_WORDS.get(str(copy).upper(), 'Unknown')} "
            f"({MEMORY_WORDS.get(str(src).upper(), 'Unknown')} -> {MEMORY_WORDS.get(str(dst).upper(), 'Unknown')})")


def _dim3(v) -> list[int]:
    try:
        x, y, z = (int(a) for a in v)
    except (TypeError, ValueError):
        return [0, 0, 0]
    return [x, y, z]


def chrome_trace(records: Iterable[Mapping], *, start_ns: int, stop_ns: int, pid: int,
                 devices: Mapping[int, str] | None = None, lost: int = 0, buffers: Iterable = ()) -> dict:
    """The Chrome trace document of ``records`` captured between ``start_ns`` and ``stop_ns`` (CUPTI
    ns) in process ``pid``; ``devices``: device index -> name; ``lost``: records CUPTI dropped
    (buffers full), kept in the document as ``cuptiDroppedRecords``; ``buffers``: ``(start, end,
    records)`` of each buffer the tracer handled, shown as ``overhead`` events (the tracer's own time), those
    handed over after ``stop_ns`` (the flush) left out.

    Raises:
        RecordError: a record lacks a field its kind needs, or ``stop_ns`` precedes ``start_ns``.
    """
    if int(stop_ns) < int(start_ns):
        raise RecordError(f"the capture stops ({stop_ns} ns) before it starts ({start_ns} ns)")

    start_ns, stop_ns = int(start_ns), int(stop_ns)

    def us(ns) -> float:  # integers subtracted first: a float of ~1.7e18 ns is only good to 256 ns
        return (int(ns) - start_ns) / 1e3 + 1.0

    events: list[dict] = [
        {"ph": "i", "s": "g", "name": CAPTURE_START, "pid": pid, "tid": 0, "ts": us(start_ns)},
        {"ph": "i", "s": "g", "name": CAPTURE_END, "pid": pid, "tid": 0, "ts": us(stop_ns)},
    ]
    add = events.append
    records = list(records)
    owner = _jit_owners(records, add, us, pid)
    for b0, b1, n in buffers:
        # a buffer handed over after the capture stopped (the flush at stop: seconds for a large capture) is
        # the tracer's time, not the program's: kept out, or the judged window would run on past the program
        if b0 and b1 >= b0 and int(b0) < stop_ns:
            add({"ph": "X", "cat": "overhead", "name": "CUPTI buffer to records (gpuwhy)", "pid": pid, "tid": 0,
                 "ts": us(b0), "dur": (min(int(b1), stop_ns) - int(b0)) / 1e3, "args": {"records": int(n)}})
    for i, r in enumerate(records):
        try:
            k = r["k"]
            ts = us(r["start"])
            dur = 0.0 if k == "profiler" else max(0.0, (int(r["end"]) - int(r["start"])) / 1e3)  # an instant
            if k in _GPU_CAT:
                dev, stream = int(r["device"]), int(r.get("stream", 0))
                args = {"device": dev, "stream": stream, "correlation": int(r.get("corr", 0))}
                if k == "kernel":
                    name = str(r["name"])
                    args.update(grid=_dim3(r.get("grid")), block=_dim3(r.get("block")))
                    if r.get("corr") in owner:
                        args["External id"] = owner[r["corr"]]
                    if r.get("graph"):
                        args["graph id"] = int(r["graph"])
                elif k == "memcpy":
                    name = copy_name(r["copy"], r.get("src", ""), r.get("dst", ""))
                    args["bytes"] = int(r["bytes"])
                    if dur > 0:
                        args["memory bandwidth (GB/s)"] = int(r["bytes"]) / (dur * 1e3)
                else:
                    name = "Memset (Device)"
                    args["bytes"] = int(r["bytes"])
                add({"ph": "X", "cat": _GPU_CAT[k], "name": name, "pid": dev, "tid": stream, "ts": ts, "dur": dur,
                     "args": args})
            elif k in ("runtime", "driver"):
                add({"ph": "X", "cat": "cuda_runtime" if k == "runtime" else "cuda_driver",
                     "name": api_name(str(r["name"]), k == "runtime"), "pid": int(r.get("pid", pid)),
                     "tid": int(r["tid"]), "ts": ts, "dur": dur, "args": {"correlation": int(r["corr"])}})
            elif k == "sync":
                word = SYNC_WORDS.get(str(r["type"]).upper(), "Unknown Sync")
                add({"ph": "X", "cat": "cuda_sync", "name": word, "pid": pid, "tid": int(r.get("stream", 0)),
                     "ts": ts, "dur": dur, "args": {"correlation": int(r.get("corr", 0)),
                                                    "stream": int(r.get("stream", 0)), "cuda_sync_kind": word}})
            elif k == "jit":
                continue  # written by _jit_owners
            elif k == "profiler":  # the program started JAX's own profiler here (engine.jax_profiler_watch)
                add({"ph": "i", "s": "p", "name": f"{r.get('name', 'profiler')} started", "pid": pid, "tid": 0,
                     "ts": ts, "args": {"log_dir": str(r.get("log_dir", ""))}})
            elif k == "range":
                add({"ph": "X", "cat": "user_annotation", "name": str(r["name"]), "pid": pid,
                     "tid": int(r.get("tid", 0)), "ts": ts, "dur": dur, "args": {}})
            else:
                raise RecordError(f"record {i}: unknown kind {k!r}")
        except KeyError as exc:
            raise RecordError(f"record {i} ({r.get('k', '?')!r}) has no {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"record {i} ({r.get('k', '?')!r}): {exc}") from None
    meta = [{"ph": "M", "name": "process_name", "pid": d, "tid": 0, "args": {"name": f"GPU {d}: {n}"}}
            for d, n in sorted((devices or {}).items())]
    return {"schemaVersion": 1, "traceName": "gpuwhy CUPTI trace", "baseTimeNanoseconds": int(start_ns) - 1000,
            "cuptiDroppedRecords": int(lost), "deviceProperties": [{"id": d, "name": n} for d, n in
                                                                    sorted((devices or {}).items())],
            "traceEvents": meta + events}


def _jit_owners(records: list, add, us, pid: int) -> dict:
    """Write each ``jit`` record of ``records`` as a host range (see the module docstring) through
    ``add``; return correlation id -> the ``External id`` of the call its launch API call started in.

    Raises:
        RecordError: a ``jit`` record without ``start``, ``end`` or ``name``.
    """
    import bisect

    calls = []
    for i, r in enumerate(records):
        if r.get("k") != "jit":
            continue
        try:
            calls.append((int(r["start"]), int(r["end"]), str(r["name"]), r))
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"record {i} ('jit') has no usable {exc}") from None
    if not calls:
        return {}
    calls.sort(key=lambda c: c[0])
    for n, (s, e, name, r) in enumerate(calls, start=1):
        args = {"External id": n, "cost": r.get("error") or "cost_analysis"}
        if r.get("flops"):
            args["flops"] = float(r["flops"])
        if r.get("bytes"):
            args["bytes accessed"] = float(r["bytes"])
        if r.get("dtype"):
            args["dtype"] = str(r["dtype"])
        if r.get("matmul"):
            args["matmul precision"] = str(r["matmul"])
        if r.get("flops_from"):
            args["flops from"] = str(r["flops_from"])
        if r.get("flops_note"):
            args["flops note"] = str(r["flops_note"])
        add({"ph": "X", "cat": "user_annotation", "name": f"{JIT_PREFIX}{name}", "pid": pid,
             "tid": int(r.get("tid", 0) or 0), "ts": us(s), "dur": max(0.0, (e - s) / 1e3), "args": args})
    starts = [c[0] for c in calls]
    reach, top = [], -1  # the latest end among the calls up to each one: where looking back can stop
    for c in calls:
        top = max(top, c[1])
        reach.append(top)
    owner = {}
    for r in records:
        if r.get("k") not in ("runtime", "driver") or r.get("corr") is None:
            continue
        try:
            t = int(r["start"])
        except (KeyError, TypeError, ValueError):
            continue
        inside, n = [], bisect.bisect_right(starts, t) - 1
        while n >= 0 and reach[n] >= t:
            if t <= calls[n][1]:
                inside.append(n)
            n -= 1
        if len(inside) > 1:  # overlapping calls (several threads): the launch's own thread decides
            inside = [n for n in inside if calls[n][3].get("tid") == r.get("tid")]
        if len(inside) == 1:
            owner[r["corr"]] = inside[0] + 1
    return owner


#: The name of a jitted JAX function's call in the trace: ``jax.jit train_step``.
JIT_PREFIX = "jax.jit "

__all__ = ["CAPTURE_END", "JIT_PREFIX", "CAPTURE_START", "RecordError", "api_name", "chrome_trace", "copy_name"]
