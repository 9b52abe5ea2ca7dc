"""`gpuwhy ncu -- CMD ARGS...`: the metric list chosen from the H200's `ncu --query-metrics`
(tests/fixtures/real/ncu_query_metrics_h200.txt.gz), the command line, the cache, the files
kept, and ncu's failures as one line with their exit codes.

Without a GPU and ncu here, a fake `ncu` (a script) plays ncu's part: `--version`, the real
H200 `--query-metrics` output, a profiling run that writes a report (or fails the way ncu
does), and `--import` answered with the real H200 `--set full` raw export. The run on the
real H200 is benchmarks/device_ncu.sh.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from gpuwhy.errors import MeasurementError, NoDeviceError, UsageError
from gpuwhy.importers.ncu import choose_metrics, parse_query_metrics
from gpuwhy.importers.ncu import rep as rep_mod
from gpuwhy.importers.ncu import runner
from gpuwhy.importers.ncu.counters import metric_base

REAL = Path(__file__).parent / "fixtures" / "real"
QUERY = REAL / "ncu_query_metrics_h200.txt.gz"
FULL_RAW = REAL / "ncu_full_raw.csv"


def _h200_bases() -> set[str]:
    return parse_query_metrics(gzip.open(QUERY, "rt").read())


# ------------------------------------------------------------------ the metric list, offline


def test_query_metrics_parse_gives_every_base():
    bases = _h200_bases()
    assert len(bases) == 3601  # what exports_commands.json recorded on the H200
    assert {"dram__bytes_read", "lts__t_bytes", "sm__ops_path_tensor_src_bf16_dst_fp32",
            "FBSP.TriageCompute.dramc__throughput"} <= bases


def test_metric_choice_for_the_h200():
    bases = _h200_bases()
    chosen, lacking = choose_metrics(bases)
    assert all(m.startswith("device__attribute_") or metric_base(m) in bases for m in chosen)
    for m in ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
              "l1tex__t_bytes.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
              "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "sm__cycles_elapsed.avg.per_second"):
        assert m in chosen
    tensor = sorted(m for m in chosen if m.startswith("sm__ops_path_tensor_"))
    assert tensor == [f"sm__ops_path_tensor_src_{t}.sum" for t in ("bf16_dst_fp32", "fp16", "fp64", "fp8", "int1", "int8", "tf32_dst_fp32")]
    # gpuwhy's documented list names two fp16 counters Hopper does not have: dropped, never asked for
    assert set(lacking) == {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum"}
    assert len(chosen) == len(set(chosen))


def test_metric_choice_drops_what_an_older_generation_lacks():
    ampere_like = {b for b in _h200_bases() if "fp8" not in b and "hfma2" not in b and not b.startswith("l1tex__t_bytes")}
    chosen, lacking = choose_metrics(ampere_like)
    assert not any("fp8" in m for m in chosen)
    assert "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum" in lacking and "l1tex__t_bytes.sum" in lacking
    only_split = {b for b in _h200_bases() if b != "sm__ops_path_tensor_src_fp8"}
    chosen, _ = choose_metrics(only_split)
    assert {"sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"} <= set(chosen)


def test_profile_command_line():
    argv = runner.profile_argv("/x/ncu", ["a.sum", "b.sum"], "out/base", ["python3", "p.py", "-c", "3"], 50,
                               kernel_name="regex:gemm", launch_skip=4, profile_from_start=False)
    assert argv == ["/x/ncu", "--metrics", "a.sum,b.sum", "--clock-control", "none", "-c", "50", "--kernel-name",
                    "regex:gemm", "--launch-skip", "4", "--profile-from-start", "off", "-o", "out/base", "python3", "p.py", "-c", "3"]


def test_export_names_never_overwrite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = runner.export_base(["python3", "train.py"], now=0)
    assert first == "gpuwhy-ncu-train-19700101-000000"
    Path(first + ".csv").write_text("mine")
    assert runner.export_base(["python3", "train.py"], now=0) == first + "-2"
    Path("keep.ncu-rep").write_text("mine")
    with pytest.raises(UsageError, match="never overwrites"):
        runner.export_base(["./app"], export="keep.ncu-rep")


# ------------------------------------------------------------------ a fake ncu


def _fake_ncu(tmp: Path, mode: str = "ok") -> tuple[Path, Path]:
    """(script, call log). Modes: ok, perm, apperr, nokernel, nogpu, badmetric (refuses one metric once)."""
    log = tmp / "calls.log"
    script = tmp / "fakebin" / "ncu"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"""#!{sys.executable}
