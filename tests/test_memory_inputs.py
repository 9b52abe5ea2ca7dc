"""Reading big inputs holds a bounded part of them (issue 31: a 37 MB ncu export held 1.2 GB,
a 150 MB trace 325 MB). The whole-process figures are benchmarks/memory_inputs.py's; here the
Python allocations of the readers themselves are bounded, on inputs made of committed real rows."""

from __future__ import annotations

import csv
import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pytest

from gpuwhy.importers.kineto import read_timeline
from gpuwhy.importers.kineto.read import events_of
from gpuwhy.importers.kineto.stream import event_pieces
from gpuwhy.importers.ncu import parse_value, read_ncu_csv, unit_scale
from gpuwhy.importers.ncu.read import RowMetrics

REAL = Path(__file__).parent / "fixtures" / "real"
NCU = Path(__file__).parent / "fixtures" / "ncu"


def _peak(fn, *args):
    """``(result, peak bytes Python allocated while fn ran)``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn(*args)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _big_ncu(path: Path, copies: int) -> int:
    """The real ``--set full`` raw export (2,238 columns) with its 8 launch rows written ``copies`` times."""
    lines = (REAL / "ncu_full_raw.csv").read_text().splitlines(keepends=True)
    head = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    with open(path, "w", newline="") as fh:
        fh.writelines(lines[:head + 2])
        for k in range(copies):
            for row in lines[head + 2:]:
                cells = next(csv.reader([row]))
                cells[0] = str(k * 8 + int(cells[0]))
                fh.write(",".join(f'"{c}"' for c in cells) + "\n")
    return path.stat().st_size


def test_a_big_raw_export_is_held_in_about_its_own_size(tmp_path):
    sizes, peaks = [], []
    for copies in (4, 20):  # 32 and 160 launches of 2,238 columns
        p = tmp_path / f"big{copies}.csv"
        sizes.append(_big_ncu(p, copies))
        table, peak = _peak(read_ncu_csv, p)
        peaks.append(peak)
        assert len(table.launches) == 8 * copies
    # What each further row costs: a dict of (value, unit) tuples per cell held about 30x the
    # file, and the text and its rows twice more; one float per cell is about the row's text.
    grows = (peaks[1] - peaks[0]) / (sizes[1] - sizes[0])
    assert grows < 1.5, grows
    assert peaks[1] < 2.5 * sizes[1], (peaks, sizes)
    small = read_ncu_csv(REAL / "ncu_full_raw.csv")
    assert dict(table.launches[8].metrics.items()) == dict(small.launches[0].metrics.items())


@pytest.mark.parametrize("name", ["raw_units_prefixed.csv", "raw_basic.csv", "raw_na.csv", "raw_no_units_row.csv"])
def test_raw_metrics_read_as_the_dict_of_each_cell_and_its_columns_unit(name):
    rows = list(csv.reader((NCU / name).read_text().splitlines()))
    rows = [r for r in rows[next(i for i, r in enumerate(rows) if r[:1] == ["ID"]):] ]
    rows = [r for r in rows if len(r) == len(rows[0])]
    header = [h.strip() for h in rows[0]]
    units = rows[1] if not rows[1][0].strip() else [""] * len(header)
    data = rows[2:] if units is rows[1] else rows[1:]
    table = read_ncu_csv(NCU / name)
    assert len(table.launches) == len(data)
    ids = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
           "Grid Size", "Device", "CC", "device__attribute_display_name"}
    for la, row in zip(table.launches, data):
        assert isinstance(la.metrics, RowMetrics)
        want = {h: parse_value(c, u) for h, c, u in zip(header, row, units) if h not in ids}
        assert dict(la.metrics) == want and la.metrics == want and len(la.metrics) == len(want)
        for h, v in want.items():
            assert h in la.metrics and la.metrics[h] == v and la.metrics.get(h) == v
        assert "no such metric" not in la.metrics and la.metrics.get("no such metric", 7) == 7


def test_a_cell_with_its_own_unit_keeps_its_dimension(tmp_path):
    p = tmp_path / "own_unit.csv"
    p.write_text('"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum"\n'
                 '"","","Mbyte","usecond"\n'
                 '"0","k","2 second","n/a"\n"1","k","3","5"\n')
    a, b = read_ncu_csv(p).launches
    assert a.metrics["dram__bytes.sum"] == (2.0, "time") and a.metrics["gpu__time_duration.sum"] == (None, None)
    assert b.metrics["dram__bytes.sum"] == (3e6, "bytes") and b.metrics["gpu__time_duration.sum"] == (pytest.approx(5e-6), "time")
    assert unit_scale("Mbyte") == (1e6, "bytes")


def _big_trace(path: Path, copies: int, gz: bool = False) -> int:
    """The real trace_overhead.json with its timed events written ``copies`` times, each shifted in time."""
    doc = json.loads((REAL / "trace_overhead.json").read_text())
    events = doc.pop("traceEvents")
    out = []
    for k in range(copies):
        for e in events:
            if e.get("ph") == "M" and k:
                continue
            e = dict(e)
            if "ts" in e and e.get("ph") != "M":
                e["ts"] = float(e["ts"]) + k * 50_000.0
            out.append(e)
    doc["traceEvents"] = out
    text = json.dumps(doc)
    if gz:
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    else:
        path.write_text(text)
    return len(text)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_big_trace_is_read_a_window_at_a_time(tmp_path, gz):
    sizes, peaks = [], []
    for copies in (6, 18):  # 13,000 and 40,000 events, 3 and 10 MB of text
        p = tmp_path / (f"big{copies}.json.gz" if gz else f"big{copies}.json")
        sizes.append(_big_trace(p, copies, gz))
        timeline, peak = _peak(read_timeline, p)
        peaks.append(peak)
        assert len(timeline.gpu_start) == copies * len(read_timeline(REAL / "trace_overhead.json").gpu_start)
    # What each further byte of text costs: the whole text was held, and its bytes beside it while
    # it was decoded (over 2 bytes a byte). Now a window of about a MiB and one piece whatever the
    # size, and the scan's arrays and tables, which grow with the events.
    grows = (peaks[1] - peaks[0]) / (sizes[1] - sizes[0])
    assert grows < 0.6, grows


@pytest.mark.parametrize("chunk", [1, 5, 64, 4096, 1 << 20])
@pytest.mark.parametrize("piece", [1, 300, 1 << 16])
def test_a_stream_read_in_any_chunks_gives_the_events_of_the_whole_text(chunk, piece):
    from tests.test_trace_stream import _tricky

    for text in (_tricky(), (REAL / "trace_one_kernel.json").read_text(), json.dumps([{"ph": "X", "ts": 1}] * 50)):
        got = [e for p in event_pieces(io.StringIO(text), piece, chunk) for e in p]
        assert got == events_of(json.loads(text))
