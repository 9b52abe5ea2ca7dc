"""The tracer's own host cost, and a sync's lead carried to the host windows after it (issue 28).

Hand-built torch.profiler traces with every figure worked by hand; the measurement of the cost
runs against a stand-in for torch and its profiler (no GPU here).
"""

from __future__ import annotations

import gzip
import json
import sys
import types

import numpy as np
import pytest

from gpuwhy.engine import tracer_cost
from gpuwhy.importers.kineto import analyze_trace, host_events, read_timeline
from gpuwhy.importers.kineto.read import tracer_event_us
from gpuwhy.importers.timeline.gaps import carry_lead
from gpuwhy.verdict.engine import floor_after
from test_torch_trace_causes import US, kern, op, rt



def _op(ts, dur=0.5):
    return op("aten::glue", ts, dur)


# Times (us). The host launches k1 at 0 and k2 at 90, with 20 small operators recorded between (10-80:
# what a tracer slows), and blocks in a sync 95-210; the GPU runs k1 5-105 and k2 105-205. After the
# sync the host runs Python until it launches k3 at 400 (k3 405-435).
T = 1000.0
EVENTS = ([rt("cudaLaunchKernel", T, 5, 1), _op(T + 1), kern(T + 5, 100, 1, name="k1")]
          + [_op(T + 10 + 3.5 * i) for i in range(20)]
          + [rt("cudaLaunchKernel", T + 90, 5, 2), _op(T + 91), kern(T + 105, 100, 2, name="k2"),
             rt("cudaDeviceSynchronize", T + 95, 115),
             rt("cudaLaunchKernel", T + 400, 5, 3), kern(T + 405, 30, 3, name="k3")])


def _shares(doc):
    d = analyze_trace(doc).devices[0].diagnosis
    return {s.cause.value: round(s.seconds / US, 6) for s in d.shares}, d


def test_without_the_tracer_cost_a_sync_gets_its_own_wait():
    # gap 205-405: the host window 205-400 starts with the sync's 115 us, then Python 320-400 (80 us,
    # in a stretch 210-400 that issued nothing: host work), then 400-405 the launch.
    shares, d = _shares({"traceEvents": EVENTS})
    assert shares["host_sync"] == pytest.approx(115.0)
    assert shares["host_work"] == pytest.approx(80.0)
    assert d.tracer_s == 0.0


def test_the_tracer_cost_gives_a_sync_the_wait_a_plain_run_could_have():
    # 2 us per recorded event. Before the sync's start (95) the trace holds 24 host events (k1's launch and
    # operator, the 20 operators, k2's launch and operator): a plain run reaches the sync up to 48 us
    # sooner, and the GPU, busy from k1's launch with 200 us of work queued, ends no sooner: the wait
    # could be 200 - 95 + 48 = 153 us (k1 term: launch 0, all 200 us after it, 24 events); k2's term
    # (launched at 90 with 100 us after it, 2 events since) is 100 - 5 + 4 = 99. So the sync takes
    # 153 us of the host window and host work keeps 195 - 153 = 42 us.
    doc = {"traceEvents": EVENTS, "gpuwhy_tracer": {"event_us": 2.0}}
    shares, d = _shares(doc)
    assert shares["host_sync"] == pytest.approx(153.0)
    assert shares["host_work"] == pytest.approx(42.0)
    # the window (k1's start to k3's end: 5-435) holds 25 events from 5 on (k1's launch at 0 is before it)
    n = sum(1 for e in EVENTS if e["cat"] != "kernel" and T + 5 <= e["ts"] < T + 435)
    assert d.tracer_s == pytest.approx(2.0 * n * US)


def test_a_tracer_cost_never_gives_a_sync_more_than_the_work_it_waited_on():
    # 1000 us per event: the bound is capped at the 200 us of work launched before the sync
    doc = {"traceEvents": EVENTS, "gpuwhy_tracer": {"event_us": 1000.0}}
    shares, _ = _shares(doc)
    assert shares["host_sync"] == pytest.approx(195.0)  # min(200, the 195 us host window)


