"""`gpuwhy compare`: hand-checkable roofline arithmetic across GPUs, cost, per-watt, bad input.

Figures from the bundled sheets (dense peaks): DRAM GB/s and bf16 TFLOP/s
  H100 SXM 3350 / 989.5   H200 SXM 4800 / 989.5   B200 7700 / 2250
  A100 SXM4 80GB 2039 / 312   L4 300 / 121   GeForce RTX 4090 1008 / 165.2
"""

import json

import pytest

from conftest import run_cli
from gpuwhy.errors import UsageError
from gpuwhy.model.roofline.compare import assign_costs, compare_roofline, parse_cost_list
from gpuwhy.render.compare_view import text_roofline
from gpuwhy.specs import library

LIB = library()
CARDS = ["H100 SXM", "H200 SXM", "B200", "A100 SXM4 80GB", "L4", "RTX 4090"]
BW = {"H100 SXM": 3350, "H200 SXM": 4800, "B200": 7700, "A100 SXM4 80GB": 2039, "L4": 300, "GeForce RTX 4090": 1008}
BF16 = {"H100 SXM": 989.5, "H200 SXM": 989.5, "B200": 2250, "A100 SXM4 80GB": 312, "L4": 121, "GeForce RTX 4090": 165.2}


def sheets(names=CARDS):
    return [LIB.match(n) for n in names]


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp64"])
def test_at_0_33_every_card_is_memory_bound_and_ranks_by_bandwidth(dtype):
    # 0.33 FLOP/byte is below every ridge of these cards (the lowest, A100 fp64: 9.7e12 / 2039e9 = 4.8), so
    # attainable = bandwidth x 0.33: e.g. H100 3350e9 x 0.33 = 1.1055e12 FLOP/s. Cards without the dtype are left out here.
    ss = [s for s in sheets() if dtype in s.peak_tflops]
    c = compare_roofline(ss, dtype, intensity=0.33)
    assert c.decided_by == "bandwidth"
    assert all(r.regime == "memory" for r in c.rows)
    for r in c.rows:
        assert r.attainable == pytest.approx(BW[r.gpu] * 1e9 * 0.33)
    assert list(c.ranking) == sorted(BW_of(ss), key=lambda n: -BW[n])
    first = c.rows[0]
    for r in c.rows:
        assert r.speedup == pytest.approx(BW[r.gpu] / BW[first.gpu])
    assert "memory-bound" in c.sentence and "DRAM bandwidth" in c.sentence


def BW_of(ss):
    return [s.name for s in ss]


def test_at_1000_in_bf16_every_card_is_compute_bound_and_ranks_by_dense_peak():
    # 1000 FLOP/byte is above every bf16 ridge (the highest: L4 121e12 / 300e9 = 403), so attainable = the dense peak.
    c = compare_roofline(sheets(), "bf16", intensity=1000)
    assert c.decided_by == "peak"
    for r in c.rows:
        assert r.regime == "compute"
        assert r.attainable == pytest.approx(BF16[r.gpu] * 1e12)
        assert r.speedup == pytest.approx(BF16[r.gpu] / 989.5)
    # H100 SXM and H200 SXM share the bf16 peak: they tie (same rank), B200 first.
    ranks = {r.gpu: r.rank for r in c.rows}
    assert ranks["B200"] == 1 and ranks["H100 SXM"] == ranks["H200 SXM"] == 2
    assert ranks["A100 SXM4 80GB"] == 4 and ranks["GeForce RTX 4090"] == 5 and ranks["L4"] == 6
    assert "compute-bound" in c.sentence and "bf16 peak" in c.sentence
    high = max(c.rows, key=lambda r: r.ridge_point)
    assert high.gpu == "L4" and high.ridge_point == pytest.approx(121e12 / 300e9)


def test_mixed_between_the_ridges():
    # 200 FLOP/byte in bf16: A100 ridge 312e12 / 2039e9 = 153 (compute-bound), H100 ridge 989.5e12 / 3350e9 = 295 (memory-bound).
    c = compare_roofline(sheets(["H100 SXM", "A100 SXM4 80GB"]), "bf16", intensity=200)
    assert c.decided_by == "mixed"
    h, a = c.rows
    assert h.regime == "memory" and h.attainable == pytest.approx(3350e9 * 200)
    assert a.regime == "compute" and a.attainable == pytest.approx(312e12)
    assert "split" in c.sentence


def test_flops_and_bytes_give_time_per_gpu():
    # 1e12 FLOP over 5e9 B = 200 FLOP/byte. H100 bf16: max(1e12 / 989.5e12, 5e9 / 3350e9) = 1.4925 ms.
    c = compare_roofline(sheets(["H100 SXM", "A100 SXM4 80GB"]), "bf16", flops=1e12, bytes_=5e9)
    assert c.intensity == pytest.approx(200)
    assert c.rows[0].time_s == pytest.approx(5e9 / 3350e9)
    assert c.rows[1].time_s == pytest.approx(1e12 / 312e12)


