"""The idle-cause rules of `gpuwhy trace` (importers/timeline/gaps.py) at their edges, on small traces built
here with the figures worked out by hand (us, as kineto writes them): the gaps before the first and after
the last GPU work inside a profiled step, when a launch counts as late, which wait made queued work wait,
and the warm-up rule's count and median. tests/test_torch_trace_causes.py holds one worked case per rule;
this file pins what those leave loose.
"""

from __future__ import annotations

import pytest

from test_torch_trace_causes import US, _one, kern, launch, op, rt

T = 1000.0  # a trace's first timestamp (a host event at 0 is dropped as a stray)


def step(name, ts, dur):
    return op(name, ts, dur, cat="user_annotation")


def _us(d: dict) -> dict:
    """Non-zero figures of a {cause: s} map, in us rounded to 1e-6 us."""
    return {k: round(v / US, 6) for k, v in d.items() if v}


def _causes(d) -> dict:
    return {c.key: round(c.time_s / US, 6) for c in d.idle.causes}


def _waited(d) -> str:
    """The dependency waits' "it waited for: ..." evidence line ('' without any)."""
    dep = next((c for c in d.idle.causes if c.key == "dependency_wait"), None)
    return next((e for e in dep.evidence if e.startswith("it waited for:")), "") if dep else ""


# --- a profiled step around the GPU work -------------------------------------------------------


def test_one_kernel_inside_one_step():
    # step T..T+1000; the kernel launched at T+100 runs T+200..T+300. Before it (T..T+200) the host was late:
    # T..T+100 issuing nothing (host work), T+100..T+200 the launch call to the kernel's start (launch overhead);
    # after it (T+300..T+1000) nothing else came, the host issuing nothing since T+104: host work.
    _, d = _one([step("ProfilerStep#0", T, 1000)] + launch(T + 100, T + 200, 100, 1))
    (s,) = d.idle.steps
    assert (round(s.wall_s / US, 6), round(s.busy_s / US, 6), round(s.idle_s / US, 6)) == (1000, 100, 900)
    assert _us(s.causes_s) == {"host_work": 800, "launch_overhead": 100}
    assert _causes(d) == {}  # no gap inside the GPU's own span


def test_the_gap_before_the_first_work_belongs_to_that_work():
    # step T+50..T+1000. Kernel 1 launched at T+10 (before the step), runs T+100..T+150; kernel 2 launched at T+60,
    # runs T+300..T+350. Gap T+50..T+100: kernel 1 was launched ahead and waited 50 us, longer than launch
    # latency: a dependency wait. Gap T+150..T+300: kernel 2 launched ahead too: 150. After T+350: the host,
    # issuing nothing since T+64: host work, 650. Busy 100 of 950.
    ev = [step("ProfilerStep#0", T + 50, 950), rt("cudaLaunchKernel", T + 10, 4, 1), kern(T + 100, 50, 1),
          rt("cudaLaunchKernel", T + 60, 4, 2), kern(T + 300, 50, 2)]
    _, d = _one(ev)
    (s,) = d.idle.steps
    assert (round(s.busy_s / US, 6), round(s.idle_s / US, 6)) == (100, 850)
    assert _us(s.causes_s) == {"dependency_wait": 200, "host_work": 650}
    assert _causes(d) == {"dependency_wait": 150}
    assert _waited(d) == "it waited for: the trace does not say 150 us"
    # kernel 2 on another stream with a wait queued before anything (T+5): the gap before it waited on the other
    # stream's event (150); the step's first gap did not say (its work has no earlier work to have waited for)
    ev = ev[:-1] + [kern(T + 300, 50, 2, stream=9), rt("cudaStreamWaitEvent", T + 5, 1, corr=50)]
    _, d = _one(ev)
    assert _us(d.idle.steps[0].causes_s) == {"dependency_wait": 200, "host_work": 650}
    assert _causes(d) == {"dependency_wait": 150}
    assert _waited(d) == "it waited for: another stream's event 150 us"


# --- late or ahead -----------------------------------------------------------------------------


