"""What an Nsight Systems SQLite export holds: its tables and columns, the version that wrote it, the
GPUs it names, and what it lacks.

The export's tables depend on the nsys version and on what was traced (``--trace=cuda,nvtx,osrt``):
each is probed, never assumed. The names and codes below are those of the export's own schema
(``nsys export --type sqlite``; the ``ENUM_*`` tables of the export list the codes):

- GPU work: ``CUPTI_ACTIVITY_KIND_KERNEL``, ``CUPTI_ACTIVITY_KIND_MEMCPY``, ``CUPTI_ACTIVITY_KIND_MEMSET``;
- API calls: ``CUPTI_ACTIVITY_KIND_RUNTIME`` (runtime and, with ``eventClass`` 1, driver calls) and
  ``CUPTI_ACTIVITY_KIND_DRIVER`` where a version writes one;
- ``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`` (what each sync call waited for), ``NVTX_EVENTS``, ``OSRT_API``;
- GPUs: ``TARGET_INFO_GPU`` (``id`` or, before 2021, ``deviceId``; ``name``), ``TARGET_INFO_CUDA_DEVICE``
  (``gpuId``, ``cudaId``, ``pid``), ``TARGET_INFO_CUDA_GPU`` (older exports: ``name``, ``cudaId``);
- ``StringIds`` (``id`` -> ``value``): every name is a string id;
- the version: ``META_DATA_EXPORT`` (2023 on) or ``EXPORT_META_DATA`` (``EXPORT_PRODUCT_VERSION``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
DRIVER = "CUPTI_ACTIVITY_KIND_DRIVER"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
NVTX = "NVTX_EVENTS"
OSRT = "OSRT_API"
STRINGS = "StringIds"
GPU_TABLES = ("TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_CUDA_GPU")
#: The GPU activity tables: a report with none of them holds no CUDA trace.
GPU_WORK = (KERNEL, MEMCPY, MEMSET)
#: What each missing table means for the reader of the report.
MISSING = {
    KERNEL: "no kernel table: kernels were not traced",
    MEMCPY: "no memcpy table: the capture recorded no copy",
    MEMSET: "no memset table: the capture recorded no memset",
    RUNTIME: ("no CUDA API trace: GPU work cannot be linked to its launch calls, so idle time is unexplained "
              "(trace with --trace=cuda)"),
    SYNC: "no synchronisation table: what sync calls waited for is not known",
    NVTX: "no NVTX trace: no user ranges to name steps or callers (trace with --trace=nvtx)",
    OSRT: ("no OS runtime trace: host time outside CUDA calls cannot be told apart (I/O, sleeps and locks "
           "all read as host work; trace with --trace=osrt)"),
}


@dataclass
class Schema:
    """The tables of one export, their columns (read on first use), the version that wrote it."""

    conn: sqlite3.Connection
    tables: frozenset
    version: str | None = None
    _columns: dict = field(default_factory=dict)

    @classmethod
    def probe(cls, conn: sqlite3.Connection) -> Schema:
        """The schema of the open export ``conn``.

        Raises:
            sqlite3.DatabaseError: the file is not a database or is malformed.
        """
        tables = frozenset(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        s = cls(conn, tables)
        for meta in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
            if meta in tables and {"name", "value"} <= s.columns(meta):
                row = conn.execute(f"SELECT value FROM {meta} WHERE name = 'EXPORT_PRODUCT_VERSION'").fetchone()
                if row and row[0]:
                    s.version = str(row[0])
                    break
        return s

    def has(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> frozenset:
        """The column names of ``table`` (empty when it is absent)."""
        if table not in self._columns:
            rows = self.conn.execute(f"PRAGMA table_info({table})").fetchall() if table in self.tables else []
            self._columns[table] = frozenset(r[1] for r in rows)
        return self._columns[table]

    def missing_notes(self) -> list[str]:
        """A note per table the analysis would use that the export lacks (:data:`MISSING`)."""
        return [MISSING[t] for t in (KERNEL, MEMCPY, MEMSET, RUNTIME, SYNC, NVTX, OSRT) if not self.has(t)]

    def gpu_names(self) -> dict[str, str]:
        """The name of each GPU by its device id (as the activity tables' ``deviceId`` gives it, a string),
        from ``TARGET_INFO_GPU`` (its ``id``, or ``deviceId`` in older exports), else, by CUDA device
        index, from ``TARGET_INFO_CUDA_GPU``."""
        out: dict[str, str] = {}
        cols = self.columns("TARGET_INFO_GPU")
        key = "id" if "id" in cols else "deviceId" if "deviceId" in cols else None
        if key and "name" in cols:
            for dev, name in self.conn.execute(f"SELECT {key}, name FROM TARGET_INFO_GPU"):
                if dev is not None and name:
                    out.setdefault(str(dev), str(name))
        cols = self.columns("TARGET_INFO_CUDA_GPU")
        if not out and {"cudaId", "name"} <= cols:
            for dev, name in self.conn.execute("SELECT cudaId, name FROM TARGET_INFO_CUDA_GPU"):
                if dev is not None and name:
                    out.setdefault(str(dev), str(name))
        return out

    def strings(self) -> dict[int, str]:
        """``StringIds``: id -> text."""
        return {int(i): str(v) for i, v in self.conn.execute(f"SELECT id, value FROM {STRINGS}")}


__all__ = ["DRIVER", "GPU_TABLES", "GPU_WORK", "KERNEL", "MEMCPY", "MEMSET", "MISSING", "NVTX", "OSRT", "RUNTIME",
           "STRINGS", "SYNC", "Schema"]
