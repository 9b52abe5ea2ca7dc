"""The maths of `gpuwhy diff` (src/gpuwhy/diff/), on hand-built runs with the figures worked by hand."""

from __future__ import annotations

import math

import pytest

from gpuwhy.diff.align import align_kernels, align_operators, overlap
from gpuwhy.diff.budget import split_change
from gpuwhy.diff.compare import device_warnings, diff, unrelated, verdict_line
from gpuwhy.diff.predict import applied_remedy, score
from gpuwhy.diff.side import DeviceFacts, FigureValue, KernelStat, Prediction, Side, per_unit
from gpuwhy.errors import UsageError

MS = 1e-3


def test_the_change_is_split_by_cause_and_adds_up():
    # before 10 ms = host work 8 + kernels 2; after 4 ms = host work 1 + kernels 2.5 + copies 0.5
    s = split_change({"host_work": 8 * MS, "kernels": 2 * MS},
                     {"host_work": 1 * MS, "kernels": 2.5 * MS, "copy": 0.5 * MS})
    assert s.before_s == pytest.approx(10 * MS) and s.after_s == pytest.approx(4 * MS)
    assert s.delta_s == pytest.approx(-6 * MS)
    by = {c.cause: c for c in s.contributions}
    assert by["host_work"].delta_s == pytest.approx(-7 * MS)
    assert by["host_work"].change_pct == pytest.approx(700 / 6)  # -7 of -6: 116.7%
    assert by["kernels"].change_pct == pytest.approx(-50 / 6)  # +0.5 of -6: -8.3%
    assert by["copy"].before_s == 0 and by["copy"].delta_s == pytest.approx(0.5 * MS)
    assert sum(c.delta_s for c in s.contributions) == pytest.approx(s.delta_s, abs=1e-15)
    assert [c.cause for c in s.contributions][0] == "host_work"  # largest move first
    assert s.top.cause == "host_work" and [c.cause for c in s.named] == ["host_work"]
    assert s.explained_pct == pytest.approx(700 / 6)
    assert by["host_work"].label.startswith("host work")


def test_a_slower_run_names_what_grew_and_no_change_names_nothing():
    s = split_change({"kernels": 4 * MS, "host_sync": 1 * MS}, {"kernels": 4.2 * MS, "host_sync": 3 * MS})
    assert s.delta_s == pytest.approx(2.2 * MS)
    assert s.top.cause == "host_sync"  # +2 ms of +2.2 ms
    assert [c.cause for c in s.named] == ["host_sync", "kernels"]  # 90.9% and 9.1%, both over 5%
    assert s.explained_pct == pytest.approx(100.0)
    same = split_change({"kernels": 1.0}, {"kernels": 1.0})
    assert same.delta_s == 0 and same.top is None and same.named == () and same.explained_pct is None
    with pytest.raises(ValueError, match="finite number"):
        split_change({"kernels": -1.0}, {})


def test_a_budget_is_carried_over_to_one_step():
    assert per_unit({"a": 3.0, "b": 1.0}, 2.0) == {"a": 1.5, "b": 0.5}
    assert per_unit({}, 0.0) == {}
    with pytest.raises(ValueError, match="add up to 0"):
        per_unit({"a": 0.0}, 1.0)
    with pytest.raises(ValueError):
        per_unit({"a": math.nan}, 1.0)


def test_a_side_gives_its_median_step_and_spread():
    s = Side("a", "trace", {"kernels": 0.5}, 5, (0.10, 0.12, 0.11, 0.30, 0.09))
    assert s.step_s == pytest.approx(0.11)  # the median, not the mean (0.144)
    assert s.spread_s == pytest.approx(0.01)  # |x - 0.11|: 0.01 0.01 0 0.19 0.02 -> median 0.01
    m = Side("b", "run", {"kernels": 0.6}, 30)
    assert m.step_s == pytest.approx(0.02) and m.spread_s == 0.0  # the mean step, no spread known
    assert Side("c", "trace", {"kernels": 0.6}).step_s is None


