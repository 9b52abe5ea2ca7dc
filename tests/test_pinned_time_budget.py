"""Every figure of the `gpuwhy run` time budget (model/time_budget.py), checked against arithmetic
written out here: the shares of the window, the idle line, each fix's removable time, share and
Amdahl ceiling W / (W - r), the order of the fixes, and each cut-off at both sides.

Windows and shares are powers of two (or sums of them) where a comparison sits at its limit, so
that the percentages are exact in binary and "at the limit" really is.
"""

from __future__ import annotations

import math

import pytest

from gpuwhy.model.timeline import budget as TB
from gpuwhy.model.timeline.budget import KernelTime, Share, amdahl_ceiling, time_budget

# --- the documented constants ------------------------------------------------------------------


def test_constants():
    assert TB.GPU_BOUND_IDLE_PCT == 10.0
    assert TB.UNATTRIBUTED == "unattributed"
    assert set(TB.IDLE_REMEDIES) == {"host launch gaps", "synchronisation", "data loading", "cross-stream wait",
                                     "pageable copy"}
    assert set(TB.BUSY_REMEDIES) == {"compute", "memory", "latency", "overhead", "issue"}


# --- Amdahl ------------------------------------------------------------------------------------


def test_amdahl_ceiling_figures_and_guards():
    assert amdahl_ceiling(10.0, 4.0) == 10.0 / 6.0  # 1.667x: 4 of 10 s removed
    assert amdahl_ceiling(8.0, 6.0) == 4.0  # 8 / 2
    assert amdahl_ceiling(8.0, 0.0) == 1.0  # nothing removed: no speed-up
    assert amdahl_ceiling(8.0, 7.5) == 16.0  # 8 / 0.5
    # the whole window (or more) removed: no bound
    assert amdahl_ceiling(8.0, 8.0) == math.inf and amdahl_ceiling(8.0, 9.0) == math.inf
    with pytest.raises(ValueError, match=r"^the window must be positive, not 0.0 s$"):
        amdahl_ceiling(0.0, 0.0)
    with pytest.raises(ValueError, match=r"^the window must be positive, not -1.0 s$"):
        amdahl_ceiling(-1.0, 0.0)
    with pytest.raises(ValueError, match=r"^the window must be positive, not nan s$"):
        amdahl_ceiling(float("nan"), 0.0)
    with pytest.raises(ValueError, match=r"^removable time must be >= 0, not -0.5 s$"):
        amdahl_ceiling(8.0, -0.5)


# --- the shares --------------------------------------------------------------------------------


def test_shares_in_seconds_and_percent_largest_first():
    # 8 s window: idle 2 s data loading + 1 s sync + 0 s (dropped); busy 4 s memory + 0.5 s compute;
    # 8 - 7.5 = 0.5 s unattributed idle. Percentages: 25, 12.5, 6.25 idle; 50, 6.25 busy.
    b = time_budget(8.0, {"synchronisation": 1.0, "data loading": 2.0, "pageable copy": 0.0},
                    {"compute": 0.5, "memory": 4.0})
    assert b.idle == (Share("data loading", "idle", 2.0, 25.0), Share("synchronisation", "idle", 1.0, 12.5),
                      Share("unattributed", "idle", 0.5, 6.25))
    assert b.busy == (Share("memory", "busy", 4.0, 50.0), Share("compute", "busy", 0.5, 6.25))
    assert (b.window_s, b.idle_s, b.busy_s) == (8.0, 3.5, 4.5)
    assert b.shares_pct_total == 100.0  # 25 + 12.5 + 6.25 + 50 + 6.25


