"""Nsight Compute CSV exports (``ncu --csv``) into per-kernel roofline verdicts.

Both pages are read:

- ``--page raw``: one row per kernel launch, one column per metric, usually a
  units row right under the header;
- ``--page details``: one row per (launch, metric) with ``Metric Name``,
  ``Metric Unit`` and ``Metric Value`` columns.

What is taken from the counters (names as ``ncu --query-metrics`` lists them;
the exact command line is in docs/diagnose.md):

- duration: ``gpu__time_duration.sum`` (the details page's ``Duration`` as a
  fallback);
- DRAM bytes: ``dram__bytes_read.sum + dram__bytes_write.sum`` (else
  ``dram__bytes.sum``);
- CUDA-core FLOPs from the SASS thread-instruction counters
  ``smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum``: add
  and mul count one FLOP, fma two (the weighting of Nsight Compute's own
  roofline charts). A packed half2 instruction (HADD2/HFMA2) is counted per
  thread instruction, as those counters do, so fp16 CUDA-core work may be
  undercounted by up to 2x;
- tensor-core FLOPs from ``sm__ops_path_tensor_*.sum`` (``src_<type>[_dst_<type>]``,
  optionally ``op_<inst>_`` and ``_sparsity_on/off``): each counted op is taken
  as one FLOP (an MMA's multiply-add is two ops), per NVIDIA's guidance that
  these counters give FLOPs directly. Where a generic ``src_X_dst_Y`` counter
  exists it is used alone (it already includes the per-instruction families);
  otherwise the families are summed. A kernel that executed tensor-pipe
  instructions (``sm__inst_executed_pipe_tensor*``) but has no
  ``sm__ops_path_tensor_*`` counter is "not classifiable": its FLOPs would be
  missing.

Values: ``n/a`` (and empty cells) are missing, never zero; thousands
separators (``1,234,567``) are removed; unit prefixes that change with
magnitude (``byte``/``Kbyte``/``Mbyte``/``Gbyte``: powers of 1000 as ncu
uses them; ``nsecond``/``usecond``/``msecond``/``second``; ``cycle``, ``inst``,
``%``, ``.../second``) are converted to SI. Columns are found by name, so
their order does not matter. Several GPUs in one file are told apart by the
``Device`` column (index) and ``device__attribute_display_name``.

Pure parsing (:func:`read_ncu_csv`) is separate from the roofline step
(:func:`analyze`), which reuses :func:`gpuwhy.model.roofline.classify`,
:func:`gpuwhy.model.ceilings.ceilings_from_sheet` and
:func:`gpuwhy.model.remedies.remedies_for`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import UsageError
from . import display_names

# --------------------------------------------------------------------------- metrics

TIME_METRICS = ("gpu__time_duration.sum", "gpu__time_duration", "gpu__time_duration.avg", "Duration")
DRAM_READ = ("dram__bytes_read.sum",)
DRAM_WRITE = ("dram__bytes_write.sum",)
DRAM_TOTAL = ("dram__bytes.sum",)
DEVICE_NAME_METRICS = ("device__attribute_display_name",)

#: (precision of the ceiling, metric, FLOPs per counted thread instruction).
SASS_FLOP_METRICS: tuple[tuple[str, str, int], ...] = (
    ("fp32", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1),
    ("fp32", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1),
    ("fp32", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2),
    ("fp64", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1),
    ("fp64", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1),
    ("fp64", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2),
    ("fp16", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1),
    ("fp16", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1),
    ("fp16", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2),
)

#: The metrics to ask ncu for (``--metrics``), in the order docs/diagnose.md lists them.
#: The tensor ones differ between GPU generations: keep those ``ncu --query-metrics`` lists.
CORE_METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    *(m for _, m, _ in SASS_FLOP_METRICS),
    "device__attribute_display_name",
)
TENSOR_METRICS = (
    "sm__inst_executed_pipe_tensor.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_int8.sum",
)

_TENSOR_OPS_RE = re.compile(
    r"^sm__ops_path_tensor_(?:op_(?P<op>[a-z0-9]+?)_)?src_(?P<src>[a-z0-9]+?)(?:_dst_(?P<dst>[a-z0-9]+?))?"
    r"(?:_sparsity_(?P<sp>on|off))?\.sum$"
)
_TENSOR_INST_RE = re.compile(r"^(?:sm|smsp)__inst_executed_pipe_tensor[a-z0-9_]*\.sum$")
#: Tensor-path source type -> the sheet precision whose peak bounds it.
_TENSOR_PRECISION = {
    "fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64_tensor", "fp8": "fp8", "e4m3": "fp8",
    "e5m2": "fp8", "fp6": "fp8", "fp4": "fp4", "int8": "int8", "int4": "int8", "int1": "int8",
}

# --------------------------------------------------------------------------- columns

_ID_COLS = ("ID",)
_PID_COLS = ("Process ID",)
_NAME_COLS = ("Kernel Name", "Function Name", "Kernel", "Name")
_DEVICE_COLS = ("Device", "Device ID", "device__attribute_device_index")
_DEVICE_NAME_COLS = ("device__attribute_display_name", "Device Name")
_METRIC_NAME_COLS = ("Metric Name",)
_METRIC_UNIT_COLS = ("Metric Unit",)
_METRIC_VALUE_COLS = ("Metric Value",)
_NA = {"", "n/a", "na", "nan", "-", "--", "(!) n/a", "none", "null"}

# --------------------------------------------------------------------------- units

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9, "p": 1e-12}
_BASE_DIM = {
    "byte": "bytes", "bytes": "bytes", "second": "time", "seconds": "time", "cycle": "count", "cycles": "count",
    "inst": "count", "warp": "count", "thread": "count", "sector": "count", "request": "count", "block": "count",
    "register": "count", "op": "count", "flop": "count", "wavefront": "count", "transaction": "count", "hz": "rate",
    "Hz": "rate", "bit": "count",
}
_SHORT_UNITS = {
    "B": ("bytes", 1.0), "KB": ("bytes", 1e3), "MB": ("bytes", 1e6), "GB": ("bytes", 1e9), "TB": ("bytes", 1e12),
    "KiB": ("bytes", 2.0**10), "MiB": ("bytes", 2.0**20), "GiB": ("bytes", 2.0**30), "TiB": ("bytes", 2.0**40),
    "ns": ("time", 1e-9), "us": ("time", 1e-6), "µs": ("time", 1e-6), "ms": ("time", 1e-3), "s": ("time", 1.0),
    "%": ("percent", 1.0),
}


def unit_scale(unit: str | None) -> tuple[float, str | None]:
    """``(factor to SI, dimension)`` of an ncu unit string; dimension None when unknown or empty.

    ``Kbyte`` -> (1e3, "bytes"), ``usecond`` -> (1e-6, "time"), ``Gbyte/second``
    -> (1e9, "bytes/time"), ``cycle/nsecond`` -> (1e9, "count/time"), ``%`` ->
    (1, "percent"), ``""`` -> (1, None). ncu's byte prefixes are decimal
    (1 Kbyte = 1000 bytes); ``KiB``-style units are binary.
    """
    u = (unit or "").strip()
    if not u:
        return 1.0, None
    if "/" in u:
        num, _, den = u.partition("/")
        fn, dn = unit_scale(num) if num else (1.0, "count")
        fd, dd = unit_scale(den)
        if dn is None or dd is None:
            return 1.0, None
        return fn / fd, f"{dn}/{dd}"
    if u in _SHORT_UNITS:
        dim, f = _SHORT_UNITS[u]
        return f, dim
    if u in _BASE_DIM:
        return 1.0, _BASE_DIM[u]
    if u[0] in _PREFIX and u[1:] in _BASE_DIM:
        return _PREFIX[u[0]], _BASE_DIM[u[1:]]
    return 1.0, None


_THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")


def parse_number(text: str | None) -> float | None:
    """A number as ncu prints it, or None when missing.

    ``"1,234,567"`` -> 1234567.0; ``"n/a"``, ``""``, ``"-"`` -> None (missing,
    never 0); ``"12.5 Mbyte"`` -> 12.5 (the unit is read by :func:`parse_value`).
    Text that is not a number also gives None.
    """
    if text is None:
        return None
    s = str(text).strip().strip('"').strip()
    if s.lower() in _NA:
        return None
    s = s.split()[0] if " " in s else s
    if "," in s:
        if _THOUSANDS_RE.match(s):
            s = s.replace(",", "")
        else:
            return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_value(text: str | None, unit: str | None) -> tuple[float | None, str | None]:
    """``(value in SI, dimension)`` of a cell and its column's (or row's) unit.

    A unit written inside the cell (``"12.5 Mbyte"``) wins over ``unit``.
    """
    v = parse_number(text)
    if v is None:
        return None, None
    s = str(text).strip()
    if " " in s:
        cell_unit = s.split(None, 1)[1].strip()
        f, dim = unit_scale(cell_unit)
        if dim is not None:
            return v * f, dim
    f, dim = unit_scale(unit)
    return v * f, dim


# --------------------------------------------------------------------------- parsed file


@dataclass
class Launch:
    """One profiled kernel launch: its identity and its metrics.

    ``metrics`` maps a metric name to ``(value in SI or None, dimension or None)``;
    ``texts`` keeps the raw text of non-numeric cells (e.g. the device name).
    """

    id: str
    name: str
    device: str
    device_name: str | None
    metrics: dict[str, tuple[float | None, str | None]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NcuTable:
    """What :func:`read_ncu_csv` read: the launches in file order and what it noticed.

    Attributes:
        source: the file's path (or "<text>").
        page: ``"raw"`` or ``"details"``.
        launches: one :class:`Launch` per profiled kernel launch.
        columns: the header's column names (raw page) or the metric names seen (details page).
        dropped: reason -> count of lines that were not data rows (preamble, profiler
            messages, program output, rows of the wrong width).
        messages: the profiler's own ``==WARNING==``/``==ERROR==`` lines (first few).
        notes: assumptions made while reading (e.g. a time column without a unit).
    """

    source: str
    page: str
    launches: tuple[Launch, ...]
    columns: tuple[str, ...]
    dropped: dict[str, int]
    messages: tuple[str, ...]
    notes: tuple[str, ...]


_PERM_RE = re.compile(r"ERR_NVGPUCTRPERM")


def _perm_error(source: str) -> UsageError:
    return UsageError(
        f"{source}: ncu could not read the GPU performance counters (ERR_NVGPUCTRPERM), so the file holds no metrics; "
        "re-run ncu as root (sudo), or let all users profile: set the nvidia driver option "
        "NVreg_RestrictProfilingToAdminUsers=0 and reload the driver (in a container: --cap-add=SYS_ADMIN); "
        "see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
    )


def _find(header: list[str], names: Iterable[str]) -> int | None:
    idx = {h.strip(): i for i, h in enumerate(header)}
    for n in names:
        if n in idx:
            return idx[n]
    low = {h.strip().lower(): i for i, h in enumerate(header)}
    for n in names:
        if n.lower() in low:
            return low[n.lower()]
    return None


def _is_header(cells: list[str]) -> bool:
    return _find(cells, _ID_COLS) is not None and _find(cells, _NAME_COLS) is not None


def read_ncu_csv(source: str | Path, text: str | None = None) -> NcuTable:
    """Read an ``ncu --csv`` export (raw or details page) from ``source`` (or from ``text``).

    Lines before the header (``==PROF==``, ``==WARNING==``, the program's own
    output) are skipped and counted; so are later lines that are not rows of
    the header's width.

    Raises:
        UsageError: the file cannot be read; it holds only a profiler
            permission error (ERR_NVGPUCTRPERM; the message names the fix); it
            holds another ncu error and no data; it has no CSV header with
            ``ID`` and ``Kernel Name`` columns; or it lists no kernel.
    """
    src = str(source)
    if text is None:
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {src!r} ({exc.strerror or exc}); pass an `ncu --csv` export") from None
        text = raw.decode("utf-8-sig", errors="replace")
    lines = text.splitlines()
    dropped: dict[str, int] = {}
    messages: list[str] = []

    def drop(reason: str, line: str | None = None) -> None:
        dropped[reason] = dropped.get(reason, 0) + 1
        if line is not None and line.startswith(("==WARNING==", "==ERROR==")) and len(messages) < 10:
            messages.append(line.strip())

    start = None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if s.startswith("=="):
            drop("profiler messages (==PROF==, ==WARNING==, ==ERROR==)", s)
            continue
        if ("ID" in s) and ("Kernel" in s or "Function" in s or "Name" in s):
            try:
                cells = next(csv.reader([s]))
            except (csv.Error, StopIteration):
                cells = []
            if _is_header(cells):
                start = i
                break
        drop("lines before the CSV header (program output)")
    if start is None:
        if _PERM_RE.search(text):
            raise _perm_error(src)
        err = next((m for m in messages if m.startswith("==ERROR==")), None)
        if err:
            raise UsageError(f"{src}: ncu reported an error and wrote no metrics: {err[:300]}")
        raise UsageError(
            f"{src} is not an `ncu --csv` export (no header row with ID and Kernel Name columns); "
            "export one with `ncu --csv --page raw --metrics ... ./app > report.csv` (see docs/diagnose.md)"
        )

    body = "\n".join(lines[start:])
    reader = csv.reader(io.StringIO(body))
    header = [h.strip() for h in next(reader)]
    width = len(header)
    rows: list[list[str]] = []
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        first = row[0].strip()
        if first.startswith("=="):
            drop("profiler messages (==PROF==, ==WARNING==, ==ERROR==)", ",".join(row))
            continue
        if len(row) != width:
            drop("rows of the wrong width (program output inside the CSV)")
            continue
        rows.append(row)

    if _find(header, _METRIC_NAME_COLS) is not None and _find(header, _METRIC_VALUE_COLS) is not None:
        page = "details"
        launches, columns, notes = _read_details(header, rows)
    else:
        page = "raw"
        launches, columns, notes = _read_raw(header, rows)
    if not launches:
        if _PERM_RE.search(text):
            raise _perm_error(src)
        said = f" (ncu said: {messages[0]})" if messages else ""
        raise UsageError(f"{src} lists no profiled kernel{said}; check the --kernel-name/-c filters and that the program launched kernels")
    return NcuTable(src, page, tuple(launches), tuple(columns), dropped, tuple(messages), tuple(notes))


def _device_key(cells: list[str], i_dev: int | None) -> str:
    if i_dev is None:
        return "0"
    v = cells[i_dev].strip()
    return v or "0"


def _read_raw(header: list[str], rows: list[list[str]]) -> tuple[list[Launch], list[str], list[str]]:
    i_id = _find(header, _ID_COLS)
    i_pid = _find(header, _PID_COLS)
    i_name = _find(header, _NAME_COLS)
    i_dev = _find(header, _DEVICE_COLS)
    i_devname = _find(header, _DEVICE_NAME_COLS)
    units: list[str] = [""] * len(header)
    notes: list[str] = []
    if rows and not rows[0][i_id].strip() and not rows[0][i_name].strip():
        units = [u.strip() for u in rows[0]]
        rows = rows[1:]
    elif rows:
        notes.append("the raw page has no units row: values are taken in ncu's base units (byte, nsecond)")
    fixed = {i for i in (i_id, i_pid, i_name, i_dev, i_devname) if i is not None}
    launches: list[Launch] = []
    for row in rows:
        dev_name = row[i_devname].strip() if i_devname is not None else None
        pid = row[i_pid].strip() if i_pid is not None else ""
        la = Launch(
            id=f"{pid}:{row[i_id].strip()}" if pid else row[i_id].strip(),
            name=row[i_name].strip(),
            device=_device_key(row, i_dev),
            device_name=dev_name or None,
        )
        for i, col in enumerate(header):
            if i in fixed or not col:
                continue
            cell = row[i]
            v, dim = parse_value(cell, units[i])
            if v is None and parse_number(cell) is None and cell.strip().lower() not in _NA:
                la.texts[col] = cell.strip()
            la.metrics[col] = (v, dim)
        launches.append(la)
    return launches, header, notes


def _read_details(header: list[str], rows: list[list[str]]) -> tuple[list[Launch], list[str], list[str]]:
    i_id = _find(header, _ID_COLS)
    i_pid = _find(header, _PID_COLS)
    i_name = _find(header, _NAME_COLS)
    i_dev = _find(header, _DEVICE_COLS)
    i_devname = _find(header, _DEVICE_NAME_COLS)
    i_mn = _find(header, _METRIC_NAME_COLS)
    i_mu = _find(header, _METRIC_UNIT_COLS)
    i_mv = _find(header, _METRIC_VALUE_COLS)
    by_id: dict[str, Launch] = {}
    seen: list[str] = []
    for row in rows:
        pid = row[i_pid].strip() if i_pid is not None else ""
        key = f"{pid}:{row[i_id].strip()}" if pid else row[i_id].strip()
        la = by_id.get(key)
        if la is None:
            dev_name = row[i_devname].strip() if i_devname is not None else ""
            la = by_id[key] = Launch(id=key, name=row[i_name].strip(), device=_device_key(row, i_dev), device_name=dev_name or None)
        metric = row[i_mn].strip()
        if not metric:
            continue
        unit = row[i_mu].strip() if i_mu is not None else ""
        cell = row[i_mv]
        v, dim = parse_value(cell, unit)
        if v is None and parse_number(cell) is None and cell.strip().lower() not in _NA:
            la.texts[metric] = cell.strip()
        # A metric may appear in two sections (e.g. Duration); the first value wins.
        if metric not in la.metrics or la.metrics[metric][0] is None:
            la.metrics[metric] = (v, dim)
        if metric not in seen:
            seen.append(metric)
    for la in by_id.values():
        if la.device_name is None:
            for m in DEVICE_NAME_METRICS:
                if la.texts.get(m):
                    la.device_name = la.texts[m]
    return list(by_id.values()), seen, []


# --------------------------------------------------------------------------- per-launch figures


@dataclass(frozen=True)
class LaunchFigures:
    """The roofline inputs of one launch, or why they are missing.

    ``time_s`` seconds, ``bytes`` DRAM bytes (read + write), ``flops`` total
    FLOPs, ``flops_by`` FLOPs per source (``fp32``, ``fp64``, ``fp16``,
    ``tensor_bf16``, ...), ``precision`` the sheet precision of the largest
    source. ``reason`` is empty when the launch is classifiable.
    """

    time_s: float | None
    bytes: float | None
    flops: float | None
    flops_by: dict[str, float]
    precision: str
    tensor_inst: float | None
    reason: str
    notes: tuple[str, ...] = ()


def _metric(la: Launch, names: Iterable[str], want: str | None) -> tuple[float | None, bool, str | None]:
    """(SI value, present as a column/row, note) of the first of ``names`` the launch has."""
    for n in names:
        if n in la.metrics:
            v, dim = la.metrics[n]
            if v is None:
                return None, True, None
            if want and dim is not None and dim != want:
                return None, True, f"{n} has unit dimension {dim}, expected {want}; ignored"
            if want == "time" and dim is None:
                # ncu's base time unit is the nanosecond (--print-units base).
                return v * 1e-9, True, f"{n} has no unit; read as nanoseconds (ncu's base unit)"
            return v, True, None
    return None, False, None


def launch_figures(la: Launch) -> LaunchFigures:
    """FLOPs, DRAM bytes and duration of one launch from its counters (see the module docstring)."""
    notes: list[str] = []
    t, t_present, n = _metric(la, TIME_METRICS, "time")
    if n:
        notes.append(n)
    rd, rd_present, n1 = _metric(la, DRAM_READ, "bytes")
    wr, wr_present, n2 = _metric(la, DRAM_WRITE, "bytes")
    tot, tot_present, n3 = _metric(la, DRAM_TOTAL, "bytes")
    notes += [x for x in (n1, n2, n3) if x]
    if rd is not None and wr is not None:
        b = rd + wr
    elif tot is not None:
        b = tot
        if rd_present or wr_present:
            notes.append("dram__bytes_read/write incomplete; used dram__bytes.sum")
    else:
        b = None

    flops_by: dict[str, float] = {}
    sass_present: list[str] = []
    sass_na: list[str] = []
    for prec, name, weight in SASS_FLOP_METRICS:
        if name in la.metrics:
            sass_present.append(name)
            v = la.metrics[name][0]
            if v is None:
                sass_na.append(name)
            else:
                flops_by[prec] = flops_by.get(prec, 0.0) + weight * v
    tensor_present = False
    # Tensor path. Per (instruction family or None, src, dst): the plain counter, else
    # sparsity on + off. Per (src, dst): the generic counter (no op_ family) when
    # present, else the families summed.
    parts: dict[tuple[str | None, str, str], dict[str, float]] = {}
    tensor_inst = None
    for name, (v, _dim) in la.metrics.items():
        m = _TENSOR_OPS_RE.match(name)
        if m:
            tensor_present = True
            if v is not None:
                key = (m.group("op"), m.group("src"), m.group("dst") or "")
                parts.setdefault(key, {})[m.group("sp") or "plain"] = v
        elif _TENSOR_INST_RE.match(name) and v is not None:
            tensor_inst = max(tensor_inst or 0.0, v)
    generic: dict[tuple[str, str], float] = {}
    family: dict[tuple[str, str], float] = {}
    for (op, src, dst), got in parts.items():
        val = got["plain"] if "plain" in got else got.get("on", 0.0) + got.get("off", 0.0)
        target = family if op else generic
        target[(src, dst)] = target.get((src, dst), 0.0) + val
    tensor: dict[tuple[str, str], float] = dict(family)
    tensor.update(generic)
    for (src, dst), v in tensor.items():
        label = f"tensor_{src}" + (f"_{dst}" if dst else "")
        flops_by[label] = flops_by.get(label, 0.0) + v

    reason = ""
    if t is None:
        reason = "no duration (gpu__time_duration.sum is " + ("n/a" if t_present else "not in the export") + ")"
    elif t <= 0:
        reason = "duration is zero"
    elif b is None:
        present = rd_present or wr_present or tot_present
        reason = "no DRAM bytes (dram__bytes_read.sum/dram__bytes_write.sum " + ("are n/a" if present else "are not in the export") + ")"
    elif not sass_present and not tensor_present:
        reason = "no FLOP counters (smsp__sass_thread_inst_executed_op_* or sm__ops_path_tensor_*) in the export"
    elif sass_present and len(sass_na) == len(sass_present):
        reason = "the CUDA-core FLOP counters (smsp__sass_thread_inst_executed_op_*) are n/a"
    elif not flops_by:
        reason = "every FLOP counter is n/a"
    elif tensor_inst and not tensor:
        reason = (
            f"{tensor_inst:.3g} tensor-core instructions executed but the export has no sm__ops_path_tensor_* counter, "
            "so its FLOPs are unknown; add those metrics (see docs/diagnose.md)"
        )
    elif b == 0 and sum(flops_by.values()) == 0:
        reason = "no FLOPs and no DRAM bytes counted (data stayed in cache, or the kernel does neither)"
    if not reason:
        if sass_na:
            short = ", ".join(n.split("_op_")[1].split("_")[0] for n in sass_na)
            notes.append(f"FLOPs are a lower bound: the {short} counters are n/a")
        if not sass_present:
            notes.append("no CUDA-core FLOP counters in the export: FLOPs are tensor-core work only")
        if tensor_present and not tensor:
            notes.append("the tensor-core FLOP counters are n/a")
    flops = sum(flops_by.values()) if flops_by else None
    precision = "fp32"
    if flops_by:
        top = max(flops_by.items(), key=lambda kv: kv[1])
        if top[1] > 0:
            label = top[0]
            if label.startswith("tensor_"):
                src = label.split("_")[1]
                precision = _TENSOR_PRECISION.get(src, "fp16")
            else:
                precision = label
    return LaunchFigures(t, b, flops, flops_by, precision, tensor_inst, reason, tuple(notes))


# --------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class NcuKernel:
    """One kernel name on one GPU: its launches added up and judged on the roofline.

    Times in seconds, FLOPs, bytes, intensity in FLOP/byte, ``achieved_tflops``
    1e12 FLOP/s, ``achieved_gbs`` 1e9 B/s, ``roof_pct`` the achieved share of
    the roofline at this intensity (0-100, above 100 when the inputs disagree).
    ``regime`` is None for a kernel that is not classifiable (``reason`` says why).
    """

    name: str
    full_name: str
    device: str
    launches: int
    total_time_s: float | None
    mean_time_s: float | None
    flops: float | None
    bytes: float | None
    flops_by: dict[str, float]
    precision: str | None
    intensity: float | None
    achieved_tflops: float | None
    achieved_gbs: float | None
    roof_pct: float | None
    regime: str | None
    bound_ratio: float | None
    top_remedy: str | None
    remedies: object | None = None  # gpuwhy.model.remedies.Remedies
    reason: str = ""
    notes: tuple[str, ...] = ()

    @property
    def classifiable(self) -> bool:
        return self.regime is not None

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "remedies"}
        d["classifiable"] = self.classifiable
        d["remedies"] = self.remedies.to_dict() if self.remedies is not None else None
        d["notes"] = list(self.notes)
        return d


@dataclass(frozen=True)
class NcuDevice:
    """The kernels of one GPU in the export.

    ``kernels`` are the top ``top`` by total time; ``other_kernels``/``other_time_s``
    what is left out; ``regime_time_s`` the time per regime over all kernels
    (``"not classifiable"`` included); ``total_time_s`` the sum of kernel durations.
    """

    device: str
    name: str | None
    sheet: str
    ceilings: dict
    kernels: tuple[NcuKernel, ...]
    other_kernels: int
    other_time_s: float
    regime_time_s: dict[str, float]
    total_time_s: float
    launches: int
    verdict: str

    def to_dict(self) -> dict:
        return {
            "device": self.device,
            "name": self.name,
            "sheet": self.sheet,
            "ceilings": dict(self.ceilings),
            "kernels": [k.to_dict() for k in self.kernels],
            "other_kernels": self.other_kernels,
            "other_time_s": self.other_time_s,
            "regime_time_s": dict(self.regime_time_s),
            "total_time_s": self.total_time_s,
            "launches": self.launches,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class NcuReport:
    """`gpuwhy ncu`: per GPU in the file, the kernels and where their time goes."""

    source: str
    page: str
    devices: tuple[NcuDevice, ...]
    dropped: dict[str, int]
    messages: tuple[str, ...]
    notes: tuple[str, ...]
    top: int

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "page": self.page,
            "top": self.top,
            "devices": [d.to_dict() for d in self.devices],
            "dropped": dict(self.dropped),
            "messages": list(self.messages),
            "notes": list(self.notes),
        }


def _verdict(flops: float, bytes_: float, launches: int, time_s: float, ceilings):
    """roofline.classify that also takes zero FLOPs (a copy) or zero DRAM bytes (data in cache).

    A zero is replaced by one FLOP/byte for the model (negligible next to the
    other term) and the reported intensity and rates are put back to the true values.
    """
    from ..model.roofline import Workload, attainable_flops, classify

    f = flops if flops > 0 else 1.0
    b = bytes_ if bytes_ > 0 else 1.0
    v = classify(Workload(flops=f, bytes=b, launches=launches, time_s=time_s), ceilings)
    if f == flops and b == bytes_:
        return v
    ai = flops / bytes_ if bytes_ > 0 else math.inf
    return dataclasses.replace(
        v,
        workload=Workload(flops=flops, bytes=bytes_, launches=launches, time_s=time_s),
        arithmetic_intensity=ai,
        attainable_flops=attainable_flops(ceilings.peak_flops, ceilings.bandwidth, ai) if math.isfinite(ai) else ceilings.peak_flops,
        achieved_flops=flops / time_s,
        achieved_bandwidth=bytes_ / time_s,
        compute_sol_pct=100.0 * flops / time_s / ceilings.peak_flops,
        memory_sol_pct=100.0 * bytes_ / time_s / ceilings.bandwidth,
    )


def _top_remedy(rem, on_tensor_cores: bool) -> str:
    """The first number-specific hint, else the first general remedy that is not already done
    (a tensor-core kernel is not told to use tensor cores)."""
    if rem.hints:
        return rem.hints[0]
    helps = [h for h in rem.helps if not (on_tensor_cores and "tensor core" in h.lower() and h.lower().startswith("use"))]
    return (helps or list(rem.helps) or [""])[0]


def _sheet_for(device_name: str | None, gpu, spec_dirs):
    """The sheet for ``gpu`` (given), else the export's GPU name, else this machine's GPU:
    a :class:`~gpuwhy.device.sheet.SheetChoice`.

    Raises:
        UsageError: an unknown --gpu; an export GPU no sheet matches; no name and no GPU here.
    """
    from ..device.probe import gpu_sheet
    from ..device.sheet import sheet_for

    if gpu is not None or device_name:
        choice = sheet_for(gpu, nvml_name=device_name, fuzzy=True, spec_dirs=spec_dirs)
        if choice.sheet is None:
            raise UsageError(
                f"the export's GPU {device_name!r} matches no spec sheet; pass --gpu NAME (see `gpuwhy specs list`)"
            )
        return choice
    try:
        return gpu_sheet(None, spec_dirs)
    except UsageError:
        raise UsageError(
            "the export does not name its GPU (add device__attribute_display_name to --metrics) and no --gpu was given; "
            "pass --gpu NAME (see `gpuwhy specs list`)"
        ) from None


def analyze(
    table: NcuTable,
    gpu=None,
    dtype: str | None = None,
    top: int = 10,
    spec_dirs: Iterable[str] = (),
    device: str | None = None,
) -> NcuReport:
    """Group ``table``'s launches by GPU and kernel name and judge each group on the roofline.

    Args:
        gpu: a sheet name or :class:`~gpuwhy.specs.Sheet` used for every GPU in
            the file; by default each GPU's ``device__attribute_display_name``
            picks its sheet (else the local GPU's sheet).
        dtype: force the ceiling precision (default: per kernel, the precision
            of its largest FLOP source: tensor bf16 -> ``bf16``, CUDA-core fp32
            -> ``fp32``, CUDA-core fp16 -> ``fp16_nontensor``, ...).
        top: kernels listed per GPU (sorted by total time); all kernels count
            in the regime summary.
        device: keep only the GPU whose ``Device`` index or name contains this.

    Raises:
        UsageError: unknown sheet or dtype; a GPU name that matches no sheet
            and no --gpu; ``device`` matching nothing.
    """
    from ..model.ceilings import ceilings_from_sheet
    from ..model.remedies import load_remedies, remedies_for

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    groups: dict[str, list[Launch]] = {}
    for la in table.launches:
        groups.setdefault(la.device, []).append(la)
    if device is not None:
        want = device.strip().lower()
        groups = {
            k: v for k, v in groups.items()
            if k.lower() == want or (v[0].device_name or "").lower().find(want) >= 0
        }
        if not groups:
            have = ", ".join(sorted({f"{la.device} ({la.device_name or 'unnamed'})" for la in table.launches}))
            raise UsageError(f"--device {device!r} matches no GPU in the export; it has: {have}")
    remedies_data = load_remedies()
    notes: list[str] = list(table.notes)
    devices: list[NcuDevice] = []
    for dev_key in sorted(groups, key=lambda k: (len(k), k)):
        launches = groups[dev_key]
        dev_name = next((la.device_name for la in launches if la.device_name), None)
        choice = _sheet_for(dev_name, gpu, spec_dirs)
        sheet = choice.sheet
        if choice.conflict:
            notes.append(f"device {dev_key}: {choice.conflict}")
        if gpu is not None and dev_name and not _same_gpu(sheet, dev_name):
            notes.append(f"device {dev_key} is a {dev_name}, judged against the {sheet.name} sheet (--gpu)")
        ceil_cache: dict[str, object] = {}

        def ceilings(prec: str):
            if prec not in ceil_cache:
                d, tc = prec, True
                if prec == "fp16" and dtype is None:
                    d, tc = "fp16", False  # CUDA-core half: the non-tensor peak
                try:
                    ceil_cache[prec] = ceilings_from_sheet(sheet, d, tensor_cores=tc)
                except UsageError:
                    if prec == "fp16":
                        ceil_cache[prec] = ceilings_from_sheet(sheet, "fp32")
                        notes.append(f"the {sheet.name} sheet has no CUDA-core fp16 peak; fp16 CUDA-core kernels judged against fp32")
                    else:
                        raise
            return ceil_cache[prec]

        by_name: dict[str, list[tuple[Launch, LaunchFigures]]] = {}
        for la in launches:
            by_name.setdefault(la.name, []).append((la, launch_figures(la)))
        names = display_names(list(by_name))
        kernels: list[NcuKernel] = []
        for full, items in by_name.items():
            kernels.append(_judge(full, names[full], dev_key, items, dtype, ceilings, sheet, remedies_data, remedies_for))
        kernels.sort(key=lambda k: -(k.total_time_s or 0.0))
        regime_time: dict[str, float] = {}
        for k in kernels:
            key = k.regime or "not classifiable"
            regime_time[key] = regime_time.get(key, 0.0) + (k.total_time_s or 0.0)
        total = sum(regime_time.values())
        shown = kernels[:top]
        rest = kernels[top:]
        c_default = ceilings(dtype or "fp32")
        verdict = _device_verdict(regime_time, total)
        devices.append(
            NcuDevice(
                device=dev_key,
                name=dev_name,
                sheet=sheet.name,
                ceilings={
                    "memory_bandwidth_gbs": c_default.bandwidth / 1e9,
                    "peak_tflops": {p: sheet.peak_tflops[p] for p in sheet.peak_tflops},
                    "launch_overhead_s": c_default.launch_overhead_s,
                    "source": c_default.source,
                },
                kernels=tuple(shown),
                other_kernels=len(rest),
                other_time_s=sum(k.total_time_s or 0.0 for k in rest),
                regime_time_s=regime_time,
                total_time_s=total,
                launches=len(launches),
                verdict=verdict,
            )
        )
    return NcuReport(table.source, table.page, tuple(devices), dict(table.dropped), table.messages, tuple(dict.fromkeys(notes)), top)


def _same_gpu(sheet, dev_name: str) -> bool:
    n = " ".join(dev_name.split()).lower()
    return n in (x.lower() for x in sheet.all_names())


def _device_verdict(regime_time: dict[str, float], total: float) -> str:
    if total <= 0:
        return "no kernel time in the export"
    known = {k: v for k, v in regime_time.items() if k != "not classifiable"}
    if not known:
        return "no kernel is classifiable"
    top = max(known.items(), key=lambda kv: kv[1])
    parts = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(regime_time.items(), key=lambda kv: -kv[1]))
    unknown = regime_time.get("not classifiable", 0.0)
    if unknown > 0:
        return f"of the classifiable kernel time, most is {top[0]}-bound ({parts} of all kernel time)"
    return f"most kernel time is {top[0]}-bound ({parts})"


def _judge(full, name, dev_key, items, dtype, ceilings, sheet, remedies_data, remedies_for) -> NcuKernel:
    n = len(items)
    times = [f.time_s for _, f in items if f.time_s is not None]
    total_all = sum(times) if times else None
    ok = [f for _, f in items if not f.reason]
    notes: list[str] = []
    for _, f in items:
        for x in f.notes:
            if x not in notes:
                notes.append(x)
    if not ok:
        reason = items[0][1].reason
        return NcuKernel(
            name=name, full_name=full, device=dev_key, launches=n, total_time_s=total_all,
            mean_time_s=(total_all / len(times)) if times else None, flops=None, bytes=None, flops_by={},
            precision=None, intensity=None, achieved_tflops=None, achieved_gbs=None, roof_pct=None,
            regime=None, bound_ratio=None, top_remedy=None, reason=reason, notes=tuple(notes),
        )
    if len(ok) < n:
        notes.append(f"{n - len(ok)} of {n} launches lack counters ({next(f.reason for _, f in items if f.reason)}); judged on the other {len(ok)}")
    t = sum(f.time_s for f in ok)
    flops = sum(f.flops or 0.0 for f in ok)
    b = sum(f.bytes for f in ok)
    flops_by: dict[str, float] = {}
    for f in ok:
        for k, v in f.flops_by.items():
            flops_by[k] = flops_by.get(k, 0.0) + v
    flops_by = {k: x for k, x in flops_by.items() if x > 0}
    prec = dtype
    if prec is None:
        prec = "fp32"
        if flops_by and max(flops_by.values()) > 0:
            label = max(flops_by.items(), key=lambda kv: kv[1])[0]
            prec = _TENSOR_PRECISION.get(label.split("_")[1], "fp16") if label.startswith("tensor_") else label
    c = ceilings(prec)
    v = _verdict(flops, b, len(ok), t, c)
    rem = remedies_for(v, c.precision, sheet.peak_tflops, remedies_data)
    if flops == 0:
        notes.append("no floating-point work counted: judged on its DRAM bytes alone")
    return NcuKernel(
        name=name, full_name=full, device=dev_key, launches=n, total_time_s=total_all if total_all is not None else t,
        mean_time_s=(total_all / len(times)) if times else t / len(ok), flops=flops, bytes=b, flops_by=flops_by,
        precision=c.precision, intensity=v.arithmetic_intensity, achieved_tflops=v.achieved_flops / 1e12,
        achieved_gbs=v.achieved_bandwidth / 1e9, roof_pct=v.sol_pct, regime=v.regime, bound_ratio=v.bound_ratio,
        top_remedy=_top_remedy(rem, any(k.startswith("tensor_") and x > 0 for k, x in flops_by.items())), remedies=rem, notes=tuple(notes) + tuple(v.warnings),
    )


def load_ncu_report(
    path: str | Path,
    gpu=None,
    dtype: str | None = None,
    top: int = 10,
    spec_dirs: Iterable[str] = (),
    device: str | None = None,
) -> NcuReport:
    """Read ``path`` (:func:`read_ncu_csv`) and judge it (:func:`analyze`).

    Raises:
        UsageError: see :func:`read_ncu_csv` and :func:`analyze`.
    """
    return analyze(read_ncu_csv(path), gpu=gpu, dtype=dtype, top=top, spec_dirs=spec_dirs, device=device)


def ncu_command_line(metrics: Iterable[str] | None = None) -> str:
    """The ``ncu`` command line gpuwhy documents (raw page, counters only, clocks not locked)."""
    ms = ",".join(metrics or (*CORE_METRICS, *TENSOR_METRICS))
    return f"ncu --csv --page raw --print-units base --clock-control none --metrics {ms} ./app > report.csv"


__all__ = [
    "CORE_METRICS", "TENSOR_METRICS", "SASS_FLOP_METRICS", "Launch", "LaunchFigures", "NcuTable", "NcuKernel",
    "NcuDevice", "NcuReport", "read_ncu_csv", "launch_figures", "analyze", "load_ncu_report", "parse_number",
    "parse_value", "unit_scale", "ncu_command_line",
]
