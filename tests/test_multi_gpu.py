"""Several GPUs in one host without a GPU: the scheduling decision (model/schedule.py), the
slowest GPU, the worker processes (bench/fanout.py) and `gpuwhy check -i all` on fake 2- and
8-GPU nodes (tests/fakes.py), with a fake observe_device (tests/fanout_workers.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import pytest

import fanout_workers as W
from fakes import Machine, h200_node
from gpuwhy.bench import fanout
from gpuwhy.errors import MeasurementError, UsageError
from gpuwhy.model.multi_gpu.schedule import SHARED, ordered_pairs, plan_runs, slowest_gpu, unordered_pairs

# --------------------------------------------------------------------------- the plan


def test_own_gpu_measurements_run_all_at_once():
    p = plan_runs("check", 8)
    assert p.stages == (tuple(range(8)),) and p.workers == 8 and p.parallel
    assert p.why == "all 8 GPUs at once, one worker each: check uses only its own GPU"
    assert plan_runs("quick", 8, cpus=8).stages == (tuple(range(8)),)  # one core per worker: just enough


def test_fewer_cpus_than_gpus_limits_the_workers():
    p = plan_runs("check", 8, cpus=7)
    assert p.stages == ((0, 1, 2, 3, 4, 5, 6), (7,)) and p.workers == 7
    assert p.why == "7 GPUs at a time (CPU cores: 7): check uses only its own GPU"
    assert plan_runs("compute", 8, cpus=2).stages == ((0, 1), (2, 3), (4, 5), (6, 7))
    q = plan_runs("latency", 5, cpus=16, max_workers=2)
    assert q.stages == ((0, 1), (2, 3), (4,)) and "the worker limit: 2" in q.why


@pytest.mark.parametrize("what", sorted(SHARED))
def test_shared_bottlenecks_run_one_gpu_after_another(what):
    p = plan_runs(what, 8, cpus=64)
    assert p.stages == tuple((i,) for i in range(8)) and p.workers == 1 and not p.parallel
    assert p.why.startswith(f"one GPU after another: {what} shares ")


def test_one_gpu_and_bad_plans():
    p = plan_runs("check", 1, cpus=64)
    assert p.stages == ((0,),) and not p.parallel and p.why == "1 GPU: one worker"
    with pytest.raises(ValueError, match="nothing to plan for 0 GPUs"):
        plan_runs("check", 0)
    with pytest.raises(ValueError, match="cpus=0 must be at least 1"):
        plan_runs("check", 2, cpus=0)
    assert plan_runs("check", 2, cpus=1).stages == ((0,), (1,))  # one CPU: one at a time, but allowed
    assert plan_runs("check", 2, max_workers=1).workers == 1
    with pytest.raises(ValueError, match="unknown measurement 'allreduce'"):
        plan_runs("allreduce", 2)
    assert plan_runs("check", 2).to_dict() == {"what": "check", "parallel": True, "workers": 2, "stages": [[0, 1]],
                                               "why": "all 2 GPUs at once, one worker each: check uses only its own GPU"}


def test_pairs():
    assert ordered_pairs(3) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    assert len(ordered_pairs(8)) == 8 * 7 and len(unordered_pairs(8)) == 8 * 7 // 2
    assert unordered_pairs(1) == [] and ordered_pairs(1) == []


# --------------------------------------------------------------------------- the slowest GPU

FIGS = {"bw": True, "lat": False}


def test_slowest_is_the_worst_ratio_to_the_median():
    rows = [{"bw": 100.0, "lat": 2.0}, {"bw": 90.0, "lat": 2.0}, {"bw": 100.0, "lat": 2.0}]
    s = slowest_gpu(rows, FIGS)
    assert (s.position, s.figure, s.value, s.median) == (1, "bw", 90.0, 100.0) and s.ratio == pytest.approx(0.9)
    # a latency 12% above the median (median/value = 2/2.25 = 0.889) is worse than 10% less bandwidth (0.9)
    rows[2]["lat"] = 2.25
    s = slowest_gpu(rows, FIGS)
    assert (s.position, s.figure) == (2, "lat") and s.ratio == pytest.approx(2.0 / 2.25)
    # 2.22: median/value = 0.9009, just better than 0.9: the bandwidth GPU is the slowest again
    rows[2]["lat"] = 2.22
    assert slowest_gpu(rows, FIGS).position == 1


def test_slowest_ties_missing_values_and_one_gpu():
    assert slowest_gpu([{"bw": 5.0}, {"bw": 5.0}], FIGS).position == 0  # a tie: the first
    # a tie across figures: the first GPU, whatever the figures' names
    tie = slowest_gpu([{"lat": 2.0, "bw": 10.0}, {"lat": 1.8, "bw": 9.0}, {"lat": 1.8, "bw": 11.0}], FIGS)
    assert (tie.position, tie.figure) == (0, "lat") and tie.ratio == pytest.approx(0.9)
    # figures below 1 (0.5 TFLOP/s) count like any other
    low = slowest_gpu([{"bw": 0.5}, {"bw": 0.4}, {"bw": 0.5}], FIGS)
    assert (low.position, low.median) == (1, 0.5)
    assert slowest_gpu([{"bw": 5.0}], FIGS) is None  # one GPU: nothing to compare
    assert slowest_gpu([{"bw": 5.0}, {"bw": None}, {"lat": 1.0}], FIGS) is None  # no figure on two GPUs
    s = slowest_gpu([{"bw": 5.0}, {"bw": 0.0}, {"bw": 4.0}], FIGS)  # 0 is "not measured", never the slowest
    assert (s.position, s.median) == (2, 4.5)


# --------------------------------------------------------------------------- the workers


def test_inline_runs_in_order_and_keeps_errors(monkeypatch):
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")
    seen = []

    def worker(i):
        seen.append(i)
        if i == 2:
            raise MeasurementError("kernel result wrong")
        return i * 10

    outs = fanout.run_plan(plan_runs("check", 4, cpus=2), worker, [(i,) for i in range(4)])
    assert seen == [0, 1, 2, 3] and [o.value for o in outs] == [0, 10, None, 30]
    assert (outs[2].exit_code, outs[2].error, outs[2].ok) == (4, "kernel result wrong", False)
    err = fanout.error_of([("GPU 2 (GPU-x)", outs[2])])
    assert isinstance(err, MeasurementError) and str(err) == "1 GPU failed: GPU 2 (GPU-x): kernel result wrong"
    with pytest.raises(ValueError, match="3 argument tuples for a plan of 4 GPUs"):
        fanout.run_plan(plan_runs("check", 4), worker, [(0,), (1,), (2,)])


def test_inline_bugs_propagate_and_bad_mode(monkeypatch):
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")
    with pytest.raises(ValueError, match="a bug"):
        fanout.run_plan(plan_runs("check", 2), W.fail_bug, [("a bug",), ("a bug",)])
    monkeypatch.setenv("GPUWHY_WORKERS", "threads")
    with pytest.raises(UsageError, match="GPUWHY_WORKERS='threads' is not process or inline"):
        fanout.run_plan(plan_runs("check", 2), W.span, [(0, 0), (0, 1)])


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_pinning_to_the_gpus_cpus_and_back(monkeypatch):
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")
    before = fanout.usable_cpus()
    first = before[0]
    outs = fanout.run_plan(plan_runs("link", 2), W.cpus_now, [(0,), (1,)], cpus=[(first,), (10_000,)])
    assert outs[0].value == (first,) and outs[0].cpus == (first,)
    assert outs[1].value == before and outs[1].cpus == ()  # CPUs this process may not use: not pinned
    assert fanout.usable_cpus() == before  # restored


def test_worker_processes_run_at_once_and_report_errors(monkeypatch):
    monkeypatch.delenv("GPUWHY_WORKERS", raising=False)
    plan = plan_runs("check", 4, cpus=4)
    args = [(0.6, "a"), (0.6, "b"), ("ECC error on the fake GPU",), ("bad index",)]
    workers = [W.span, W.span, W.fail_measure, W.fail_bug]
    outs = fanout._in_processes([(i, workers[i], args[i], ()) for i in plan.stages[0]])
    (a, pa, sa, ea), (b, pb, sb, eb) = outs[0].value, outs[1].value
    assert (a, b) == ("a", "b") and len({pa, pb, os.getpid()}) == 3  # two processes, neither this one
    assert max(sa, sb) < min(ea, eb)  # they overlapped: the second started before the first ended
    assert (outs[2].exit_code, outs[2].error) == (4, "ECC error on the fake GPU")
    assert (outs[3].exit_code, outs[3].error) == (70, "ValueError: bad index")
    assert multiprocessing.active_children() == []


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timer")
def test_ctrl_c_ends_the_workers_within_a_second():
    def ctrl_c(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, ctrl_c)
    t0 = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            fanout._in_processes([(0, W.span, (60, "x"), ()), (1, W.span, (60, "y"), ())])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.perf_counter() - t0 < 2.5  # 0.5 s to the fake Ctrl-C, then the workers are ended, not waited for
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------- gpuwhy check on fake nodes


@pytest.fixture
def node8(monkeypatch, tmp_path):
    from gpuwhy.check import observe

    h200_node(Machine(monkeypatch, tmp_path), 8)
    monkeypatch.setattr(observe, "observe_device", W.fake_observe)
    return monkeypatch


def test_check_all_eight_gpus_one_table_and_the_slowest(node8, cli):
    node8.setenv("GPUWHY_WORKERS", "inline")
    node8.setenv("COLUMNS", "80")
    code, out, err = cli("check", "-i", "all")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= 80
    rows = [x.split() for x in lines if x.split()[:3] in ([str(i), "NVIDIA", "H200"] for i in range(8))]
    assert len(rows) == 8 and rows[5][3:5] == ["pass", "4,100"]  # GPU 5: 4,100 GB/s is 0.854 x 4,800 (>= 0.85: passes)
    text = " ".join(out.split())
    # the median of the 8 DRAM figures: (4,798 + 4,800) / 2 = 4,799; 4,100 / 4,799 = 0.854
    assert ("slowest: #5 NVIDIA H200 GPU-0a1b2c3d-0000-4000-8000-000000000205: DRAM bandwidth 4,100 GB/s, "
            "0.85x the median 4,799 GB/s") in text
    assert "schedule: one GPU after another in this process;" in text  # GPUWHY_WORKERS=inline


def test_check_all_json_has_one_entry_per_gpu(node8, cli):
    from test_schema import check_document

    node8.setenv("GPUWHY_WORKERS", "inline")
    code, out, err = cli("check", "--all-devices", "--json")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert len(doc["devices"]) == len(doc["observations"]) == 8 and doc["failed_devices"] == []
    s = doc["slowest"]
    assert (s["device_index"], s["figure"], s["value"], s["median"]) == (5, "dram_bandwidth_gbs", 4100.0, 4799.0)
    assert s["ratio"] == pytest.approx(4100 / 4799)
    sch = doc["schedule"]
    assert sch["what"] == "check" and sch["ran_in"] == "this process" and sorted(i for st in sch["stages"] for i in st) == list(range(8))
    assert 0 < sch["sum_of_gpus_s"] <= sch["wall_s"]  # inline: one after another, so the sum fits in the wall time


def test_one_gpu_failing_still_reports_the_others(node8, cli):
    from test_schema import check_document

    node8.setenv("GPUWHY_WORKERS", "inline")
    node8.setenv("FAKE_OBSERVE_FAIL", "3")
    code, out, err = cli("check", "-i", "all", "--json")
    assert code == 4
    assert err.strip() == ("gpuwhy: error: 1 GPU failed: GPU 3 (GPU-0a1b2c3d-0000-4000-8000-000000000203): "
                           "CUDA error CUDA_ERROR_ECC_UNCORRECTABLE in the bandwidth run")
    doc = json.loads(out)
    check_document(doc)
    assert len(doc["devices"]) == 7 and doc["status"] == "fail" and not doc["passed"]
    assert doc["failed_devices"] == [{"device": "GPU 3 (GPU-0a1b2c3d-0000-4000-8000-000000000203)", "exit_code": 4,
                                      "error": "CUDA error CUDA_ERROR_ECC_UNCORRECTABLE in the bandwidth run"}]


def test_check_one_gpu_keeps_its_own_error(monkeypatch, tmp_path, cli):
    from gpuwhy.check import observe

    h200_node(Machine(monkeypatch, tmp_path), 4)
    monkeypatch.setattr(observe, "observe_device", W.fake_observe)
    monkeypatch.setenv("FAKE_OBSERVE_FAIL", "3")
    code, out, err = cli("check", "-i", "3")
    assert code == 4 and err.strip() == "gpuwhy: error: CUDA error CUDA_ERROR_ECC_UNCORRECTABLE in the bandwidth run"
    code, out, err = cli("check", "-i", "2", "--json")
    assert code == 0 and json.loads(out)["schedule"] is None and json.loads(out)["slowest"] is None


def test_check_two_gpus_in_worker_processes(monkeypatch, tmp_path, cli):
    """The real process path: the fake observe_device runs in two spawned workers."""
    from gpuwhy.check import observe

    h200_node(Machine(monkeypatch, tmp_path), 2)
    monkeypatch.setattr(observe, "observe_device", W.fake_observe)
    monkeypatch.delenv("GPUWHY_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # 2 CPUs whatever the runner has
    code, out, err = cli("check", "-i", "all", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [o["uuid"][-1] for o in doc["observations"]] == ["0", "1"]
    assert doc["schedule"]["parallel"] and doc["schedule"]["stages"] == [[0, 1]]
    assert doc["schedule"]["ran_in"] == "worker processes"
    assert doc["slowest"]["device_index"] == 1  # 4,790 < 4,800 GB/s
