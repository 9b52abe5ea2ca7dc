"""torch.profiler traces (issue 31): launch calls whose kernels CUPTI did not record are counted and
said, with what the verdict covers; older Kineto's launch flow events (cat "async", name "launch",
its ChromeTraceLogger::handleLinkStart/End) link launches as the ac2g ones do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.importers.kineto import load_trace

FIX = Path(__file__).parent / "fixtures" / "trace"
US = 1e-6


def _trace(launches: int, kernels: int) -> dict:
    """``launches`` cudaLaunchKernel calls 20 us apart (correlation 1..n); the kernels of the first
    ``kernels`` of them recorded (10 us each, 5 us after their launch)."""
    ev = [{"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": 1, "tid": 1, "ts": 90.0}]
    for i in range(launches):
        ts = 100.0 + 20 * i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": ts - 1, "dur": 6, "args": {}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": 4,
                   "args": {"correlation": i + 1}})
        if i < kernels or i == launches - 1:  # the last one recorded too: losses are in the middle
            ev.append({"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": ts + 5, "dur": 10,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1}})
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "traceEvents": ev}


def test_launches_without_their_kernels_are_counted_and_said(tmp_path, cli):
    p = tmp_path / "lost.json"
    p.write_text(json.dumps(_trace(40, 9)))  # 10 kernels recorded (the first 9 and the last) of 40 launches
    r = load_trace(p)
    lost = [n for n in r.notes if "have no kernel in the trace" in n]
    assert lost == [lost[0]] and lost[0].startswith("30 of 40 kernel launch calls have no kernel in the trace")
    assert "CUPTI" in lost[0] and "the verdict covers the 10 kernels recorded" in lost[0]
    code, out, err = cli("trace", str(p))
    assert code == 0 and "30 of 40 kernel launch calls" in out + err


def test_a_whole_trace_says_nothing_of_lost_kernels(tmp_path):
    p = tmp_path / "whole.json"
    p.write_text(json.dumps(_trace(40, 40)))
    assert not any("no kernel in the trace" in n for n in load_trace(p).notes)
    for name in ("flows_only.json", "multi_gpu.json", "window.json"):  # no correlation ids / several GPUs / a window
        assert not any("no kernel in the trace" in n for n in load_trace(FIX / name).notes), name


def test_old_kineto_async_launch_flows_link_like_ac2g(tmp_path):
    doc = json.loads((FIX / "flows_only.json").read_text())
    for ev in doc["traceEvents"]:
        if ev.get("ph") in ("s", "f"):
            ev["cat"], ev["name"] = "async", "launch"
    p = tmp_path / "old_flows.json"
    p.write_text(json.dumps(doc))
    d = load_trace(p).devices[0]
    assert d.linked_kernels == 4 and d.launch_latency_median_s == pytest.approx(6 * US)
    # an "async" flow of another name is not a launch link
    for ev in doc["traceEvents"]:
        if ev.get("ph") in ("s", "f"):
            ev["name"] = "something_else"
    p.write_text(json.dumps(doc))
    assert load_trace(p).devices[0].linked_kernels == 0


def test_launches_still_queued_when_the_capture_ends_are_not_lost(tmp_path):
    # A deep queue: each kernel runs 1 ms (after the one before it), launches come 20 us apart, so the last
    # launches are made long before the last recorded kernel starts; the capture ends with the kernels of
    # the last 10 still queued. One kernel in the middle is lost for real.
    ev = [{"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": 1, "tid": 1, "ts": 90.0}]
    for i in range(40):
        ts = 100.0 + 20 * i
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": 4,
                   "args": {"correlation": i + 1}})
        if i < 30 and i != 12:
            ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 200.0 + 1000 * i, "dur": 1000,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1}})
    p = tmp_path / "queued.json"
    p.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
                             "traceEvents": ev}))
    lost = [n for n in load_trace(p).notes if "have no kernel in the trace" in n]
    # launches 1..30 count (up to the last one whose kernel was recorded); only the 13th lost its kernel
    assert len(lost) == 1 and lost[0].startswith("1 of 30 kernel launch calls have no kernel in the trace")
    assert "the verdict covers the 29 kernels recorded" in lost[0]