def test_no_unattributed_share_when_the_shares_fill_the_window():
    # exactly the window: no unattributed share, nothing scaled
    b = time_budget(8.0, {"data loading": 2.0}, {"memory": 6.0})
    assert [s.name for s in b.idle] == ["data loading"] and b.busy == (Share("memory", "busy", 6.0, 75.0),)
    # a rounding error's worth short (under 1e-12 of the window) is no share either ...
    w = 2.0**40
    short = w - 2.0**-2  # 0.25 s short of 2^40 s: 2.3e-13 of the window
    b = time_budget(w, {}, {"memory": short})
    assert b.idle == () and b.idle_s == 0 and b.idle_fix is None
    # ... but 4 s short (3.6e-12 of it) is: 4 s unattributed
    b = time_budget(w, {}, {"memory": w - 4.0})
    assert b.idle == (Share("unattributed", "idle", 4.0, 100.0 * 4.0 / w),)


def test_overlapping_busy_time_is_scaled_into_the_room_idle_leaves():
    # 8 s window, 2 s idle: busy 6 s + 6 s (two streams) = 12 s is scaled into the 6 s left, x 0.5
    b = time_budget(8.0, {"host launch gaps": 2.0}, {"memory": 6.0, "compute": 6.0})
    assert b.busy == (Share("memory", "busy", 3.0, 37.5), Share("compute", "busy", 3.0, 37.5))
    assert (b.idle_s, b.busy_s, b.shares_pct_total) == (2.0, 6.0, 100.0)
    assert [s.name for s in b.idle] == ["host launch gaps"]  # idle is never scaled, nothing unattributed
    # uneven: 6 + 2 = 8 s of busy into 4 s: x 0.5 -> 3 and 1
    b = time_budget(8.0, {"synchronisation": 4.0}, {"gemm": 6.0, "copy": 2.0})
    assert [(s.name, s.seconds, s.pct) for s in b.busy] == [("gemm", 3.0, 37.5), ("copy", 1.0, 12.5)]
    # idle alone more than the window: no room, busy scaled to 0 s
    b = time_budget(8.0, {"data loading": 10.0}, {"memory": 2.0})
    assert b.busy == (Share("memory", "busy", 0.0, 0.0),) and b.busy_s == 0.0
    # less than a second of busy time scaled too: 7.75 s idle leaves 0.25 s for 0.5 s of busy: x 0.5
    b = time_budget(8.0, {"data loading": 7.75}, {"memory": 0.5})
    assert b.busy == (Share("memory", "busy", 0.25, 3.125),) and b.shares_pct_total == 100.0
    # ... and with no busy time at all there is nothing to scale (no division by zero)
    b = time_budget(8.0, {"data loading": 10.0}, {})
    assert b.busy == () and b.idle_s == 10.0


def test_the_unattributed_cut_is_one_part_in_a_trillion():
    # 1e-12 x 1e12 s is 1.0 to the last bit: exactly 1 s short is no share; 2 s short is
    assert time_budget(1e12, {}, {"memory": 1e12 - 1.0}).idle == ()
    assert time_budget(1e12, {}, {"memory": 1e12 - 2.0}).idle == (Share("unattributed", "idle", 2.0, 2e-10),)


def test_the_overlap_tolerance_is_one_part_in_a_billion():
    # exactly 1 + 1e-9 of a 1 s window: not scaled
    assert time_budget(1.0, {}, {"memory": 1 + 1e-9}).busy == (Share("memory", "busy", 1 + 1e-9, 100 * (1 + 1e-9)),)
    # 1 + 0.5e-9 of the window: inside the tolerance, left as given (no scaling, no unattributed share)
    w = 2.0**30
    b = time_budget(w, {}, {"memory": w + 0.5})  # 0.5 / 2^30 = 4.7e-10 over
    assert b.busy == (Share("memory", "busy", w + 0.5, 100.0 * (w + 0.5) / w),) and b.idle == ()
    # 2 s over (1.9e-9): scaled to the window
    b = time_budget(w, {}, {"memory": w + 2.0})
    assert b.busy == (Share("memory", "busy", w, 100.0),)


@pytest.mark.parametrize("window", [0.0, -1.0, math.inf, math.nan])
def test_the_window_must_be_positive_and_finite(window):
    with pytest.raises(ValueError, match=r"^the window must be a positive number of seconds, not "):
        time_budget(window, {}, {})