import gzip, os, sys
args = sys.argv[1:]
open({str(log)!r}, "a").write(repr(args) + "\\n")
mode = {mode!r}
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
if args == ["--query-metrics"]:
    if mode == "nogpu":
        print("==ERROR== No supported GPU found")
        sys.exit(1)
    sys.stdout.write(gzip.open({str(QUERY)!r}, "rt").read())
    sys.exit(0)
if "--import" in args:
    sys.stdout.write(open({str(FULL_RAW)!r}).read())
    sys.exit(0)
base = args[args.index("-o") + 1]
print("==PROF== Connected to process 4242 (/usr/bin/python3.12)")
print("training step 1, loss=0.5")
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
if mode == "badmetric" and "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed" in args[args.index("--metrics") + 1]:
    print("==ERROR== Failed to find metric sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed")
    sys.exit(1)
if mode == "nokernel":
    print("==WARNING== No kernels were profiled.")
    sys.exit(0)
open(base + ".ncu-rep", "wb").write(b"NVR\\x00" + b"\\x00" * 64)
if mode == "apperr":
    print("==ERROR== The application returned an error code (3).")
    sys.exit(3)
print("==PROF== Report: " + base + ".ncu-rep")
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(rep_mod, "NCU_FALLBACKS", [])
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    return tmp_path


def _calls(log: Path) -> list[list[str]]:
    import ast

    return [ast.literal_eval(ln) for ln in log.read_text().splitlines()]


def test_run_profiles_imports_and_keeps_the_files(work):
    import io

    script, log = _fake_ncu(work)
    out = io.StringIO()
    run = runner.profile_command([sys.executable, "train.py", "--steps", "2"], ncu=str(script), gpu_name="NVIDIA H200", stream=out)
    calls = _calls(log)
    assert calls[0] == ["--version"] and calls[1] == ["--query-metrics"]
    prof = calls[2]
    assert prof[prof.index("--clock-control") + 1] == "none" and prof[prof.index("-c") + 1] == "200"
    assert prof[-3:] == [sys.executable, "train.py", "--steps", "2"][-3:] and "--kernel-name" not in prof
    asked = prof[prof.index("--metrics") + 1].split(",")
    assert asked == list(run.metrics) and "lts__t_bytes.sum" in asked and "sm__ops_path_tensor_src_fp16_dst_fp32.sum" not in asked
    assert calls[3] == ["--import", run.rep_path, "--csv", "--page", "raw", "--print-units", "base"]
    for p in (run.rep_path, run.csv_path, run.log_path):
        assert os.path.isfile(p) and Path(p).name.startswith("gpuwhy-ncu-train-")
    assert Path(run.csv_path).read_text() == FULL_RAW.read_text()
    assert "training step 1, loss=0.5" in out.getvalue() and "training step 1" in Path(run.log_path).read_text()
    assert run.gpu == "NVIDIA H200" and run.ncu_version == "2025.3.1.0" and run.metrics_source == "ncu --query-metrics"
    # the second run reads the metric list from the cache
    again = runner.profile_command([sys.executable, "train.py"], ncu=str(script), gpu_name="NVIDIA H200", stream=io.StringIO())
    assert again.metrics == run.metrics and again.metrics_source.startswith("cached ncu --query-metrics")
    assert sum(c == ["--query-metrics"] for c in _calls(log)) == 1
    assert again.csv_path != run.csv_path


