"""Kernels of a jitted JAX function judged by XLA's cost analysis under the CUPTI tracer, without ncu:
hand-built CUPTI records (jit calls, launch API calls, kernels) -> the Chrome trace -> the timeline ->
each function's FLOPs and bytes over its kernels' GPU time -> a regime for each of its kernels. The
figures are worked by hand in each test's docstring. No GPU, no JAX."""

from __future__ import annotations

import json

import pytest

from gpuwhy.api.run_costs import judge_costs, judge_function
from gpuwhy.importers.cupti.records import chrome_trace
from gpuwhy.importers.kineto import read_timeline
from gpuwhy.importers.timeline.costs import ExecutableCalls, executable_calls
from gpuwhy.model.roofline.classify import Ceilings
from gpuwhy.verdict.causes import Cause
from test_run_kernels import FakeProfiler

US = 1_000  # ns
T0 = 1_700_000_000_000_000_000
GPU = "NVIDIA H100 80GB HBM3"


def _api(start, corr, tid=7, name="cuLaunchKernel"):
    return {"k": "driver", "start": T0 + start, "end": T0 + start + 5 * US, "name": name, "corr": corr, "pid": 1,
            "tid": tid}


def _kernel(start, dur, corr, name):
    return {"k": "kernel", "start": T0 + start, "end": T0 + start + dur, "name": name, "corr": corr, "device": 0,
            "stream": 7, "grid": [132, 1, 1], "block": [256, 1, 1], "graph": 0}


def _jit(start, dur, name, flops, nbytes, tid=7, error=None, matmul=None, **more):
    return {"k": "jit", "start": T0 + start, "end": T0 + start + dur, "name": name, "tid": tid, "flops": flops,
            "bytes": nbytes, "dtype": "float32", "error": error, "matmul": matmul, **more}


def program_records():
    """Two calls of jit(step), 1 ms apart (each 100 us on the host, launching fusion_1 (400 us) and
    gemm_2 (200 us)): 1 GFLOP and 1 GB a call; one call of jit(big) at 2 ms launching big_gemm
    (1.25 ms): 67 GFLOP and 100 MB, under matmul precision "highest"; and eager_add (50 us), launched at 3.5 ms outside any call."""
    recs, corr = [], 0
    for t in (0, 1000 * US):
        recs.append(_jit(t, 100 * US, "step", 1e9, 1e9))
        for off, dur, name in ((10, 400, "fusion_1"), (20, 200, "gemm_2")):
            corr += 1
            recs.append(_api(t + off * US, corr))
            start = t + (30 if name == "fusion_1" else 430) * US
            recs.append(_kernel(start, dur * US, corr, name))
    recs.append(_jit(2000 * US, 100 * US, "big", 6.7e10, 1e8, matmul="highest"))
    corr += 1
    recs.append(_api(2010 * US, corr))
    recs.append(_kernel(2030 * US, 1250 * US, corr, "big_gemm"))
    corr += 1
    recs.append(_api(3500 * US, corr, name="cudaLaunchKernel_v7000") | {"k": "runtime"})
    recs.append(_kernel(3510 * US, 50 * US, corr, "eager_add"))
    return recs


def _doc(records, stop=4000 * US):
    return chrome_trace(records, start_ns=T0, stop_ns=T0 + stop, pid=1, devices={0: GPU})


def _timeline(tmp_path, records):
    p = tmp_path / "cupti.json"
    p.write_text(json.dumps(_doc(records)))
    return read_timeline(p), p


def test_kernels_launched_inside_a_call_carry_its_id():
    doc = _doc(program_records())
    jits = [e for e in doc["traceEvents"] if e.get("name", "").startswith("jax.jit ")]
    assert [(e["name"], e["args"]["External id"], e["cat"]) for e in jits] == [
        ("jax.jit step", 1, "user_annotation"), ("jax.jit step", 2, "user_annotation"),
        ("jax.jit big", 3, "user_annotation")]
    assert jits[0]["args"] == {"External id": 1, "cost": "cost_analysis", "flops": 1e9, "bytes accessed": 1e9,
                               "dtype": "float32"}
    owners = {e["name"] + str(e["args"]["correlation"]): e["args"].get("External id")
              for e in doc["traceEvents"] if e.get("cat") == "kernel"}
    assert owners == {"fusion_11": 1, "gemm_22": 1, "fusion_13": 2, "gemm_24": 2, "big_gemm5": 3, "eager_add6": None}


