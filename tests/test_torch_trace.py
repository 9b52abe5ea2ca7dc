"""`gpuwhy trace`: torch.profiler Chrome traces, one synthetic fixture per quirk.

Fixtures: tests/fixtures/trace/ (written by tests/fixtures/trace/_make.py); times in us.

- overhead_loop: 10 launches every 20 us (launch call 4 us), each kernel 6 us
  after its launch and 2 us long: span 106..288 = 182 us, busy 20, idle 162,
  all of it the GPU waiting on the host; one cudaStreamSynchronize.
- busy_matmul (gzipped): 5 kernels of 1000 us, 2 us apart, launched at
  50 + 10 i (queued): span 5008, idle 8 (back-to-back), latency median
  (100 + 1002*2) - (50 + 20) = 2034 us.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.importers.kineto import analyze_trace, load_trace

FIX = Path(__file__).parent / "fixtures" / "trace"
US = 1e-6


def _one(report):
    assert len(report.devices) == 1
    return report.devices[0]


def test_overhead_loop_is_overhead_bound():
    r = load_trace(FIX / "overhead_loop.json")
    d = _one(r)
    assert r.verdict == "overhead-bound" and d.verdict == "overhead-bound"
    assert d.span_s == pytest.approx(182 * US)
    assert d.busy_s == pytest.approx(20 * US)
    assert d.idle_s == pytest.approx(162 * US)
    assert d.idle_pct == pytest.approx(100 * 162 / 182)
    assert d.host_wait_s == pytest.approx(162 * US) and d.back_to_back_s == 0 and d.unattributed_idle_s == 0
    assert d.gaps == 9 and d.host_wait_gaps == 9
    assert d.kernels == 10 and d.median_kernel_s == pytest.approx(2 * US)
    assert d.short_kernel_pct == 100.0
    assert d.launch_latency_median_s == pytest.approx(6 * US) and d.linked_kernels == 10
    assert r.host_sync_calls == 1 and r.host_sync_s == pytest.approx(3 * US)
    assert d.cause == "launch_overhead" and d.idle.causes[0].key == "launch_overhead"
    # Every gap: the launch came after the GPU went idle; the host spent 3 us of one gap in cudaStreamSynchronize
    # (190..193 us, inside the gap 188..206), which would have let it launch 3 us sooner.
    assert d.idle.cause_s("launch_overhead") == pytest.approx(159 * US) and d.idle.cause_s("host_sync") == pytest.approx(3 * US)
    assert sum(c.time_s for c in d.idle.causes) == pytest.approx(d.idle_s)
    text = " ".join(d.remedies)
    assert "CUDA graph" in text and "torch.compile" in text and "larger batches" in text
    # A CUDA graph removes the launch overhead, not the sync: it leaves the kernels' 20 us and the host's 3 us in
    # the sync, which may then run beside them: at most 182 / 20 (Amdahl's 182 / (182 - 159) adds the two).
    g = d.diagnosis.remedies[0]
    assert g.key == "cuda_graph" and g.ceiling_x == pytest.approx(182 / 20) and g.floor_s == pytest.approx(20 * US)
    assert d.top_kernels[0].count == 10 and d.top_kernels[0].name == "vectorized_elementwise_kernel"
    assert r.capture_s == pytest.approx(350 * US)  # the capture window markers: 50..400 us


def test_gzipped_busy_loop_is_gpu_bound():
    r = load_trace(FIX / "busy_matmul.json.gz")
    d = _one(r)
    assert r.verdict == "gpu-bound" and d.verdict == "gpu-bound"
    assert d.span_s == pytest.approx(5008 * US) and d.idle_s == pytest.approx(8 * US)
    assert d.back_to_back_s == pytest.approx(8 * US) and d.host_wait_s == 0
    assert d.idle.cause_s("queue_latency") == pytest.approx(8 * US)  # launched 2 ms ahead: the gaps are the GPU's own
    assert d.launch_latency_median_s == pytest.approx(2034 * US)
    assert d.short_kernel_pct == 0.0
    assert "gpuwhy run --kernels" in d.remedies[0] and "gpuwhy ncu" in d.remedies[0]
    assert r.summary == "gpu-bound: kernels (regime not measured), 100% of the judged window; measure the kernels' regimes"


def test_bare_event_array_reads_like_the_object_form():
    a = load_trace(FIX / "event_list.json").to_dict()
    b = load_trace(FIX / "busy_matmul.json.gz").to_dict()
    for key in ("verdict",):
        assert a[key] == b[key]
    assert a["devices"] == b["devices"]


def test_old_category_names_memcpy_memset_and_the_union():
    d = _one(load_trace(FIX / "old_categories.json"))
    # kernel [100,150] + memcpy [120,200] (other stream) + memset [250,260] + kernel [300,310]
    assert (d.kernels, d.memcpys, d.memsets) == (2, 1, 1)
    assert d.span_s == pytest.approx(210 * US)
    assert d.busy_s == pytest.approx(120 * US)
    assert d.memcpy_s == pytest.approx(80 * US) and d.memset_s == pytest.approx(10 * US)
    # 200->250: the memset's launch (240) came after the GPU went idle; 260->300: the launch (255) was pending.
    assert d.host_wait_s == pytest.approx(50 * US) and d.back_to_back_s == pytest.approx(40 * US)
    assert d.streams == 2
    # The kernels (60 us, regime not measured) hold under half the span: the largest diagnosed share speaks,
    # the pageable copy's 50 us not hidden under the first kernel (150..200).
    assert d.verdict == "pageable-copy-bound" and d.diagnosis.share("pageable_copy").seconds == pytest.approx(50 * US)


def test_flow_events_link_launches_without_correlation_ids():
    d = _one(load_trace(FIX / "flows_only.json"))
    assert d.linked_kernels == 4 and d.launch_latency_median_s == pytest.approx(6 * US)
    assert d.host_wait_s == pytest.approx(54 * US) and d.unattributed_idle_s == 0


def test_missing_times_are_dropped_and_zero_durations_kept():
    r = load_trace(FIX / "zero_events.json")
    d = _one(r)
    # The three 2 us kernels and the dur-0 kernel at 500 us: counted, with no time.
    assert d.kernels == 4 and d.zero_duration_kernels == 1
    assert d.kernel_s == pytest.approx(6 * US) and d.busy_s == pytest.approx(6 * US)
    assert d.span_s == pytest.approx((500 - 106) * US)
    assert d.short_kernel_pct == 100.0
    assert r.dropped == {
        "GPU events with a missing or non-positive timestamp": 1,
        "GPU events without a duration": 1,
        "GPU events with a negative duration": 1,
    }
    assert any("dur 0" in n and "resolution" in n for n in r.notes)


def test_kernels_outside_the_capture_window_are_dropped():
    r = load_trace(FIX / "window.json")
    d = _one(r)
    assert d.kernels == 2 and r.verdict == "too-little-to-judge"
    assert r.dropped == {"GPU events that start before the capture window": 1, "GPU events that start after the capture window": 1}
    assert d.span_s == pytest.approx(105 * US)  # 1100 .. 1205


def test_no_gpu_events_is_never_called_idle():
    r = load_trace(FIX / "no_gpu.json")
    assert r.verdict == "no-gpu-events" and r.devices == ()
    assert "idle" not in r.summary.lower() and "no GPU events" in r.summary
    assert any("ProfilerActivity.CUDA" in n for n in r.notes)


def test_all_gpu_events_dropped_is_no_gpu_events_too():
    ev = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100.0, "dur": -1, "args": {"device": 0}}]
    r = analyze_trace({"traceEvents": ev})
    assert r.verdict == "no-gpu-events" and "negative duration" in r.summary


def test_several_gpus():
    r = load_trace(FIX / "multi_gpu.json")
    assert [d.device for d in r.devices] == ["0", "1"]
    assert [d.verdict for d in r.devices] == ["overhead-bound", "gpu-bound"]
    assert r.verdict == "overhead-bound"


def test_flops_from_with_flops_operators():
    d = _one(load_trace(FIX / "with_flops.json"))
    k = d.top_kernels[0]
    assert k.flops == pytest.approx(5 * 2 * 4096**3)
    assert k.achieved_tflops == pytest.approx(2 * 4096**3 / 1000e-6 / 1e12)


def test_busy_is_the_union_over_streams():
    d = _one(load_trace(FIX / "multistream.json"))
    assert d.kernel_s == pytest.approx(220 * US)  # sum of durations
    assert d.busy_s == pytest.approx(170 * US)  # [100,250] + [300,320]
    assert d.idle_s == pytest.approx(50 * US) and d.host_wait_s == pytest.approx(50 * US)
    assert [k.name for k in d.top_kernels] == ["vectorized_elementwise_kernel<CUDAFunctor_add>", "vectorized_elementwise_kernel<MulFunctor>"]
    assert d.verdict == "too-little-to-judge"  # 3 kernels: the figures stand, a verdict would not


def test_top_n():
    d = _one(load_trace(FIX / "multistream.json", top=1))
    assert len(d.top_kernels) == 1
    with pytest.raises(UsageError, match="--top 0 must be at least 1"):
        load_trace(FIX / "multistream.json", top=0)


def test_not_a_trace():
    with pytest.raises(UsageError, match="traceEvents"):
        load_trace(FIX / "not_trace.json")
    with pytest.raises(UsageError, match="broken gzip"):
        load_trace(FIX / "corrupt.json.gz")
    with pytest.raises(UsageError, match="does not exist"):
        load_trace(FIX / "missing.json")


def test_short_kernels_alone_make_it_overhead_bound():
    # Back-to-back 3 us kernels, no idle: most kernels launch-sized and most of the kernel time in them.
    ev = []
    for i in range(20):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10.0 + i, "dur": 1.0,
                   "args": {"correlation": i}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100.0 + 3 * i, "dur": 3.0,
                   "args": {"device": 0, "correlation": i}})
    d = _one(analyze_trace({"traceEvents": ev}))
    assert d.idle_s == 0 and d.verdict == "overhead-bound"
    assert any("shorter than 10 us" in r for r in d.reasons)


# ------------------------------------------------------------------ CLI


def test_cli_trace_json(cli):
    code, out, err = cli("trace", str(FIX / "overhead_loop.json"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "trace" and doc["verdict"] == "overhead-bound" and doc["cause"] == "launch_overhead"
    dev = doc["devices"][0]
    assert dev["host_wait_s"] == pytest.approx(162 * US)
    cause = dev["idle"]["causes"][0]
    assert cause["key"] == "launch_overhead" and cause["time_s"] == pytest.approx(159 * US)
    assert cause["span_pct"] == pytest.approx(100 * 159 / 182)
    diag = dev["diagnosis"]
    assert diag["top_cause"] == "launch_overhead" and diag["window_s"] == pytest.approx(182 * US)
    fix = diag["remedies"][0]
    assert fix["key"] == "cuda_graph" and fix["ceiling_x"] == pytest.approx(182 / 20)
    assert fix["removes"] == [{"cause": "launch_overhead", "seconds": pytest.approx(159 * US)}]
    assert sum(s["share_pct"] for s in diag["shares"]) == pytest.approx(100.0)
    assert doc["thresholds"]["queue_latency_s"] == pytest.approx(10e-6) and doc["thresholds"]["min_gpu_events"] == 4


def test_cli_trace_human(cli):
    code, out, err = cli("trace", str(FIX / "busy_matmul.json.gz"))
    assert code == 0, err
    assert "gpu-bound" in out and "top kernels by time" in out and "time budget" in out
    assert "GPU-side launch latency between queued work" in out and "GPU time by kind" in out


def test_cli_trace_bad_file(cli):
    code, out, err = cli("trace", str(FIX / "not_trace.json"))
    assert code == 2 and out == "" and "traceEvents" in err


def test_malformed_fields_never_raise_anything_but_a_usage_error():
    """Real events with fields replaced by wrong types or values: a report or one UsageError, nothing else."""
    import copy
    import random

    base = json.loads((Path(__file__).parent / "fixtures" / "real" / "trace_overhead.json").read_text())["traceEvents"]
    weird = [None, "abc", "12.5", [], [1, 2], {}, {"a": 1}, -1, 0, 1e308, float("inf"), float("nan"), True, 2**70]
    fields = ["ts", "dur", "cat", "name", "ph", "pid", "tid", "args", "id"]
    arg_fields = ["correlation", "device", "stream", "External id", "bytes", "flops"]
    rng = random.Random(17)
    for _ in range(60):
        ev = copy.deepcopy(base)
        for _ in range(40):
            e = rng.choice(ev)
            if rng.random() < 0.5 and isinstance(e.get("args"), dict):
                e["args"][rng.choice(arg_fields)] = rng.choice(weird)
            else:
                e[rng.choice(fields)] = rng.choice(weird)
        try:
            r = analyze_trace({"traceEvents": ev})
        except UsageError:
            continue
        for d in r.devices:
            assert d.busy_s <= d.span_s + 1e-12 and d.idle_s >= -1e-12
            assert sum(c.time_s for c in d.idle.causes) == pytest.approx(d.idle_s, rel=1e-6, abs=1e-9)
        json.dumps(r.to_dict(), allow_nan=True)