def test_carry_lead_hands_the_rest_of_a_lead_to_the_next_windows_until_a_new_one():
    lead = np.array([30.0, 0.0, 0.0, 5.0, 0.0])
    window = np.array([10.0, 15.0, 20.0, 10.0, 10.0])
    assert carry_lead(lead, window).tolist() == pytest.approx([10, 15, 5, 5, 0])
    assert carry_lead(np.array([0.0, 0.0]), np.array([3.0, 4.0])).tolist() == [0.0, 0.0]  # no sync: nothing
    assert carry_lead(np.zeros(0), np.zeros(0)).size == 0


def test_a_sync_gates_the_host_work_after_the_small_kernels_it_launched():
    # A sync 0-100 (its wait: 100 us) returns; the host launches a 20 us kernel at 101 (GPU 105-125), then
    # runs Python until 300. Gaps: 100-105, whose host window ends at the launch call (101): 1 us the
    # sync's, 4 us the launch; and 125-305: the sync's remaining 99 us come first, then host work (the
    # stretch 106-300 issued nothing) 224-300, then the launch 300-305.
    ev = [rt("cudaLaunchKernel", T - 5, 4, 1), kern(T, 100, 1, name="k0"), rt("cudaDeviceSynchronize", T, 100),
          rt("cudaLaunchKernel", T + 101, 5, 2), kern(T + 105, 20, 2, name="k1"),
          rt("cudaLaunchKernel", T + 300, 5, 3), kern(T + 305, 10, 3, name="k2")]
    shares, _ = _shares({"traceEvents": ev})
    assert shares["host_sync"] == pytest.approx(100.0)
    assert shares["host_work"] == pytest.approx(175.0 - 99.0)  # 125-300 less the sync's 99


@pytest.mark.parametrize("gpu, host, tracer, want", [
    (5.0, 3.0, 0.0, 5.0),   # the GPU's time holds the floor
    (2.0, 3.0, 0.0, 3.0),   # the host's
    (2.0, 3.0, 2.0, 2.0),   # a plain run's host side may be 2 s shorter: 1 s, under the GPU's 2 s
    (0.0, 1.0, 2.0, 0.0),   # nothing left that the tracer did not add
])
def test_the_floor_after_a_fix_allows_for_the_tracer_on_the_host_side(gpu, host, tracer, want):
    assert floor_after(gpu, host, tracer) == pytest.approx(want)
    if tracer == 0.0:
        assert floor_after(gpu, host) == pytest.approx(want)  # no tracer figure: the host side whole


@pytest.mark.parametrize("bad", [(-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0), (float("nan"), 0.0, 0.0)])
def test_the_floor_refuses_a_negative_figure(bad):
    with pytest.raises(ValueError, match="must be >= 0"):
        floor_after(*bad)


@pytest.mark.parametrize("value, want", [
    ({"event_us": 2.5}, 2.5), ({"event_us": 0}, 0.0), ({"event_us": -1}, None), ({"event_us": 1e9}, None),
    ({"event_us": "2"}, None), ({"event_us": True}, None), ({"event_us": float("nan")}, None), ("x", None), (None, None),
    ('{"event_us": 2}', 2.0), ("[1, 2]", None),
])
def test_tracer_event_us_takes_only_a_plausible_number(value, want):
    assert tracer_event_us(value) == want


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("as_string", [False, True])
def test_the_figure_is_read_from_a_trace_files_header(tmp_path, gz, as_string):
    cost = {"event_us": 3.25, "events": 2.0}
    doc = {"schemaVersion": 1, "gpuwhy_tracer": json.dumps(cost) if as_string else cost, "traceEvents": EVENTS}
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    assert read_timeline(path).tracer_event_us == 3.25
    assert host_events(path) == sum(1 for e in EVENTS if e["cat"] != "kernel")