def test_a_launch_call_starting_as_the_gpu_goes_idle_is_late():
    # kernel 1 T+100..T+200; kernel 2's launch call starts at T+200 and takes no time, the kernel runs T+210..T+220:
    # the host issued it only as the GPU went idle: 10 us of launch overhead
    ev = launch(T + 10, T + 100, 100, 1) + [rt("cudaLaunchKernel", T + 200, 0, 2), kern(T + 210, 10, 2)]
    assert _causes(_one(ev)[1]) == {"launch_overhead": 10}


def test_a_launch_call_that_returned_as_the_gpu_went_idle_had_queued_its_work():
    # kernel 2's launch call T+196..T+200 returned at the moment kernel 1 ended: queued, 10 us of launch latency
    # (at most QUEUE_LATENCY_US: queue latency, not a dependency wait)
    ev = launch(T + 10, T + 100, 100, 1) + [rt("cudaLaunchKernel", T + 196, 4, 2), kern(T + 210, 10, 2)]
    assert _causes(_one(ev)[1]) == {"queue_latency": 10}
    # starting 0.5 us later it waited on something: a dependency wait
    ev = launch(T + 10, T + 100, 100, 1) + [rt("cudaLaunchKernel", T + 196, 4, 2), kern(T + 210.5, 10, 2)]
    assert _causes(_one(ev)[1]) == {"dependency_wait": 10.5}
    # returning 1 us later, it was still running: late
    ev = launch(T + 10, T + 100, 100, 1) + [rt("cudaLaunchKernel", T + 196, 5, 2), kern(T + 210, 10, 2)]
    assert _causes(_one(ev)[1]) == {"launch_overhead": 10}


# --- which queued work waited on another stream -----------------------------------------------


def _two_streams(wait_ts, first_linked=True):
    """a (stream 7) launched at T+10 runs T+100..T+200; b (stream 9) launched at T+14 runs T+230..T+232;
    c (stream 7) launched at T+20 runs T+262..T+264; one cudaStreamWaitEvent at ``wait_ts``. Both gaps
    (30 us) are longer than launch latency: dependency waits."""
    a = launch(T + 10, T + 100, 100, 1) if first_linked else [kern(T + 100, 100, None)]
    if not first_linked:
        del a[0]["args"]["correlation"]
    return a + launch(T + 14, T + 230, 2, 2, stream=9) + launch(T + 20, T + 262, 2, 3) + [
        rt("cudaStreamWaitEvent", wait_ts, 1, corr=50)]


def test_a_wait_counts_for_work_queued_since_its_streams_previous_launch():
    # wait at T+5: before b's launch (b has no earlier work on stream 9): b's gap T+200..T+230 waited on stream 7.
    # c's previous work on stream 7 is a, launched at T+10: no wait since, so the trace does not say what c's
    # gap T+232..T+262 waited for, though the work that ended last (b) ran on another stream.
    d = _one(_two_streams(T + 5))[1]
    assert _causes(d) == {"dependency_wait": 60}
    assert _waited(d) == "it waited for: another stream's event 30 us; the trace does not say 30 us"
    # wait at T+12: after a's launch and before c's: both gaps are waits on the other stream
    assert _waited(_one(_two_streams(T + 12))[1]) == "it waited for: another stream's event 60 us"
    # a not linked to any launch: its launch time is unknown, so any wait before c's launch counts (T+5)
    assert _waited(_one(_two_streams(T + 5, first_linked=False))[1]) == "it waited for: another stream's event 60 us"


def test_the_previous_work_on_the_same_stream_is_found_across_others():
    # stream 7: a (T+100..T+200), c (T+222..T+224); stream 9: b (T+220..T+222), e (T+260..T+262); wait at T+12.
    # b: no earlier stream-9 work, the wait (T+12) before its launch (T+14): waited 20 us on stream 7.
    # e: its previous stream-9 work is b, launched at T+14, after the wait: the trace does not say (36 us; c
    # ran last, on stream 7).
    ev = (launch(T + 10, T + 100, 100, 1) + launch(T + 14, T + 220, 2, 2, stream=9) + launch(T + 15, T + 222, 2, 3)
          + launch(T + 18, T + 260, 2, 4, stream=9) + [rt("cudaStreamWaitEvent", T + 12, 1, corr=50)])
    d = _one(ev)[1]
    assert _causes(d) == {"dependency_wait": 56}
    assert _waited(d) == "it waited for: the trace does not say 36 us; another stream's event 20 us"