def test_a_prediction_is_scored_against_what_was_achieved():
    preds = (Prediction("pin_memory", "pin", 3.4, ("pageable_copy",)), Prediction("cuda_graph", "graph", 1.02,
                                                                                  ("launch_overhead",)))
    got = score(preds, 2.9e-3, 1e-3, "pin_memory")
    pin = got[0]
    assert pin.applied and pin.achieved_x == pytest.approx(2.9)
    assert pin.of_ceiling_pct == pytest.approx(100 * 2.9 / 3.4)  # 85%
    assert not pin.wrong
    assert not got[1].applied and not got[1].wrong  # beaten, but not the fix applied
    beaten = score((Prediction("x", "", 2.0),), 10.0, 4.0, "x")[0]  # 2.5x against at most 2x
    assert beaten.wrong
    # with the runs' spread: (10 - 1) / (4 + 1) = 1.8x at the least, within the ceiling
    assert not score((Prediction("x", "", 2.0),), 10.0, 4.0, "x", 1.0, 1.0)[0].wrong
    unbounded = score((Prediction("x", "", None),), 10.0, 1.0, "x")[0]
    assert unbounded.of_ceiling_pct is None and not unbounded.wrong
    with pytest.raises(ValueError):
        score(preds, 0.0, 1.0, None)


def test_the_applied_remedy_is_the_first_removing_what_dropped():
    preds = (Prediction("cuda_graph", "", 9.6, ("launch_overhead", "queue_latency")),
             Prediction("bigger_launches", "", 9.6, ("launch_overhead",)), Prediction("fuse", "", 1.1, ("memory_bound",)))
    assert applied_remedy(preds, "launch_overhead") == "cuda_graph"
    assert applied_remedy(preds, "memory_bound") == "fuse"
    assert applied_remedy(preds, "host_work") is None
    assert applied_remedy(preds, None) is None
    assert applied_remedy(preds, None, "fuse") == "fuse"
    with pytest.raises(ValueError, match="cuda_graph, bigger_launches, fuse"):
        applied_remedy(preds, None, "pin_memory")


def test_kernels_pair_by_name_grid_and_block():
    g1, g2, b = (4, 1, 1), (528, 1, 1), (256, 1, 1)
    before = [KernelStat("sum", 8e-3, 1, g1, b), KernelStat("add", 1e-3, 2, (10, 1, 1), b)]
    after = [KernelStat("sum", 1e-3, 1, g2, b), KernelStat("add", 1.5e-3, 2, (10, 1, 1), b)]
    moves = {(m.name, m.grid): m for m in align_kernels(before, after)}
    assert moves[("sum", g1)].status == "disappeared" and moves[("sum", g1)].delta_s == pytest.approx(-8e-3)
    assert moves[("sum", g2)].status == "appeared" and moves[("sum", g2)].after_s == 1e-3
    assert moves[("add", (10, 1, 1))].status == "both" and moves[("add", (10, 1, 1))].delta_s == pytest.approx(0.5e-3)
    assert align_kernels(before, after)[0].name == "sum"  # the largest move first
    # one side without launch shapes: by name alone, the two "sum" are one kernel
    by_name = {m.name: m for m in align_kernels(before, [KernelStat("sum", 1e-3, 1)])}
    assert by_name["sum"].status == "both" and by_name["sum"].delta_s == pytest.approx(-7e-3)
    assert by_name["add"].status == "disappeared"
    # shapes known but not used (two GPUs): by name
    assert {m.status for m in align_kernels(before, after, by_shape=False)} == {"both"}


def test_operators_and_overlap():
    ops = {o.name: o for o in align_operators({"aten::stack": 1.0, "aten::mm": 2.0}, {"aten::mm": 1.5, "aten::add": 0.5})}
    assert ops["aten::stack"].status == "disappeared" and ops["aten::add"].status == "appeared"
    assert ops["aten::mm"].delta_s == pytest.approx(-0.5)
    # common: aten::mm; before 2 of 3 s, after 1.5 of 2 s -> the lesser, 2/3
    assert overlap({"aten::stack": 1.0, "aten::mm": 2.0}, {"aten::mm": 1.5, "aten::add": 0.5}) == pytest.approx(2 / 3)
    assert overlap({}, {"x": 1.0}) is None


def _side(source, shares, steps=None, times=(), program=None, kernels=(), device=DeviceFacts(), preds=(), ops=None):
    return Side(source, "run", shares, steps, tuple(times), tuple(kernels), ops or {}, False, tuple(preds), device,
                program)