def test_overlapping_calls_on_two_threads_are_told_apart_by_the_launch_thread():
    """Calls of f (thread 7) and g (thread 8) overlap; a launch at 50 us lies in both: its thread names the call."""
    recs = [_jit(0, 100 * US, "f", 1e9, 1e9, tid=7), _jit(40 * US, 100 * US, "g", 1e9, 1e9, tid=8),
            _api(50 * US, 1, tid=8), _kernel(60 * US, 10 * US, 1, "k_g"),
            _api(60 * US, 2, tid=9), _kernel(80 * US, 10 * US, 2, "k_unknown")]
    kernels = {e["name"]: e["args"].get("External id") for e in _doc(recs)["traceEvents"] if e.get("cat") == "kernel"}
    assert kernels == {"k_g": 2, "k_unknown": None}  # thread 9 made neither call: linked to none


def test_calls_grouped_by_function_with_their_kernels_gpu_time(tmp_path):
    """jit(step): 2 calls, 2 GFLOP and 2 GB in all, kernels 2 x (400 + 200) us = 1.2 ms, 4 launches;
    jit(big): 67 GFLOP, 100 MB, 1.25 ms. eager_add belongs to no call."""
    tl, _ = _timeline(tmp_path, program_records())
    step, big = executable_calls(tl, "0")  # most kernel time first: step 1.2 ms... big 1.25 ms
    big, step = (step, big) if step.name == "jax.jit big" else (big, step)
    assert (step.calls, step.flops, step.bytes, step.launches) == (2, 2e9, 2e9, 4)
    assert step.kernel_s == pytest.approx(1.2e-3)
    assert dict(step.kernels) == pytest.approx({"fusion_1": 0.8e-3, "gemm_2": 0.4e-3})
    assert (big.calls, big.flops, big.bytes, big.kernel_s) == (1, 6.7e10, 1e8, pytest.approx(1.25e-3))
    assert (step.dtype, step.matmul, big.matmul) == ("float32", None, "highest")
    assert executable_calls(tl, "1") == ()


CEIL = Ceilings(peak_flops=1e14, bandwidth=2e12, launch_overhead_s=5e-6, precision="fp32", gpu="test GPU",
                source="hand")


def test_a_memory_bound_function_by_hand():
    """2 GFLOP and 2 GB over 1.2 ms of kernels on 100 TFLOP/s and 2 TB/s: t_compute 20 us, t_memory
    1 ms: memory-bound at DRAM, 1 / 1.2 = 83.3% of roof (no launch-overhead term: GPU time)."""
    e = ExecutableCalls("jax.jit step", 2, 2e9, 2e9, 1.2e-3, 4, (("fusion_1", 0.8e-3), ("gemm_2", 0.4e-3)))
    r = judge_function(e, CEIL)
    assert (r.regime, r.level, r.name) == ("memory", "DRAM", "jit(step)")
    assert r.roof_pct == pytest.approx(100 / 1.2)
    assert r.flops == 1e9 and r.bytes == 1e9
    assert r.line.startswith("cost_analysis of jit(step): 1 GFLOP, 1 GB a call; the executable's 2 kernels judged "
                             "as one: memory-bound at DRAM against the fp32 roof, 83% of roof (2 calls, 1.2 ms of kernels)")


def test_a_compute_bound_function_by_hand():
    """100 GFLOP and 100 MB over 1.25 ms: t_compute 1 ms, t_memory 50 us: compute-bound, 80% of roof."""
    r = judge_function(ExecutableCalls("jax.jit big", 1, 1e11, 1e8, 1.25e-3, 1, (("big_gemm", 1.25e-3),)), CEIL)
    assert (r.regime, r.level) == ("compute", "compute") and r.roof_pct == pytest.approx(80.0)


def test_counts_above_the_roof_are_not_judged():
    """100 GFLOP over 0.5 ms on a 100 TFLOP/s roof is 200% of it: the counts are not what ran (not judged, and
    says so); at 105% (0.95 ms) a measured roof a little under the true one is allowed for."""
    r = judge_function(ExecutableCalls("jax.jit big", 1, 1e11, 1e8, 0.5e-3, 1, (("big_gemm", 0.5e-3),)), CEIL)
    assert r.regime is None and r.roof_pct is None and "200% of this GPU's roof" in r.why and "not judged" in r.line
    ok = judge_function(ExecutableCalls("jax.jit big", 1, 1e11, 1e8, 0.95e-3, 1, (("big_gemm", 0.95e-3),)), CEIL)
    assert ok.regime == "compute" and ok.roof_pct == pytest.approx(100 / 0.95)