def test_the_work_that_ended_last_decides_which_stream_was_waited_for():
    # a (stream 7) T+100..T+300 encloses b (stream 9) T+110..T+120: the GPU goes idle at T+300 when a ends.
    # c (stream 9) launched at T+20 runs T+330..T+332, after a wait at T+15 (since b's launch at T+12):
    # it waited on stream 7 (a), 30 us
    ev = (launch(T + 10, T + 100, 200, 1) + launch(T + 12, T + 110, 10, 2, stream=9) + launch(T + 20, T + 330, 2, 3, stream=9)
          + [rt("cudaStreamWaitEvent", T + 15, 1, corr=50)])
    d = _one(ev)[1]
    assert _causes(d) == {"dependency_wait": 30} and _waited(d) == "it waited for: another stream's event 30 us"


# --- warm-up -----------------------------------------------------------------------------------


def _warm(later, ahead=0, first_host=4880.0):
    """first_kernel, then K: its first launch after ``first_host`` us in aten::conv2d (gap T+110..T+first_host+120),
    then ``later`` launches 50 us after the GPU went idle (36 in aten::conv2d, 4 outside, 10 launch), then ``ahead``
    launches issued early that start as the previous K ends (no gap)."""
    ev = launch(T + 90, T + 100, 10, 1, name="first_kernel")
    ev.append(op("aten::conv2d", T + 112, first_host))
    g1 = T + 120 + first_host
    ev += launch(g1 - 5, g1, 10, 2)
    end, corr = g1 + 10, 3
    for _ in range(later):
        ev.append(op("aten::conv2d", end + 2, 36))
        ev += launch(end + 40, end + 50, 10, corr)
        end, corr = end + 60, corr + 1
    for _ in range(ahead):
        ev += launch(end - 8, end, 10, corr)
        end, corr = end + 10, corr + 1
    return ev


#: The first gap's 4,890 us before K's first launch: 4,885 issuing no GPU work (aten::conv2d launches nothing:
#: host work), 5 from the launch call to the kernel. Each later gap: 40 us in a short stretch (dispatch) and
#: 10 of launch, 50 us of launch overhead.
FIRST_WORK, FIRST_LAUNCH = 4885.0, 5.0


def _split(kept: float) -> tuple[float, float]:
    """(host work, launch) of ``kept`` us of the first gap's 4,890 that are not warm-up."""
    return round(kept * FIRST_WORK / 4890, 6), round(kept * FIRST_LAUNCH / 4890, 6)


def test_warm_up_needs_three_runs_of_the_kernel():
    # 3 runs: the first gap's 4,890 us less the median of the 2 later ones (50) is warm-up: 4,840; 50 of it
    # stays with its causes, and the 2 later gaps add 2 x 50 of launch overhead
    d = _one(_warm(2))[1]
    work, launch_ = _split(50)
    assert _causes(d) == {"warmup": 4840, "launch_overhead": round(100 + launch_, 6), "host_work": work}
    # 2 runs: no warm-up
    assert _causes(_one(_warm(1))[1]) == {"host_work": FIRST_WORK, "launch_overhead": FIRST_LAUNCH + 50}


def test_later_runs_that_waited_for_nothing_count_as_zero_in_the_median():
    # 3 runs: one later launch waited 50 us, the other was queued ahead (0): median(50, 0) = 25;
    # warm-up 4,890 - 25 = 4,865; 25 stays, and the later gap's 50
    work, launch_ = _split(25)
    assert _causes(_one(_warm(1, ahead=1))[1]) == {"warmup": 4865, "launch_overhead": round(50 + launch_, 6),
                                                   "host_work": work}


