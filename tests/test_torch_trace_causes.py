"""The idle-cause split of `gpuwhy trace` on small traces built here, one rule each, with the
figures worked out by hand (times in us, as kineto writes them)."""

from __future__ import annotations

import pytest

from gpuwhy.importers.kineto import analyze_trace
from gpuwhy.importers.timeline.kinds import kernel_kind
from gpuwhy.verdict.engine import amdahl as amdahl_x

US = 1e-6
PID, TID = 77, 77
K = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, T2, T3)"


def rt(name, ts, dur, corr=None, tid=TID):
    ev = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": dur, "args": {}}
    if corr is not None:
        ev["args"]["correlation"] = corr
    return ev


def kern(ts, dur, corr, stream=7, name=K, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream, "correlation": corr}}


def op(name, ts, dur, cat="cpu_op", tid=TID):
    return {"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": dur, "args": {}}


def launch(ts, gpu_ts, dur, corr, stream=7, name=K):
    return [rt("cudaLaunchKernel", ts, 4, corr), kern(gpu_ts, dur, corr, stream, name)]


def _one(ev):
    r = analyze_trace({"traceEvents": ev})
    assert len(r.devices) == 1
    return r, r.devices[0]


def test_sync_that_drained_the_queue_owns_the_gap_after_it():
    # 5 steps of P us: two 1000 us kernels launched ahead, .item() blocks 2000 us in cudaStreamSynchronize,
    # then 1200 us of host work before the next launch. Gap per step: g0 = T+2010 .. g1 = T+P+10, the launch
    # at T+P. Without the sync the host would have been 2000 us ahead: the whole 1205 us window is the sync's.
    P = 3215.0
    ev = []
    for i in range(5):
        t = 1000.0 + i * P
        ev += [rt("cudaLaunchKernel", t, 5, 10 * i), kern(t + 10, 1000, 10 * i)]
        ev += [rt("cudaLaunchKernel", t + 6, 4, 10 * i + 1), kern(t + 1010, 1000, 10 * i + 1)]
        ev += [op("aten::item", t + 12, 2008), op("aten::_local_scalar_dense", t + 13, 2006)]
        ev.append(rt("cudaStreamSynchronize", t + 15, 2000))
    r, d = _one(ev)
    assert d.idle_s == pytest.approx(4 * 1215 * US)
    assert d.idle.cause_s("host_sync") == pytest.approx(4 * 1205 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(4 * 10 * US)  # launch call to kernel start
    # The kernels (10 ms, regime not measured) hold more, but a sync holding 32% of the span is the verdict.
    assert d.verdict == "host-sync-bound" and r.verdict == "host-sync-bound"
    c = d.idle.causes[0]
    assert c.key == "host_sync" and c.gaps == 4
    fix = d.diagnosis.remedies[0]
    assert fix.key == "remove_syncs" and fix.removed_s == pytest.approx(4 * 1205 * US)
    # it leaves the ten 1000 us kernels and 40 us of launch latency on the host side: the kernels hold the floor
    assert fix.floor_s == pytest.approx(10 * 1000 * US) and fix.ceiling_x == pytest.approx(d.span_s / (10 * 1000 * US))
    assert "aten::item > aten::_local_scalar_dense x5" in " ".join(c.evidence)
    assert ".item()" in d.remedies[0]


def test_sync_that_returns_at_once_costs_only_its_duration():
    # The GPU is already idle when the host syncs (10 us call), then a CPU op of 400 us that launches
    # nothing and host time around it: host-bound, not sync-bound.
    ev = []
    for i in range(5):
        t = 1000.0 + i * 600
        ev += launch(t, t + 8, 20, i)
        ev.append(rt("cudaStreamSynchronize", t + 40, 10))
        ev.append(op("aten::add", t + 60, 400))
    _, d = _one(ev)
    # Gap per step: 28 .. 608 (580 us); the sync ended inside it: 10 us are the sync's (28..38). Then up
    # to the launch at 600 the host issued no GPU work: 38..40 and the sync call 40..50 are short stretches
    # (dispatch, 12 us), 50..600 one stretch of 550 us (aten::add launches nothing): host work; 600..608
    # is the launch.
    assert d.idle.cause_s("host_sync") == pytest.approx(4 * 10 * US)
    assert d.idle.cause_s("host_work") == pytest.approx(4 * 550 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(4 * 20 * US)
    assert d.cause == "host_work" and d.verdict == "host-bound"
    assert d.diagnosis.remedies[0].key == "move_host_work"
    assert any(o.name == "aten::add" and o.time_s == pytest.approx(4 * 400 * US) for o in d.idle.host_ops)


def test_pageable_copy_staging_is_its_own_cause():
    # Kernel 100..110; the host is in cudaMemcpyAsync 105..400 (pageable: the copy is staged);
    # the GPU copy starts at 300. The launch call was still running when the GPU went idle: 110..300 is the copy's,
    # and so is 390..395 (the host still in the copy call); 395..400 is the next kernel's launch latency.
    ev = launch(90, 100, 10, 1)
    ev.append(rt("cudaMemcpyAsync", 105, 295, corr=2))
    ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 300,
               "dur": 90, "args": {"device": 0, "stream": 7, "correlation": 2, "bytes": 900_000}})
    ev += launch(395, 400, 5, 3)
    _, d = _one(ev)
    assert d.idle.cause_s("pageable_copy") == pytest.approx(195 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(5 * US)
    assert [c.key for c in d.idle.causes] == ["pageable_copy", "launch_overhead"]  # the copy is not data loading too
    ev_text = " ".join(next(c for c in d.idle.causes if c.key == "pageable_copy").evidence)
    assert "0.9 MB in 90 us (10 GB/s)" in ev_text


def test_dataloader_time_before_a_launch_is_data_loading():
    ev = launch(90, 100, 10, 1)
    ev.append(op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 115, 300, cat="user_annotation"))
    ev.append(op("aten::to", 420, 20))
    ev += launch(441, 450, 10, 2)
    _, d = _one(ev)
    # Gap 110..450: 110..115 outside, 115..415 DataLoader, 415..441 outside (aten::to launches nothing), 441..450
    # launch. Both stretches outside are under 100 us: dispatch, so launch overhead.
    assert d.idle.cause_s("data_loading") == pytest.approx(300 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(40 * US)
    assert d.idle.cause_s("host_work") == 0
    assert d.idle.outside_ops_s == pytest.approx(31 * US)
    assert "the workers do not keep up" in " ".join(d.idle.causes[0].evidence)


def test_queued_work_waiting_on_another_stream():
    ev = [rt("cudaLaunchKernel", 10, 3, 1), kern(100, 100, 1, stream=7)]
    ev += [rt("cudaEventRecordWithFlags", 14, 1), rt("cudaStreamWaitEvent", 16, 1, corr=50)]
    ev += [rt("cudaLaunchKernel", 18, 3, 2), kern(250, 2, 2, stream=9)]  # waited for stream 7's event: 200..250
    ev += [rt("cudaLaunchKernel", 22, 3, 3), kern(257, 2, 3, stream=9)]  # same stream, no wait queued: 252..257
    _, d = _one(ev)
    assert d.idle.cause_s("dependency_wait") == pytest.approx(50 * US)  # longer than launch latency
    assert d.idle.cause_s("queue_latency") == pytest.approx(5 * US)  # within it
    sw = next(c for c in d.idle.causes if c.key == "dependency_wait")
    text = " ".join(sw.evidence)
    assert "it waited for: another stream's event 50 us" in text and "stream 9 waited for stream 7 x1" in text
    # A 3 us wait on the event is launch latency, not a dependency wait.
    ev[5] = kern(203, 2, 2, stream=9)
    ev[7] = kern(210, 2, 3, stream=9)
    _, d = _one(ev)
    assert d.idle.cause_s("dependency_wait") == 0 and d.idle.cause_s("queue_latency") == pytest.approx(8 * US)


def test_cuda_sync_events_tell_which_stream_waited():
    # The wait (correlation 50) made stream 9 wait: a gap before stream 13's work is no stream wait.
    sync = {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 9, "ts": 16, "dur": 1,
            "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 9, "correlation": 50, "wait_on_stream": 7}}
    ev = [rt("cudaLaunchKernel", 10, 3, 1), kern(100, 100, 1, stream=7), rt("cudaStreamWaitEvent", 16, 1, corr=50), sync]
    ev += [rt("cudaLaunchKernel", 18, 3, 2), kern(260, 2, 2, stream=13)]
    _, d = _one(ev)
    dep = next(c for c in d.idle.causes if c.key == "dependency_wait")
    assert dep.time_s == pytest.approx(60 * US) and "it waited for: the trace does not say 60 us" in " ".join(dep.evidence)
    ev[-1] = kern(260, 2, 2, stream=9)
    _, d = _one(ev)
    dep = next(c for c in d.idle.causes if c.key == "dependency_wait")
    assert dep.time_s == pytest.approx(60 * US) and "it waited for: another stream's event 60 us" in " ".join(dep.evidence)


def test_a_queued_wait_behind_a_host_callback_says_so():
    # Stream 9's work waits on an event recorded behind a host function (cudaLaunchHostFunc) on stream 7.
    ev = []
    for i in range(3):  # each round: nothing runs for 2 ms while stream 9's work is queued
        t = 3000.0 * i
        ev += [rt("cudaLaunchKernel", t + 10, 3, 10 * i + 1), kern(t + 100, 100, 10 * i + 1, stream=7)]
        ev += [rt("cudaLaunchHostFunc", t + 14, 2), rt("cudaLaunchKernel", t + 18, 3, 10 * i + 2)]
        ev.append(kern(t + 2200, 50, 10 * i + 2, stream=9))
    _, d = _one(ev)
    dep = next(c for c in d.idle.causes if c.key == "dependency_wait")
    assert dep.time_s == pytest.approx(3 * 2000 * US) and "a host callback 6 ms" in " ".join(dep.evidence)
    assert d.verdict == "dependency-wait-bound" and d.diagnosis.remedies[0].key == "reorder_dependency"


def test_cuda_graph_replay_gaps_are_queued_and_no_graphs_are_prescribed():
    ev = [rt("cudaGraphLaunch", 10, 8, corr=5)]
    for i in range(10):
        ev.append(kern(100 + 5 * i, 3, 5))  # 3 us nodes, 2 us apart
    # then eager launches the host is slow to issue
    for i in range(6):
        ev += launch(300 + 100 * i, 305 + 100 * i, 2, 100 + i)
    _r, d = _one(ev)
    assert d.graph_launches == 1
    q = next(c for c in d.idle.causes if c.key == "queue_latency")
    assert q.time_s == pytest.approx(9 * 2 * US) and "inside CUDA-graph replays (1 graph launch)" in " ".join(q.evidence)
    # 148..300: one stretch of host time issuing nothing since the graph launch (host work), 300..305 the
    # launch; the 5 later gaps (93 us since the previous launch call, and its 5 us) are launch overhead.
    assert d.idle.cause_s("host_work") == pytest.approx(152 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx((5 + 5 * 98) * US)
    assert d.cause == "launch_overhead"
    # A graph takes the launch overhead, not the gaps inside the graph already replayed; fewer, larger
    # launches would shrink those too.
    assert d.diagnosis.remedy("cuda_graph").removed_s == pytest.approx((5 + 5 * 98) * US)
    assert d.diagnosis.remedy("bigger_launches").removed_s == pytest.approx((5 + 5 * 98 + 18) * US)
    assert any("already replays CUDA graphs" in r for r in d.remedies)
    assert not any(r.startswith("Capture the step in a CUDA graph") for r in d.remedies)


def test_first_launch_beyond_its_later_ones_is_warmup():
    ev = launch(90, 100, 10, 1, name="first_kernel")
    ev.append(op("aten::conv2d", 112, 4880))  # the first call of K: 5 ms of host setup
    ev += launch(4995, 5000, 10, 2)
    end = 5010.0
    for i in range(4):  # later launches of K: 50 us gaps
        ev.append(op("aten::conv2d", end + 2, 36))
        ev += launch(end + 40, end + 50, 10, 3 + i)
        end += 60
    _, d = _one(ev)
    # K's first gap, 110..5000, is 4890 us of host time before its launch (aten::conv2d launches nothing:
    # host work); its later ones 50 us each: 4840 us is warm-up, the rest 50 + 4 x 50.
    assert d.idle.cause_s("warmup") == pytest.approx(4840 * US)
    assert d.idle.cause_s("launch_overhead") + d.idle.cause_s("host_work") == pytest.approx((50 + 4 * 50) * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx((4 * 50 + 5 * 50 / 4890) * US)  # later: 40 + 10
    w = next(c for c in d.idle.causes if c.key == "warmup")
    assert any("aten::conv2d" in e for e in w.evidence)


def test_launch_sized_kernels_are_overhead_bound_and_graphs_take_only_the_launch_gaps():
    # 40 nodes of 3 us, 0.5 us apart, from two graph launches: every kernel launch-sized.
    ev = [rt("cudaGraphLaunch", 10, 8, corr=5), rt("cudaGraphLaunch", 20, 8, corr=6)]
    for i in range(40):
        ev.append(kern(100 + 3.5 * i, 3, 5 if i < 20 else 6))
    _, d = _one(ev)
    assert d.short_kernel_pct == 100 and d.idle_pct < 30
    assert d.verdict == "overhead-bound" and d.cause == "launch_sized"
    fuse = d.diagnosis.remedies[0]
    # Fused into one kernel per chain (per graph replay: 2): all but one kernel's 3 us in each.
    assert fuse.key == "fuse" and fuse.removed_s == pytest.approx((120 - 2 * 3) * US)
    assert d.remedies[0].startswith("Fuse the chains of memory-bound and launch-sized kernels")
    # A CUDA graph is already there: capturing one again removes nothing; fewer, larger nodes would take the
    # 39 gaps of 0.5 us between them at most.
    assert d.diagnosis.remedy("cuda_graph") is None
    assert d.diagnosis.remedy("bigger_launches").removed_s == pytest.approx(39 * 0.5 * US)
    # The same kernels launched one by one (ahead of the GPU): the same shares, and no graph yet.
    eager = [e for i in range(40) for e in launch(10 + i, 100 + 3.5 * i, 3, 100 + i)]
    _, d = _one(eager)
    assert d.verdict == "overhead-bound" and d.cause == "launch_sized"
    g = d.diagnosis.remedy("cuda_graph")
    assert g.text.startswith("Capture the step in a CUDA graph") and g.removed_s == pytest.approx(39 * 0.5 * US)
    assert d.diagnosis.remedy("fuse") is None  # one name, 40 launches, no steps: no chain to tell, no bound


def test_no_warmup_when_the_profiled_steps_come_after_unprofiled_ones():
    # The test above, inside ProfilerStep#0: warm-up. Numbered from #3 (schedule(wait=1, warmup=2)): the
    # kernel ran in steps 0-2 already, so its first launch here is not its first call.
    def trace(first_step):
        ev = [op(f"ProfilerStep#{first_step}", 80, 2000, cat="user_annotation"),
              op(f"ProfilerStep#{first_step + 1}", 2080, 3200, cat="user_annotation")]
        ev += launch(90, 100, 10, 1, name="first_kernel")
        ev.append(op("aten::conv2d", 112, 4880))
        ev += launch(4995, 5000, 10, 2)
        end = 5010.0
        for i in range(4):
            ev.append(op("aten::conv2d", end + 2, 36))
            ev += launch(end + 40, end + 50, 10, 3 + i)
            end += 60
        return _one(ev)[1]

    assert trace(0).idle.cause_s("warmup") == pytest.approx(4840 * US)
    d = trace(3)
    assert d.idle.cause_s("warmup") == 0
    assert d.idle.cause_s("host_work") + d.idle.cause_s("launch_overhead") == pytest.approx((4890 + 4 * 50) * US)


def test_host_work_and_launch_overhead_lead_different_remedies():
    # Each launch comes 245 us after the GPU went idle, 296 us after the previous launch call, the host
    # issuing nothing (Python, sleep; aten::add launches nothing): host work, which a CUDA graph would not remove.
    ev = [e for i in range(6) for e in launch(300 * i + 250, 300 * i + 255, 50, 1 + i)]
    ev += [op("aten::add", 300 * i + 256, 20) for i in range(6)]
    _, d = _one(ev)
    assert d.idle.cause_s("host_work") == pytest.approx(5 * 245 * US)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(5 * 5 * US)
    assert d.cause == "host_work" and d.verdict == "host-bound"
    assert d.remedies[0].startswith("Take the host work off the critical path")
    g = d.diagnosis.remedy("cuda_graph")
    assert g is None or g.removed_s == pytest.approx(5 * 5 * US)  # a graph takes only the launch's share
    # The same waits spent in operators that make the launches (190 us each): launch overhead leads, and
    # the 55 us after each kernel (a 106 us stretch since the last launch) stays host work.
    ev += [op("aten::mul", 300 * i + 60, 194) for i in range(1, 6)]
    _, d = _one(ev)
    assert d.idle.cause_s("launch_overhead") == pytest.approx(5 * (190 + 5) * US)
    assert d.idle.cause_s("host_work") == pytest.approx(5 * 55 * US)
    assert d.remedies[0].startswith("Capture the step in a CUDA graph")


def test_one_slow_step_holding_the_verdict_is_named():
    ev = []
    t = 1000.0
    for i in range(5):
        wall = 20000.0 if i == 2 else 1000.0
        ev.append(op(f"ProfilerStep#{i}", t, wall, cat="user_annotation"))
        if i == 2:  # a checkpoint-like slow step: 19 ms in the DataLoader
            ev.append(op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 1, 18990, cat="user_annotation"))
            ev += launch(t + wall - 996, t + wall - 990, 980, i)
        else:
            ev += launch(t + 2, t + 10, 980, i)
        t += wall
    _, d = _one(ev)
    assert d.idle_pct > 30
    assert len(d.idle.steps) == 5 and d.idle.steps[2].first_cause == "data_loading"
    assert d.idle.step_median["idle_pct"] == pytest.approx(2.0)  # 20 of 1000 us idle in a typical step
    # The window's time is the verdict's (data loading), and it says that one step holds it.
    assert d.verdict == "data-loading-bound"
    assert "100% of it is in one step, ProfilerStep#2 (20 ms); the median of the 5 steps is idle 2%" in d.reasons[1]
    # Per step, busy + idle = wall.
    for s in d.idle.steps:
        assert s.busy_s + s.idle_s == pytest.approx(s.wall_s)
    assert d.idle.steps[0].busy_s == pytest.approx(980 * US)


def test_communication_overlap_with_compute():
    ev = launch(10, 100, 200, 1, stream=20, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)")
    ev += launch(20, 150, 100, 2, stream=7, name="sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas")
    ev += launch(30, 400, 50, 3, stream=7)
    ev += launch(40, 460, 50, 4, stream=7)
    _, d = _one(ev)
    c = d.communication
    assert c.kernels == 1 and c.comm_s == pytest.approx(200 * US)
    assert c.overlapped_s == pytest.approx(100 * US) and c.exposed_s == pytest.approx(100 * US) and c.overlap_pct == pytest.approx(50)
    assert {k.kind for k in d.kinds} == {"communication", "gemm", "elementwise"}


@pytest.mark.parametrize("name, kind", [
    ("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "communication"),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t> >", "attention"),
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float>::Params)", "attention"),
    ("sm90_xmma_dgrad_implicit_gemm_indexed_f32f32_tf32f32_f32_nhwckrsc_nchw", "convolution"),
    ("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", "gemm"),
    ("void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>", "gemm"),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", "normalization"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float>>>", "reduction"),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, Epilogue>", "reduction"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", "elementwise"),
    ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, normal_kernel>", "elementwise"),
    ("triton_poi_fused_add_mul_0", "elementwise"),
    ("triton_red_fused_sum_1", "reduction"),
    ("void at::native::index_select_kernel", "other"),
])
def test_kernel_kinds(name, kind):
    assert kernel_kind(name) == kind


