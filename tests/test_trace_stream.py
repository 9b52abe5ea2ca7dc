"""Reading a trace's event list in pieces (gpuwhy.importers.kineto.stream) gives exactly what parsing
the whole text gives: the same events in the same order, the same analysis, the same refusals."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.importers.kineto import analyze_trace, load_trace
from gpuwhy.importers.kineto.read import events_of, read_trace_text
from gpuwhy.importers.kineto.scan import Scan, scan
from gpuwhy.importers.kineto.stream import NotStreamable, event_pieces

HERE = Path(__file__).parent
REAL = HERE / "fixtures" / "real"
FIX = HERE / "fixtures" / "trace"
TRACES = sorted(p for p in REAL.glob("trace_*") if p.name.endswith((".json", ".json.gz")))
#: Piece sizes from one character (a cut after every event) to more than a whole fixture.
SIZES = (1, 37, 500, 4096, 1 << 16, 1 << 24)


def _events(text: str, size: int) -> list:
    out = []
    for piece in event_pieces(text, size):
        out.extend(piece)
    return out


def _tricky() -> str:
    """A real trace whose names hold the cut pattern, with nested lists of objects and trailing keys."""
    doc = json.loads(read_trace_text(REAL / "trace_streams.json"))
    for i, e in enumerate(doc["traceEvents"]):
        if i % 5 == 0:
            e["name"] = str(e.get("name", "")) + ['}, {', '"}, {"ph": "X"', '}\n,\n{', '[{}, {}]', ']}'][i % 4]
        if i % 7 == 0 and isinstance(e.get("args"), dict):
            e["args"]["nested"] = [{"a": 1}, {"b": [{"c": 2}, {}]}, "}, {"]
    doc["after"] = [{"x": 1}, {"y": [{"z": 2}]}] * 50
    return json.dumps(doc, indent=1)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_pieces_hold_the_events_of_the_whole_text(path):
    text = read_trace_text(path)
    whole = events_of(json.loads(text))
    for size in SIZES:
        assert _events(text, size) == whole


@pytest.mark.parametrize("size", SIZES)
def test_cuts_inside_strings_and_nested_objects_are_caught(size):
    text = _tricky()
    assert _events(text, size) == json.loads(text)["traceEvents"]
    compact = json.dumps(json.loads(text))
    assert _events(compact, size) == json.loads(compact)["traceEvents"]


def test_a_bare_event_list_and_odd_whitespace():
    ev = json.loads(read_trace_text(REAL / "trace_matmul.json"))["traceEvents"]
    for text in (json.dumps(ev), json.dumps({"traceEvents": ev}, separators=(" \n,\t ", " : "))):
        for size in SIZES:
            assert _events(text, size) == ev


@pytest.mark.parametrize("text", [
    '{"traceEvents": [{"ph": "X"}], "traceEvents": [{"ph": "i"}]}',  # json keeps the last: parse it whole
    '{"traceEvents": [{"ph": "X"}, {"ph": "X"}]} extra',
    '{"traceEvents": [{"ph": "X"}, {"ph": "X"},]}',
    '{"traceEvents": [{"ph": "X"}, {"ph": "X"',
    '\ufeff{"traceEvents": [{"ph": "X"}]}',
    '[]',
    '[[1, 2], [3, 4]]',
    '{"hello": [{"ph": "X"}, {"ph": "X"}]}',
    '{"traceEvents": {"ph": "X"}}',
    '{"traceEvents": [{"ph": X}, {"ph": "X"}]}',
])
def test_what_is_not_plain_is_left_to_the_whole_parse(text):
    for size in (1, 1 << 16):
        with pytest.raises(NotStreamable):
            _events(text, size)


def test_scanning_piece_by_piece_equals_one_scan():
    text = read_trace_text(REAL / "trace_dataloader.json")
    one = scan(events_of(json.loads(text)))
    s = Scan()
    for piece in event_pieces(text, 300):
        scan(piece, s)
    assert s.events == one.events and s.runtime == one.runtime and s.host_bad_ts == one.host_bad_ts
    for f in ("g_ts", "g_dur", "g_name", "g_corr", "r_ts", "r_dur", "r_name", "r_corr", "r_thread",
              "h_ts", "h_dur", "h_name", "h_kind", "h_thread"):
        assert list(getattr(s, f)) == list(getattr(one, f)), f
    for f in ("names", "r_names", "h_names", "threads", "thread_pid", "corr_runtime", "flow_start", "flow_end",
              "ext_flops", "dropped", "wait_stream"):
        assert getattr(s, f) == getattr(one, f), f


@pytest.mark.parametrize("path", TRACES + sorted(FIX.glob("real_*.json*")), ids=lambda p: p.name)
def test_load_trace_in_pieces_equals_the_analysis_of_the_whole_json(path):
    whole = analyze_trace(json.loads(read_trace_text(path)), source=str(path))
    assert load_trace(path).to_dict() == whole.to_dict()


def test_tricky_text_through_load_trace(tmp_path):
    p = tmp_path / "tricky.pt.trace.json.gz"
    text = _tricky()
    p.write_bytes(gzip.compress(text.encode()))
    assert load_trace(p).to_dict() == analyze_trace(json.loads(text), source=str(p)).to_dict()


@pytest.mark.parametrize("text, match", [
    ('{"traceEvents": [{"ph": "X"}, {"ph": "X"', "not valid JSON"),
    ('{"traceEvents": [{"ph": "X"}]} extra', "not valid JSON"),
    ('[[1, 2], [3, 4]]', "list of lists"),
    ('{"hello": 1}', "no 'traceEvents'"),
    ("[" * 100_000, "nested too deeply"),
])
def test_refusals_are_those_of_the_whole_parse(tmp_path, text, match):
    p = tmp_path / "t.json"
    p.write_text(text)
    with pytest.raises(UsageError, match=match):
        load_trace(p)


def test_odd_values_are_read_or_dropped_never_a_crash():
    # Integers beyond float range, text, true/false, objects and lists where numbers, names and ids go.
    huge = 10 ** 400
    base = {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 100.0, "dur": 5.0, "args": {}}
    odd = [
        dict(base, ts=huge), dict(base, dur=huge), dict(base, ts=True), dict(base, dur=False), dict(base, ts="120.5"),
        dict(base, ts="inf"), dict(base, tid=[1]), dict(base, tid={"a": 1}), dict(base, name=None), dict(base, cat=[1]),
        dict(base, args=[1]), dict(base, args={"flops": "1e9", "External id": [2]}),
        {"ph": "X", "cat": "overhead", "name": "Lazy Function Loading", "ts": 1.0, "dur": huge},
        {"ph": "s", "cat": "ac2g", "id": 1, "ts": huge, "pid": 1, "tid": 1},
        {"ph": "f", "cat": "ac2g", "id": [1], "ts": 101.0, "pid": {}, "tid": 1},
        {"ph": "i", "name": "Record Window End", "ts": huge},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 110.0, "dur": huge, "args": {"device": [0]}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 120.0, "dur": 2.0,
         "args": {"device": 0, "stream": {"s": 1}, "correlation": [5], "External id": {}}},
        5, "text", None, [1, 2],
    ]
    ev = [dict(base, ts=100.0 + i) for i in range(5)] + odd
    one = scan(ev)
    assert one.host_bad_ts == 3  # 10**400, true and "inf" are no timestamps
    assert list(one.h_dur)[:5] == [5.0] * 5 and 0.0 in list(one.h_dur)  # a bad duration reads as 0
    assert one.dropped["not an event object"] == 4
    text = json.dumps({"traceEvents": ev}).replace('"ts": ' + str(huge), '"ts": 1' + "0" * 400)
    s = Scan()
    for piece in event_pieces(text, 1):
        scan(piece, s)
    assert list(s.h_ts) == list(one.h_ts) and s.host_bad_ts == one.host_bad_ts and s.dropped == one.dropped
    r = analyze_trace({"traceEvents": ev})
    assert r.devices and r.devices[0].kernels == 1