@pytest.mark.parametrize("kind, value", [("idle", -1.0), ("idle", math.inf), ("busy", math.nan), ("busy", -0.5)])
def test_a_share_must_be_finite_and_not_negative(kind, value):
    parts = {"idle_by_cause": {}, "busy_by_regime": {}}
    parts[f"{kind}_by_cause" if kind == "idle" else "busy_by_regime"] = {"x": value}
    with pytest.raises(ValueError, match=rf"^{kind} time of 'x' must be a finite number >= 0, not {value}$"):
        time_budget(1.0, **parts)


# --- the idle line and the idle fixes ----------------------------------------------------------


def test_idle_fix_line_and_the_largest_single_share_is_the_verdict():
    # 10 s: data loading 4 s, sync 2 s, busy 3 s -> 1 s unattributed; idle 7 s = 70%
    b = time_budget(10.0, {"data loading": 4.0, "synchronisation": 2.0}, {"memory": 3.0})
    f = b.idle_fix
    assert (f.what, f.kind, f.removable_s, f.share_pct) == ("GPU idle time", "idle", 7.0, 70.0)
    assert f.ceiling_x == 10.0 / 3.0  # all idle removed: 10 / (10 - 7)
    assert f.detail == "GPU idle 70% of the window (data loading 40%, synchronisation 20%, unattributed 10%)"
    assert f.remedies == TB.IDLE_REMEDIES["data loading"]  # the largest cause's remedies
    # single causes: largest first; the unattributed 10% is listed, never a fix
    assert [(x.what, x.removable_s, x.share_pct, x.ceiling_x) for x in b.fixes] == [
        ("data loading", 4.0, 40.0, 10.0 / 6.0), ("synchronisation", 2.0, 20.0, 10.0 / 8.0)]
    assert b.fixes[0].detail == "GPU idle, data loading: 40% of the window"
    assert b.fixes[1].remedies == TB.IDLE_REMEDIES["synchronisation"] and b.verdict is b.fixes[0]
    # no idle time at all: no idle line, no verdict
    b = time_budget(8.0, {}, {"memory": 8.0})
    assert b.idle_fix is None and b.fixes == () and b.verdict is None


def test_a_cause_shows_in_the_idle_line_from_half_a_percent():
    # 0.5% of a 64 s window is 0.32 s: shown (rounded to "0%"); 0.31 s (0.48%) is not
    b = time_budget(64.0, {"synchronisation": 0.32, "data loading": 0.31}, {"memory": 63.37})
    assert b.idle_fix.detail == "GPU idle 1% of the window (synchronisation 0%)"


def test_an_idle_fix_needs_half_a_percent_of_the_window():
    # 0.5% of 64 s = 0.32 s: a fix; 0.3 s (0.47%) is listed as a share but is no fix
    b = time_budget(64.0, {"synchronisation": 0.32, "data loading": 0.3}, {"memory": 63.38})
    assert [f.what for f in b.fixes] == ["synchronisation"] and len(b.idle) == 2
    assert b.fixes[0].share_pct == 0.5
    # min_fix_pct moves the cut: at 0.25% both are fixes, at 0.6% neither
    assert [f.what for f in time_budget(64.0, {"synchronisation": 0.32, "data loading": 0.3}, {"memory": 63.38},
                                        min_fix_pct=0.25).fixes] == ["synchronisation", "data loading"]
    assert time_budget(64.0, {"synchronisation": 0.32, "data loading": 0.3}, {"memory": 63.38},
                       min_fix_pct=0.6).fixes == ()