def test_unrelated_programs_are_told_apart():
    k1, k2 = KernelStat("gemm_a", 1.0, 1, kind="gemm"), KernelStat("elementwise_b", 1.0, 1, kind="elementwise")
    a = _side("a", {"kernels": 1.0}, program="train.py", kernels=[k1])
    b = _side("b", {"kernels": 1.0}, program="serve.py", kernels=[k2])
    assert "different programs (train.py and serve.py)" in unrelated(a, b)
    assert unrelated(a, _side("b", {"kernels": 1.0}, program="train.py", kernels=[k2])) is None  # one script: related
    # no script recorded: operators decide
    ta = _side("a", {"kernels": 1.0}, ops={"aten::mm": 1.0})
    assert "operator time" in unrelated(ta, _side("b", {"kernels": 1.0}, ops={"aten::conv2d": 1.0}))
    assert unrelated(ta, _side("b", {"kernels": 1.0}, ops={"aten::mm": 1.0})) is None
    # nothing but kernels: no name and few kinds in common
    assert "share no kernel" in unrelated(_side("a", {"k": 1.0}, kernels=[k1]), _side("b", {"k": 1.0}, kernels=[k2]))
    # fp32 -> bf16 GEMM: every name changed, the kind did not
    k3 = KernelStat("gemm_bf16", 1.0, 1, kind="gemm")
    assert unrelated(_side("a", {"k": 1.0}, kernels=[k1]), _side("b", {"k": 1.0}, kernels=[k3])) is None
    with pytest.raises(UsageError, match="two unrelated programs"):
        diff(a, b)


def test_a_different_gpu_is_said_first():
    a = _side("a", {"kernels": 1.0}, device=DeviceFacts("NVIDIA H100", "580.1", 1980.0, 700.0))
    b = _side("b", {"kernels": 1.2}, device=DeviceFacts("NVIDIA H200", "580.2", 1500.0, 500.0))
    w = device_warnings(a, b)
    assert w[0].startswith("DIFFERENT GPUs: before ran on NVIDIA H100, after on NVIDIA H200")
    assert any("drivers" in x for x in w) and any("SM clocks differ" in x and "-24%" in x for x in w)
    assert any("power limits differ: before 700 W, after 500 W" in x for x in w)
    r = diff(a, b)
    assert r.warnings == tuple(w) and r.line.startswith("on a different GPU, ")
    assert device_warnings(a, a) == []
    # a clock within 5% is not worth a line
    c = _side("c", {"kernels": 1.0}, device=DeviceFacts("NVIDIA H100", "580.1", 1900.0, 700.0))
    assert device_warnings(a, c) == []


def test_fail_if_slower_counts_only_beyond_the_spread():
    a = _side("a", {"kernels": 0.030}, 3, [0.0100, 0.0102, 0.0098], "t.py")  # median 10 ms, MAD 0.2 ms
    b = _side("b", {"kernels": 0.030, "host_sync": 0.003}, 3, [0.0110, 0.0111, 0.0109], "t.py")  # 11 ms, MAD 0.1
    r = diff(a, b, fail_if_slower_pct=5)
    assert r.unit == "step" and r.spread_s == pytest.approx(0.3e-3)
    assert r.change_pct == pytest.approx(10.0) and r.failed
    assert r.split.top.cause == "host_sync"  # 11 ms x 3/33 = 1 ms of the step, from 0
    assert r.split.top.delta_s == pytest.approx(1e-3)
    assert "top contributor: host blocked in a sync, +1 ms" in r.fail_line()
    assert "10.0% slower" in r.fail_line()
    assert not diff(a, b, fail_if_slower_pct=15).failed
    near = _side("b", {"kernels": 0.030}, 3, [0.0102, 0.0103, 0.0101], "t.py")  # 2% slower, within 0.3 ms
    r2 = diff(a, near, fail_if_slower_pct=1)
    assert not r2.failed and not r2.beyond_spread and r2.line.startswith("no change beyond the runs' own spread")
    with pytest.raises(UsageError, match="percentage >= 0"):
        diff(a, b, fail_if_slower_pct=-1)


