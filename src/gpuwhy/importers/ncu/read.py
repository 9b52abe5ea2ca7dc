"""Reading an Nsight Compute CSV export (``ncu --csv``) into launches and their metrics.

Both pages are read:

- ``--page raw``: one row per kernel launch, one column per metric, usually a
  units row right under the header;
- ``--page details``: one row per (launch, metric) with ``Metric Name``,
  ``Metric Unit`` and ``Metric Value`` columns.

Values: ``n/a`` (and empty cells) are missing, never zero; thousands
separators (``1,234,567``) are removed; unit prefixes that change with
magnitude (``byte``/``Kbyte``/``Mbyte``/``Gbyte``: powers of 1000 as ncu
uses them; ``nsecond``/``usecond``/``msecond``/``second``; ``cycle``, ``inst``,
``%``, ``.../second``) are converted to SI. Columns are found by name, so
their order does not matter. Several GPUs in one file are told apart by the
``Device`` column (index) and ``device__attribute_display_name``.

Spellings of older ncu (``nv-nsight-cu-cli``) are read too: a ``Kernel Time``
column (a timestamp there, never a duration), details rows shorter than the
header (ncu leaves the rule columns out), and a metric name that appears in two
sections with different units (``Memory Throughput`` in % and in byte/second):
the second is kept under ``"<name>|<dimension>"``.

What the counters add up to is :mod:`gpuwhy.importers.ncu.figures`'s job; the
verdicts are :mod:`gpuwhy.importers.ncu.analyse`'s.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UsageError
from ...inputs import open_input_text

#: Metrics that name the launch's GPU (read into :attr:`Launch.device_name` on the details page).
DEVICE_NAME_METRICS = ("device__attribute_display_name",)

# --------------------------------------------------------------------------- columns

_ID_COLS = ("ID",)
_PID_COLS = ("Process ID",)
_NAME_COLS = ("Kernel Name", "Function Name", "Kernel", "Name")
_DEVICE_COLS = ("Device", "Device ID", "device__attribute_device_index")
_DEVICE_NAME_COLS = ("device__attribute_display_name", "Device Name")
_CC_COLS = ("CC",)
#: Columns that name or place a launch, never a metric (``Kernel Time`` is a timestamp in old exports).
_OTHER_ID_COLS = ("Kernel Time", "Process Name", "Host Name", "Context", "Stream", "Block Size", "Grid Size")
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


@functools.lru_cache(maxsize=1024)
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

    ``metrics`` maps a metric name to ``(value in SI or None, dimension or None)`` (a dict, or
    on the raw page a :class:`RowMetrics`, read-only);
    ``texts`` keeps the raw text of non-numeric cells (e.g. the device name);
    ``cc`` is the export's ``CC`` column (``"9.0"``) when it has one; ``grid``/``block`` the
    ``Grid Size``/``Block Size`` cells as written (``"(65536, 1, 1)"``), where the export has them.
    """

    id: str
    name: str
    device: str
    device_name: str | None
    metrics: Mapping[str, tuple[float | None, str | None]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    cc: str | None = None
    grid: str | None = None
    block: str | None = None


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
    the header's width. The file is read a line at a time and each row kept as
    numbers only (:class:`RowMetrics` on the raw page), so memory stays near the
    size of the file whatever its length.

    Raises:
        UsageError: the file cannot be read; it holds only a profiler
            permission error (ERR_NVGPUCTRPERM; the message names the fix); it
            holds another ncu error and no data; it has no CSV header with
            ``ID`` and ``Kernel Name`` columns; it ends mid-row (cut short, see
            :func:`_refuse_cut_short`); or it lists no kernel.
    """
    src = str(source)
    if text is not None:
        return _read_lines(src, io.StringIO(text, newline=""))
    with open_input_text(source, "an `ncu --csv` export") as fh:
        return _read_lines(src, fh)


class _Lines:
    """The lines of an export as they are read, noting whether any names the counter-permission error,
    how many were read (``n``) and the last one as it was (``last``, its line end kept: the sign of a
    file cut short is a last line without one)."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._it = iter(lines)
        self.perm = False
        self.n = 0
        self.last: str | None = None

    def __iter__(self) -> Iterator[str]:
        for line in self._it:
            if not self.perm and "ERR_NVGPUCTRPERM" in line:
                self.perm = True
            self.n += 1
            self.last = line
            yield line


def _read_lines(src: str, fh: Iterable[str]) -> NcuTable:
    """:func:`read_ncu_csv` of the lines of ``fh`` (line ends kept, as a file opened with ``newline=""`` gives them)."""
    lines = _Lines(fh)
    it = iter(lines)
    dropped: dict[str, int] = {}
    messages: list[str] = []

    def drop(reason: str, line: str | None = None) -> None:
        dropped[reason] = dropped.get(reason, 0) + 1
        if line is not None and line.startswith(("==WARNING==", "==ERROR==")) and len(messages) < 10:
            messages.append(line.strip())

    header_line = None
    for line in it:
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
                header_line = s
                break
        drop("lines before the CSV header (program output)")
    if header_line is None:
        if lines.perm:
            raise _perm_error(src)
        err = next((m for m in messages if m.startswith("==ERROR==")), None)
        if err:
            raise UsageError(f"{src}: ncu reported an error and wrote no metrics: {err[:300]}")
        raise UsageError(
            f"{src} is not an `ncu --csv` export (no header row with ID and Kernel Name columns); "
            "export one with `ncu --csv --page raw --metrics ... ./app > report.csv` (see docs/diagnose.md)"
        )

    header = [h.strip() for h in next(csv.reader([header_line]))]
    width = len(header)
    details = _find(header, _METRIC_NAME_COLS) is not None and _find(header, _METRIC_VALUE_COLS) is not None
    # ncu leaves the trailing rule columns out of the details page's metric rows: a row that
    # reaches the Metric Value column is whole.
    min_width = _find(header, _METRIC_VALUE_COLS) + 1 if details else None
    rows = _DetailsRows(header) if details else _RawRows(header)
    header_n = lines.n
    try:
        for row in csv.reader(it):
            if not row or all(not c.strip() for c in row):
                continue
            first = row[0].strip()
            if first.startswith("=="):
                drop("profiler messages (==PROF==, ==WARNING==, ==ERROR==)", ",".join(row))
                continue
            if len(row) > width or (len(row) < width and (min_width is None or len(row) < min_width)):
                drop("rows of the wrong width (program output inside the CSV)")
                continue
            rows.add(row + [""] * (width - len(row)))
    except csv.Error:
        _refuse_cut_short(src, lines.last, lines.n == header_n, width, min_width)
        raise
    _refuse_cut_short(src, lines.last, lines.n == header_n, width, min_width)
    launches, columns, notes = rows.result()
    if not launches:
        if lines.perm:
            raise _perm_error(src)
        said = f" (ncu said: {messages[0]})" if messages else ""
        raise UsageError(f"{src} lists no profiled kernel{said}; check the --kernel-name/-c filters and that the program launched kernels")
    return NcuTable(src, "details" if details else "raw", tuple(launches), tuple(columns), dropped, tuple(messages),
                    tuple(notes))


def _refuse_cut_short(src: str, last: str | None, header_is_last: bool, width: int, min_width: int | None) -> None:
    """Refuse an export that ends mid-row: ``head -c``, a full disk, an ncu run killed while writing or a
    partial copy leave its last line without a line end and short. Judging what is left would give a
    verdict on some of the kernels, or on a row with its last metrics missing.

    The last line (``last``, as read, with its line end) is cut when it has no line end and it is
    the header itself (``header_is_last``), leaves a quoted cell open, or is a quoted row (ncu quotes every cell) that
    ends with the comma before a cell or has fewer cells than a whole row has (``width``; on the
    details page ``min_width``, up to Metric Value). A last row that is whole but lacks its line
    end is read as usual.

    Raises:
        UsageError: the last line is cut (names the file, the cells it has and how many a row has).
    """
    if last is None or last.endswith(("\n", "\r")) or not last.strip():
        return
    line = last.strip()
    cells = next(csv.reader([line]), [])
    need = min_width if min_width is not None else width
    open_quote = line.count('"') % 2 == 1
    if header_is_last or open_quote or (line.startswith('"') and (line.endswith(",") or len(cells) < need)):
        where = "in its header" if header_is_last else f"mid-row (its last line has {len(cells)} of a row's {need} cells)"
        raise UsageError(f"{src} ends {where}: the export was cut short (ncu stopped while writing, a full disk "
                         "or a partial copy); export or copy it again, whole")


@dataclass(frozen=True)
class _IdColumns:
    """Where a row names its launch: the ID, process ID, kernel name, device index and device name columns
    (an index into the header; None where the export has no such column; ``id`` and ``name`` always exist)."""

    id: int
    pid: int | None
    name: int
    device: int | None
    device_name: int | None
    cc: int | None = None
    other: tuple[int, ...] = ()
    grid: int | None = None
    block: int | None = None

    @classmethod
    def of(cls, header: list[str]) -> _IdColumns:
        """The columns of ``header`` (a header with ID and Kernel Name columns, see :func:`_is_header`)."""
        other = tuple(i for i in (_find(header, (c,)) for c in _OTHER_ID_COLS) if i is not None)
        return cls(
            _find(header, _ID_COLS), _find(header, _PID_COLS), _find(header, _NAME_COLS),
            _find(header, _DEVICE_COLS), _find(header, _DEVICE_NAME_COLS), _find(header, _CC_COLS), other,
            _find(header, ("Grid Size",)), _find(header, ("Block Size",)),
        )

    def indices(self) -> set[int]:
        """The identity columns that exist (the rest of a raw-page row are metrics)."""
        ids = (self.id, self.pid, self.name, self.device, self.device_name, self.cc, *self.other)
        return {i for i in ids if i is not None}

    def key(self, row: list[str]) -> str:
        """The launch's id: ``<process id>:<ID>`` where the export has process ids, else the ID."""
        pid = row[self.pid].strip() if self.pid is not None else ""
        return f"{pid}:{row[self.id].strip()}" if pid else row[self.id].strip()

    def launch(self, row: list[str]) -> Launch:
        """A new :class:`Launch` (no metrics yet) for the launch ``row`` names; device ``"0"`` when unnamed."""
        dev = row[self.device].strip() if self.device is not None else ""
        dev_name = row[self.device_name].strip() if self.device_name is not None else ""
        cc = row[self.cc].strip() if self.cc is not None else ""
        dev_name = "" if dev_name.lower() in _NA else dev_name
        cc = "" if cc.lower() in _NA else cc
        grid = row[self.grid].strip() if self.grid is not None else ""
        block = row[self.block].strip() if self.block is not None else ""
        return Launch(id=self.key(row), name=row[self.name].strip(), device=dev or "0", device_name=dev_name or None,
                      cc=cc or None, grid=grid or None, block=block or None)


def _read_cell(la: Launch, metric: str, cell: str, unit: str) -> tuple[float | None, str | None]:
    """``(value in SI, dimension)`` of one metric cell; text that is no number (and not n/a) is kept in ``la.texts``."""
    v, dim = parse_value(cell, unit)
    if v is None and parse_number(cell) is None and cell.strip().lower() not in _NA:
        la.texts[metric] = cell.strip()
    return v, dim


class RowMetrics(Mapping[str, tuple[float | None, str | None]]):
    """One raw-page launch's metrics, ``name -> (value in SI or None, dimension or None)`` as a
    dict of them reads, held as one float per column (8 bytes; NaN where the cell is n/a).

    The column names (``index``: name -> position) and each column's dimension (``dims``, from
    the units row) are shared by every launch of the export; ``odd`` holds the few cells whose
    own unit (``"12.5 Mbyte"``) gives another dimension than their column's. A dict of tuples cost
    about 200 bytes a cell: a 37 MB ``--set full`` export held 1.2 GB.
    """

    __slots__ = ("_dims", "_index", "_odd", "_values")

    def __init__(self, index: dict[str, int], dims: list[str | None], values: array,
                 odd: dict[int, str | None] | None = None) -> None:
        self._index, self._dims, self._values, self._odd = index, dims, values, odd

    def _at(self, k: int) -> tuple[float | None, str | None]:
        v = self._values[k]
        if v != v:  # NaN: the cell is n/a (parse_number never gives NaN)
            return None, None
        return v, (self._odd.get(k, self._dims[k]) if self._odd else self._dims[k])

    def __getitem__(self, name: str) -> tuple[float | None, str | None]:
        return self._at(self._index[name])

    def get(self, name, default=None):
        k = self._index.get(name)
        return default if k is None else self._at(k)

    def __contains__(self, name) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def items(self):  # type: ignore[override]
        """``(name, (value, dimension))`` in column order (what a dict of them gives)."""
        return ((name, self._at(k)) for name, k in self._index.items())

    def __repr__(self) -> str:
        return f"RowMetrics({dict(self.items())!r})"


_NANS = array("d", [math.nan])


class _RawRows:
    """The launches of a raw page, one row at a time: the units row first (if any), then one launch a row."""

    def __init__(self, header: list[str]) -> None:
        self.header = header
        self.cols = _IdColumns.of(header)
        fixed = self.cols.indices()
        self.metric_cols = [i for i, col in enumerate(header) if i not in fixed and col]
        # Column name -> its place among the metric columns: a name twice keeps its first place and
        # its last cell, as assigning into a dict column by column did.
        self.index: dict[str, int] = {}
        for k, i in enumerate(self.metric_cols):
            self.index[header[i]] = k
        self.units: list[str] | None = None
        self.dims: list[str | None] = []
        self.notes: list[str] = []
        self.launches: list[Launch] = []

    def add(self, row: list[str]) -> None:
        """Read one row (padded to the header's width)."""
        cols = self.cols
        if self.units is None:
            if not row[cols.id].strip() and not row[cols.name].strip():
                self.units = [row[i].strip() for i in self.metric_cols]
                self.dims = [unit_scale(u)[1] for u in self.units]
                return
            self.units = [""] * len(self.metric_cols)
            self.dims = [None] * len(self.metric_cols)
            self.notes.append("the raw page has no units row: values are taken in ncu's base units (byte, nsecond)")
        la = cols.launch(row)
        values = _NANS * len(self.metric_cols)
        odd: dict[int, str | None] = {}
        header, units, dims = self.header, self.units, self.dims
        for k, i in enumerate(self.metric_cols):
            v, dim = _read_cell(la, header[i], row[i], units[k])
            if v is None:
                continue
            values[k] = v
            if dim != dims[k]:
                odd[k] = dim
        la.metrics = RowMetrics(self.index, self.dims, values, odd or None)
        self.launches.append(la)

    def result(self) -> tuple[list[Launch], list[str], list[str]]:
        return self.launches, self.header, self.notes


class _DetailsRows:
    """The launches of a details page, one (launch, metric) row at a time."""

    def __init__(self, header: list[str]) -> None:
        self.cols = _IdColumns.of(header)
        self.i_mn = _find(header, _METRIC_NAME_COLS)
        self.i_mu = _find(header, _METRIC_UNIT_COLS)
        self.i_mv = _find(header, _METRIC_VALUE_COLS)
        self.by_id: dict[str, Launch] = {}
        self.seen: dict[str, str] = {}

    def add(self, row: list[str]) -> None:
        """Read one row (padded to the header's width)."""
        key = self.cols.key(row)
        la = self.by_id.get(key)
        if la is None:
            la = self.by_id[key] = self.cols.launch(row)
        metric = row[self.i_mn].strip()
        if not metric:
            return
        metric = self.seen.setdefault(metric, metric)  # one string per metric name, shared by every launch
        unit = row[self.i_mu].strip() if self.i_mu is not None else ""
        v, dim = _read_cell(la, metric, row[self.i_mv], unit)
        # A metric may appear in two sections (e.g. Duration): the first value wins; one
        # with another unit (Memory Throughput in % and in byte/second) is kept as name|dim.
        old = la.metrics.get(metric)
        if old is None or old[0] is None:
            la.metrics[metric] = (v, dim)
        elif dim is not None and old[1] != dim and f"{metric}|{dim}" not in la.metrics:
            la.metrics[f"{metric}|{dim}"] = (v, dim)

    def result(self) -> tuple[list[Launch], list[str], list[str]]:
        for la in self.by_id.values():
            if la.device_name is None:
                for m in DEVICE_NAME_METRICS:
                    if la.texts.get(m) and la.texts[m].lower() not in _NA:
                        la.device_name = la.texts[m]
        return list(self.by_id.values()), list(self.seen), []


__all__ = ["DEVICE_NAME_METRICS", "Launch", "NcuTable", "RowMetrics", "parse_number", "parse_value", "read_ncu_csv", "unit_scale"]