def test_amdahl_bounds():
    assert amdahl_x(10.0, 2.0) == pytest.approx(1.25)
    assert amdahl_x(10.0, 8.0) == pytest.approx(5.0)  # 20% left: at most 5x
    assert amdahl_x(1.0, 1.0) == float("inf")


def test_host_stray_and_a_kernel_before_its_launch_are_dropped():
    ev = []
    for i in range(20):
        ev += launch(1e12 + 100 * i, 1e12 + 100 * i + 8, 5, i)
    ev.append(op("aten::mul", 2.0, 3.0))  # a host event at 2 us while the clock reads 1e12 us
    ev[1]["ts"] = 1e12 - 5000.0  # the first kernel 5 ms before its launch call
    r, d = _one(ev)
    assert r.dropped == {"host events with a timestamp far outside the rest of the trace": 1,
                         "GPU events that start before their own launch call": 1}
    assert d.kernels == 19 and r.capture_s < 0.01


def test_many_kernels_before_their_launch_are_a_clock_note_not_drops():
    ev = []
    for i in range(20):
        ev += launch(1e12 + 100 * i, 1e12 + 100 * i - 4000, 5, i)
    r, d = _one(ev)
    assert d.kernels == 20 and not r.dropped
    assert any("clocks disagree" in n for n in r.notes)


def test_unlinked_kernels_are_unexplained():
    ev = [kern(100 + 50 * i, 5, None) for i in range(6)]
    for e in ev:
        del e["args"]["correlation"]
    _, d = _one(ev)
    assert d.idle.cause_s("unexplained") == pytest.approx(5 * 45 * US)
    assert d.verdict == "idle-unattributed"
