"""Remedies with their numbers: the most each can gain here, from the sheet's roofs, in the order
optimisation work goes, and nothing recommended that is already done."""

import pytest

import gpuwhy
from gpuwhy.errors import SpecError
from gpuwhy.model.roofline.remedies import STAGES, load_remedies

H200_BW = 4.8e12
LO = 5e-6  # the default launch overhead


def _steps(r):
    return [(s.stage, s.text, None if s.gain is None else s.gain.speedup) for s in r.remedies.steps]


def test_fp32_compute_bound_gets_tensor_core_roofs():
    # 1e15 FLOP, 1 GB on the H200 in fp32: t_compute = 1e15 / 67e12 = 14.925 s, t_memory = 208 us.
    # tf32 (494.5) keeps fp32 data: 14.925 s -> 2.0222 s: 7.38x; bf16 (989.5) also halves the bytes: 14.8x.
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="H200")
    prec = [s for s in r.remedies.steps if s.stage == "precision"]
    assert [s.gain.fields["to"] for s in prec] == ["tf32", "bf16"]
    before = 1e15 / 67e12 + LO
    assert prec[0].gain.speedup == pytest.approx(before / (1e15 / 494.5e12 + LO))
    assert prec[1].gain.speedup == pytest.approx(before / (1e15 / 989.5e12 + LO))
    assert "from 67 (fp32) to 989.5 TFLOP/s (14.8x)" in prec[1].text


def test_bf16_gemm_is_not_told_to_use_tensor_cores_or_bf16():
    r = gpuwhy.classify(gemm="8192x8192x8192", dtype="bf16", gpu="H200")
    texts = " ".join(r.remedies.helps).lower()
    assert "use tensor cores" not in texts and "in bf16" not in texts
    prec = [s for s in r.remedies.steps if s.stage == "precision"]
    # fp8 next, as the sheet has it: 989.5 -> 1979 TFLOP/s, 2x; here the operands halve too:
    # t_compute 1.1112 ms -> 0.5556 ms, t_memory 83.9 us -> 41.9 us, + 5 us each side
    assert [s.gain.fields["to"] for s in prec] == ["fp8"]
    t_c, t_m = 1_099_511_627_776 / 989.5e12, 402_653_184 / H200_BW
    assert prec[0].gain.speedup == pytest.approx((t_c + LO) / (t_c / 2 + LO))
    assert prec[0].gain.capped_by is None


def test_int8_only_where_the_sheet_has_no_fp8():
    # A100: no fp8, int8 624 TOPS: bf16 312 -> int8 624
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="A100 SXM4 80GB", dtype="bf16")
    assert [s.gain.fields["to"] for s in r.remedies.steps if s.stage == "precision"] == ["int8"]
    # V100: fp16 tensor cores and nothing narrower: no precision remedy at all
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="V100", dtype="fp16")
    assert not [s for s in r.remedies.steps if s.stage == "precision"]


def test_cuda_core_fp16_is_told_about_tensor_cores():
    # A100 fp16 on CUDA cores 78 TFLOP/s -> tensor cores 312: 4x
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="A100 SXM4 80GB", dtype="fp16", tensor_cores=False)
    prec = [s for s in r.remedies.steps if s.stage == "precision"]
    assert prec and prec[0].gain.fields["roof_x"] == pytest.approx(312 / 78)


def test_precision_gain_capped_by_the_memory_roof():
    # 1e12 FLOP over 2e10 bytes in fp32 on the H200: t_c = 14.93 ms, t_m = 4.17 ms: compute-bound.
    # bf16: t_c 1.011 ms, t_m 2.083 ms: now memory-bound, so at most 14.93/2.083 = 7.2x, not 14.8x
    r = gpuwhy.classify(flops=1e12, bytes=2e10, gpu="H200")
    bf16 = [s for s in r.remedies.steps if s.stage == "precision" and s.gain.fields["to"] == "bf16"][0]
    assert bf16.gain.capped_by == "memory"
    assert bf16.gain.speedup == pytest.approx((1e12 / 67e12 + LO) / (1e10 / H200_BW + LO))