def test_warm_up_and_unattributed_are_listed_never_fixes():
    # warm-up 6 of 10 s is the largest idle share, but no fix; the idle line still counts it
    b = time_budget(10.0, {"warm-up": 6.0, "host launch gaps": 1.0}, {"gemm": 2.0}, not_fixes=["warm-up", "absent"])
    assert [f.what for f in b.fixes] == ["host launch gaps"] and b.verdict.what == "host launch gaps"
    assert b.not_judged == ("warm-up",)  # only names that are idle shares
    assert b.idle_fix.removable_s == 8.0  # 6 + 1 + 1 unattributed
    assert b.idle_fix.remedies == TB.IDLE_REMEDIES["host launch gaps"]  # the first cause that is a fix
    # when every idle share is skipped, the remedies are the first share's (none for warm-up)
    b = time_budget(10.0, {"warm-up": 6.0}, {"gemm": 4.0}, not_fixes=["warm-up"])
    assert b.fixes == () and b.idle_fix.remedies == ()
    b = time_budget(10.0, {}, {"gemm": 4.0})  # only unattributed idle
    assert b.fixes == () and b.idle_fix.detail == "GPU idle 60% of the window (unattributed 60%)"


def test_remedies_given_for_a_cause_override_the_table():
    mine = ("prefetch the next shard",)
    b = time_budget(10.0, {"data loading": 4.0, "io wait": 2.0}, {"memory": 4.0},
                    idle_remedies={"data loading": mine, "io wait": ("read ahead",)})
    assert b.fixes[0].remedies == mine and b.fixes[1].remedies == ("read ahead",) and b.idle_fix.remedies == mine
    assert time_budget(10.0, {"odd": 4.0}, {"memory": 6.0}).fixes[0].remedies == ()  # a cause without remedies


# --- kernel fixes ------------------------------------------------------------------------------


def test_a_kernel_at_p_percent_of_its_roof_can_lose_1_minus_p_of_its_time():
    # 10 s window; kernel 4 s at 75% of its roof: at best 3 s, so 1 s removable = 10%, ceiling 10 / 9
    b = time_budget(10.0, {}, {"memory": 10.0}, [KernelTime("gemm", 4.0, "memory", 75.0)])
    (k,) = b.fixes
    assert (k.what, k.kind, k.removable_s, k.share_pct) == ("kernel gemm", "kernel", 1.0, 10.0)
    assert k.ceiling_x == 10.0 / 9.0
    assert k.detail == "gemm: 40% of the window, memory-bound at 75% of its roof"
    assert k.remedies == TB.BUSY_REMEDIES["memory"]
    assert time_budget(10.0, {}, {"x": 10.0}, [KernelTime("k", 4.0, "odd", 50.0)]).fixes[0].remedies == ()


def test_kernel_roof_share_is_clamped_to_0_100():
    # above its roof (120%): nothing removable, so no fix; the text keeps the figure given
    assert time_budget(10.0, {}, {"m": 10.0}, [KernelTime("k", 4.0, "memory", 120.0)]).fixes == ()
    # at exactly 100%: none either; at 0% (or below): all 4 s
    assert time_budget(10.0, {}, {"m": 10.0}, [KernelTime("k", 4.0, "memory", 100.0)]).fixes == ()
    for roof in (0.0, -10.0):
        (k,) = time_budget(10.0, {}, {"m": 10.0}, [KernelTime("k", 4.0, "compute", roof)]).fixes
        assert k.removable_s == 4.0 and k.share_pct == 40.0 and k.ceiling_x == 10.0 / 6.0
        assert k.detail == f"k: 40% of the window, compute-bound at {roof:.0f}% of its roof"


def test_kernels_without_a_roof_or_time_give_no_fix():
    ks = [KernelTime("a", 4.0, "memory", None), KernelTime("b", 0.0, "memory", 10.0), KernelTime("c", -1.0, "memory", 10.0)]
    assert time_budget(10.0, {}, {"m": 10.0}, ks).fixes == ()
    assert time_budget(10.0, {}, {"m": 10.0}, ks, min_fix_pct=0.0).fixes == ()  # not even a fix of 0 s


