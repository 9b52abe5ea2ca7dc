"""An Nsight Systems SQLite export as the one :class:`~gpuwhy.importers.timeline.activities.Timeline`.

What is Nsight Systems' own is settled here (the codes are the export's ``ENUM_*`` tables):

- times are nanoseconds in the export (``start``, ``end``), microseconds in the timeline;
- a GPU activity's device is its ``deviceId`` (as text, ``"0"``), named from the GPU table
  (:meth:`~.schema.Schema.gpu_names`); its launch call is the API call of the same process with its
  ``correlationId``: CUPTI counts correlation ids per process, so two processes (one per GPU under
  ``torchrun`` or ``mpirun``) reuse the same ids, and the timeline's key is :func:`corr_key`;
- a copy's direction is ``copyKind`` (``ENUM_CUDA_MEMCPY_OPER``: 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH,
  10 PtoP; array copies count as the device side they touch; 11-13 unified memory) and the host
  memory it touches its ``srcKind`` (HtoD) or ``dstKind`` (DtoH) (``ENUM_CUDA_MEM_KIND``: 0 pageable,
  1 pinned, 2 device, 3 array, 4 managed, 5 device static, 6 managed static, 7 unknown);
- API calls are the runtime and driver calls (``eventClass`` 0 and 1 where the column exists: other
  classes are copies of them some versions keep for backtraces), named without the ABI version suffix
  nsys appends (``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``); a thread is a ``globalTid``, its
  process ``(globalTid >> 24) & 0xFFFFFF`` (the export's serialised global id);
- NVTX push/pop and start/end ranges (``eventType`` 59 and 60) are host annotations, named by
  ``text`` or ``textId``; marks and ranges without an end are not ranges;
- a ``cudaStreamWaitEvent`` whose synchronisation record (``syncType`` 2) names the stream it made
  wait links that stream (``wait_stream``), as Kineto's ``cuda_sync`` events do.
"""

from __future__ import annotations

import re

import numpy as np

from ..timeline.activities import (
    ANNOTATION, DEVICE_MEMORY, DTOD, DTOH, HTOD, HTOH, KERNEL as K_KERNEL, MANAGED, MEMCPY as K_MEMCPY,
    MEMORY_NAMES, MEMSET as K_MEMSET, NOT_A_COPY, OTHER_COPY, PAGEABLE, PINNED, PTOP, UNKNOWN_MEMORY, COPY_NAMES,
    Timeline,
)
from .schema import DRIVER, KERNEL, MEMCPY, MEMSET, NVTX, RUNTIME, SYNC, Schema

NS_PER_US = 1e3
#: ``copyKind`` -> direction.
COPY_KIND = {1: HTOD, 2: DTOH, 3: HTOD, 4: DTOH, 5: DTOD, 6: DTOD, 7: DTOD, 8: DTOD, 9: HTOH, 10: PTOP,
             11: HTOD, 12: DTOH, 13: DTOD}
#: ``srcKind`` / ``dstKind`` -> memory.
MEM_KIND = {0: PAGEABLE, 1: PINNED, 2: DEVICE_MEMORY, 3: DEVICE_MEMORY, 4: MANAGED, 5: DEVICE_MEMORY, 6: MANAGED}
#: NVTX ``eventType`` codes of ranges with a start and an end (push/pop, start/end).
NVTX_RANGES = (59, 60)
#: ``syncType`` of a stream made to wait on an event.
STREAM_WAIT = 2
#: API call classes read (``eventClass``): CUDA runtime, CUDA driver.
API_CLASSES = (0, 1)
#: Bits of a CUPTI correlation id (``uint32_t`` in CUPTI's activity records); the process sits above them.
CORR_BITS = 32
#: Where each table read for correlation ids names its process (``globalPid``; API calls: ``globalTid``).
PROCESS_COLUMN = {KERNEL: "globalPid", MEMCPY: "globalPid", MEMSET: "globalPid", SYNC: "globalPid",
                  RUNTIME: "globalTid", DRIVER: "globalTid"}
