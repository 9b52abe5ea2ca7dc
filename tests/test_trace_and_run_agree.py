"""`gpuwhy trace` and `gpuwhy run` ask the one verdict engine: on the same trace and the same window they give
the same verdict, the same shares and the same remedies with the same ceilings. Over every recorded trace
under tests/fixtures: the trace command's analysis of the whole trace (each GPU judged over its span) against
the run command's path (the trace cropped to that span, analysed with a window, budgeted by api/run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwhy.api.run import budget_of
from gpuwhy.importers.kineto import read_timeline
from gpuwhy.importers.timeline.activities import crop
from gpuwhy.importers.timeline.analyze import analyze
from gpuwhy.importers.timeline.host import HOST_WORK_MIN_US
from gpuwhy.importers.timeline.window import Window

FIXTURES = Path(__file__).parent / "fixtures"
TRACES = sorted(p for p in FIXTURES.rglob("*.json*")
                if p.name.startswith(("trace_", "run_")) and "trace" in p.name or p.parent.name in ("trace", "hta"))


def _traces():
    out = []
    for p in TRACES:
        try:
            tl = read_timeline(p)
        except Exception:  # noqa: BLE001 - not a trace (a CSV, a memory timeline): not this test's
            continue
        if tl.gpu_count:
            out.append(p)
    return out


def _same(a, b):
    """The same verdict, top cause, shares and remedies; each figure within 0.2% of the window, and within
    the host-work stretch at each edge: the run's crop cuts the host's activity at the window's edges, so a
    stretch of host time that starts before the window (or ends after it) is seen shorter there, and up to
    HOST_WORK_MIN_US of it at each edge can move between launch overhead and host work."""
    tol = max(2e-3 * a.window_s, 2 * HOST_WORK_MIN_US * 1e-6)
    assert a.verdict == b.verdict and a.top.cause == b.top.cause, (a.line, b.line)
    assert {s.cause for s in a.shares if s.seconds > tol} == {s.cause for s in b.shares if s.seconds > tol}
    for x in a.shares:
        y = b.share(x.cause)
        assert (y.seconds if y else 0.0) == pytest.approx(x.seconds, abs=tol), x.cause
    assert {r.key for r in a.remedies if r.removed_s > tol} <= {r.key for r in b.remedies}
    for x in a.remedies:
        y = b.remedy(x.key)
        assert (y.removed_s if y else 0.0) == pytest.approx(x.removed_s, abs=tol), x.key


@pytest.mark.parametrize("path", _traces(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_trace_and_run_give_the_same_verdict_on_the_same_window(path):
    tl = read_timeline(path)
    trace = analyze(tl)
    if trace.dropped:
        pytest.skip("events dropped as strays: the windows differ by them")
    judged = [d for d in trace.devices if d.diagnosis is not None and d.verdict != "too-little-to-judge"]
    if not judged:
        pytest.skip("no GPU with enough to judge")
    busiest = max(trace.devices, key=lambda d: d.busy_s)
    if busiest not in judged:
        pytest.skip("the busiest GPU holds too little to judge")
    sel = [i for i, dev in enumerate(tl.gpu_device) if dev == busiest.device]
    lo = float(min(tl.gpu_start[i] for i in sel))
    hi = float(max(tl.gpu_start[i] + tl.gpu_dur[i] for i in sel))
    if len(trace.devices) > 1:
        pytest.skip("several GPUs: `gpuwhy run` budgets the busiest over the window of all of them")
    run_report = analyze(crop(tl, lo, hi), top=100_000, timeline_us=(lo, hi))
    gpu, diag, _ = budget_of(run_report, Window(lo, hi, "the GPU's span"))
    assert gpu.device == busiest.device
    _same(busiest.diagnosis, diag)