def test_runs_without_steps_compare_whole_windows_with_a_note():
    r = diff(_side("a", {"kernels": 2.0}, program="t.py"), _side("b", {"kernels": 1.0}, 10, program="t.py"))
    assert r.unit == "window" and r.split.before_s == 2.0 and r.split.after_s == 1.0
    assert any("marks no steps" in n for n in r.notes)
    assert r.line.startswith("after is 2x faster over the window")


def test_kinds_that_share_no_budget_are_refused():
    run = _side("r.json", {"kernels": 1.0})
    ncu = Side("n.csv", "ncu", {"kernels": 1.0}, kernel_time=True)
    check = Side("c.json", "check", figures={"dram_bandwidth_gbs": FigureValue(3000.0, True, "DRAM", "GB/s")})
    with pytest.raises(UsageError, match="n.csv is an ncu export"):
        diff(run, ncu)
    with pytest.raises(UsageError, match="c.json is a check/bench document"):
        diff(check, run)
    ncu_run = Side("r2.json", "run", {"kernels": 1.0}, kernel_time=True)
    with pytest.raises(UsageError, match="r2.json is a gpuwhy run document of ncu alone"):
        diff(ncu_run, run)
    assert diff(ncu_run, ncu).unit == "kernel time"  # both kernel time: they compare


def test_check_figures_worse_beyond_the_threshold_fail():
    fig = lambda v, hb=True: FigureValue(v, hb, "x", "u")  # noqa: E731
    a = Side("a", "check", figures={"dram_bandwidth_gbs": fig(3000.0), "launch_overhead_us": fig(4.0, False)})
    b = Side("b", "check", figures={"dram_bandwidth_gbs": fig(2850.0), "launch_overhead_us": fig(4.4, False)})
    r = diff(a, b, fail_if_slower_pct=8)
    f = {x.key: x for x in r.figures}
    assert f["dram_bandwidth_gbs"].worse_pct == pytest.approx(5.0)  # 3000 -> 2850: 5% less bandwidth
    assert f["launch_overhead_us"].worse_pct == pytest.approx(10.0)  # 4 -> 4.4 us: 10% more overhead
    assert r.failed and "got 10.0% worse" in r.fail_line()
    assert not diff(a, b, fail_if_slower_pct=12).failed


def test_the_verdict_line_names_the_top_contributor():
    s = split_change({"pageable_copy": 15 * MS, "kernels": 3 * MS}, {"copy": 2 * MS, "kernels": 3 * MS})
    line = verdict_line(s, "step", 0.0)
    assert line == ("after is 3.6x faster per step (18 ms -> 5 ms): top contributor copies from pageable memory, "
                    "-15 ms (115% of the change)")
    assert verdict_line(split_change({"k": 1.0}, {"k": 1.0}), "window", 0.0) == "no change over the window (1 s -> 1 s)"
    # a small change keeps a decimal: 1.75 ms -> 1.751 ms is 0.1% slower, not "0% slower"
    assert verdict_line(split_change({"k": 1.75e-3}, {"k": 1.751e-3}), "kernel time", 0.0).startswith(
        "after is 0.1% slower in kernel time")
    # and a small gain is the time saved, not "1x faster" (Extra-P's ex-gpu at 10 and 100: 3.09 ms -> 3.08 ms)
    assert verdict_line(split_change({"k": 3.09e-3}, {"k": 3.08e-3}), "window", 0.0).startswith(
        "after is 0.3% faster over the window (3.09 ms -> 3.08 ms)")
    assert verdict_line(split_change({"k": 1.1}, {"k": 1.0}), "step", 0.0).startswith("after is 1.1x faster per step")


def test_the_document_adds_up():
    a = _side("a", {"host_work": 0.08, "kernels": 0.02}, 10, program="t.py",
              preds=[Prediction("move_host_work", "move it", 5.0, ("host_work",))])
    b = _side("b", {"host_work": 0.005, "kernels": 0.02}, 10, program="t.py")
    d = diff(a, b).to_dict()
    assert d["change"]["delta_s"] == pytest.approx(sum(c["delta_s"] for c in d["contributions"]))
    assert d["change"]["speedup_x"] == pytest.approx(4.0) and d["change"]["top_contributor"] == "host_work"
    p = d["predictions"][0]
    assert p["applied"] and p["achieved_x"] == pytest.approx(4.0) and p["of_ceiling_pct"] == pytest.approx(80.0)