def test_the_top_kernels_by_removable_time_and_one_order_for_all_fixes():
    # removable: a 4 x 0.5 = 2 s, b 3 x 0.2 = 0.6 s, c 2 x 0.75 = 1.5 s, d 1 x 0.9 = 0.9 s (10 s window)
    ks = [KernelTime("a", 4.0, "memory", 50.0), KernelTime("b", 3.0, "compute", 80.0),
          KernelTime("c", 2.0, "latency", 25.0), KernelTime("d", 1.0, "overhead", 10.0)]
    b = time_budget(10.0, {"synchronisation": 1.0}, {"m": 9.0}, ks)
    assert [(f.what, f.removable_s) for f in b.fixes] == [
        ("kernel a", 2.0), ("kernel c", 1.5), ("synchronisation", 1.0), ("kernel d", 0.9)]  # top 3 kernels: b out
    assert [f.what for f in time_budget(10.0, {}, {"m": 10.0}, ks, top_kernels=1).fixes] == ["kernel a"]
    assert [f.what for f in time_budget(10.0, {}, {"m": 10.0}, ks, top_kernels=4).fixes] == [
        "kernel a", "kernel c", "kernel d", "kernel b"]
    # a kernel fix under half a percent of the window is left out: 0.04 s of 10 s = 0.4%; 0.05 s = 0.5% stays
    small = [KernelTime("s", 0.08, "memory", 50.0), KernelTime("t", 0.1, "memory", 50.0)]
    assert [f.what for f in time_budget(10.0, {}, {"m": 10.0}, small).fixes] == ["kernel t"]


# --- GPU-bound ---------------------------------------------------------------------------------


def test_gpu_bound_under_ten_percent_idle_and_no_fix_of_ten_percent():
    # idle exactly 10% in two causes of 5% (100 x 1 / 10 is 10.0 to the last bit): not GPU-bound though no single
    # fix reaches 10%; 0.999 s (9.99%): GPU-bound
    b = time_budget(10.0, {"synchronisation": 0.5, "data loading": 0.5}, {"memory": 9.0})
    assert b.verdict.share_pct == 5.0 and 100.0 * b.idle_s / b.window_s == 10.0 and not b.gpu_bound
    assert time_budget(10.0, {"synchronisation": 0.5, "data loading": 0.499}, {"memory": 9.001}).gpu_bound
    # idle 0 but one kernel fix of exactly 10% (4 s at 75% of 10 s): not GPU-bound; 9.6% (4 s at 76%): GPU-bound
    assert not time_budget(10.0, {}, {"m": 10.0}, [KernelTime("k", 4.0, "memory", 75.0)]).gpu_bound
    assert time_budget(10.0, {}, {"m": 10.0}, [KernelTime("k", 4.0, "memory", 76.0)]).gpu_bound
    assert time_budget(10.0, {}, {"m": 10.0}).gpu_bound  # nothing removable at all


def test_a_kernel_judged_at_a_cache_level_names_its_roof():
    # 4 s of a 10 s window at 71% of its L2 roof: 1.16 s removable, at most 10 / 8.84 = 1.131x
    b = time_budget(10.0, {}, {"memory-bound kernels": 10.0}, [KernelTime("k", 4.0, "memory", 71.0, "L2")])
    (f,) = b.fixes
    assert f.detail == "k: 40% of the window, memory-bound at 71% of its L2 roof"
    assert f.removable_s == pytest.approx(4.0 * 0.29) and f.ceiling_x == pytest.approx(10 / (10 - 1.16))
    (g,) = time_budget(10.0, {}, {"x": 10.0}, [KernelTime("k", 4.0, "issue", 50.0)]).fixes
    assert g.detail.endswith("issue-bound at 50% of its roof") and g.remedies == TB.BUSY_REMEDIES["issue"]

    # an overhead-bound kernel is bound by its launch: the level of its nearest roof is not named
    (h,) = time_budget(10.0, {}, {"x": 10.0}, [KernelTime("tiny", 1.0, "overhead", 0.0, "L2")]).fixes
    assert h.detail == "tiny: 10% of the window, overhead-bound at 0% of its roof" and h.removable_s == 1.0
