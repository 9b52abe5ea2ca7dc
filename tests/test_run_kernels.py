"""`gpuwhy run --kernels`: the ncu pass over a trace's top kernels (which launches, matched back how),
the budget by measured regime, and ncu alone for programs that are not Python.

No GPU, PyTorch or ncu here: a fake profiler writes a trace of a program that runs the eight
kernels of `tests/fixtures/real/ncu_mix.py` once as warm-up and then in three steps, with the
kernel names spelled as CUPTI (torch.profiler) spells them; a fake `ncu` plays Nsight Compute:
it filters that program's launches as ncu does (``--kernel-name regex:`` on the function name,
``--launch-skip`` and ``-c`` counting matching launches) and answers ``--import`` with the
matching rows of the real H200 `--set full` export of those kernels (`ncu_full_raw.csv`),
which spells the names as ncu does. The real run is benchmarks/device_run.sh on the H200.
"""

from __future__ import annotations

import csv
import io
import json
import re
import stat
import sys
from pathlib import Path

import pytest

from gpuwhy.api import run_program as rp
from gpuwhy.errors import UsageError
from gpuwhy.importers.kernel_names import function_name
from gpuwhy.importers.ncu import rep as rep_mod
from gpuwhy.importers.ncu import runner
from gpuwhy.importers.ncu.kernel_pass import kernel_name_filter, match_launches, plan_pass
from gpuwhy.importers.kineto import trace_timeline
from gpuwhy.importers.timeline.launches import KernelLaunch, dim3, kernel_launches

from test_schema import check_document

REAL = Path(__file__).parent / "fixtures" / "real"
FULL_RAW = REAL / "ncu_full_raw.csv"
QUERY = REAL / "ncu_query_metrics_h200.txt.gz"

#: The eight kernels of ncu_mix.py in launch order: (the name torch.profiler records, ncu's function
#: name, grid, block, duration in us from ncu_full_raw.csv's gpu__time_duration.sum).
KERNELS = [
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
     (2, 66, 1), (384, 1, 1), 222.24),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0",
     "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0",
     (132, 1, 1), (384, 1, 1), 192.736),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int, float, "
     "float const*, float const*, float const*, float*, float*, float*)", "vectorized_layer_norm_kernel",
     (8192, 1, 1), (32, 4, 1), 107.296),
    ("void (anonymous namespace)::cunn_SoftMaxForwardReg<float, float, float, at::native::(anonymous namespace)::"
     "SoftMaxForwardEpilogue, long, 4>(float*, float const*, long)", "cunn_SoftMaxForwardReg",
     (8192, 1, 1), (1024, 1, 1), 136.896),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
     "std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
     "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
     "vectorized_elementwise_kernel", (65536, 1, 1), (128, 1, 1), 127.392),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, "
     "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
     "vectorized_elementwise_kernel", (1, 1, 1), (128, 1, 1), 2.528),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, "
     "2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)",
     "vectorized_elementwise_kernel", (1, 1, 1), (128, 1, 1), 2.496),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_256x128_8x4_nn_align1"
     "::Params)", "Kernel2", (128, 1, 1), (256, 1, 1), 453.568),
]
ROUNDS = 4  # one warm-up round (ProfilerStep#0), then the three steps judged with --steps 3
GAP_US = 10.0


def _trace() -> dict:
    ev, corr = [], 1000
    for r in range(ROUNDS):
        t0 = r * 3000.0
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{r}", "ts": t0, "dur": 2900.0})
        t = t0 + GAP_US
        for name, _, grid, block, dur in KERNELS:
            ev.append({"ph": "X", "cat": "kernel", "name": name, "ts": t, "dur": dur,
                       "args": {"device": 0, "stream": 7, "correlation": corr, "grid": list(grid), "block": list(block)}})
            corr += 2
            t += dur + GAP_US
    return {"traceEvents": ev}


class FakeProfiler:
    def __init__(self, data: dict):
        self.data = data

    def start(self):
        pass

    def stop(self):
        pass

    def export(self, path):
        Path(path).write_text(json.dumps(self.data))


