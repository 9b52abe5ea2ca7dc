"""The timeline of `gpuwhy run`: intervals to bins (model/timeline.py) with figures worked out by
hand, a small trace built here binned cause by cause, and the real H200 traces, whose bins
must add up to each bin's length and to the budget's shares."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuwhy.api.run import RunResult, budget_of, timeline_json, timeline_of
from gpuwhy.importers.kineto import analyze_trace, read_timeline
from gpuwhy.importers.timeline.activities import crop
from gpuwhy.importers.timeline.analyze import analyze
from gpuwhy.importers.timeline.results import CAUSE_LABELS
from gpuwhy.importers.timeline.window import choose_window
from gpuwhy.model.timeline import bins as T
from gpuwhy.verdict.causes import Cause

REAL = Path(__file__).parent / "fixtures" / "real"
US = 1e-6


# --------------------------------------------------------------------------- model/timeline.py


def test_bin_count_is_capped_and_never_below_10_us():
    # 160 bins of 10 us need 1.6 ms; below that, one bin per whole 10 us
    assert T.bin_count(1.6e-3) == 160 and T.bin_count(1.0) == 160
    assert T.bin_count(1.59e-3) == 159  # 1.59 ms / 10 us = 159
    assert T.bin_count(20e-6) == 2 and T.bin_count(19.9e-6) == 1
    assert T.bin_count(3e-6) == 1  # never none
    assert T.bin_count(1.0, max_bins=40) == 40 and T.bin_count(1.0, max_bins=1) == 1
    assert T.bin_count(1.0, min_bin_s=0.5) == 2 and T.bin_count(1.0, min_bin_s=1e-12) == 160
    with pytest.raises(ValueError, match="min_bin_s > 0"):
        T.bin_count(1.0, min_bin_s=0.0)
    with pytest.raises(ValueError, match="positive number of seconds"):
        T.bin_count(0.0)
    with pytest.raises(ValueError, match="max_bins >= 1"):
        T.bin_count(1.0, max_bins=0)


def test_bin_edges_and_errors():
    assert T.bin_edges(0.0, 10.0, 4).tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]
    e = T.bin_edges(1000.0, 1001.0, 3)
    assert e[-1] == 1001.0 and e.size == 4  # the last edge is the end exactly
    assert T.bin_edges(2.0, 3.0, 1).tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match="empty range"):
        T.bin_edges(5.0, 5.0, 2)
    with pytest.raises(ValueError, match="at least one bin"):
        T.bin_edges(0.0, 1.0, 0)


def test_cover_holds_the_span_and_is_as_long_as_the_budget_window():
    assert T.cover(0, 100, 10, 90) == (0, 100)  # span inside: the window itself
    assert T.cover(0, 100, -5, 90) == (-5, 95)  # span starts earlier: 100 long from there
    assert T.cover(0, 100, 20, 110) == (10, 110)  # span ends later: 100 long, ending at the span's end
    assert T.cover(0, 100, -10, 120) == (-10, 120)  # span longer than the window: the span


def test_cut_pieces_by_hand():
    e = T.bin_edges(0.0, 10.0, 4)  # bins [0, 2.5) [2.5, 5) [5, 7.5) [7.5, 10]
    src, bins, lo, hi = T.cut(e, [1.0, 4.0, 9.0, 12.0, 5.0], [3.0, 4.0, 12.0, 13.0, 5.0 + 2.5])
    # [1, 3) -> [1, 2.5) in bin 0 and [2.5, 3) in bin 1; [4, 4) empty; [9, 12) clipped to [9, 10);
    # [12, 13) outside; [5, 7.5) exactly bin 2 (an end on an edge makes no empty piece in bin 3)
    assert src.tolist() == [0, 0, 2, 4]
    assert bins.tolist() == [0, 1, 3, 2]
    assert lo.tolist() == [1.0, 2.5, 9.0, 5.0] and hi.tolist() == [2.5, 3.0, 10.0, 7.5]
    # one interval over four bins, from inside the first to inside the last
    src, bins, lo, hi = T.cut(e, [2.0], [8.0])
    assert bins.tolist() == [0, 1, 2, 3] and (hi - lo).tolist() == [0.5, 2.5, 2.5, 0.5]
    assert T.overlap(e, [1.0, 9.0], [3.0, 12.0]).tolist() == [1.5, 0.5, 0.0, 1.0]
    assert T.per_bin(4, [3, 0, 3], [1.0, 2.0, 0.5]).tolist() == [2.0, 0.0, 0.0, 1.5]
    assert T.cut(e, [], [])[0].size == 0
    # ends on the edges of the range, and a piece in the last bin only
    src, bins, lo, hi = T.cut(e, [0.0, 7.5], [10.0, 10.0])
    assert src.tolist() == [0, 0, 0, 0, 1] and bins.tolist() == [0, 1, 2, 3, 3]
    assert (hi - lo).tolist() == [2.5] * 5


def test_timeline_bins_totals_and_renames():
    tl = T.timeline([100.0, 110.0, 130.0], [4.0, 5.0], {"a": np.array([6.0, 0.0]), "b": np.array([0.0, 14.5]),
                                                       "none": np.zeros(2), "tiny": np.array([0.0, 0.5])})
    assert tl.start_us == 100.0 and tl.edges_s == pytest.approx((0.0, 10 * US, 30 * US))
    assert tl.window_s == pytest.approx(30 * US) and tl.n == 2
    assert list(tl.idle_s) == ["b", "a", "tiny"]  # largest first; a part with no time is left out
    assert T.timeline([2.0, 3.0], [1.0], {}, unit_s=1.0).start_us == 2e6  # edges in seconds: the start in us
    b0, b1 = tl.bins()
    assert b0.busy_s == pytest.approx(4 * US) and b0.idle_s == pytest.approx({"a": 6 * US})  # zero parts not listed
    assert b1.seconds == pytest.approx(20 * US) and b1.idle_s == pytest.approx({"b": 14.5 * US, "tiny": 0.5 * US})
    assert tl.totals() == pytest.approx({"busy": 9 * US, "b": 14.5 * US, "a": 6 * US, "tiny": 0.5 * US})
    merged = tl.renamed({"a": "x", "b": "x"})
    assert merged.totals() == pytest.approx({"busy": 9 * US, "x": 20.5 * US, "tiny": 0.5 * US})
    assert list(merged.idle_s) == ["x", "tiny"]


# --------------------------------------------------------------------------- a trace built here

PID = 77


def _rt(name, ts, dur, corr=None):
    ev = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": PID, "tid": PID, "ts": ts, "dur": dur, "args": {}}
    if corr is not None:
        ev["args"]["correlation"] = corr
    return ev


def _kern(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


#: Times (us) from T0. Kernels k1 10-40, k2 70-100, k3 120-150, launched at 0, 60 and 110. The gap 40-70
#: ends with a launch at 60, after the GPU went idle: all 30 us wait on the host to launch. A sync runs
#: 95-105 and returns inside the gap 100-120, before the launch at 110: the first 10 us of that gap
#: are the sync's (all of its time: none left to carry on), the 10 us from the launch call to k3's start
#: the host launch's.
T0 = 1000.0
SMALL = [_rt("cudaLaunchKernel", T0, 5, 1), _kern("k1", T0 + 10, 30, 1),
         _rt("cudaLaunchKernel", T0 + 60, 5, 2), _kern("k2", T0 + 70, 30, 2),
         _rt("cudaDeviceSynchronize", T0 + 95, 10),
         _rt("cudaLaunchKernel", T0 + 110, 5, 3), _kern("k3", T0 + 120, 30, 3)]


def _gpu(events, window_us, bins=None):
    from gpuwhy.importers.timeline import analyze as A

    if bins is None:
        return analyze_trace({"traceEvents": events}, timeline_us=window_us).devices[0]
    orig = A.gpu_timeline
    try:  # the same analysis with a bin count chosen by the test
        A.gpu_timeline = lambda *a, **k: orig(*a, bins=bins)
        return analyze_trace({"traceEvents": events}, timeline_us=window_us).devices[0]
    finally:
        A.gpu_timeline = orig


def test_small_trace_in_four_bins():
    # window 0-160 us in bins of 40 us. Before the first kernel (0-10) the launch call was running: launch
    # overhead; 40-70: 20 us issuing nothing in a 55 us stretch since the last launch call (dispatch) and the
    # launch; 100-110 the sync's, 110-120 the launch; after the last kernel (150-160) the host issued nothing
    # for 35 us and more: host work.
    d = _gpu(SMALL, (T0, T0 + 160), bins=4)
    tl = d.timeline
    assert tl.start_us == T0 and tl.edges_s == pytest.approx(tuple(x * US for x in (0, 40, 80, 120, 160)))
    assert tl.busy_s == pytest.approx(tuple(x * US for x in (30, 10, 20, 30)))  # 10-40 | 70-80 | 80-100 | 120-150
    want = {"launch_overhead": (10, 30, 10, 0), "host_sync": (0, 0, 10, 0), "host_work": (0, 0, 0, 10)}
    for k, v in want.items():
        assert tl.idle_s[k] == pytest.approx(tuple(x * US for x in v)), k
    assert set(tl.idle_s) == set(want)
    # the GPU's span (10-150) holds the inner gaps only; the window's diagnosis holds the edges too
    assert d.idle.cause_s("launch_overhead") == pytest.approx(40 * US) and d.idle.cause_s("host_sync") == pytest.approx(10 * US)
    assert {s.cause.value: round(s.seconds / US, 9) for s in d.diagnosis.shares} == {
        "launch_overhead": 50, "host_sync": 10, "host_work": 10, "kernels": 90}


def test_small_trace_in_sixteen_bins_puts_the_sync_first_in_its_gap():
    tl = _gpu(SMALL, (T0, T0 + 160), bins=16).timeline  # bins of 10 us
    sync = np.asarray(tl.idle_s["host_sync"]) / US
    launch = np.asarray(tl.idle_s["launch_overhead"]) / US
    assert sync.tolist() == pytest.approx([0] * 10 + [10] + [0] * 5)  # 100-110
    assert launch.tolist() == pytest.approx([10] + [0] * 3 + [10, 10, 10] + [0] * 4 + [10] + [0] * 4)  # 0-10, 40-70, 110-120
    assert (np.asarray(tl.idle_s["host_work"]) / US).tolist() == pytest.approx([0] * 15 + [10])  # 150-160
    for b in tl.bins():  # every bin is full: busy + idle = 10 us
        assert b.busy_s + sum(b.idle_s.values()) == pytest.approx(10 * US)


def test_small_trace_window_wider_than_a_bin_edge_count():
    # a window of 165 us in 4 bins of 41.25 us: a bin edge inside the gap 40-70 splits it (1.25 + 28.75)
    tl = _gpu(SMALL, (T0, T0 + 165), bins=4).timeline
    assert tl.idle_s["launch_overhead"][0] == pytest.approx((10 + 1.25) * US)
    assert tl.idle_s["launch_overhead"][1] == pytest.approx(28.75 * US)
    assert tl.idle_s["host_work"][3] == pytest.approx(15 * US)  # 150-165
    assert sum(tl.busy_s) == pytest.approx(90 * US)


def test_no_timeline_of_no_length():
    # one kernel recorded with dur 0 in a window of no length: nothing to bin (and no budget: no GPU time)
    ev = [_rt("cudaLaunchKernel", T0, 5, 1), _kern("k1", T0 + 10, 0, 1)]
    assert _gpu(ev, (T0 + 10, T0 + 10)).timeline is None
    tl = _gpu(ev, (T0 + 10, T0 + 11)).timeline  # 1 us of window: one bin, the host issuing nothing
    assert tl.n == 1 and tl.totals() == pytest.approx({"busy": 0.0, "host_work": 1 * US})


def test_no_timeline_unless_asked():
    d = analyze_trace({"traceEvents": SMALL}).devices[0]
    assert d.timeline is None
    assert "timeline" not in d.to_dict()  # `gpuwhy trace --json` is unchanged
    assert "timeline" not in analyze_trace({"traceEvents": SMALL}, timeline_us=(T0, T0 + 160)).devices[0].to_dict()


# --------------------------------------------------------------------------- the real H200 traces

TRACES = sorted(p.name for p in REAL.glob("trace_*.json*"))


def _run_of(name, **window):
    tl = read_timeline(REAL / name)
    w = choose_window(tl, from_first_gpu=True, **window)
    rep = analyze(crop(tl, w.start_us, w.end_us), top=100_000, timeline_us=(w.start_us, w.end_us))
    gpu, budget, _ = budget_of(rep, w)
    return RunResult(None, w, rep, gpu, budget, ())


def _check_adds_up(r):
    b = r.budget
    tl = timeline_of(r)
    assert tl.window_s == pytest.approx(b.window_s, rel=1e-12)
    for x in tl.bins():  # each bin's parts add up to its length
        assert x.busy_s + sum(x.idle_s.values()) == pytest.approx(x.seconds, rel=1e-9, abs=1e-15)
    tot = tl.totals()
    idle = {CAUSE_LABELS[c.value]: s for c, s in r.gpu.figures.idle.items() if s > 0}
    rest = b.window_s - sum(idle.values()) - b.busy_s
    # What the diagnosis leaves unexplained beyond the gaps is float64 rounding: its busy time sums the events'
    # ``dur``, the timeline (and the idle split) uses the union of ``[ts, ts + dur)``, and ``ts + dur`` near 5e12 us
    # rounds to steps of spacing(5e12) = 0.00098 us: at most one step per GPU event (trace_overhead.json: 420
    # events, 0.12 us).
    n_events = r.gpu.kernels + r.gpu.memcpys + r.gpu.memsets
    assert abs(rest) <= n_events * float(np.spacing(r.window.end_us)) * US
    assert set(idle) == set(tot) - {"busy"}
    for name, s in idle.items():
        assert tot[name] == pytest.approx(s, rel=1e-9), name
    assert tot["busy"] == pytest.approx(b.busy_s + rest, rel=1e-9)
    # the budget's idle shares are those (a pageable-copy share adds the copies' own busy time)
    for s in b.shares:
        if not s.busy and s.cause is not Cause.PAGEABLE_COPY and s.cause is not Cause.UNEXPLAINED:
            assert s.seconds == pytest.approx(r.gpu.figures.idle[s.cause], rel=1e-9)
        if s.cause is not Cause.UNEXPLAINED:  # each share's idle part is the idle time put down to its cause
            assert s.seconds - s.gpu_busy_s == pytest.approx(r.gpu.figures.idle.get(s.cause, 0.0), rel=1e-9, abs=1e-15)
    return tl


@pytest.mark.parametrize("name", TRACES)
def test_real_trace_bins_add_up_to_the_budget(name):
    r = _run_of(name)
    if r.budget is None:
        pytest.skip(f"{name}: no GPU work")
    tl = _check_adds_up(r)
    assert tl.n == T.bin_count(r.budget.window_s)


@pytest.mark.parametrize("name, window", [("trace_item_heavy.json.gz", {"steps": 5}),
                                          ("trace_h2d_pageable_pinned.json.gz", {"steps": 2}),
                                          ("trace_decode.json.gz", {"skip_first_s": 0.05}),
                                          ("trace_dataloader.json", {"steps": 2})])
def test_real_trace_cropped_windows_add_up(name, window):
    _check_adds_up(_run_of(name, **window))


def test_real_dataloader_timeline_json():
    r = _run_of("trace_dataloader.json")
    doc = timeline_json(r)
    assert doc["causes"][0] == CAUSE_LABELS["data_loading"]  # the largest share first
    assert set(doc["causes"]) <= set(CAUSE_LABELS.values())
    bins = doc["bins"]
    assert len(bins) == 160 and doc["bin_s"] == pytest.approx(doc["window_s"] / 160)
    assert bins[0]["start_s"] == 0.0 and bins[-1]["end_s"] == pytest.approx(doc["window_s"])
    assert all(set(b["idle_s"]) == set(doc["causes"]) for b in bins)
    data = sum(b["idle_s"][CAUSE_LABELS["data_loading"]] for b in bins)
    assert data == pytest.approx(r.budget.share("data_loading").seconds)
    assert timeline_json(RunResult(None, r.window, r.trace, None, None, ())) is None
