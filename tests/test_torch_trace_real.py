"""`gpuwhy trace` on real H200 traces (tests/fixtures/real/, made by benchmarks/make_real_exports.py
with torch 2.11, see EXPORTS.md) and on edited copies of them (tests/fixtures/trace/real_*,
written by tests/fixtures/trace/_derive_real.py, which says exactly what it changes).

Every fixture's busy and idle time is checked against an interval union computed here,
independently of the importer (a plain sort-and-merge loop over the raw JSON).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.importers.kineto import analyze_trace, idle_breakdown, load_trace

HERE = Path(__file__).parent
REAL = HERE / "fixtures" / "real"
FIX = HERE / "fixtures" / "trace"
GPU_CATS = {"kernel", "gpu_kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
WINDOW_START, WINDOW_END = "Iteration Start: PyTorch Profiler", "Record Window End"


def _raw(path: Path):
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _union(path: Path, skip=lambda e: False) -> dict:
    """Per device: (span, busy, idle) in seconds from the raw events, by sorting and merging."""
    ev = _raw(path)
    lo = min((e["ts"] for e in ev if isinstance(e, dict) and e.get("name") == WINDOW_START), default=None)
    hi = max((e["ts"] for e in ev if isinstance(e, dict) and e.get("name") == WINDOW_END), default=None)
    per: dict = {}
    for e in ev:
        if not isinstance(e, dict) or e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU_CATS:
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or ts <= 0 or dur < 0 or skip(e):
            continue
        if (lo is not None and ts < lo) or (hi is not None and ts > hi):
            continue
        dev = str(e.get("args", {}).get("device", e.get("pid")))
        per.setdefault(dev, []).append((float(ts), float(ts) + float(dur)))
    out = {}
    for dev, iv in per.items():
        iv.sort()
        busy = 0.0
        cur_s, cur_e = iv[0]
        for s, t in iv[1:]:
            if s > cur_e:
                busy += cur_e - cur_s
                cur_s, cur_e = s, t
            else:
                cur_e = max(cur_e, t)
        busy += cur_e - cur_s
        span = max(t for _, t in iv) - iv[0][0]
        out[dev] = (span * 1e-6, busy * 1e-6, (span - busy) * 1e-6)
    return out


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path.name} not made yet (run benchmarks/device_17.sh on the GPU, copy it to tests/fixtures/real/)")
    return path


def _one(report):
    assert len(report.devices) == 1
    return report.devices[0]


def _cause(d, key):
    return next((c for c in d.idle.causes if c.key == key), None)


def _all_fixtures():
    names = sorted(p.name for p in FIX.iterdir() if p.name.endswith((".json", ".json.gz")))
    real = sorted(p.name for p in REAL.iterdir() if p.name.startswith("trace_"))
    return [FIX / n for n in names if n not in ("not_trace.json", "corrupt.json.gz")] + [REAL / n for n in real]


def _stray(e) -> bool:
    """The edited kernel of the real_stray_* copies: its ts is 1.0, negative, or 1e12 us late."""
    return e["ts"] < 1e9 or e["ts"] > 6e12


@pytest.mark.parametrize("path", _all_fixtures(), ids=lambda p: p.name)
def test_busy_and_idle_equal_an_independent_interval_union(path):
    r = load_trace(path)
    want = _union(path, skip=_stray if path.name.startswith("real_stray") else (lambda e: False))
    got = {d.device: d for d in r.devices}
    assert set(got) == set(want)
    for dev, (span, busy, idle) in want.items():
        d = got[dev]
        assert d.span_s == pytest.approx(span, rel=1e-12, abs=1e-12)
        assert d.busy_s == pytest.approx(busy, rel=1e-9, abs=1e-12)
        assert d.idle_s == pytest.approx(idle, rel=1e-9, abs=1e-12)
        # The causes split all of the idle time, nothing more.
        assert sum(c.time_s for c in d.idle.causes) == pytest.approx(d.idle_s, rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ today's real traces


def test_dataloader_num_workers_0_is_data_loading_bound():
    r = load_trace(REAL / "trace_dataloader.json")
    d = _one(r)
    assert r.verdict == "data-loading-bound" and d.cause == "data_loading"
    c = d.idle.causes[0]
    assert c.key == "data_loading" and c.span_pct > 90
    fix = d.diagnosis.remedies[0]
    # more workers take the loading, and (their pin_memory=True) the pageable copies of the batches
    gone = c.time_s + d.diagnosis.share("pageable_copy").seconds
    assert fix.key == "more_loader_workers" and fix.removed_s == pytest.approx(gone)
    # what it leaves: the GPU's busy time less the pageable copies' and the queue latency; the other host-side shares
    dg = d.diagnosis
    pg = dg.share("pageable_copy")
    gpu_left = dg.busy_s - pg.gpu_busy_s + (dg.share("queue_latency").seconds if dg.share("queue_latency") else 0.0)
    host_left = sum(s.seconds for s in dg.shares if s.cause.value in ("launch_overhead", "host_work", "host_sync",
                                                                      "unexplained"))
    assert fix.ceiling_x == pytest.approx(dg.judged_s / max(gpu_left, host_left))
    assert any("num_workers=0" in e for e in c.evidence)
    # Three ProfilerSteps (schedule active=3), each idle mostly in the DataLoader.
    assert [s.name for s in d.idle.steps] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert all(s.first_cause == "data_loading" and s.idle_pct > 90 for s in d.idle.steps)
    assert d.idle.step_median["causes_s"]["data_loading"] > 0.09  # ~110 ms per batch of 64 augmented samples
    # The DataLoader's remedy comes first, in the syllabus's order; a CUDA graph would take only the 3.5% of
    # launch overhead, and says so.
    text = d.remedies
    order = [next(i for i, x in enumerate(text) if key in x) for key in ("num_workers", "pin_memory=True",
                                                                           "persistent_workers", "prefetch_factor")]
    assert order == sorted(order) and order[0] == 0
    graph = d.diagnosis.remedy("cuda_graph")
    assert graph is not None and graph.share_pct < 5 and graph.ceiling_x < 1.1 < fix.ceiling_x
    # xb.to(dev) from pageable memory: the copies are named, with their bandwidth.
    pg = _cause(d, "pageable_copy")
    assert pg is not None and any("pageable memory" in e and "GB/s" in e for e in pg.evidence)
    assert {"convolution", "normalization"} <= {k.kind for k in d.kinds}


def test_two_streams_waiting_on_each_other_is_not_called_overhead_bound():
    r = load_trace(REAL / "trace_streams.json")
    d = _one(r)
    assert d.verdict == "gpu-bound"  # after the first iteration the matmuls keep the GPU busy
    # The first iteration's first aten::mul_ on stream 2 (8 ms of host time) is warm-up, named as such.
    w = d.idle.causes[0]
    assert w.key == "warmup" and w.time_s > 7e-3 and any("aten::mul_" in e for e in w.evidence)
    assert d.idle.steady_idle_pct < 30
    # The switches between the streams: stream 50 waits for 46 and back, each a few us, 19 + 18 of them:
    # within launch latency, so queue latency, and the evidence names the event waits.
    assert _cause(d, "dependency_wait") is None
    q = _cause(d, "queue_latency")
    assert q is not None and q.gaps >= 30
    assert any("stream 50 waited for stream 46" in e and "40 cudaStreamWaitEvent" in e for e in q.evidence)


def test_one_kernel_is_too_little_to_judge():
    r = load_trace(REAL / "trace_one_kernel.json")
    assert r.verdict == "too-little-to-judge" and "too little to judge" in r.summary
    assert "schedule(" in " ".join(r.devices[0].remedies)


def test_item_sync_names_the_syncs_and_what_the_gpu_really_waited_for():
    r = load_trace(REAL / "trace_item_sync.json.gz")
    d = _one(r)
    s = _cause(d, "host_sync")
    assert s is not None
    text = " ".join(s.evidence)
    assert "30 cudaStreamSynchronize" in text and "aten::item > aten::_local_scalar_dense x30" in text
    # The GPU step (~0.6 ms) had finished before each loss.item(): the syncs cost little, the host is slower.
    assert s.time_s < 1e-3 and "the host is the slower side" in text
    # The 2 ms pause per step (time.sleep, issuing no GPU work) is the idle time that follows each sync.
    assert d.idle.outside_ops_s >= 30 * 2e-3 and d.idle.cause_s("host_work") >= 29 * 2e-3
    assert d.verdict == "host-bound" and d.cause == "host_work"
    # The first remedy is about that code; a CUDA graph would not remove it, and removes less.
    assert d.remedies[0].startswith("Take the host work off the critical path")
    assert d.diagnosis.remedies[0].key == "move_host_work"
    assert d.diagnosis.remedy("cuda_graph").removed_s < d.diagnosis.remedies[0].removed_s


def test_eager_decode_is_waiting_on_the_host():
    d = _one(load_trace(REAL / "trace_decode.json.gz"))
    assert d.verdict == "overhead-bound" and d.cause == "launch_overhead"
    assert d.diagnosis.remedies[0].key == "cuda_graph"
    assert d.short_kernel_pct > 80
    assert {"attention", "gemm", "normalization"} <= {k.kind for k in d.kinds}
    assert any(op.name == "aten::linear" for op in d.idle.host_ops)


def test_older_real_traces_keep_their_verdicts():
    assert load_trace(REAL / "trace_overhead.json").verdict == "overhead-bound"
    m = _one(load_trace(REAL / "trace_matmul.json"))
    assert m.verdict == "gpu-bound" and m.kinds[0].kind == "gemm" and m.kinds[0].gpu_time_pct > 99


def test_memory_timeline_is_refused_in_one_line(cli):
    with pytest.raises(UsageError, match="list of lists"):
        load_trace(REAL / "memory_timeline.json")
    code, out, err = cli("trace", str(REAL / "memory_timeline.json"))
    assert code == 2 and out == "" and "list of lists" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ edited copies (tests/fixtures/trace/_derive_real.py)


@pytest.mark.parametrize("name, reason", [
    ("real_stray_near_zero.json.gz", "GPU events with a timestamp far outside the rest of the trace"),
    ("real_stray_negative.json.gz", "GPU events with a missing or non-positive timestamp"),
    ("real_stray_late.json.gz", "GPU events with a timestamp far outside the rest of the trace"),
])
def test_a_stray_timestamp_is_dropped_not_stretching_the_span(name, reason):
    r = load_trace(FIX / name)
    d = _one(r)
    assert r.dropped == {reason: 1}
    assert d.kernels == 19 and d.span_s < 0.03  # the 27.8 ms of the real trace, not 5e6 s
    assert d.verdict == "gpu-bound"


def test_whole_microsecond_trace_keeps_its_zero_duration_kernels():
    real = _one(load_trace(REAL / "trace_overhead.json"))
    d = _one(load_trace(FIX / "real_whole_us.json.gz"))
    assert d.kernels == real.kernels == 410
    assert d.zero_duration_kernels == 400 and d.time_resolution_s == 1e-6
    assert d.short_kernel_pct == 100.0
    assert d.verdict == "overhead-bound"
    r = load_trace(FIX / "real_whole_us.json.gz")
    assert any("dur 0" in n for n in r.notes)


def test_three_kernels_are_too_little_to_judge():
    r = load_trace(FIX / "real_three_kernels.json")
    assert _one(r).kernels == 3
    assert r.verdict == "too-little-to-judge"


def test_other_accelerator_is_not_told_to_record_cuda():
    r = load_trace(FIX / "real_other_accelerator.json.gz")
    assert r.verdict == "no-gpu-events"
    assert "no CUDA/ROCm GPU track" in r.summary and "MTIA" in r.summary
    assert not any("ProfilerActivity.CUDA" in n for n in r.notes)


def test_tensorboard_handler_names_are_read(tmp_path):
    a = tmp_path / "host_123.1700000000.pt.trace.json"
    shutil.copy(REAL / "trace_matmul.json", a)
    b = tmp_path / "host_123.1700000000.pt.trace.json.gz"
    b.write_bytes(gzip.compress((REAL / "trace_matmul.json").read_bytes()))
    assert load_trace(a).to_dict()["devices"] == load_trace(b).to_dict()["devices"]


@pytest.mark.parametrize("data, match", [
    ([[1, 2, 3], [4, 5, 6]], "list of lists"),
    ([1, 2, 3], "list of numbers"),
    ([], "empty list"),
    ({"schemaVersion": 1, "steps": []}, "no 'traceEvents'"),
    ({"traceEvents": [[1, 2]]}, "holds no trace events"),
    ("trace", "neither a Chrome trace"),
])
def test_non_trace_json_is_refused(data, match):
    with pytest.raises(UsageError, match=match):
        analyze_trace(data)


def test_idle_breakdown_is_usable_without_the_cli():
    doc = json.loads((REAL / "trace_dataloader.json").read_text())
    (b,) = idle_breakdown(doc)
    assert b.device == "0" and b.cause == "data_loading"
    assert b.cause_s("data_loading") == pytest.approx(b.causes[0].time_s)
    assert b.causes[0].span_pct == pytest.approx(100 * b.causes[0].time_s / b.span_s)
    assert b.to_dict()["causes"][0]["key"] == "data_loading"


# ------------------------------------------------------------------ traces made by benchmarks/device_17.sh


def test_workers_and_pinned_memory_take_the_dataloader_and_pageable_copies_away():
    d = _one(load_trace(_need(REAL / "trace_workers_pinned.json.gz")))
    base = _one(load_trace(REAL / "trace_dataloader.json"))
    assert _cause(d, "pageable_copy") is None  # pin_memory=True: every H2D copy is from pinned memory
    share = d.idle.step_median["causes_s"]["data_loading"] / d.idle.step_median["wall_s"]
    base_share = base.idle.step_median["causes_s"]["data_loading"] / base.idle.step_median["wall_s"]
    assert share < 0.5 * base_share
    # 52 us per batch to take it from the workers' queue: the workers keep up, and the evidence says so.
    assert "the workers keep up" in " ".join(_cause(d, "data_loading").evidence)
    # With the loading hidden, what is left is the truth of this small CNN at batch 64: each eager op
    # costs the host 50-300 us (conv2d ~90-130 us, ConvolutionBackward0 ~230-300 us, cuDNN's host work
    # included) against a few us to tens of us of GPU time, so the GPU waits for the launches.
    assert d.verdict == "overhead-bound" and d.cause == "launch_overhead"
    assert d.idle.host_ops and d.idle.host_ops[0].time_s > 0
    # Recorded with schedule(wait=1, warmup=2): the kernels ran in steps 0-2 before ProfilerStep#3, so a
    # first launch in this trace is not a first call: no warm-up, and no "profile after warm-up" advice.
    assert [s.name for s in d.idle.steps][0] == "ProfilerStep#3"
    assert _cause(d, "warmup") is None
    assert not any("Profile after warm-up" in x for x in d.remedies)


def test_pageable_copies_against_pinned_ones():
    d = _one(load_trace(_need(REAL / "trace_h2d_pageable_pinned.json.gz")))
    assert d.verdict == "pageable-copy-bound" and d.cause == "pageable_copy"
    ev = " ".join(_cause(d, "pageable_copy").evidence)
    assert "6 HtoD copies from pageable memory, 403 MB in 54.9 ms (7.33 GB/s)" in ev
    assert "the 2 pinned HtoD copies in the trace ran at 55.4 GB/s" in ev
    assert any("pin_memory" in x for x in d.remedies)
    # Pinning takes the staging and shrinks each pageable copy to the trace's own pinned rate.
    pin = d.diagnosis.remedies[0]
    copies = {(c.direction, c.memory): c for c in d.figures.copies}
    p, q = copies[("HtoD", "pageable")], copies[("HtoD", "pinned")]
    # the reference rate: the fastest known, the trace's pinned copies or the assumed PCIe 5.0 x16 link (63 GB/s)
    link = d.figures.links["HtoD"]
    assert link.gbs == pytest.approx(max(q.gbs, 32 * 16 * 128 / 130 / 8)) and "PCIe 5.0 x16" in link.source
    shrink = p.exposed_s * (1 - p.gbs / link.gbs)
    assert pin.key == "pin_memory" and pin.removed_s == pytest.approx(d.idle.cause_s("pageable_copy") + shrink)


def test_cuda_graph_replay_is_not_told_to_use_cuda_graphs():
    d = _one(load_trace(_need(REAL / "trace_cuda_graph.json.gz")))
    assert d.graph_launches >= 10
    q = _cause(d, "queue_latency")
    assert q is not None and any("CUDA-graph replays" in e for e in q.evidence)
    # 80 elementwise kernels on 2^20 fp32 (8.4 MB read+written each, ~2.1 us: ~4 TB/s), replayed 20 times.
    # The graph already took the per-launch host cost away and the GPU is busy 87%: what is left is on the
    # GPU, in the launch-sized kernels themselves (fusion removes them: all but one per replay) and the gaps
    # between graph nodes, which capturing a graph again cannot remove.
    assert 80 < d.busy_pct < 95 and d.short_kernel_pct == 100
    assert d.verdict == "overhead-bound" and d.cause == "launch_sized"
    assert d.remedies[0].startswith("Fuse the chains of memory-bound and launch-sized kernels")
    assert d.diagnosis.remedy("cuda_graph") is None
    assert not any("Capture the step in a CUDA graph" in x or "already replays CUDA graphs" in x for x in d.remedies)


def test_stream_waits_with_cuda_sync_events():
    d = _one(load_trace(_need(REAL / "trace_streams_sync.json.gz")))
    sw = _cause(d, "queue_latency")  # the waits are a few us each: within launch latency
    assert sw is not None and sw.gaps >= 30