def test_no_warm_up_when_the_first_run_waited_less_than_the_later_ones():
    # first gap 30 us (25 issuing nothing, a stretch of 41 us since the last launch call: dispatch; 5 launch),
    # later ones 50: warm-up 0, not negative; all launch overhead
    assert _causes(_one(_warm(2, first_host=20))[1]) == {"launch_overhead": 130}


def test_warm_up_of_a_first_run_whose_wait_was_all_sync_or_one_microsecond():
    # first run of K after a gap (T+110..T+300) that a 200 us cudaStreamSynchronize covers, launched at T+300 as it
    # starts: no host-launch time at all, so no warm-up share (never 0 / 0); its 2 later runs are queued ahead
    ev = launch(T + 90, T + 100, 10, 1, name="first_kernel") + [rt("cudaStreamSynchronize", T + 50, 200)]
    ev += [rt("cudaLaunchKernel", T + 300, 2, 2), kern(T + 300, 10, 2)]
    ev += launch(T + 302, T + 310, 10, 3) + launch(T + 304, T + 320, 10, 4)
    assert _causes(_one(ev)[1]) == {"host_sync": 190}
    # first run 1 us late (launch call at T+110 as the GPU goes idle, the kernel at T+111), later runs queued: the
    # whole 1 us is warm-up (median of the later ones 0)
    ev = launch(T + 90, T + 100, 10, 1, name="first_kernel") + [rt("cudaLaunchKernel", T + 110, 0.5, 2), kern(T + 111, 10, 2)]
    ev += launch(T + 112, T + 121, 10, 3) + launch(T + 114, T + 131, 10, 4)
    assert _causes(_one(ev)[1]) == {"warmup": 1}


def test_the_launch_overhead_split_keeps_the_steady_share_of_a_warm_up_gap():
    # 5 runs of K: the first gap (4,890 us: 4,885 issuing nothing, 5 launch) is warm-up but for the later runs'
    # median 50 us, so 50 / 4,890 of each of its parts stays: host work 4,885 x 50 / 4,890 = 49.95 us, launch
    # 5 x 50 / 4,890; the 4 later gaps add 40 us of dispatch and 10 of launch each. No operator makes a launch.
    d = _one(_warm(4))[1]
    lo = next(c for c in d.idle.causes if c.key == "launch_overhead")
    assert lo.evidence[0] == ("5 gaps where the next launch came after the GPU had gone idle: 0 s in launch calls and the "
                              "operators that make them (top: aten::conv2d 194 us), 160 us in stretches under 100 us "
                              "between them (dispatch, Python glue), 40.1 us from launch call to GPU start")
    assert d.idle.outside_ops_s == pytest.approx((4885 * 50 / 4890 + 160) * US, rel=1e-12)
    work, launch_ = _split(50)
    assert _causes(d) == {"warmup": 4840, "launch_overhead": round(200 + launch_, 6), "host_work": work}


# --- the host's share of a gap -----------------------------------------------------------------


def test_host_operators_are_named_only_for_the_time_after_the_sync():
    # .item() (T+12..T+2020) blocks in a 2,000 us sync that covers each gap's whole host window: no host operator
    # is named as what the GPU waited for (it waited for the sync)
    P = 3215.0
    ev = []
    for i in range(5):
        t = T + i * P
        ev += [rt("cudaLaunchKernel", t, 5, 10 * i), kern(t + 10, 1000, 10 * i)]
        ev += [rt("cudaLaunchKernel", t + 6, 4, 10 * i + 1), kern(t + 1010, 1000, 10 * i + 1)]
        ev += [op("aten::item", t + 12, 2008), rt("cudaStreamSynchronize", t + 15, 2000)]
    d = _one(ev)[1]
    assert _causes(d) == {"host_sync": 4 * 1205, "launch_overhead": 4 * 10}
    assert d.idle.host_ops == ()