@pytest.mark.parametrize("mode, error, words", [
    ("perm", UsageError, "ERR_NVGPUCTRPERM"),
    ("apperr", MeasurementError, "the program exited with code 3 under ncu"),
    ("nokernel", UsageError, "ncu profiled no kernel"),
    ("nogpu", NoDeviceError, "ncu finds no GPU"),
])
def test_ncu_failures_are_one_line(work, mode, error, words):
    import io

    script, _ = _fake_ncu(work, mode)
    with pytest.raises(error) as e:
        runner.profile_command([sys.executable, "x.py"], ncu=str(script), gpu_name="NVIDIA H200", stream=io.StringIO())
    assert words in str(e.value) and "\n" not in str(e.value)
    if mode == "apperr":
        assert "partial report is kept" in str(e.value)


def test_a_refused_metric_is_dropped_and_the_run_repeated(work):
    import io

    script, log = _fake_ncu(work, "badmetric")
    run = runner.profile_command([sys.executable, "x.py"], ncu=str(script), gpu_name="NVIDIA H200", stream=io.StringIO())
    assert "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed" not in run.metrics
    assert any("ran again without" in n for n in run.notes)
    assert sum("-o" in c for c in _calls(log)) == 2


def test_no_ncu_is_exit_3_with_where_to_get_it(work, cli):
    code, out, err = cli("ncu", "--", sys.executable, "x.py")
    assert code == 3 and out == "" and err.count("\n") == 1
    assert "`ncu` (Nsight Compute) is not on PATH" in err and "https://developer.nvidia.com/nsight-compute" in err
    code, out, err = cli("ncu", "--json", "--", sys.executable, "x.py")
    assert code == 3 and json.loads(out)["error"]["exit_code"] == 3


def test_no_gpu_is_exit_3(work, cli):
    from conftest import gpu_available

    if gpu_available()[0]:
        pytest.skip("this machine has a GPU")
    script, _ = _fake_ncu(work)
    code, out, err = cli("ncu", "--ncu", str(script), "--", sys.executable, "x.py")
    assert code == 3 and out == "" and err.count("\n") == 1


def test_cli_runs_and_classifies(work, cli, monkeypatch):
    script, log = _fake_ncu(work)
    monkeypatch.setattr(runner, "_gpu_name", lambda: "NVIDIA H200")
    code, out, err = cli("ncu", "--ncu", str(script), "-c", "20", "--kernel-name", "regex:gemm", "--launch-skip", "1",
                         "--json", "--", sys.executable, "train.py", "-c", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    prof = _calls(log)[2]
    assert prof[prof.index("-c") + 1] == "20" and prof[prof.index("--kernel-name") + 1] == "regex:gemm"
    assert prof[prof.index("--launch-skip") + 1] == "1" and prof[-4:] == ["train.py", "-c", "3", "--json"]
    assert doc["run"]["csv_path"].endswith(".csv") and doc["run"]["gpu"] == "NVIDIA H200"
    assert doc["devices"][0]["classified_fraction"] == 1.0
    assert "training step 1" in err and "training step 1" not in out  # the program's output stays off stdout
    code, out, err = cli("ncu", "--ncu", str(script), "--", sys.executable, "train.py")
    assert code == 0 and "ran under ncu 2025.3.1.0 on NVIDIA H200" in out and "time per regime" in out


def test_cli_usage_errors(work, cli):
    code, _, err = cli("ncu")
    assert code == 2 and "gpuwhy ncu -- python3 train.py" in err
    code, _, err = cli("ncu", str(FULL_RAW), "-c", "5")
    assert code == 2 and "apply to `gpuwhy ncu -- CMD`" in err
    code, _, err = cli("ncu", str(FULL_RAW), "--", "python3")
    assert code == 2 and "not both" in err
    code, _, err = cli("ncu", "--")
    assert code == 2 and "nothing to run" in err
    code, _, err = cli("ncu", "--ncu", "/nonexistent/ncu", "--", sys.executable)
    assert code == 2 and "--ncu '/nonexistent/ncu' is not an executable file" in err


def test_ncu_found_under_cuda_home(work, monkeypatch):
    script, _ = _fake_ncu(work)
    home = work / "cuda"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "ncu").symlink_to(script)
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert rep_mod.find_ncu() == str(home / "bin" / "ncu")
    monkeypatch.setenv("CUDA_HOME", str(work / "nowhere"))
    assert rep_mod.find_ncu() is None