def _fake_ncu(tmp: Path, mode: str = "ok") -> tuple[Path, Path]:
    """A fake ncu playing ncu_mix.py's program: ROUNDS x the eight launches, filtered as ncu filters."""
    log = tmp / "ncu-calls.log"
    script = tmp / "fakebin" / "ncu"
    script.parent.mkdir(parents=True, exist_ok=True)
    functions = [k[1] for k in KERNELS]
    script.write_text(f"""#!{sys.executable}
import csv, gzip, io, re, sys
args = sys.argv[1:]
open({str(log)!r}, "a").write(repr(args) + "\\n")
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
if args == ["--query-metrics"]:
    sys.stdout.write(gzip.open({str(QUERY)!r}, "rt").read())
    sys.exit(0)
if "--import" in args:
    sys.stdout.write(open(args[args.index("--import") + 1].removesuffix(".ncu-rep") + ".fake-export").read())
    sys.exit(0)
if {mode!r} == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
base = args[args.index("-o") + 1]
rows = list(csv.reader(open({str(FULL_RAW)!r})))
at = next(i for i, r in enumerate(rows) if r[:1] == ["ID"])
head, units = rows[at], rows[at + 1]
data = [r for r in rows[at + 2:] if len(r) == len(head)]
functions = {functions!r}
name_re = args[args.index("--kernel-name") + 1][len("regex:"):] if "--kernel-name" in args else None
skip = int(args[args.index("--launch-skip") + 1]) if "--launch-skip" in args else 0
count = int(args[args.index("-c") + 1])
picked = []
for r in range({ROUNDS}):
    for i, row in enumerate(data):
        if name_re is None or re.search(name_re, functions[i]):
            picked.append(row)
picked = picked[skip:skip + count]
out = io.StringIO()
w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\\n")
w.writerow(head)
w.writerow(units)
for n, row in enumerate(picked):
    w.writerow([str(n)] + row[1:])
open(base + ".fake-export", "w").write(out.getvalue())
open(base + ".ncu-rep", "wb").write(b"NVR\\x00" + b"\\x00" * 64)
print("==PROF== Report: " + base + ".ncu-rep")
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no bench profile: judged against the sheet
    monkeypatch.setattr(rep_mod, "NCU_FALLBACKS", [])
    monkeypatch.setattr(runner, "_gpu_name", lambda: "NVIDIA H200")
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(_trace()))
    (tmp_path / "prog.py").write_text("print('step')\n")
    return tmp_path


def _calls(log: Path) -> list[list[str]]:
    import ast

    return [ast.literal_eval(ln) for ln in log.read_text().splitlines()]


# ------------------------------------------------------------------ names, launches, the plan


def test_function_name_is_ncus_function_base():
    for trace_name, ncu_function, *_ in KERNELS:
        assert function_name(trace_name) == ncu_function
    # ncu's own spelling of the same kernels gives the same function names
    rows = list(csv.reader(FULL_RAW.open()))
    i = next(i for i, r in enumerate(rows) if r[:1] == ["ID"])
    ncu_names = [r[rows[i].index("Kernel Name")] for r in rows[i + 2:] if len(r) == len(rows[i])]
    assert [function_name(n) for n in ncu_names] == [k[1] for k in KERNELS]
    assert function_name("_ZN2at6native29vectorized_elementwise_kernelILi4E") == "vectorized_elementwise_kernel"
    assert function_name("") == ""


def test_kernel_name_filter_matches_the_function_with_or_without_namespace():
    f = kernel_name_filter(["Kernel2", "vectorized_elementwise_kernel", "Kernel2"])
    assert f == "regex:(^|:)(Kernel2|vectorized_elementwise_kernel)$"
    rx = re.compile(f[len("regex:"):])
    assert rx.search("Kernel2") and rx.search("at::native::vectorized_elementwise_kernel")
    assert not rx.search("Kernel22") and not rx.search("my_vectorized_elementwise_kernel")
    assert kernel_name_filter(["a.b"]) == r"regex:(^|:)(a\.b)$"
    with pytest.raises(ValueError, match="no kernel function name"):
        kernel_name_filter(["", ""])


def test_launches_in_launch_order_with_their_shapes():
    ev = [{"ph": "X", "cat": "kernel", "name": "b", "ts": 5, "dur": 1, "args": {"correlation": 9, "grid": [2, 1, 1], "block": [64, 1, 1]}},
          {"ph": "X", "cat": "kernel", "name": "a", "ts": 7, "dur": 2, "args": {"correlation": 3, "grid": "x"}},
          {"ph": "X", "cat": "kernel", "name": "c", "ts": 1, "dur": 1},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0, "dur": 1}]
    got = kernel_launches(trace_timeline({"traceEvents": ev}))
    assert [k.name for k in got] == ["a", "b", "c"]  # by correlation id; none last
    assert got[0].grid is None and got[1].grid == (2, 1, 1) and got[1].block == (64, 1, 1) and got[2].correlation == -1
    assert dim3("(65,536, 1, 1)") is None and dim3("(128, 1, 1)") == (128, 1, 1) and dim3([1.5, 1, 1]) is None


def _launches(seq: str, start_us: float = 0.0) -> list[KernelLaunch]:
    return [KernelLaunch(f"void ns::{c}<int>(int)", (1, 1, 1), (32, 1, 1), start_us + i, 1.0, i, 0)
            for i, c in enumerate(seq)]


def test_plan_skips_warm_up_and_takes_the_fewest_launches_covering_each_target():
    # launch order A B C A B C A B C x; window from the 4th launch; targets A and C, 2 launches each
    ls = _launches("ABCABCABCx")
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::C<int>(int)"], window_start_us=3, per_kernel=2)
    # matching launches (A or C): A C A C A C at positions 0 1 2 3 4 5; the window starts at the 3rd (index 2)
    assert plan.functions == ("A", "C") and plan.skip == 2 and plan.count == 4
    assert [k.name[9] for k in plan.expected] == ["A", "C", "A", "C"]
    assert plan.covered == {"void ns::A<int>(int)": 2, "void ns::C<int>(int)": 2} and plan.not_covered == ()
    # a target with fewer launches in the window than asked needs only those: A at 3 and 6, x at 9
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::x<int>(int)"], window_start_us=3, per_kernel=3)
    assert plan.skip == 1 and plan.count == 3  # A A x after skipping the first A
    assert plan.covered == {"void ns::A<int>(int)": 2, "void ns::x<int>(int)": 1}
    # a cap too small for 2 and 1: one of each is enough (A at 6, x at 9)
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::x<int>(int)"], window_start_us=3, per_kernel=3, cap=2)
    assert (plan.skip, plan.count, plan.not_covered) == (2, 2, ())
    assert plan.covered == {"void ns::A<int>(int)": 1, "void ns::x<int>(int)": 1}
    # a cap too small even for one of each: the first launches of the window, and what they leave out
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::x<int>(int)"], window_start_us=3, per_kernel=3, cap=1)
    assert (plan.skip, plan.count, plan.not_covered) == (1, 1, ("void ns::x<int>(int)",))
    # the shortest stretch, not the first: B once per round, A three times a round; 2 of each
    ls2 = _launches("AAABAAABAAAB")
    plan = plan_pass(ls2, ["void ns::A<int>(int)", "void ns::B<int>(int)"], window_start_us=0, per_kernel=2)
    assert (plan.skip, plan.count) == (3, 5)  # B A A A B, not A A A B A A A B
    assert plan_pass(ls, ["void ns::A<int>(int)"], window_start_us=100) is None
    with pytest.raises(ValueError, match="at least 1"):
        plan_pass(ls, ["void ns::A<int>(int)"], 0, per_kernel=0)


def test_match_by_order_then_by_shape_else_unmatched():
    ls = _launches("ABAB")
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::B<int>(int)"], 0, per_kernel=2)
    A, B = "A", "B"
    m = match_launches(plan, [("1", A, (1, 1, 1), (32, 1, 1)), ("2", B, (1, 1, 1), (32, 1, 1)),
                              ("3", A, (1, 1, 1), (32, 1, 1)), ("4", B, (1, 1, 1), (32, 1, 1))])
    assert m.by_order == 4 and m.by_shape == 0 and m.unmatched == 0 and m.names["4"] == "void ns::B<int>(int)"
    # the program launched an extra B first: order fails from there, shapes place what is unique
    m = match_launches(plan, [("1", B, (1, 1, 1), (32, 1, 1)), ("2", A, (1, 1, 1), (32, 1, 1)),
                              ("3", "Z", (1, 1, 1), (32, 1, 1))])
    assert (m.by_order, m.by_shape, m.unmatched) == (0, 2, 1) and m.names["2"] == "void ns::A<int>(int)"
    assert m.how == "0 by launch order (name, grid and block agree), 2 by name, grid and block, 1 not matched"


# ------------------------------------------------------------------ gpuwhy run --kernels, end to end


def _round_us(i: int) -> float:
    return KERNELS[i][4]


def test_run_kernels_measures_the_top_kernels_and_budgets_by_regime(work, cli):
    ncu, log = _fake_ncu(work)
    code, out, err = cli("run", "--json", "--kernels", "--steps", "3", "--ncu", str(ncu), "--out", "o", "--",
                         "python", "prog.py")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)  # the published schema, units in the keys
    assert doc["mode"] == "trace+ncu"
    prof = [c for c in _calls(log) if "-o" in c][0]
    # the top five by time in the window: sgemm, nvjet, sdpa, softmax, GELU (layer norm is sixth)
    names = prof[prof.index("--kernel-name") + 1]
    assert names == ("regex:(^|:)(Kernel2|nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|"
                     "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0|"
                     "cunn_SoftMaxForwardReg|vectorized_elementwise_kernel)$")
    # 7 matching launches a round (all but layer norm: nvjet sdpa softmax gelu tiny tiny sgemm), rounds 1-3 in
    # the window (from launch 7); the shortest stretch with 2 of each target: round 1's sgemm (launch 13)
    # to round 3's GELU (launch 24): 12 launches
    assert prof[prof.index("--launch-skip") + 1] == "13" and prof[prof.index("-c") + 1] == "12"
    kp = doc["kernel_pass"]
    assert kp["match"] == {"launches_by_order": 12, "launches_by_shape": 0, "launches_unmatched": 0}
    assert kp["roofline"].startswith("the H200 SXM spec sheet (no `gpuwhy bench --sweep` profile")
    rows = {k["name"]: k for k in doc["kernels"]}
    assert len(rows) == 5
    regimes = {k["full_name"]: k["regime"] for k in doc["kernels"]}
    assert regimes[KERNELS[7][0]] == "compute" and regimes[KERNELS[0][0]] == "compute"
    assert regimes[KERNELS[1][0]] == "compute" and regimes[KERNELS[4][0]] == "memory"
    assert regimes[KERNELS[3][0]] == "issue"  # the softmax: exp on the SFU (the issue-14 finding)
    assert all(k["measured_launches"] == 2 for k in doc["kernels"])
    b = doc["diagnosis"]
    busy = {s["cause"]: s["seconds"] for s in b["shares"] if s["side"] == "busy"}
    judged = b["judged_s"]
    # three steps of each kernel, in seconds; the busy shares are those sums (the window holds them whole)
    assert busy["compute_bound"] == pytest.approx(3 * (_round_us(0) + _round_us(1) + _round_us(7)) * 1e-6)
    assert busy["memory_bound"] == pytest.approx(3 * _round_us(4) * 1e-6)
    assert busy["issue_bound"] == pytest.approx(3 * _round_us(3) * 1e-6)
    assert busy["kernels"] == pytest.approx(3 * _round_us(2) * 1e-6)  # the layer norm: not measured
    # the two tiny elementwise launches share the GELU's function name, so ncu measured them too: launch-sized
    assert busy["launch_sized"] == pytest.approx(3 * (_round_us(5) + _round_us(6)) * 1e-6)
    assert set(busy) == {"compute_bound", "memory_bound", "issue_bound", "launch_sized", "kernels"}
    assert sum(s["share_pct"] for s in b["shares"]) == pytest.approx(100.0)
    # bringing the measured kernels to their roof: each one's window time x (1 - its share of its roof); the
    # window then takes at least the larger of the GPU time left (busy, queue latency) and the host's idle time
    sgemm = rows["cutlass_80_simt_sgemm_256x128_8x4_nn_align1"]
    assert sgemm["total_s"] == pytest.approx(3 * _round_us(7) * 1e-6)
    removable = sum(k["total_s"] * (1 - k["roof_pct"] / 100) for k in doc["kernels"]
                    if k["regime"] in ("compute", "memory", "issue") and k["mean_s"] >= 10e-6)
    f = {r["key"]: r for r in b["remedies"]}["faster_kernels"]
    gpu_left = sum(busy.values()) - removable + sum(s["seconds"] for s in b["shares"] if s["cause"] == "queue_latency")
    host_left = sum(s["seconds"] for s in b["shares"] if s["cause"] in (
        "launch_overhead", "host_work", "host_sync", "data_loading", "pageable_copy", "unexplained"))
    assert f["removed_s"] == pytest.approx(removable) and f["floor_s"] == pytest.approx(max(gpu_left, host_left))
    assert f["ceiling_x"] == pytest.approx(judged / max(gpu_left, host_left))
    assert Path(kp["ncu"]["rep_path"]).name == "gpuwhy-run-ncu.ncu-rep" and Path(kp["ncu"]["rep_path"]).parent.name == "o"


def test_run_kernels_text_output_names_regimes_and_fits_80_columns(work, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    ncu, _ = _fake_ncu(work)
    code, out, err = cli("run", "--kernels", "--steps", "3", "--ncu", str(ncu), "--out", "o", "--", "python", "prog.py")
    assert code == 0, err
    assert "top kernels in the window" in out and "issue" in out and "compute" in out
    assert "ncu report kept at" in err
    assert max(len(x) for x in out.splitlines()) <= 80


def test_run_kernels_pass_failure_keeps_the_trace_budget_and_exits_with_its_code(work, cli):
    ncu, _ = _fake_ncu(work, "perm")
    code, out, err = cli("run", "--json", "--kernels", "--steps", "3", "--ncu", str(ncu), "--out", "o", "--",
                         "python", "prog.py")
    # the program's and ncu's own output, then gpuwhy's one line
    assert code == 2 and err.strip().splitlines()[-1].startswith("gpuwhy: error: ") and err.count("gpuwhy: error") == 1
    assert "ERR_NVGPUCTRPERM" in err.strip().splitlines()[-1]
    doc = json.loads(out)
    check_document(doc)
    assert doc["mode"] == "trace" and doc["kernel_pass"] is None and "ERR_NVGPUCTRPERM" in doc["kernel_pass_error"]
    assert sum(s["share_pct"] for s in doc["diagnosis"]["shares"]) == pytest.approx(100.0)


def test_ncu_alone_for_a_program_that_is_not_python(work, cli):
    ncu, log = _fake_ncu(work)
    app = work / "app"
    app.write_text("#!/bin/sh\nexit 0\n")
    app.chmod(0o755)
    code, out, err = cli("run", "--json", "--ncu", str(ncu), "--out", "o", "-c", "8", "--", str(app), "--n", "3")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert doc["mode"] == "ncu" and doc["window"] is None and doc["trace"] is None
    prof = [c for c in _calls(log) if "-o" in c][0]
    assert prof[prof.index("-c") + 1] == "8" and "--kernel-name" not in prof and prof[-3:] == [str(app), "--n", "3"]
    b = doc["diagnosis"]
    total_s = sum(k[4] for k in KERNELS) * 1e-6  # the eight launches, each run alone
    # ncu alone sees no idle time: the document says nothing of it (not 0)
    assert b["window_s"] == pytest.approx(total_s) and b["idle_s"] is None
    assert b["top_cause"] == "compute_bound" and b["line"].startswith("compute-bound: compute-bound kernels")
    busy = {s["cause"]: s["seconds"] for s in b["shares"]}
    assert busy["compute_bound"] == pytest.approx((_round_us(0) + _round_us(1) + _round_us(7)) * 1e-6)
    assert busy["issue_bound"] == pytest.approx(_round_us(3) * 1e-6)
    assert sum(s["share_pct"] for s in b["shares"]) == pytest.approx(100.0)
    assert any("ncu alone" in n and "GPU idle time is not seen" in n for n in doc["notes"])
    code, out, err = cli("run", "--ncu", str(ncu), "--out", "o", "-c", "8", "--", str(app))
    assert code == 0 and "GPU idle time: not measured (ncu alone records no timeline)" in out and "GPU-bound" not in out
    # a second run in the same folder numbers its files instead of refusing
    code, out, err = cli("run", "--json", "--ncu", str(ncu), "--out", "o", "-c", "8", "--", str(app))
    assert code == 0, err
    assert json.loads(out)["kernel_pass"]["ncu"]["rep_path"].endswith("gpuwhy-run-ncu-2.ncu-rep")


def test_no_pytorch_and_no_ncu_is_exit_3_naming_both(work, cli, monkeypatch):
    monkeypatch.setattr(rp, "torch_profiler", _no_torch)
    monkeypatch.setenv("PATH", str(work / "empty"))
    code, out, err = cli("run", "--out", "o", "--", "python", "prog.py")
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "PyTorch is not importable" in err and "`ncu` is not on PATH either" in err
    code, out, err = cli("run", "--out", "o", "--", "./app")
    assert code == 3 and "not on PATH" in err and len(err.strip().splitlines()) == 1


def _no_torch():
    raise rp.NoPyTorch("PyTorch is not importable here: install it (pip install torch) to profile a Python "
                       "program's timeline, or Nsight Compute (ncu) to profile its kernels")


def test_no_pytorch_falls_back_to_ncu_alone_for_a_python_program(work, cli, monkeypatch):
    monkeypatch.setattr(rp, "torch_profiler", _no_torch)
    ncu, log = _fake_ncu(work)
    code, out, err = cli("run", "--json", "--ncu", str(ncu), "--out", "o", "--", "python", "prog.py", "--x")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["mode"] == "ncu" and doc["notes"][0].startswith("neither PyTorch nor cupti-python is importable: the program's kernels were "
                                                      "profiled with ncu alone")
    prof = [c for c in _calls(log) if "-o" in c][0]
    assert prof[-3:] == [sys.executable, "prog.py", "--x"]
    code, out, err = cli("run", "--steps", "2", "--ncu", str(ncu), "--out", "o", "--", "python", "prog.py")
    assert code == 2 and "--steps pick a window" in err


def test_run_option_errors(work, cli):
    code, out, err = cli("run", "--steps", "2", "--out", "o", "--", "./app")
    assert code == 2 and "only a Python program gets" in err
    code, out, err = cli("run", "--top", "0", "--out", "o", "--", "python", "prog.py")
    assert code == 2 and "--top" in err
    with pytest.raises(UsageError, match="no program given"):
        from gpuwhy.api.run import run_under_ncu

        run_under_ncu([], work / "o")


# ------------------------------------------------------------------ the measured roofline


def test_judged_against_the_measured_roofline_when_a_profile_exists(tmp_path, monkeypatch):
    """With a bench profile of the H200 the kernels are judged against its measured DRAM bandwidth and
    compute peaks, not scaled to the kernel's clock (a measured peak is at the clock the GPU sustained)."""
    from gpuwhy.api.run_kernels import judge
    from gpuwhy.importers.ncu.read import read_ncu_csv
    from gpuwhy.profiles import DeviceProfile, save_profile

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    prof = DeviceProfile.from_dict(json.loads((Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json").read_text()))
    save_profile(prof)
    report, roofline = judge(read_ncu_csv(str(FULL_RAW)))
    assert roofline.startswith("the measured roofline (measured profile 2026-11-29")
    ks = {function_name(k.full_name): k for k in report.devices[0].kernels}
    gemm = ks["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"]
    assert gemm.regime == "compute" and gemm.compute_peak_scale is None
    # its share of the roof: achieved bf16 FLOP/s over the profile's measured bf16 peak
    assert gemm.roof_pct == pytest.approx(100 * gemm.achieved_tflops / prof.peak_tflops_measured["bf16"], rel=1e-9)
    mem = [k for k in report.devices[0].kernels if k.regime == "memory" and k.deciding_level == "DRAM"]
    assert mem, "the GELU and layer norm stream DRAM"
    for k in mem:  # a DRAM-bound kernel's share: its DRAM bytes/s over the measured bandwidth
        assert k.roof_pct == pytest.approx(100 * k.achieved_gbs / prof.dram_bandwidth_gbs, rel=1e-9)


# ------------------------------------------------------------------ real inputs (H100, 2026-12-06)

RUN_TRACE = REAL / "run_decode_h100_trace.json.gz"
RUN_NCU = REAL / "run_decode_h100_ncu.csv.gz"


def test_real_decode_run_the_ncu_pass_lands_on_the_traces_kernels():
    """The trace and the ncu pass of `gpuwhy run --kernels --steps 4` on GPT-2-small decode at batch 1
    (EXPORTS.md). That run's plan (before the shortest-stretch rule) asked ncu for the first 100
    launches of the window's top-kernel functions: skip 963, count 100. Each of ncu's 100 launches
    lands on the trace's launch in that place: same function name, grid and block."""
    from gpuwhy.api.run import budget_of
    from gpuwhy.importers.ncu.kernel_pass import PassPlan
    from gpuwhy.importers.ncu.rep import read_export
    from gpuwhy.importers.kineto import read_timeline
    from gpuwhy.importers.timeline.activities import crop
    from gpuwhy.importers.timeline.analyze import analyze
    from gpuwhy.importers.timeline.window import choose_window
    from gpuwhy.model.roofline.classify import SHORT_KERNEL_S

    tl = read_timeline(RUN_TRACE)
    w = choose_window(tl, steps=4)
    _, _, rows = budget_of(analyze(crop(tl, w.start_us, w.end_us), top=100_000), w)
    targets = [r.full_name for r in rows if r.mean_s >= SHORT_KERNEL_S][:5]
    launches = kernel_launches(tl)
    functions = {function_name(t) for t in targets}
    assert functions == {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
                         "sgemm_largek_lds64", "fmha_cutlassF_f32_aligned_64x64_rf_sm80",
                         "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"}
    matched = [la for la in launches if function_name(la.name) in functions]
    first = next(i for i, la in enumerate(matched) if la.ts_us >= w.start_us)
    assert first == 963
    plan = PassPlan(tuple(functions), "", 963, 100, tuple(matched[963:1063]))
    table, _ = read_export(RUN_NCU)
    profiled = [(la.id, la.name, dim3(la.grid), dim3(la.block)) for la in table.launches]
    assert len(profiled) == 100
    m = match_launches(plan, profiled, [la for la in launches if la.ts_us >= w.start_us])
    assert (m.by_order, m.by_shape, m.unmatched) == (100, 0, 0)
    # ncu spells the names as the trace does for these kernels, and the shapes agree one by one
    for (lid, name, grid, block), exp in zip(profiled, plan.expected):
        assert function_name(name) == function_name(exp.name) and (grid, block) == (exp.grid, exp.block)
    # today's plan (2 a kernel, 60 at most): the lm-head GEMM runs once a step, about 61 launches apart,
    # so 2 of it do not fit in 60: one of each target, the shortest such stretch
    short = plan_pass(launches, targets, w.start_us)
    assert short.not_covered == () and short.count <= 60 and short.skip >= 963
    assert min(short.covered.values()) == 1


def test_control_characters_in_kernel_names_never_reach_the_terminal():
    from gpuwhy.importers.kernel_names import display_names, printable, short_kernel_name

    evil = "void ns::k\x1b]0;pwned\x07<int>(int)\x9b2J"
    assert printable(evil) == "void ns::k?]0;pwned?<int>(int)?2J"
    assert short_kernel_name(evil) == "k?]0;pwned??2J"  # the text outside <...> and (...) is the name
    assert not any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in display_names([evil, "b\x07"])[evil])


# ------------------------------------------------------------------ the plan's edges (pinned)


def _named(seq: list[str], start_us: float = 0.0) -> list[KernelLaunch]:
    return [KernelLaunch(n, (1, 1, 1), (32, 1, 1), start_us + i, 1.0, i, 0) for i, n in enumerate(seq)]


def test_plan_limits_at_one_and_the_documented_cap():
    from gpuwhy.importers.ncu.kernel_pass import PASS_CAP, PER_KERNEL

    assert (PER_KERNEL, PASS_CAP) == (2, 60)  # docs/run.md: 2 launches of each, at most 60
    ls = _launches("AB")
    plan = plan_pass(ls, ["void ns::A<int>(int)"], 0, per_kernel=1, cap=1)  # both limits at their least
    assert (plan.skip, plan.count) == (0, 1)
    with pytest.raises(ValueError, match=r"^per_kernel \(1\) and cap \(0\) must be at least 1$"):
        plan_pass(ls, ["void ns::A<int>(int)"], 0, per_kernel=1, cap=0)


def test_a_target_launched_only_before_the_window_is_not_asked_for():
    A, B = "void ns::A<int>(int)", "void ns::B<int>(int)"
    ls = _named([B, A, A])  # B at 0 (warm-up), A at 1 and 2
    plan = plan_pass(ls, [A, B], window_start_us=1, per_kernel=2)
    assert plan.covered == {A: 2} and plan.not_covered == () and (plan.skip, plan.count) == (1, 2)
    # a target with one launch in the window: that one is enough
    plan = plan_pass(_named([A, B, A]), [A, B], window_start_us=0, per_kernel=2)
    assert plan.covered == {A: 2, B: 1} and (plan.skip, plan.count) == (0, 3)


def test_a_shortest_stretch_of_exactly_the_cap_is_taken_whole():
    A, B = "void ns::A<int>(int)", "void ns::B<int>(int)"
    ls = _named([A, B, A, B])
    plan = plan_pass(ls, [A, B], 0, per_kernel=2, cap=4)  # 2 of each needs all 4: 4 is not over the cap
    assert (plan.count, plan.covered) == (4, {A: 2, B: 2})
    plan = plan_pass(ls, [A, B], 0, per_kernel=2, cap=3)  # over it: one of each
    assert (plan.count, plan.covered) == (2, {A: 1, B: 1})


def test_the_first_cap_launches_end_at_their_last_target_launch():
    A, B, other = "void ns::A<int>(int)", "void ns::B<int>(int)", "void ns::A<float>(int)"  # A<float>: A's function
    ls = _named([A, other, other, other, B])
    plan = plan_pass(ls, [A, B], 0, per_kernel=1, cap=3)  # one of each needs 5: the first 3, cut after A
    assert (plan.skip, plan.count, plan.not_covered) == (0, 1, (B,))
    plan = plan_pass(_named([other, A, other, other, B]), [A, B], 0, per_kernel=1, cap=3)
    assert (plan.skip, plan.count, plan.covered) == (0, 2, {A: 1, B: 0})  # up to and with A, the last target in 3


def test_more_profiled_launches_than_planned_are_placed_by_shape():
    ls = _launches("AB")
    plan = plan_pass(ls, ["void ns::A<int>(int)", "void ns::B<int>(int)"], 0, per_kernel=1)
    m = match_launches(plan, [("1", "A", (1, 1, 1), (32, 1, 1)), ("2", "B", (1, 1, 1), (32, 1, 1)),
                              ("3", "B", (1, 1, 1), (32, 1, 1))])
    assert (m.by_order, m.by_shape, m.unmatched) == (2, 1, 0) and m.names["3"] == "void ns::B<int>(int)"


def test_plan_edges_the_mutation_run_found():
    A, B, other = "void ns::A<int>(int)", "void ns::B<int>(int)", "void ns::A<float>(int)"
    # one launch of B in the window: 1 is asked of it, so A B A (3), not the whole A B A A (4)
    plan = plan_pass(_named([A, B, A, A]), [A, B], 0, per_kernel=2)
    assert (plan.skip, plan.count) == (0, 3)
    # the shortest stretch B A A A B starts at launch 3: 5 launches, within a cap of 5
    plan = plan_pass(_launches("AAABAAABAAAB"), ["void ns::A<int>(int)", "void ns::B<int>(int)"], 0, per_kernel=2, cap=5)
    assert (plan.skip, plan.count) == (3, 5)
    # the first 3 launches when even one of each does not fit: cut after the last target among them (A at 2)
    plan = plan_pass(_named([A, other, A, other, other, B]), [A, B], 0, per_kernel=1, cap=3)
    assert (plan.skip, plan.count, plan.covered) == (0, 3, {A: 2, B: 0})
    # no target among the first 2: those 2, and both targets named as not covered
    plan = plan_pass(_named([other, other, A, other, other, B]), [A, B], 0, per_kernel=1, cap=2)
    assert (plan.count, plan.not_covered) == (2, (A, B))