def test_a_sync_during_the_busy_stretch_gates_the_gap_after_it():
    # .item() blocks the host T+20..T+600 while a 1000 us kernel runs; the host then launches a 100 us kernel
    # (T+610, runs T+1100..T+1200: the GPU never idles) and does 500 us of host work before the next launch
    # (T+1700, kernel T+1710). The gap T+1200..T+1710 follows a sync that returned in the busy stretch
    # (T+600, after the last gap): without it the host would have been 580 us ahead, so the first 500 us of
    # the 500 us window up to the launch are the sync's; the 10 us launch is launch overhead.
    ev = launch(T + 10, T + 100, 1000, 1) + [rt("cudaStreamSynchronize", T + 20, 580)]
    ev += launch(T + 610, T + 1100, 100, 2) + launch(T + 1700, T + 1710, 100, 3) + launch(T + 1810, T + 1820, 50, 4)
    d = _one(ev)[1]
    assert _causes(d) == {"host_sync": 500, "launch_overhead": 10 + 10}
    # the same host work with no sync before it is host work
    ev = launch(T + 10, T + 100, 1000, 1) + launch(T + 610, T + 1100, 100, 2) + launch(T + 1700, T + 1710, 100, 3)
    ev += launch(T + 1810, T + 1820, 50, 4)
    assert _causes(_one(ev)[1]) == {"host_work": 500, "launch_overhead": 10 + 10}


def test_a_sync_before_the_gpus_first_work_gates_no_later_gap():
    # cudaDeviceSynchronize T..T+500 returns before any GPU work; kernel 1 (launched T+510) runs T+520..T+600; then
    # aten::foo T+600..T+900 and kernel 2's launch at T+900 (runs T+905): the gap T+600..T+905 follows the GPU's
    # first busy stretch, which began after the sync returned, so the sync gated nothing of it: 300 us in an
    # operator and 5 of launch, launch overhead. Where the step begins (at the first work, 1 us before it, or no
    # step) does not change that.
    def trace(step_at):
        ev = [rt("cudaDeviceSynchronize", T, 500)] + launch(T + 510, T + 520, 80, 1) + [op("aten::foo", T + 600, 300)]
        ev += launch(T + 900, T + 905, 95, 2) + launch(T + 910, T + 1000, 50, 3)
        return ev + ([step("ProfilerStep#0", step_at, T + 1100 - step_at)] if step_at is not None else [])

    for at in (None, T + 520, T + 519):
        assert _causes(_one(trace(at))[1]) == {"launch_overhead": 305}, at


def test_a_sync_before_a_steps_first_work_gates_the_gap_that_opens_the_step():
    # step T..T+400: the host blocks in cudaStreamSynchronize T+10..T+200 (on work from before the trace), then
    # launches the step's kernel at T+200 (runs T+210..T+300). The gap T..T+210 that opens the step: its first
    # 190 us are the sync's; T+190..T+200 the host is still in the sync call and T+200..T+210 the launch: launch
    # overhead, 20; after the kernel the host issues nothing: host work, 100.
    ev = [step("ProfilerStep#0", T, 400), rt("cudaStreamSynchronize", T + 10, 190)] + launch(T + 200, T + 210, 90, 1)
    (s,) = _one(ev)[1].idle.steps
    assert _us(s.causes_s) == {"host_sync": 190, "launch_overhead": 20, "host_work": 100}


def test_a_one_kernel_step_whose_kernel_was_queued_before_it():
    # step T+50..T+300; the only kernel, launched at T+10 after a cudaStreamWaitEvent (T+5), runs T+100..T+150: the
    # step waited 50 us on queued work (a dependency wait), then 150 with the host issuing nothing since T+14
    ev = [step("ProfilerStep#0", T + 50, 250), rt("cudaStreamWaitEvent", T + 5, 1, corr=50)] + launch(T + 10, T + 100, 50, 1)
    (s,) = _one(ev)[1].idle.steps
    assert _us(s.causes_s) == {"dependency_wait": 50, "host_work": 150}


NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def test_a_wait_after_the_traces_first_work_a_collective_is_a_wait_for_the_collective():
    # the all-reduce (the trace's first work, stream 7) T+100..T+200; a kernel on stream 9 queued at T+14 starts
    # at T+250: a 50 us dependency wait next to a collective
    ev = launch(T + 10, T + 100, 100, 1, name=NCCL) + launch(T + 14, T + 250, 20, 2, stream=9)
    d = _one(ev)[1]
    assert _causes(d) == {"dependency_wait": 50} and _waited(d) == "it waited for: a collective 50 us"