def test_a_function_without_figures_is_not_judged_and_says_why():
    why = "cost_analysis() failed: RuntimeError: no"
    e = ExecutableCalls("jax.jit f", 1, None, None, 1e-3, 1, (("k", 1e-3),), why=why)
    r = judge_function(e, CEIL)
    assert r.regime is None and r.why == why and why in r.line
    p = judge_costs([e], "x", ceilings=lambda *a: (CEIL, "hand"))
    assert p.kernels == {} and p.notes == (r.line,)


def test_a_kernel_under_two_functions_takes_the_one_it_ran_longest_under():
    a = ExecutableCalls("jax.jit a", 1, 1e9, 1e9, 1e-3, 2, (("shared", 0.2e-3), ("only_a", 0.8e-3)))
    b = ExecutableCalls("jax.jit b", 1, 1e12, 1e6, 1e-2, 1, (("shared", 1e-2),))
    p = judge_costs([a, b], "x", ceilings=lambda *a: (CEIL, "hand"))
    assert p.kernels["shared"].name == "jit(b)" and p.kernels["only_a"].name == "jit(a)"


def test_no_roofline_no_regimes_and_one_line_why():
    from gpuwhy.errors import UsageError

    def none(*a):
        raise UsageError("no spec sheet matches 'Mystery GPU'")

    e = ExecutableCalls("jax.jit f", 1, 1e9, 1e9, 1e-3, 1, (("k", 1e-3),))
    p = judge_costs([e], "Mystery GPU", ceilings=none)
    assert p.kernels == {} and p.notes == ("cost_analysis of jit(f): not judged (no spec sheet matches 'Mystery GPU')",)


def _run(tmp_path, monkeypatch, records, **kw):
    from gpuwhy import profiles
    from gpuwhy.api.run import run_program

    monkeypatch.setattr(profiles, "find_profile", lambda *a, **k: None)  # the sheet, whatever this machine saved
    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    return run_program(["python", str(script)], tmp_path / "out",
                       profiler_factory=lambda: FakeProfiler(_doc(records)), **kw)


def test_run_gives_the_jax_kernels_regimes_from_cost_analysis(tmp_path, monkeypatch):
    """On the H100 SXM sheet (3.35 TB/s; tf32 494.5, fp32 67 TFLOP/s): jit(step), float32 at JAX's
    default matmul precision (the tf32 roof): 2 GB over 1.2 ms of kernels: t_memory 597 us, t_compute
    4 us: memory-bound at DRAM, 49.75% of roof; jit(big), matmul precision "highest" (the fp32 roof):
    67 GFLOP over 1.25 ms: t_compute 1 ms, t_memory 30 us: compute-bound, 80%. eager_add: no
    figures, no regime."""
    r = _run(tmp_path, monkeypatch, program_records())
    rows = {k.full_name: k for k in r.kernels}
    for name in ("fusion_1", "gemm_2"):
        assert (rows[name].regime, rows[name].level, rows[name].source) == ("memory", "DRAM", "cost_analysis of jit(step)")
        assert rows[name].roof_pct == pytest.approx(100 * 2e9 / 3.35e12 / 1.2e-3)
        assert rows[name].measured_launches == 0
    assert (rows["big_gemm"].regime, rows["big_gemm"].roof_pct) == ("compute", pytest.approx(80.0))
    assert rows["eager_add"].regime is None and rows["eager_add"].source is None
    causes = {s.cause for s in r.budget.shares}
    assert Cause.MEMORY_BOUND in causes and Cause.COMPUTE_BOUND in causes
    assert any(n.startswith("cost_analysis of jit(step): 1 GFLOP, 1 GB a call") for n in r.notes)
    assert any("H100 SXM spec sheet" in n for n in r.notes)
    assert any("jit(step)" in n and "memory-bound at DRAM against the tf32 roof, 50% of roof" in n for n in r.notes)
    assert any("jit(big)" in n and "compute-bound against the fp32 roof, 80% of roof" in n for n in r.notes)
    from gpuwhy.api.run import to_json

    doc = to_json(r)
    assert {k["full_name"]: k["source"] for k in doc["kernels"]}["big_gemm"] == "cost_analysis of jit(big)"