#: The ABI version suffix nsys appends to runtime API names (``_v3020``, ``_v7000``, ``_v12000``); the
#: driver's ``_v2`` is part of the name and stays.
_VERSION_SUFFIX = re.compile(r"_v\d{4,}$")


def api_name(name: str) -> str:
    """A CUDA API name without the version suffix nsys writes (``cudaMemcpyAsync_v3020`` -> ``cudaMemcpyAsync``)."""
    return _VERSION_SUFFIX.sub("", name)


def pid_of(global_id) -> int | None:
    """The process id in an export's serialised global thread or process id (None stays None)."""
    return None if global_id is None else (int(global_id) >> 24) & 0xFFFFFF


def corr_key(corr, global_id, scoped: bool):
    """The timeline's correlation key of a record: ``(pid << CORR_BITS) | correlationId`` with the process of
    its serialised global id when ``scoped`` (ids count per process, so this is unique across processes and
    keeps launch order within one), else the bare id (an export whose tables do not all name the process:
    keys must agree between the GPU work and the calls); None stays None."""
    if corr is None:
        return None
    if not scoped:
        return corr
    pid = pid_of(global_id)
    return corr if pid is None else (pid << CORR_BITS) | int(corr)


def corr_scoped(s: Schema) -> bool:
    """True when every table read for correlation ids names its record's process (:data:`PROCESS_COLUMN`)."""
    return all(col in s.columns(t) for t, col in PROCESS_COLUMN.items() if s.has(t))


def _opt(cols: frozenset, name: str) -> str:
    """``name`` when the table has that column, else NULL (so one query serves every version)."""
    return name if name in cols else "NULL"


class _Columns:
    """The GPU activity rows of a timeline, gathered table by table."""

    def __init__(self):
        self.dev, self.start, self.end, self.kind, self.name, self.stream = [], [], [], [], [], []
        self.corr, self.nbytes, self.copy, self.memory, self.grid, self.block = [], [], [], [], [], []
        self.in_graph = 0
        self.scoped = False


def _kernels(s: Schema, strings: dict, g: _Columns) -> None:
    cols = s.columns(KERNEL)
    name_col = "demangledName" if "demangledName" in cols else "shortName"
    rows = s.conn.execute(
        f"SELECT start, end, deviceId, streamId, correlationId, {name_col}, gridX, gridY, "
        f"gridZ, blockX, blockY, blockZ, {_opt(cols, 'graphNodeId')}, {_opt(cols, 'globalPid')} FROM {KERNEL}")
    for st, en, dev, stream, corr, nm, gx, gy, gz, bx, by, bz, node, gpid in rows:
        g.start.append(st), g.end.append(en), g.dev.append(str(dev)), g.stream.append(stream)
        g.corr.append(corr_key(corr, gpid, g.scoped))
        g.kind.append(K_KERNEL), g.name.append(strings.get(nm, f"kernel {nm}")), g.nbytes.append(np.nan)
        g.copy.append(NOT_A_COPY), g.memory.append(UNKNOWN_MEMORY), g.grid.append((gx, gy, gz))
        g.block.append((bx, by, bz))
        g.in_graph += node is not None


def copy_of(copy_kind, src_kind, dst_kind) -> tuple[int, int]:
    """(direction, host memory) of a copy record (see the module docstring)."""
    direction = COPY_KIND.get(copy_kind, OTHER_COPY)
    side = src_kind if direction == HTOD else dst_kind if direction == DTOH else None
    if direction in (DTOD, PTOP):
        memory = DEVICE_MEMORY
    else:
        memory = MEM_KIND.get(side, UNKNOWN_MEMORY)
    return direction, memory