def test_a_host_callback_counts_when_queued_between_the_previous_launch_on_the_stream_and_the_work():
    # stream 7: a launched at T+10 runs T+100..T+200; b launched at T+14 starts at T+250: a 50 us dependency wait
    def waited(callback_at, a_linked=True):
        ev = launch(T + 10, T + 100, 100, 1) + launch(T + 14, T + 250, 20, 2) + [rt("cudaLaunchHostFunc", callback_at, 1)]
        if not a_linked:
            del ev[1]["args"]["correlation"]
            del ev[0]
        return _waited(_one(ev)[1])

    assert waited(T + 12) == "it waited for: a host callback 50 us"  # queued between a's launch and b's
    assert waited(T + 5) == "it waited for: the trace does not say 50 us"  # before a's launch: a ran after it
    assert waited(T + 5, a_linked=False) == "it waited for: a host callback 50 us"  # a's launch unknown: any before b's


def test_split_unclipped_is_the_traces_split_and_launch_overhead_is_its_three_parts(monkeypatch):
    # the warm-up trace of 5 runs of K, K launched inside aten::conv2d: the split of the gaps with no clip given is
    # the trace's own, and launch overhead is exactly its parts in operators, in dispatch and in launch, warm-up or not
    import numpy as np

    from gpuwhy.importers.timeline import analyze as A
    from gpuwhy.importers.timeline.gaps import split

    seen = {}
    orig = A.classify

    def spy(track, view, *a, **k):
        seen["gaps"], seen["view"] = orig(track, view, *a, **k), view
        return seen["gaps"]

    monkeypatch.setattr(A, "classify", spy)
    ev = launch(T + 90, T + 100, 10, 1, name="first_kernel") + [op("aten::conv2d", T + 112, 4890)]
    ev += launch(T + 4995, T + 5010, 10, 2)
    for i in range(4):
        t = T + 5020 + 60 * i
        ev += [op("aten::conv2d", t + 2, 44)] + launch(t + 40, t + 50, 10, 3 + i)
    d = _one(ev)[1]
    gaps = seen["gaps"]
    got = split(gaps, seen["view"], np.flatnonzero(gaps.inner))
    assert {k: round(v, 6) for k, v in got.items() if v and not k.startswith("_")} == _causes(d)
    assert got["warmup"] > 0 and got["_in_ops"] > 0
    assert got["_in_ops"] + got["_dispatch"] + got["_launch"] == pytest.approx(got["launch_overhead"], rel=1e-12)


def test_a_pageable_copy_staged_inside_a_dataloader_range_is_the_copys_not_the_loaders():
    # Kernel 1 runs T+100..T+110. The host is in the DataLoader T+115..T+415 and, inside it, stages a pageable copy
    # (its call T+200..T+260); the copy itself runs on stream 8 at T+465, after the next kernel (launched T+441, runs
    # T+450..T+460): so the gap T+110..T+450 holds the whole call. Its window T+110..T+441: the staging 60 us is
    # pageable_copy, the rest of the DataLoader 300 - 60 = 240 us data loading, 5 + 26 us of glue and the 9 us
    # launch latency launch overhead. Then T+460..T+465: the copy was queued: queue latency.
    ev = launch(T + 90, T + 100, 10, 1)
    ev.append(op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", T + 115, 300, cat="user_annotation"))
    ev.append(rt("cudaMemcpyAsync", T + 200, 60, corr=2))
    ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 8,
               "ts": T + 465, "dur": 10, "args": {"device": 0, "stream": 8, "correlation": 2, "bytes": 100_000}})
    ev += launch(T + 441, T + 450, 10, 3)
    _, d = _one(ev)
    assert _causes(d) == {"data_loading": 240, "pageable_copy": 60, "launch_overhead": 40, "queue_latency": 5}