def test_cost_and_per_watt():
    # H100 at 0.33 FLOP/byte: 1.1055e12 FLOP/s; at $2.00/h: 1.1055e12 x 3600 / 2 = 1.98990e15 FLOP per dollar;
    # per watt: 1.1055e12 / 700 W = 1.5793e9 FLOP/J. H200: 1.584e12 x 3600 / 3 = 1.9008e15 FLOP/$; / 700 W.
    ss = sheets(["H100 SXM", "H200 SXM", "L4"])
    costs = assign_costs(parse_cost_list("H100=2.00, H200 SXM=$3"), [s.name for s in ss], LIB.match)
    assert costs == {"H100 SXM": 2.0, "H200 SXM": 3.0}
    c = compare_roofline(ss, "fp32", intensity=0.33, costs=costs, per_watt=True)
    h100, h200, l4 = c.rows
    assert h100.per_dollar == pytest.approx(3350e9 * 0.33 * 3600 / 2.0)
    assert h200.per_dollar == pytest.approx(4800e9 * 0.33 * 3600 / 3.0)
    assert h100.per_watt == pytest.approx(3350e9 * 0.33 / 700)
    assert h200.per_watt == pytest.approx(4800e9 * 0.33 / 700)
    assert l4.per_watt == pytest.approx(300e9 * 0.33 / 72)
    assert l4.per_dollar is None and l4.usd_per_hour is None
    # H100 gives more FLOP per dollar here, the H200 more FLOP/s.
    assert h100.per_dollar > h200.per_dollar and h200.speedup > 1


def test_a_gpu_without_the_dtype_gets_a_row_not_a_crash():
    c = compare_roofline(sheets(["T4", "H100 SXM", "A100 SXM4 80GB"]), "bf16", intensity=1000)
    t4 = c.rows[0]
    assert t4.attainable is None and "no bf16 peak" in t4.missing and t4.rank is None
    assert c.baseline == "H100 SXM" and c.rows[1].speedup == 1.0
    assert any("speed-ups are against the H100 SXM" in n for n in c.notes)
    with pytest.raises(UsageError, match="none of the GPUs"):
        compare_roofline(sheets(["T4"]), "bf16", intensity=1)


def test_parse_cost_list_errors():
    for bad, msg in (
        ("", "--cost '' lists no price"),
        ("H100", "--cost item 'H100' is not GPU=USD_PER_HOUR"),
        ("H100=abc", "--cost price 'abc' for 'H100' is not a number of USD per hour"),
        ("H100=-2", "--cost price for 'H100' must be a number of USD per hour above zero, got '-2'"),
        ("=3", "--cost item '=3' is not GPU=USD_PER_HOUR"),
    ):
        with pytest.raises(UsageError, match=msg):
            parse_cost_list(bad)
    with pytest.raises(UsageError, match="not among the GPUs compared"):
        assign_costs(parse_cost_list("B200=6"), ["H100 SXM"], LIB.match)


def test_text_roofline_has_a_marker_per_gpu():
    lines = text_roofline([("A", 100e12, 1e12), ("B", 10e12, 2e12)], intensity=1.0)
    body = "\n".join(lines)
    assert "1  A" in body and "2  B" in body and "^ workload at 1 FLOP/byte" in body
    grid = "\n".join(lines[:16])
    assert "1" in grid and "2" in grid and "|" in grid


# --- the CLI ---------------------------------------------------------------------