def _copies(s: Schema, g: _Columns) -> None:
    cols = s.columns(MEMCPY)
    rows = s.conn.execute(
        f"SELECT start, end, deviceId, streamId, correlationId, bytes, copyKind, "
        f"{_opt(cols, 'srcKind')}, {_opt(cols, 'dstKind')}, {_opt(cols, 'graphNodeId')}, {_opt(cols, 'globalPid')} "
        f"FROM {MEMCPY}")
    for st, en, dev, stream, corr, nb, ck, sk, dk, node, gpid in rows:
        direction, memory = copy_of(ck, sk, dk)
        src = "Device" if direction in (DTOH, DTOD, PTOP) else MEMORY_NAMES[memory].capitalize()
        dst = "Device" if direction in (HTOD, DTOD, PTOP) else MEMORY_NAMES[memory].capitalize()
        g.start.append(st), g.end.append(en), g.dev.append(str(dev)), g.stream.append(stream)
        g.corr.append(corr_key(corr, gpid, g.scoped))
        g.kind.append(K_MEMCPY), g.name.append(f"Memcpy {COPY_NAMES[direction]} ({src} -> {dst})")
        g.nbytes.append(float(nb) if nb is not None else np.nan), g.copy.append(direction), g.memory.append(memory)
        g.grid.append(None), g.block.append(None)
        g.in_graph += node is not None


def _memsets(s: Schema, g: _Columns) -> None:
    cols = s.columns(MEMSET)
    rows = s.conn.execute(
        f"SELECT start, end, deviceId, streamId, correlationId, bytes, "
        f"{_opt(cols, 'memKind')}, {_opt(cols, 'graphNodeId')}, {_opt(cols, 'globalPid')} FROM {MEMSET}")
    for st, en, dev, stream, corr, nb, mk, node, gpid in rows:
        memory = MEM_KIND.get(mk, UNKNOWN_MEMORY)
        g.start.append(st), g.end.append(en), g.dev.append(str(dev)), g.stream.append(stream)
        g.corr.append(corr_key(corr, gpid, g.scoped))
        g.kind.append(K_MEMSET), g.name.append(f"Memset ({MEMORY_NAMES[memory].capitalize()})")
        g.nbytes.append(float(nb) if nb is not None else np.nan), g.copy.append(NOT_A_COPY), g.memory.append(memory)
        g.grid.append(None), g.block.append(None)
        g.in_graph += node is not None


class _Threads:
    """``globalTid`` -> thread index, and the process of each thread."""

    def __init__(self):
        self.index: dict = {}
        self.pid: list = []

    def of(self, gtid) -> int:
        i = self.index.get(gtid)
        if i is None:
            i = self.index[gtid] = len(self.pid)
            self.pid.append(pid_of(gtid))
        return i


def _api(s: Schema, strings: dict, threads: _Threads, scoped: bool) -> tuple:
    """(start, end, name ids, names, correlation keys (:func:`corr_key`), thread indices) of the runtime and
    driver calls."""
    start, end, name, corr, thread = [], [], [], [], []
    names: dict = {}
    for table in (RUNTIME, DRIVER):
        if not s.has(table):
            continue
        cols = s.columns(table)
        where = f" WHERE eventClass IN {API_CLASSES}" if "eventClass" in cols and table == RUNTIME else ""
        rows = s.conn.execute(f"SELECT start, end, nameId, correlationId, {_opt(cols, 'globalTid')} FROM {table}{where}")
        for st, en, nid, c, gtid in rows:
            nm = api_name(strings.get(nid, f"api {nid}"))
            start.append(st), end.append(en), corr.append(corr_key(c, gtid, scoped)), thread.append(threads.of(gtid))
            name.append(names.setdefault(nm, len(names)))
    return start, end, name, list(names), corr, thread


def _nvtx(s: Schema, strings: dict, threads: _Threads) -> tuple:
    """(start, end, name ids, names, thread indices) of the NVTX ranges that have an end."""
    if not s.has(NVTX):
        return [], [], [], [], []
    cols = s.columns(NVTX)
    rows = s.conn.execute(
        f"SELECT start, end, {_opt(cols, 'text')}, {_opt(cols, 'textId')}, {_opt(cols, 'globalTid')} FROM {NVTX} "
        f"WHERE eventType IN {NVTX_RANGES} AND end IS NOT NULL AND end >= start")
    start, end, name, thread = [], [], [], []
    names: dict = {}
    for st, en, text, tid, gtid in rows:
        nm = text if text is not None else strings.get(tid, "(unnamed NVTX range)")
        start.append(st), end.append(en), thread.append(threads.of(gtid))
        name.append(names.setdefault(str(nm), len(names)))
    return start, end, name, list(names), thread


