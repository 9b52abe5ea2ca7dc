"""`gpuwhy classify`: output, JSON keys, and one-line errors with exit code 2."""

import json

import pytest

from conftest import run_cli

JSON_KEYS = {"arithmetic_intensity", "ridge_point", "regime", "attainable_tflops", "predicted_time_s", "t_compute_s", "t_memory_s", "t_overhead_s"}


def test_vecadd_json_on_rtx5070(cli):
    code, out, err = cli("classify", "--flops", "268435456", "--bytes", "3221225472", "--gpu", "rtx 5070", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert JSON_KEYS <= set(doc)
    assert doc["regime"] == "memory"
    assert round(doc["arithmetic_intensity"], 3) == 0.083
    assert round(doc["ridge_point"]) == 46
    assert doc["remedies"]["regime"] == "memory"
    assert doc["remedies"]["helps"] and doc["remedies"]["does_not_help"]


def test_dtype_picks_the_ceiling(cli):
    ridges = {}
    for dtype in ("fp32", "fp16", "fp8", "fp4"):
        code, out, err = cli("classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "rtx 5070", "--dtype", dtype, "--json")
        assert code == 0, err
        ridges[dtype] = round(json.loads(out)["ridge_point"])
    assert ridges == {"fp32": 46, "fp16": 92, "fp8": 184, "fp4": 735}


def test_example_and_human_output(cli):
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "rtx 5070")
    assert code == 0, err
    assert "memory-bound" in out and "ridge point" in out and "does not help" in out


def test_measured_time_reports_sol(cli):
    code, out, err = cli("classify", "--flops", "268435456", "--bytes", "3221225472", "--gpu", "H200", "--time", "0.8ms", "--json")
    assert code == 0, err
    doc = json.loads(out)
    # 3.22 GB in 0.8 ms = 4.03 TB/s, 84% of 4.8 TB/s
    assert doc["achieved_bandwidth_gbs"] == pytest.approx(4026.5, rel=1e-3)
    assert doc["sol_pct"] == pytest.approx(100 * (3221225472 / 4.8e12) / 0.8e-3, rel=1e-9)
    assert doc["warnings"] == []


def test_too_fast_measurement_warns(cli):
    code, out, _ = cli("classify", "--flops", "268435456", "--bytes", "3221225472", "--gpu", "H200", "--time", "0.1ms", "--json")
    assert code == 0
    assert any("faster than the roofline" in w for w in json.loads(out)["warnings"])


def test_tensor_core_remedy_for_fp32_compute_bound(cli):
    code, out, _ = cli("classify", "--flops", "1e15", "--bytes", "1e9", "--gpu", "H200", "--json")
    doc = json.loads(out)
    assert doc["regime"] == "compute"
    tf32 = [s for s in doc["remedies"]["steps"] if "tf32" in s["text"]]
    assert tf32 and tf32[0]["stage"] == "precision"
    # H200: fp32 67 -> tf32 494.5 TFLOP/s; 1 GB at 4.8 TB/s (208 us) never catches up with 1e15 / 494.5e12 = 2.02 s
    assert tf32[0]["max_speedup_x"] == pytest.approx(494.5 / 67, rel=1e-5)


def test_short_kernel_hint(cli):
    code, out, _ = cli("classify", "--flops", "1e6", "--bytes", "1e6", "--gpu", "H200", "--json")
    doc = json.loads(out)
    assert doc["regime"] == "overhead"
    assert any("launch-sized" in h for h in doc["remedies"]["hints"])


def test_no_tensor_cores(cli):
    code, out, err = cli("classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--dtype", "tf32", "--no-tensor-cores", "--json")
    assert code == 0, err
    assert json.loads(out)["precision"] == "fp32"
    code, out, err = cli("classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--dtype", "fp8", "--no-tensor-cores")
    assert code == 2 and "only on tensor cores" in err


BAD = [
    (["--flops", "0", "--bytes", "1GB"], "--flops '0'"),
    (["--flops", "-5", "--bytes", "1GB"], "--flops '-5'"),
    (["--flops", "nan", "--bytes", "1GB"], "--flops 'nan'"),
    (["--flops", "abc", "--bytes", "1GB"], "--flops 'abc'"),
    (["--flops", "1T", "--bytes", "12QB"], "unknown suffix"),
    (["--flops", "1T", "--bytes", "-1"], "--bytes '-1'"),
    (["--flops", "1T", "--bytes", "1GB", "--time", "0"], "--time '0'"),
    (["--flops", "1T", "--bytes", "1GB", "--time", "fast"], "--time 'fast'"),
    (["--flops", "1T", "--bytes", "1GB", "--launches", "0"], "--launches"),
    (["--flops", "1T", "--bytes", "1GB", "--gpu", "RTX 9999"], "unknown GPU 'RTX 9999'"),
    (["--flops", "1T", "--bytes", "1GB", "--gpu", "T4", "--dtype", "fp8"], "has no fp8 peak; it has:"),
    (["--flops", "1T", "--bytes", "1GB", "--dtype", "fp7"], "unknown dtype 'fp7'"),
    (["--flops", "1T"], "needs --flops F and --bytes B"),
    (["--example", "nope"], "unknown example 'nope'"),
]


@pytest.mark.parametrize("args, expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(cli, args, expected):
    if "--gpu" not in args:
        args = [*args, "--gpu", "H200"]
    code, out, err = cli("classify", *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert expected in lines[0]
    assert "Traceback" not in err


def test_subprocess_exit_codes_and_no_traceback():
    r = run_cli("classify", "--flops", "-1", "--bytes", "1GB", "--gpu", "H200")
    assert r.returncode == 2
    assert r.stderr.strip().startswith("gpuwhy: error:") and len(r.stderr.strip().splitlines()) == 1
    r = run_cli("classify", "--flops", "1", "--bytes", "1", "--gpu", "H200", "--bogus-flag")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_without_gpu_or_probe_says_pass_gpu():
    r = run_cli("classify", "--flops", "1T", "--bytes", "1GB")
    assert r.returncode == 2
    assert "--gpu" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_python_m_and_json_is_only_stdout():
    r = run_cli("classify", "--example", "vecadd", "--gpu", "rtx 5070", "--json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["kind"] == "classify" and doc["example"] == "vecadd"


def test_python_api():
    import gpuwhy

    r = gpuwhy.classify(flops="2.5T", bytes="24GB", gpu="H200", dtype="bf16")
    assert r.verdict.regime == "memory"
    assert gpuwhy.load_spec("h200").name == "H200 SXM"


def test_a_measured_workload_shows_the_engines_ceilings_once():
    # 1 TFLOP in 20 ms on the H100 SXM sheet: compute-bound; the terminal gives the engine's "at most" (the
    # same figure as --json's diagnosis: 20 ms / (1e12 / 989.5e12 s) = 19.8x), and the ladder no second set
    args = ("classify", "--flops", "1e12", "--bytes", "1e9", "--gpu", "h100-sxm", "--time", "20ms")
    r = run_cli(*args, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    doc = json.loads(run_cli(*args, "--json").stdout)
    lp = next(x for x in doc["diagnosis"]["remedies"] if x["key"] == "lower_precision")
    assert lp["ceiling_x"] == pytest.approx(0.02 / (1e12 / 989.5e12), rel=1e-3)
    assert "first fix: lower precision (at most 19.8x)" in " ".join(r.stdout.split())
    assert "19.8x" in r.stdout and "up to" not in r.stdout and "14.7x" not in r.stdout
    # without a time: no diagnosis, the ladder's gains from the roofs
    p = run_cli("classify", "--flops", "1e12", "--bytes", "1e9", "--gpu", "h100-sxm", env={"COLUMNS": "80"})
    assert "up to" in p.stdout and "14.7x" in p.stdout and "first fix" not in p.stdout