def test_memory_bound_halving_the_bytes_is_at_most_2x():
    # vecadd fp32 on the H200: t_memory = 3,221,225,472 / 4.8e12 = 671.1 us, + 5 us
    # bf16 storage or fusing away half the traffic: 335.5 + 5 us: 1.985x (the 5 us stays)
    r = gpuwhy.classify(elementwise="2^28", inputs=2, outputs=1, gpu="H200")
    before = 3_221_225_472 / H200_BW + LO
    after = 3_221_225_472 / 2 / H200_BW + LO
    by_stage = {s.stage: s for s in r.remedies.steps if s.gain is not None}
    assert by_stage["precision"].gain.fields["to"] == "bf16"
    assert by_stage["precision"].gain.speedup == pytest.approx(before / after)
    assert by_stage["fusion"].gain.speedup == pytest.approx(before / after)
    assert by_stage["fusion"].gain.speedup < 2


def test_reuse_only_when_the_bytes_are_not_already_a_minimum():
    # a shape's bytes are its minimum: no tiling can cut them; a raw --bytes may be anything
    shaped = gpuwhy.classify(elementwise="2^28", inputs=2, outputs=1, gpu="H200")
    raw = gpuwhy.classify(flops=2**28, bytes=3 * 2**30, gpu="H200")
    assert not any("tiling" in t for t in shaped.remedies.helps)
    reuse = [s for s in raw.remedies.steps if "tiling" in s.text]
    # reuse stops at the compute roof: (t_m + 5 us) / (t_c + 5 us), t_c = 2^28 / 67e12 = 4.006 us
    assert reuse and reuse[0].gain.capped_by == "compute"
    assert reuse[0].gain.speedup == pytest.approx((3 * 2**30 / H200_BW + LO) / (2**28 / 67e12 + LO))


def test_cuda_graph_removes_the_launch_overhead():
    # small-elementwise: 100 launches x 5 us = 500 us of overhead around 1.024 us of memory time:
    # at most 501.024 / 1.024 = 489x
    r = gpuwhy.classify(flops=409600, bytes=4915200, launches=100, gpu="H200")
    assert r.verdict.regime == "overhead"
    fusion = [s for s in r.remedies.steps if s.stage == "fusion"][0]
    t_m = 4915200 / H200_BW
    assert fusion.gain.speedup == pytest.approx((t_m + 100 * LO) / t_m)
    assert "100 x 5 us = 500 us" in fusion.text


def test_measured_time_gives_the_kernel_tuning_gain():
    # 30 s measured for a 14.925 s roof: 49.75% of speed of light, up to 2.01x from the kernel itself
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="H200", time=30.0)
    tune = [s for s in r.remedies.steps if s.stage == "kernel"][0]
    assert tune.gain.speedup == pytest.approx(30.0 / (1e15 / 67e12))
    # without a time it is listed without a number
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="H200")
    assert [s for s in r.remedies.steps if s.stage == "kernel"][0].gain is None


@pytest.mark.parametrize("kw", [dict(flops=1e15, bytes=1e9), dict(flops=2**28, bytes=3 * 2**30), dict(flops=409600, bytes=4915200, launches=100)])
def test_remedies_come_in_stage_order(kw):
    stages = [s.stage for s in gpuwhy.classify(gpu="H200", **kw).remedies.steps]
    assert stages == sorted(stages, key=STAGES.index)
    assert stages[0] == "algorithm"


def test_cli_prints_the_gain_beside_each_remedy(cli):
    code, out, err = cli("classify", "--flops", "1e15", "--bytes", "1e9", "--gpu", "H200")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "up to" in flat and "14.8x" in flat and "7.38x" in flat


def test_a_remedies_file_with_a_bad_gain_is_one_line(tmp_path, monkeypatch, cli):
    bad = tmp_path / "r.yaml"
    bad.write_text("regimes:\n  compute: {helps: [{text: x, gain: magic}], does_not_help: []}\n"
                   "  memory: {helps: [], does_not_help: []}\n  overhead: {helps: [], does_not_help: []}\n")
    with pytest.raises(SpecError, match="gain"):
        load_remedies(bad)
    monkeypatch.setenv("GPUWHY_REMEDIES", str(bad))
    code, _, err = cli("classify", "--flops", "1e15", "--bytes", "1e9", "--gpu", "H200")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_plain_sentences_still_work(tmp_path, monkeypatch):
    f = tmp_path / "r.yaml"
    f.write_text("regimes:\n  compute: {helps: ['Buy a {bigger} GPU.'], does_not_help: []}\n"
                 "  memory: {helps: [], does_not_help: []}\n  overhead: {helps: [], does_not_help: []}\n")
    monkeypatch.setenv("GPUWHY_REMEDIES", str(f))
    r = gpuwhy.classify(flops=1e15, bytes=1e9, gpu="H200")
    assert r.remedies.helps == ("Buy a {bigger} GPU.",)