def test_a_trace_without_the_figure_has_none(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": EVENTS}))
    assert read_timeline(path).tracer_event_us is None


class _Clock:
    """perf_counter for the stand-in: each add_ costs 5 us alone and 9 us while the profiler runs."""

    def __init__(self):
        self.t = 0.0
        self.tracing = False

    def __call__(self):
        return self.t


def _fake_torch(monkeypatch, clock):
    class X:
        def add_(self, v):
            clock.t += 9e-6 if clock.tracing else 5e-6

    torch = types.ModuleType("torch")
    torch.zeros = lambda *a, **k: X()
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(tracer_cost.time, "perf_counter", clock)


def test_measure_takes_the_difference_per_recorded_event(monkeypatch):
    monkeypatch.setenv(tracer_cost.ENV, "1")
    clock = _Clock()
    _fake_torch(monkeypatch, clock)

    class Prof:
        def start(self):
            clock.tracing = True

        def stop(self):
            clock.tracing = False

        def export_chrome_trace(self, path):
            open(path, "w").write("{}")

    # 2 events per launch: 300 x 2 per loop, 8 loops recorded (one warm-up and 7 timed)
    got = tracer_cost.measure(Prof, lambda path: 2 * 300 * 8)
    assert got["events"] == pytest.approx(600)
    assert got["plain_us"] == pytest.approx(1500) and got["traced_us"] == pytest.approx(2700)
    assert got["event_us"] == pytest.approx(2.0)  # (2700 - 1500) / 600


def test_measure_gives_none_when_switched_off_or_failing(monkeypatch):
    clock = _Clock()
    _fake_torch(monkeypatch, clock)

    class Broken:
        def start(self):
            raise RuntimeError("CUPTI_ERROR_NOT_INITIALIZED")

    monkeypatch.setenv(tracer_cost.ENV, "1")
    assert tracer_cost.measure(Broken, lambda p: 1) is None
    for off in ("0", "", "yes"):  # off unless asked for with 1
        monkeypatch.setenv(tracer_cost.ENV, off)
        assert tracer_cost.measure(lambda: pytest.fail("measured although off"), lambda p: 1) is None
    monkeypatch.delenv(tracer_cost.ENV)
    assert tracer_cost.measure(lambda: pytest.fail("measured although off"), lambda p: 1) is None


def test_the_lead_is_reckoned_from_the_first_sync_of_a_pair():
    # `.cpu()` of a CUDA tensor: the copy's call waits (95-210), then a stream sync returns at once (211-212):
    # the host arrived at the first; the figures are those of the single sync above.
    ev = EVENTS + [rt("cudaStreamSynchronize", T + 211, 1)]
    shares, _ = _shares({"traceEvents": ev, "gpuwhy_tracer": {"event_us": 2.0}})
    assert shares["host_sync"] == pytest.approx(153.0)


# --------------------------------------------------------------------------- the engine's ceilings

def _window(tracer_s, kernels=None, host_work=2.0):
    from gpuwhy.verdict.causes import Cause
    from gpuwhy.verdict.figures import KernelFigure, WindowFigures

    ks = kernels or (KernelFigure("k", 8.0 - host_work, 10, 0.5),)
    return WindowFigures(10.0, {Cause.HOST_SYNC: 2.0, Cause.HOST_WORK: host_work}, kernels=ks, tracer_s=tracer_s)


def test_without_a_tracer_figure_the_host_side_counts_whole():
    # 10 s: syncs 2, host work 2, kernels 6. remove_syncs leaves GPU 6 s, host 2 s: 10 / 6; move_host_work the same
    from gpuwhy.verdict.engine import diagnose

    d = diagnose(_window(0.0))
    assert d.tracer_s == 0.0 and d.to_dict()["tracer_s"] == 0.0
    assert d.remedy("remove_syncs").ceiling_x == pytest.approx(10 / 6)
    assert d.remedy("move_host_work").ceiling_x == pytest.approx(10 / 6)
    # host work 5 s, kernels 3 s: remove_syncs leaves host 5 s over GPU 3 s: 10 / 5
    assert diagnose(_window(0.0, host_work=5.0)).remedy("remove_syncs").ceiling_x == pytest.approx(2.0)


def test_the_tracer_time_raises_a_ceiling_down_to_the_gpu_floor():
    # host work 5 s, syncs 2 s, kernels 3 s. A plain run's host side may be 1 s shorter: remove_syncs leaves
    # host 5 - 1 = 4 s over GPU 3 s: 10 / 4; with 3 s of tracer time the GPU's 3 s hold: 10 / 3.
    from gpuwhy.verdict.engine import diagnose

    assert diagnose(_window(1.0, host_work=5.0)).remedy("remove_syncs").ceiling_x == pytest.approx(2.5)
    d = diagnose(_window(3.0, host_work=5.0))
    assert d.tracer_s == pytest.approx(3.0)
    assert d.remedy("remove_syncs").ceiling_x == pytest.approx(10 / 3)
    assert diagnose(_window(float("nan"), host_work=5.0)).tracer_s == 0.0  # a figure that is no number is not used
    assert diagnose(_window(-1.0, host_work=5.0)).remedy("remove_syncs").ceiling_x == pytest.approx(2.0)


def test_the_floor_leaves_out_the_busy_time_a_fix_removes():
    # A memory-bound kernel of 6 s at 50% of its roof: faster_kernels removes 3 s of busy time, leaving GPU 3 s
    # against host 4 s (syncs 2, host work 2): 10 / 4; with 6 s of tracer time the host side is gone: 10 / 3.
    from gpuwhy.verdict.engine import diagnose
    from gpuwhy.verdict.figures import KernelFigure

    k = (KernelFigure("k", 6.0, 10, 0.6, kind="elementwise", regime="memory", roof_pct=50.0, level="DRAM"),)
    assert diagnose(_window(0.0, k)).remedy("faster_kernels").ceiling_x == pytest.approx(2.5)
    d = diagnose(_window(6.0, k))
    assert d.remedy("faster_kernels").ceiling_x == pytest.approx(10 / 3)
    # the syncs' fix leaves all 6 s of busy time: 10 / 6, tracer or not
    assert d.remedy("remove_syncs").ceiling_x == pytest.approx(10 / 6)


def _copy(ts, dur, corr, kind="Pageable"):
    return {"ph": "X", "cat": "gpu_memcpy", "name": f"Memcpy HtoD ({kind} -> Device)", "pid": 0, "tid": 7, "ts": ts,
            "dur": dur, "args": {"device": 0, "stream": 7, "correlation": corr, "bytes": 1 << 20}}


@pytest.mark.parametrize("kind, want_pg, want_host", [("Pageable", 50.0, None), ("Pinned", None, 30.0)])
def test_staging_a_pageable_copy_while_the_gpu_is_busy_leads_like_a_sync(kind, want_pg, want_host):
    # k1 runs 10-310; the host stages a pageable copy in its call 20-120 (the copy itself runs 310-330, after
    # k1 on its stream) and launches k2 at 360 (k2 370-400). Gap 330-370: its host window 330-360, then 10 us
    # of launch. The host was held 100 us staging while the GPU was busy: pinned, it would have been ahead by
    # that much, so the window's 30 us are the pageable copy's (with the copy's own 20 us: 50 us), not host
    # work. A pinned copy's call holds nothing: the same window is host work (the stretch 120-360 issued
    # nothing for 240 us).
    ev = [rt("cudaLaunchKernel", T, 4, 1), kern(T + 10, 300, 1, name="k1"),
          rt("cudaMemcpyAsync", T + 20, 100, 2), _copy(T + 310, 20, 2, kind),
          rt("cudaLaunchKernel", T + 360, 4, 3), kern(T + 370, 30, 3, name="k2")]
    shares, _ = _shares({"traceEvents": ev})
    assert shares.get("pageable_copy") == (pytest.approx(want_pg) if want_pg else None)
    assert shares.get("host_work") == (pytest.approx(want_host) if want_host else None)
    assert shares["launch_overhead"] == pytest.approx(10.0)


# A second step after EVENTS: k3 launched at 400 (405-505) with five operators after it (405-425), a sync
# 430-510 waiting for it, Python until k4's launch at 700 (705-735); a third step: a sync that returns at once
# (740-740.5), Python until k5's launch at 900 (905-935).
TWO = EVENTS[:-2] + [
    rt("cudaLaunchKernel", T + 400, 5, 3), kern(T + 405, 100, 3, name="k3"), *[_op(T + 405 + 5 * i) for i in range(5)],
    rt("cudaDeviceSynchronize", T + 430, 80),
    rt("cudaLaunchKernel", T + 700, 5, 4), kern(T + 705, 30, 4, name="k4"),
    rt("cudaDeviceSynchronize", T + 740, 0.5),
    rt("cudaLaunchKernel", T + 900, 5, 5), kern(T + 905, 30, 5, name="k5")]


def test_each_sync_reckons_from_the_one_before_it():
    # Gap 505-705 follows the second sync (A = 430); the sync before it ended at 210 (P), so only k3 (launched
    # at 400 with its 100 us) counts: 400 - 200 (the work launched before it) - 2 x 25 (events before 400)
    # + 300 (the work launched up to A) - 430 + 2 x 31 (events before 430) = 82 us, above the sync's own 80.
    # Its window 505-700: 82 us the sync's, then host work (the stretch 510-700 issued nothing). Gap 735-905:
    # the third sync's 0.5 us, then host work 735.5-900 (in the stretch 740.5-900; 735-740 is dispatch).
    shares, _ = _shares({"traceEvents": TWO, "gpuwhy_tracer": {"event_us": 2.0}})
    assert shares["host_sync"] == pytest.approx(153.0 + 82.0 + 0.5)
    assert shares["host_work"] == pytest.approx(42.0 + (700 - 587) + (900 - 740.5))


def test_a_sync_is_never_given_more_than_the_work_launched_since_the_sync_before():
    # 1000 us an event: the first sync is capped at its 200 us of work (k1, k2; its window holds 195), the
    # second at k3's 100 us, the third at k4's 30 us (k4's launch at 700 is one event before the sync at 740)
    shares, _ = _shares({"traceEvents": TWO, "gpuwhy_tracer": {"event_us": 1000.0}})
    assert shares["host_sync"] == pytest.approx(195.0 + 100.0 + 30.0)


def test_host_windows_start_after_the_sync_and_the_pageable_lead():
    from gpuwhy.importers.timeline.gaps import Gaps, host_windows

    one = lambda x, dt=np.float64: np.asarray([x], dtype=dt)  # noqa: E731
    g = Gaps(g0=one(0.0), g1=one(100.0), inner=one(True, bool), nxt=one(1, np.int64), cls=one(0, np.int8),
             wl=one(90.0), sync=one(10.0), pageable_next=one(False, bool), warm_frac=one(0.0),
             after_graph=one(False, bool), prev_last=one(0, np.int64), waited_for=one(0, np.int8), pg_lead=one(20.0))
    a, b, h = host_windows(g, np.arange(1))
    assert (a.tolist(), b.tolist(), h.tolist()) == ([30.0], [90.0], [0])


def test_a_host_window_after_the_last_sync_has_no_lead_of_its_own():
    # EVENTS, then k3 launched at 400 (405-435) and k4 at 600 (605-635) with no sync between: the gap 435-605
    # has no sync since the one at 95-210, whose 153 us the window 205-400 used up; its window 435-600 is
    # host work (the stretch 405-600 issued nothing), 600-605 the launch.
    ev = EVENTS[:-2] + [rt("cudaLaunchKernel", T + 400, 5, 3), kern(T + 405, 30, 3, name="k3"),
                        rt("cudaLaunchKernel", T + 600, 5, 4), kern(T + 605, 30, 4, name="k4")]
    shares, _ = _shares({"traceEvents": ev, "gpuwhy_tracer": {"event_us": 2.0}})
    assert shares["host_sync"] == pytest.approx(153.0)
    assert shares["host_work"] == pytest.approx(42.0 + 165.0)


def test_a_windows_first_sync_with_no_launch_since_the_sync_before_it():
    # Two host threads. k1 launched at 0 runs 5-105; thread 9 blocks in a sync 10-105. Thread 10 blocks in a device
    # sync 150-305 while thread 9 launches k2 at 200 (205-305), then k3 at 500 (505-535). Gap 105-205: its window
    # 105-200 is the first sync's (95 us). Gap 305-505: the second sync, which returned at 305, started at 150,
    # before any launch since the first sync ended (105): no work to reckon its most from, so it keeps its own
    # 155 us, which fill its window 305-500 first (the rest, 40 us, host work: thread 9 issued nothing 205-500).
    ev = [rt("cudaLaunchKernel", T, 4, 1), kern(T + 5, 100, 1, name="k1"), rt("cudaDeviceSynchronize", T + 10, 95),
          rt("cudaDeviceSynchronize", T + 150, 155, tid=10),
          rt("cudaLaunchKernel", T + 200, 4, 2), kern(T + 205, 100, 2, name="k2"),
          rt("cudaLaunchKernel", T + 500, 4, 3), kern(T + 505, 30, 3, name="k3")]
    shares, _ = _shares({"traceEvents": ev, "gpuwhy_tracer": {"event_us": 2.0}})
    assert shares["host_sync"] == pytest.approx(95.0 + 155.0)
    assert shares["host_work"] == pytest.approx(40.0)