def test_ncu_figures_win_where_both_exist(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from gpuwhy.api.run import budget_of, kernel_rows

    r = _run(tmp_path, monkeypatch, program_records())
    m = SimpleNamespace(full_name="big_gemm", regime="memory", roof_pct=12.0, deciding_level="L2", launches=3,
                        reason=None, flops=None, precision=None)
    kp = SimpleNamespace(kernels={"big_gemm": m}, report=SimpleNamespace(devices=[]))
    from gpuwhy.api.run import cost_pass
    from gpuwhy.importers.timeline.activities import crop

    tl = read_timeline(r.program.trace)
    costs = cost_pass(crop(tl, r.window.start_us, r.window.end_us), r.gpu, r.program.trace)
    rows = {k.full_name: k for k in kernel_rows(r.gpu, kp, costs)}
    assert (rows["big_gemm"].regime, rows["big_gemm"].source, rows["big_gemm"].measured_launches) == ("memory", "ncu", 3)
    assert rows["fusion_1"].source == "cost_analysis of jit(step)"
    _, budget, _ = budget_of(r.trace, r.window, kp, costs)
    assert Cause.COMPUTE_BOUND not in {s.cause for s in budget.shares}  # big_gemm's time is ncu's memory-bound now


def test_a_program_without_jax_is_judged_as_before(tmp_path, monkeypatch):
    recs = [x for x in program_records() if x["k"] != "jit"]
    r = _run(tmp_path, monkeypatch, recs)
    assert all(k.regime is None and k.source is None for k in r.kernels)
    assert r.budget is r.gpu.diagnosis  # the trace analysis's own diagnosis, untouched
    assert not any("cost_analysis" in n for n in r.notes)


@pytest.mark.parametrize("dtype, matmul, want", [
    ("float32", None, "tf32"), ("float32", "tensorfloat32", "tf32"), ("float32", "highest", "fp32"),
    ("float32", "FLOAT32", "fp32"), ("bfloat16", None, "bf16"), ("float16", "highest", "fp16"),
    ("float64", None, "fp64"), (None, None, "tf32"), (None, "highest", "fp32"),
])
def test_the_roof_a_function_is_judged_against(dtype, matmul, want):
    from gpuwhy.api.run_costs import precision_of

    assert precision_of(dtype, matmul) == want


def test_a_gpu_without_tf32_falls_back_to_fp32():
    from gpuwhy.errors import UsageError

    asked = []

    def ceil(name, prec, dirs):
        asked.append(prec)
        if prec == "tf32":
            raise UsageError("the sheet has no tf32 peak")
        return CEIL, "hand"

    e = ExecutableCalls("jax.jit f", 1, 1e9, 1e9, 1e-3, 1, (("k", 1e-3),), dtype="float32")
    p = judge_costs([e], "x", ceilings=ceil)
    assert asked == ["tf32", "fp32"] and p.kernels["k"].regime == "memory"


def _jaxpr_records(second_from="jaxpr", note=None):
    """Two calls of jit(step) (each launching one 1 ms gemm), 73.09 GFLOP counted from the jaxpr for the
    first, ``second_from``'s count for the second (the same figure), 443 MB each."""
    recs = []
    for n, (t, src) in enumerate(((0, "jaxpr"), (2000 * US, second_from)), start=1):
        recs.append(_jit(t, 100 * US, "step", 7.309e10, 4.43e8, flops_from=src, flops_note=note))
        recs.append(_api(t + 10 * US, n))
        recs.append(_kernel(t + 30 * US, 1000 * US, n, "gemm"))
    return recs


def test_flops_counted_from_the_jaxpr_are_named_where_the_function_is_judged(tmp_path):
    """The records' flops_from and flops_note reach the trace, the timeline and the line: 73.09 GFLOP a
    call over 1 ms of kernels a call on 100 TFLOP/s: compute-bound, 73.1% of roof."""
    note = "while loop bodies counted once (their trip count is not known before the run): a lower bound"
    doc = _doc(_jaxpr_records(note=note))
    (first, _) = [e for e in doc["traceEvents"] if e.get("name") == "jax.jit step"]
    assert (first["args"]["flops from"], first["args"]["flops note"]) == ("jaxpr", note)
    tl, _ = _timeline(tmp_path, _jaxpr_records(note=note))
    (e,) = executable_calls(tl, "0")
    assert (e.flops_from, e.flops_note) == (("jaxpr",), note)
    r = judge_function(e, CEIL)
    assert r.line.startswith(f"cost_analysis of jit(step): 73.1 GFLOP (FLOPs counted from the jaxpr; {note}), "
                             "443 MB a call; its kernel judged as one: compute-bound")
    assert r.roof_pct == pytest.approx(73.09)
    p = judge_costs([e], "x", ceilings=lambda *a: (CEIL, "hand"))
    assert p.notes[-1] == "kernel regimes from XLA's cost_analysis and the jaxpr's FLOPs (no hardware counters), " \
                          "judged against hand"


def test_calls_whose_flops_came_from_both_say_some(tmp_path):
    tl, _ = _timeline(tmp_path, _jaxpr_records(second_from="compiled"))
    (e,) = executable_calls(tl, "0")
    assert e.flops_from == ("jaxpr", "compiled") and e.flops_note is None
    assert "73.1 GFLOP (FLOPs counted from the jaxpr for some calls), 443 MB a call" in judge_function(e, CEIL).line


def test_records_without_a_source_read_as_before(tmp_path):
    """Records written before flops_from existed (the committed fixtures): no source, the line as it was."""
    recs = [{k: v for k, v in r.items() if k not in ("flops_from", "flops_note")} for r in _jaxpr_records()]
    doc = _doc(recs)
    assert not any("flops from" in e.get("args", {}) for e in doc["traceEvents"])
    tl, _ = _timeline(tmp_path, recs)
    (e,) = executable_calls(tl, "0")
    assert (e.flops_from, e.flops_note) == ((), None)
    line = judge_function(e, CEIL).line
    assert line.startswith("cost_analysis of jit(step): 73.1 GFLOP, 443 MB a call;") and "jaxpr" not in line


def test_counts_above_the_roof_from_the_jaxpr_say_so():
    e = ExecutableCalls("jax.jit big", 1, 1e11, 1e8, 0.5e-3, 1, (("big_gemm", 0.5e-3),), flops_from=("jaxpr",))
    r = judge_function(e, CEIL)
    assert r.regime is None and "the jaxpr counts work the kernels did not do" in r.why


def test_the_h100_capture_judged_with_the_jaxprs_flops(tmp_path, monkeypatch):
    """The committed H100 capture (JAX 0.11.2, 2026-12-07; tests/fixtures/cupti/jax_train_h100_jax011): its
    step recorded XLA's compiled count, 51.9 MFLOP and 443 MB a call, and was judged memory-bound at 29% of
    roof. With the jaxpr's count of the same step (73.09 GFLOP: benchmarks/cupti/jax_train.py's step
    counted on a CPU, the count depends on the shapes alone): 301 calls x 73.09 GFLOP over 137 ms of
    kernels is 160.6 TFLOP/s, 32% of the H100 SXM sheet's 494.5 TFLOP/s TF32 roof: compute-bound."""
    from test_cupti_records import jax011_capture, run_capture

    cap = jax011_capture()
    steps = [r for r in cap["records"] if r["k"] == "jit" and r["name"] == "step"]
    assert {(r["flops"], r["bytes"]) for r in steps} == {(51913724.0, 442654784.0)}
    for r in steps:
        r.update(flops=73.089e9, flops_from="jaxpr")
    r = run_capture(cap, tmp_path, monkeypatch)
    (line,) = [n for n in r.notes if n.startswith("cost_analysis of jit(step)")]
    assert line.startswith("cost_analysis of jit(step): 73.1 GFLOP (FLOPs counted from the jaxpr), 443 MB a call; "
                           "the executable's 17 kernels judged as one: compute-bound against the tf32 roof, "
                           "32% of roof")
    gemm = next(k for k in r.kernels if k.name.startswith("sm90_xmma_gemm"))
    assert gemm.regime == "compute"
    assert gemm.roof_pct == pytest.approx(100 * 301 * 73.089e9 / 0.137 / 494.5e12, rel=0.01)