def _wait_streams(s: Schema, scoped: bool) -> dict:
    """Correlation key (:func:`corr_key`) of each stream-wait call -> the stream it made wait (from the
    synchronisation records)."""
    cols = s.columns(SYNC)
    if not s.has(SYNC) or not {"syncType", "correlationId", "streamId"} <= cols:
        return {}
    rows = s.conn.execute(f"SELECT correlationId, streamId, {_opt(cols, 'globalPid')} FROM {SYNC} "
                          f"WHERE syncType = {STREAM_WAIT}")
    return {corr_key(c, gpid, scoped): st for c, st, gpid in rows if c is not None}


def _f(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def read_timeline(s: Schema) -> tuple[Timeline, dict]:
    """The timeline of the export ``s`` and counts the report quotes (``in_graph``: GPU activities
    run as CUDA graph nodes; ``sync_records``: synchronisation records; ``nvtx_ranges``).

    Raises:
        sqlite3.DatabaseError: a malformed table.
    """
    strings = s.strings()
    g = _Columns()
    g.scoped = scoped = corr_scoped(s)
    if s.has(KERNEL):
        _kernels(s, strings, g)
    if s.has(MEMCPY):
        _copies(s, g)
    if s.has(MEMSET):
        _memsets(s, g)
    threads = _Threads()
    a_start, a_end, a_name, a_names, a_corr, a_thread = _api(s, strings, threads, scoped)
    r_start, r_end, r_name, r_names, r_thread = _nvtx(s, strings, threads)
    gs, ge = _f(g.start) / NS_PER_US, _f(g.end) / NS_PER_US
    as_, ae = _f(a_start) / NS_PER_US, _f(a_end) / NS_PER_US
    rs, re_ = _f(r_start) / NS_PER_US, _f(r_end) / NS_PER_US
    names = {n: i for i, n in enumerate(dict.fromkeys(g.name))}
    t = Timeline(
        gpu_device=g.dev, gpu_start=gs, gpu_dur=np.maximum(ge - gs, 0.0), gpu_kind=np.asarray(g.kind, dtype=np.int8),
        gpu_name=np.asarray([names[n] for n in g.name], dtype=np.int64), gpu_names=list(names),
        gpu_stream=g.stream, gpu_corr=g.corr, gpu_bytes=_f(g.nbytes), gpu_copy=np.asarray(g.copy, dtype=np.int8),
        gpu_memory=np.asarray(g.memory, dtype=np.int8), gpu_op=[None] * len(g.dev), gpu_grid=g.grid, gpu_block=g.block,
        gpu_launch_us=np.full(len(g.dev), np.nan),
        api_start=as_, api_dur=np.maximum(ae - as_, 0.0), api_name=np.asarray(a_name, dtype=np.int64), api_names=a_names,
        api_corr=a_corr, api_thread=np.asarray(a_thread, dtype=np.int64),
        range_start=rs, range_dur=np.maximum(re_ - rs, 0.0), range_name=np.asarray(r_name, dtype=np.int64),
        range_names=r_names, range_kind=np.full(len(r_start), ANNOTATION, dtype=np.int8),
        range_thread=np.asarray(r_thread, dtype=np.int64), thread_pid=threads.pid, wait_stream=_wait_streams(s, scoped),
        device_names=s.gpu_names(), events=len(g.dev) + len(a_start) + len(r_start), api_events=len(a_start),
    )
    sync_records = s.conn.execute(f"SELECT COUNT(*) FROM {SYNC}").fetchone()[0] if s.has(SYNC) else 0
    return t, {"in_graph": g.in_graph, "sync_records": int(sync_records), "nvtx_ranges": len(r_start)}


__all__ = ["API_CLASSES", "CORR_BITS", "COPY_KIND", "MEM_KIND", "NVTX_RANGES", "PROCESS_COLUMN", "api_name", "copy_of",
           "corr_key", "corr_scoped", "pid_of", "read_timeline"]