def test_cli_json(cli):
    code, out, err = cli("compare", "H100 SXM", "H200 SXM", "B200", "--intensity", "0.33", "--cost", "H100=2.5,B200=6", "--per-watt", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "compare" and doc["decided_by"] == "bandwidth"
    assert doc["ranking"] == ["B200", "H200 SXM", "H100 SXM"]
    g = {r["gpu"]: r for r in doc["gpus"]}
    assert g["B200"]["speedup"] == pytest.approx(7700 / 3350)
    assert g["B200"]["per_dollar"] == pytest.approx(7700e9 * 0.33 * 3600 / 6)
    assert g["H200 SXM"]["per_dollar"] is None
    assert g["H100 SXM"]["per_watt"] == pytest.approx(3350e9 * 0.33 / 700)


def test_cli_human_output_with_roofline(cli):
    code, out, err = cli("compare", "H100 SXM", "L4", "--intensity", "1000", "--dtype", "bf16")
    assert code == 0, err
    assert "compute-bound" in out and "ranking: H100 SXM > L4" in out
    assert "roofline (log-log)" in out and "1  H100 SXM" in out and "2  L4" in out


def test_cli_llm_tokens_follow_bandwidth(cli):
    # Decode at batch 1 is memory-bound everywhere: tokens/s = bandwidth / (8e9 params x 2 B), so H200 / H100 = 4800 / 3350.
    code, out, err = cli("compare", "H100 SXM", "H200 SXM", "--llm", "--params", "8B", "--json")
    assert code == 0, err
    doc = json.loads(out)
    h100, h200 = doc["gpus"]
    assert h100["throughput"] == pytest.approx(3350e9 / 16e9)
    assert h200["speedup"] == pytest.approx(4800 / 3350)
    assert doc["decided_by"] == "bandwidth" and doc["throughput_unit"] == "tokens/s"


def test_cli_llm_num_gpus_counts_cost_for_every_gpu(cli):
    code, out, err = cli("compare", "H100 SXM", "--llm", "--model", "llama-3-70b", "--num-gpus", "4", "--cost", "H100=2", "--json")
    assert code == 0, err
    r = json.loads(out)["gpus"][0]
    assert r["num_gpus"] == 4 and r["usd_per_hour"] == 8.0
    assert r["per_dollar"] == pytest.approx(r["throughput"] * 3600 / 8.0)


def test_cli_out_png_needs_matplotlib(cli, tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        code, out, err = cli("compare", "H100", "--intensity", "1", "--out", str(tmp_path / "r.png"))
        assert code == 2 and "plots need matplotlib: pip install 'gpuwhy[plot]'" in err and err.count("\n") == 1
    else:
        code, out, err = cli("compare", "H100", "--intensity", "1", "--out", str(tmp_path / "r.svg"))
        assert code == 0 and (tmp_path / "r.svg").stat().st_size > 0


def test_cli_measured_uses_a_bench_profile(cli, tmp_path, monkeypatch):
    from gpuwhy import profiles

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    prof = profiles.DeviceProfile(uuid="GPU-0000", name="NVIDIA H200", date="2025-01-02T03:04:05Z", dram_bandwidth_gbs=4300.0, sheet="H200 SXM")
    profiles.save_profile(prof)
    code, out, err = cli("compare", "H200", "H100", "--intensity", "0.33", "--measured", "--json")
    assert code == 0, err
    doc = json.loads(out)
    g = {r["gpu"]: r for r in doc["gpus"]}
    assert g["H200 SXM"]["memory_bandwidth_gbs"] == 4300.0 and "measured" in g["H200 SXM"]["bandwidth_source"]
    assert g["H100 SXM"]["bandwidth_source"] == "spec sheet"
    assert any("no bench profile for the H100 SXM" in n for n in doc["notes"])


BAD = [
    (["Z9000", "--intensity", "1"], "unknown GPU 'Z9000'"),
    (["H100", "H200", "--intensity", "1", "--cost", "B200=6"], "not among the GPUs compared"),
    (["H100", "--intensity", "1", "--cost", "H100=cheap"], "--cost price"),
    (["H100", "--intensity", "1", "--cost", "Z9000=3"], "unknown GPU 'Z9000'"),
    (["H100"], "needs a workload"),
    (["--intensity", "1"], "needs one or more GPU names"),
    (["H100", "--intensity", "1", "--flops", "1T", "--bytes", "1GB"], "not both"),
    (["H100", "--flops", "1T"], "go together"),
    (["H100", "--intensity", "-3"], "--intensity '-3'"),
    (["H100", "--intensity", "0"], "--intensity '0'"),
    (["H100", "--intensity", "1", "--dtype", "fp7"], "unknown dtype"),
    (["H100", "H100 SXM", "--intensity", "1"], "listed twice"),
    (["H100", "--intensity", "1", "--params", "8B"], "add --llm"),
    (["H100", "--llm", "--params", "8B", "--dtype", "bf16"], "--weight-dtype"),
    (["H100", "--llm"], "--params"),
    (["H100", "--intensity", "1", "--out", "r.pdf"], "must end in .png or .svg"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_cli_bad_input_exit_2_one_line(args, needle, cli):
    code, out, err = cli("compare", *args)
    assert code == 2, (out, err)
    assert out == ""
    assert err.count("\n") == 1 and needle in err, err


def test_cli_bad_input_subprocess():
    p = run_cli("compare", "H100", "Z9000", "--intensity", "0.33")
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    p = run_cli("compare", "H100", "--intensity", "0.33", "--cost", "H200=3")
    assert p.returncode == 2 and "not among the GPUs compared" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_model_module_is_pure():
    import inspect

    from gpuwhy.model.roofline import compare as mod

    src = inspect.getsource(mod)
    for word in ("open(", "print(", "import yaml", "pynvml", "cuda.bindings"):
        assert word not in src
