"""Counting work from shapes (`classify --gemm/--attention/--elementwise`, gpuwhy.classify(gemm=...)):
exact counts worked by hand, GEMM alignment and tile/wave quantization, and one-line errors for bad shapes."""

import json
import re

import pytest

import gpuwhy
from gpuwhy.errors import UsageError
from gpuwhy.model.kernels.gemm_shape import alignment, gemm_advice, typical_tile, waves
from gpuwhy.model.kernels.shapes import Attention, Elementwise, Gemm, shape_from_options
from gpuwhy.units import parse_dimension, parse_shape

MiB = 2**20


def _doc(cli, *args):
    code, out, err = cli("classify", *args, "--json")
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------------------ GEMM --


def test_gemm_8192_cubed_bf16_counts_and_verdict(cli):
    # FLOPs = 2 x 8192^3 = 2 x 549,755,813,888 = 1,099,511,627,776 (1.0995e12)
    # bytes = (8192^2 A + 8192^2 B + 8192^2 C) x 2 B = 3 x 67,108,864 x 2 = 402,653,184
    # intensity 2,730.7 FLOP/byte > the H200 bf16 ridge 989.5e12 / 4.8e12 = 206: compute-bound
    doc = _doc(cli, "--gemm", "8192x8192x8192", "--dtype", "bf16", "--gpu", "H200")
    assert doc["workload"]["flops"] == 1_099_511_627_776
    assert doc["workload"]["bytes"] == 402_653_184
    assert doc["regime"] == "compute"
    assert doc["counts"]["kind"] == "gemm" and doc["counts"]["element_bytes"] == 2
    assert doc["arithmetic_intensity"] == pytest.approx(1_099_511_627_776 / 402_653_184)


def test_gemm_equals_the_bundled_example(cli):
    ex = _doc(cli, "--example", "gemm-bf16-8192", "--gpu", "H200")
    sh = _doc(cli, "--gemm", "8192x8192x8192", "--dtype", "bf16", "--gpu", "H200")
    assert (ex["workload"]["flops"], ex["workload"]["bytes"]) == (sh["workload"]["flops"], sh["workload"]["bytes"])


def test_gemm_batch_and_accumulate():
    # 4 GEMMs of 128x128x64 in fp16: FLOPs 2 x 128 x 128 x 64 x 4 = 8,388,608;
    # bytes (128x64 + 64x128 + 128x128) x 2 B x 4 = (8,192 + 8,192 + 16,384) x 8 = 262,144
    c = Gemm(128, 128, 64, batch=4).count("fp16")
    assert (c.flops, c.bytes) == (8_388_608, 262_144)
    # C += A @ B also reads C: + 128 x 128 x 2 B x 4 = 131,072 more
    assert Gemm(128, 128, 64, batch=4, accumulate=True).count("fp16").bytes == 262_144 + 131_072
    # transposes do not matter: the count is symmetric in M and N
    assert Gemm(100, 300, 7).count("fp32").bytes == Gemm(300, 100, 7).count("fp32").bytes


def test_gemm_counts_are_printed(cli):
    code, out, err = cli("classify", "--gemm", "8192x8192x8192", "--dtype", "bf16", "--gpu", "H200")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "2 x 8,192 x 8,192 x 8,192 = 1,099,511,627,776" in flat
    assert "402,653,184 B" in flat


def test_misaligned_dimension_is_named_with_the_nearest_size(cli):
    doc = _doc(cli, "--gemm", "4095x4096x4096", "--dtype", "fp16", "--gpu", "H200")
    mis = doc["shape_advice"]["misaligned"]
    assert [m["dim"] for m in mis] == ["M"]
    # 4095 lies between 4088 and 4096 (multiples of 8 fp16 elements, 16 bytes): 4096 is nearest
    assert (mis[0]["down"], mis[0]["up"], mis[0]["nearest"]) == (4088, 4096, 4096)
    code, out, _ = cli("classify", "--gemm", "4095x4096x4096", "--dtype", "fp16", "--gpu", "H200")
    flat = " ".join(out.split())
    assert "M = 4,095 is not a multiple of 8" in flat and "nearest aligned size is 4,096" in flat


def test_alignment_per_dtype():
    # 4104 = 8 x 513: aligned for fp16 (8), not for fp8 (16): 4096 and 4112 either side, 8 away each:
    # a tie goes up (padding keeps every row)
    assert alignment(Gemm(4104, 4096, 4096), "fp16")[1] == ()
    mult, bad = alignment(Gemm(4104, 4096, 4096), "fp8")
    assert mult == 16 and [(m.dim, m.down, m.up, m.nearest) for m in bad] == [("M", 4096, 4112, 4112)]
    # 4100 is 4 above 4096 and 12 below 4112: 4096 is nearer, and padding up to 4112 is named too
    m = alignment(Gemm(4100, 4096, 4096), "int8")[1][0]
    assert (m.nearest, m.up) == (4096, 4112) and "pad up to 4,112" in m.sentence("int8")
    # tf32: multiples of 4; K = 4097 -> 4096 nearer than 4100
    mult, bad = alignment(Gemm(64, 64, 4097), "tf32")
    assert mult == 4 and [(m.dim, m.nearest, m.up) for m in bad] == [("K", 4096, 4100)]
    # 4099 is nearer 4100 than 4096 for tf32
    assert alignment(Gemm(64, 64, 4099), "tf32")[1][0].nearest == 4100
    # fp32 on CUDA cores: no tensor-core rule
    assert alignment(Gemm(4095, 4095, 4095), "fp32") == (None, ())


def test_wave_quantization_of_the_issue():
    # 4,097 tiles on 132 SMs: 31 full waves (4,092 tiles) and 5 tiles in the 32nd: 5/132 = 3.8% full
    w = waves(4097, 132)
    assert w.waves == pytest.approx(31.0379, abs=1e-4)
    assert w.wave_count == 32 and w.last_wave_fill == pytest.approx(5 / 132)
    assert w.efficiency == pytest.approx(4097 / (32 * 132))
    assert w.sentence().startswith("4,097 tiles on 132 SMs = 31.04 waves: the last wave runs 4% full")
    assert waves(264, 132).sentence().endswith("every wave runs full")


def test_tiles_and_waves_of_8192_cubed_on_the_h200():
    # Hopper (cc 9.0): the stated typical tile 128x256; 8192/128 x 8192/256 = 64 x 32 = 2,048 tiles
    # 2,048 / 132 = 15.52 waves; the 16th holds 2,048 - 15 x 132 = 68 tiles: 68/132 = 52% full
    a = gemm_advice(Gemm(8192, 8192, 8192), "bf16", 132, "9.0")
    assert a.tile == (128, 256) and (a.tiles_m, a.tiles_n) == (64, 32)
    assert a.tile_efficiency == 1.0
    assert a.waves.tiles == 2048 and a.waves.last_wave_fill == pytest.approx(68 / 132)
    assert any("2,048 tiles on 132 SMs = 15.52 waves: the last wave runs 52% full" in line for line in a.lines)


def test_tile_quantization_and_the_sheet_sm_count(cli):
    # A100 SXM4 80GB: 108 SMs, cc 8.0, typical tile 128x128. M = 8200: ceil(8200/128) = 65 tiles,
    # 65 x 128 = 8,320 rows computed for 8,200 used: 98.56% of the tiles' area is the output.
    # Tiles 65 x 64 = 4,160 on 108 SMs = 38.52 waves, the last 56/108 = 52% full.
    doc = _doc(cli, "--gemm", "8200x8192x4096", "--dtype", "bf16", "--gpu", "A100 SXM4 80GB")
    a = doc["shape_advice"]
    assert a["tile"] == [128, 128] and a["sm_count"] == 108
    assert a["tiles_m"] == 65 and a["tiles_n"] == 64
    assert a["tile_efficiency"] == pytest.approx(8200 / 8320)
    assert a["waves"]["tiles"] == 4160 and a["waves"]["last_wave_fill"] == pytest.approx((4160 - 38 * 108) / 108)


def test_tile_option_overrides_the_typical_tile(cli):
    doc = _doc(cli, "--gemm", "8192x8192x8192", "--dtype", "bf16", "--gpu", "H200", "--tile", "256x128")
    assert doc["shape_advice"]["tile"] == [256, 128] and doc["shape_advice"]["waves"]["tiles"] == 32 * 64


def test_typical_tile_is_stated_per_architecture():
    assert typical_tile("9.0")[0] == (128, 256)
    assert typical_tile("8.0")[0] == (128, 128)
    tile, why = typical_tile("gfx942")  # the MI300X sheet: not NVIDIA's, a default said to be assumed
    assert tile == (128, 128) and "assumed" in why


# ------------------------------------------------------------- attention --


def test_attention_score_matrix_is_64_mib_in_fp32_at_4096():
    # the syllabus: S = 4096, fp32: 4096 x 4096 x 4 B = 67,108,864 B = 64 MiB per head per layer
    c = Attention(1, 1, 4096, 64).count("fp32")
    assert c.figures["score_matrix_bytes_per_head"] == 64 * MiB
    # FLOPs = 4 x 1 x 1 x 4096^2 x 64 = 4,294,967,296
    assert c.flops == 4_294_967_296
    # fused: Q, K, V, O each 4096 x 64 x 4 B = 1 MiB: 4 MiB; naive adds 4 x 64 MiB: 260 MiB, 65x
    assert c.bytes == 4 * MiB
    assert c.figures["naive_bytes"] == 260 * MiB and c.figures["naive_to_fused"] == 65


def test_attention_cli_prints_the_score_matrix(cli):
    code, out, err = cli("classify", "--attention", "1,1,4096,64", "--gpu", "H200")
    assert code == 0, err
    assert "64 MiB per head per layer" in " ".join(out.split())


def test_causal_counts_the_visible_pairs():
    # causal prefill of S = 4096: query i sees i + 1 keys: 4096 x 4097 / 2 = 8,390,656 pairs (about half of 16,777,216)
    a = Attention(2, 8, 4096, 128, causal=True)
    assert a.pairs() == 8_390_656
    assert a.count("bf16").flops == 4 * 2 * 8 * 8_390_656 * 128
    # the naive kernel still writes the whole score matrix
    full = Attention(2, 8, 4096, 128).count("bf16")
    assert a.count("bf16").figures["naive_bytes"] == full.figures["naive_bytes"]


def test_decode_attention_with_grouped_kv_heads():
    # a decode step: batch 8, 32 query heads, 8 KV heads, 4096 cached keys, head dim 128, bf16.
    # One query sees every key, causal or not: pairs = 4096.
    # FLOPs = 4 x 8 x 32 x 4096 x 128 = 536,870,912
    # bytes = (Q + O: 2 x 8 x 32 x 1 x 128 + K + V: 2 x 8 x 8 x 4096 x 128) x 2 B = (65,536 + 67,108,864) x 2 = 134,348,800
    c = Attention(8, 32, 4096, 128, causal=True, kv_heads=8, q_len=1).count("bf16")
    assert c.flops == 536_870_912 and c.bytes == 134_348_800


# ----------------------------------------------------------- elementwise --


def test_vecadd_by_shape_equals_the_bundled_example(cli):
    # 2^28 elements, 2 inputs, 1 output, fp32: 2^28 FLOPs, 2^28 x 3 x 4 B = 3,221,225,472 B
    ex = _doc(cli, "--example", "vecadd", "--gpu", "H200")
    sh = _doc(cli, "--elementwise", "2^28", "--inputs", "2", "--outputs", "1", "--gpu", "H200")
    assert (sh["workload"]["flops"], sh["workload"]["bytes"]) == (268_435_456, 3_221_225_472)
    assert (ex["workload"]["flops"], ex["workload"]["bytes"]) == (sh["workload"]["flops"], sh["workload"]["bytes"])
    assert ex["regime"] == sh["regime"] == "memory"


def test_saxpy_with_flops_per_element():
    # y = a x + y: 2 FLOPs per output element: 2 x 2^28 = 536,870,912, as the saxpy example
    c = Elementwise(2**28, 2, 1, 2).count("fp32")
    assert (c.flops, c.bytes) == (536_870_912, 3_221_225_472)
    # bf16 halves the bytes: 2^28 x 3 x 2 B
    assert Elementwise(2**28, 2, 1).count("bf16").bytes == 1_610_612_736


# ------------------------------------------------------------ Python API --


def test_python_api_takes_the_same_shapes():
    r = gpuwhy.classify(gemm="8192x8192x8192", dtype="bf16", gpu="H200")
    assert r.counts.flops == 1_099_511_627_776 and r.verdict.regime == "compute"
    r = gpuwhy.classify(gemm=(4095, 4096, 4096), dtype="fp16", gpu="H200", tile=(128, 128))
    assert r.shape_advice.tile == (128, 128) and r.shape_advice.misaligned[0].dim == "M"
    r = gpuwhy.classify(attention=(1, 1, 4096, 64), gpu="H200")
    assert r.counts.figures["score_matrix_bytes_per_head"] == 64 * MiB
    r = gpuwhy.classify(elementwise="2^28", inputs=2, outputs=1, gpu="H200")
    assert r.verdict.workload.bytes == 3_221_225_472


@pytest.mark.parametrize("kw, words", [
    (dict(gemm="8192x8192"), "--gemm '8192x8192' must give 3 dimensions MxNxK"),
    (dict(gemm="8x8x8", flops=1e9, bytes=1e6), "a shape counts the FLOPs and bytes; drop flops= and bytes="),
    (dict(gemm="8x8x8", causal=True), "--causal goes with --attention, not --gemm"),
    (dict(attention=(1, 2, 3, 0)), "--attention D '0' must be greater than zero"),
    (dict(elementwise=10), "--elementwise N needs --inputs I and --outputs O"),
    (dict(gemm="8x8x8", colour="red"), "classify got an unknown keyword 'colour'; shape keywords: accumulate, attention,"),
    (dict(attention="1,1,8,8", tile=(128, 128)), "tile= goes with gemm="),
])
def test_python_api_bad_shapes_raise_usage_error(kw, words):
    with pytest.raises(UsageError, match=f"^{re.escape(words)}"):
        gpuwhy.classify(gpu="H200", **kw)


# ------------------------------------------------------------- bad input --


@pytest.mark.parametrize("args", [
    ["--gemm", "8192x8192"],
    ["--gemm", "8192x8192x8192x2"],
    ["--gemm", "0x8192x8192"],
    ["--gemm", "-1x8192x8192"],
    ["--gemm", "8192x8192x1.5"],
    ["--gemm", "axbxc"],
    ["--gemm", "8192xx8192"],
    ["--gemm", "8192x8192x2^60"],
    ["--gemm", "8x8x8", "--batch", "0"],
    ["--gemm", "8x8x8", "--tile", "128"],
    ["--gemm", "8x8x8", "--causal"],
    ["--gemm", "8x8x8", "--attention", "1,1,8,8"],
    ["--gemm", "8x8x8", "--flops", "1T", "--bytes", "1GB"],
    ["--gemm", "8x8x8", "--example", "vecadd"],
    ["--tile", "128x128", "--flops", "1T", "--bytes", "1GB"],
    ["--attention", "1,32,4096"],
    ["--attention", "1,32,0,128"],
    ["--attention", "1,32,4096,-128"],
    ["--attention", "1,32,64,64", "--kv-heads", "5"],
    ["--attention", "1,4,64,64", "--q-len", "65"],
    ["--attention", "1,4,64,64", "--inputs", "2"],
    ["--elementwise", "0", "--inputs", "2", "--outputs", "1"],
    ["--elementwise", "2.5", "--inputs", "2", "--outputs", "1"],
    ["--elementwise", "2^28"],
    ["--elementwise", "2^28", "--inputs", "-1", "--outputs", "1"],
    ["--elementwise", "2^28", "--inputs", "2", "--outputs", "0"],
    ["--elementwise", "2^28", "--inputs", "2", "--outputs", "1", "--flops-per-element", "0"],
    ["--causal", "--flops", "1T", "--bytes", "1GB"],
])
def test_bad_shapes_exit_2_with_one_line(cli, args):
    code, out, err = cli("classify", *args, "--gpu", "H200")
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuwhy: error: ") and "Traceback" not in err


def test_dimension_parser():
    assert parse_dimension("2^28", "N") == 2**28 == parse_dimension("2**28", "N")
    assert parse_dimension("4096", "M") == 4096 and parse_dimension(64, "M") == 64
    assert parse_shape("8192×4096X1024", ("M", "N", "K"), "x", "--gemm", "") == (8192, 4096, 1024)
    assert parse_shape(" 1, 32 ,4096,128 ", ("B", "H", "S", "D"), ",", "--attention", "") == (1, 32, 4096, 128)
    for bad, words in (("0", "N '0' must be greater than zero"), ("-3", "N '-3' must be greater than zero"),
                       ("1.5", "N '1.5' must be a whole number"), ("x", "N 'x' is not a number; give e.g."),
                       ("0^3", "N '0^3' must be greater than zero"), ("2^54", "N '2^54' is larger than 2^53; give a real size"),
                       (True, "N True is not a whole number")):
        with pytest.raises(UsageError, match=f"^{re.escape(words)}"):
            parse_dimension(bad, "N")


def test_shape_options_refuse_mixtures():
    assert shape_from_options() is None
    with pytest.raises(UsageError, match="goes with --gemm"):
        shape_from_options(attention="1,1,8,8", batch="2")
    with pytest.raises(UsageError, match="one shape"):
        shape_from_options(gemm="8x8x8", elementwise="8")


# ------------------------------------------- every figure and line, pinned --
# Small shapes worked by hand, so that each count, each line of arithmetic and each
# guard of model/shapes.py is checked at both sides of its boundary.


def test_element_bytes_per_dtype_and_unknown_dtype():
    from gpuwhy.model.kernels.shapes import element_bytes

    # fp64 8 B (also on tensor cores), fp32/tf32 4, fp16/bf16 2, fp8/int8 1, fp4 half a byte
    assert [element_bytes(d) for d in ("fp64", "fp64_tensor", "FP32", " tf32 ", "fp16", "bf16", "fp8", "int8", "fp4")] == \
        [8, 8, 4, 4, 2, 2, 1, 1, 0.5]
    with pytest.raises(UsageError, match="unknown dtype 'fp12'"):
        element_bytes("fp12")


def test_whole_number_guard_at_its_limits():
    from gpuwhy.model.kernels.shapes import _whole

    assert _whole(1, "M") == 1 and _whole(0, "I", minimum=0) == 0
    with pytest.raises(UsageError, match="M must be a whole number greater than zero, got 0"):
        _whole(0, "M")
    with pytest.raises(UsageError, match="I must be a whole number zero or more, got -1"):
        _whole(-1, "I", minimum=0)
    for bad in (True, 2.0, "3"):
        with pytest.raises(UsageError, match="must be a whole number"):
            _whole(bad, "M")


def test_exact_count_text_up_to_2_to_the_53():
    from gpuwhy.units import fmt_count

    # whole numbers below 2^53 = 9,007,199,254,740,992 are exact, with separators
    assert fmt_count(12345.0) == "12,345"
    assert fmt_count(2**53 - 1) == "9,007,199,254,740,991"
    # from 2^53 on a float may not hold the count: 4 significant digits, 9.007e15
    assert fmt_count(2**53) == "9.007e15"
    assert fmt_count(2.0**60) == "1.153e18"  # 2^60 = 1,152,921,504,606,846,976
    # not whole: 4 significant digits
    assert fmt_count(1.5) == "1.5" and fmt_count(0.123456) == "0.1235"


def test_gemm_lines_batch_one_and_two():
    # M 3, N 5, K 7, fp16 (2 B). batch 1: FLOPs 2 x 3 x 5 x 7 = 210;
    # bytes (3x7 + 7x5 + 3x5) x 2 = (21 + 35 + 15) x 2 = 142; intensity 210 / 142 = 1.4789 -> 1.479
    one = Gemm(3, 5, 7).count("fp16")
    assert (one.flops, one.bytes) == (210, 142) and one.dims["batch"] == 1
    assert one.label == "gemm 3x5x7 fp16"
    assert one.figures == {"a_bytes": 42, "b_bytes": 70, "c_bytes": 30}
    assert one.lines[0].startswith("FLOPs = 2 x M x N x K = 2 x 3 x 5 x 7 = 210 (")
    assert "x 2 B (fp16) = (21 + 35 + 15) x 2 = 142 B (142 B)" in one.lines[1]
    assert "written) x" in one.lines[1]
    assert one.lines[2] == "intensity = 210 / 142 = 1.479 FLOP/byte"
    # batch 2 accumulating: FLOPs 420; A 21 x 2 x 2 = 84, B 35 x 2 x 2 = 140, C 15 x 2 x 2 x 2 (written and read) = 120;
    # bytes 344; intensity 420 / 344 = 1.22093 -> 1.221
    two = Gemm(3, 5, 7, batch=2, accumulate=True).count("fp16")
    assert (two.flops, two.bytes) == (420, 344)
    assert two.figures == {"a_bytes": 84, "b_bytes": 140, "c_bytes": 120}
    assert two.label == "gemm 3x5x7 batch 2 fp16"
    assert two.lines[0].startswith("FLOPs = 2 x M x N x K x batch 2 = 2 x 3 x 5 x 7 x 2 = 420 (")
    assert "C M x N written and read (C += A @ B)) x 2 B (fp16) x batch 2 = (21 + 35 + 30) x 2 x 2 = 344 B" in two.lines[1]
    assert two.lines[2] == "intensity = 420 / 344 = 1.221 FLOP/byte"
    assert two.dims == {"m": 3, "n": 5, "k": 7, "batch": 2, "accumulate": True}


def test_work_count_as_workload_and_json():
    c = Gemm(3, 5, 7).count("fp32")
    w = c.workload()
    # 210 FLOP; (21 + 35 + 15) x 4 B = 284 B; one launch, no time unless given
    assert (w.flops, w.bytes, w.launches, w.time_s, w.name) == (210, 284, 1, None, "gemm 3x5x7 fp32")
    w = c.workload(launches=3, time_s=2e-6)
    assert (w.launches, w.time_s) == (3, 2e-6)
    d = c.to_dict()
    assert (d["kind"], d["flops"], d["bytes"], d["element_bytes"], d["dims"]["k"]) == ("gemm", 210, 284, 4, 7)
    assert d["figures"]["c_bytes"] == 60 and d["lines"] == list(c.lines)


def test_attention_causal_grouped_short_queries_every_figure():
    # B 2, H 4 query heads, 2 KV heads, S 6 keys, D 8, the last 3 positions as queries, causal, fp16.
    # Queries at positions 3, 4, 5 (0-based) see 4 + 5 + 6 = 15 keys = 3 x 6 - 3 x 2 / 2.
    a = Attention(2, 4, 6, 8, causal=True, kv_heads=2, q_len=3)
    assert a.pairs() == 15 and isinstance(a.pairs(), int)
    c = a.count("fp16")
    # FLOPs = 4 x 2 x 4 x 15 x 8 = 3,840
    assert c.flops == 3840
    # Q and O: 2 x 4 x 3 x 8 = 192 elements each; K and V: 2 x 2 x 6 x 8 = 192 each; (384 + 384) x 2 B = 1,536
    assert c.bytes == 1536
    # scores: 3 x 6 x 2 B = 36 B per head; 2 x 4 x 3 x 6 = 144 elements, 288 B in all;
    # naive = 1,536 + 4 x 288 = 2,688 B, 2,688 / 1,536 = 1.75x
    assert c.figures == {"pairs_per_head": 15, "fused_bytes": 1536, "naive_bytes": 2688, "naive_to_fused": 1.75,
                         "score_matrix_bytes_per_head": 36, "score_matrix_bytes": 288}
    assert c.lines[0] == "pairs per head = 3 x 6 - 3 x 2 / 2 (causal: query i sees the keys up to its position) = 15"
    assert c.lines[1].startswith("FLOPs = 4 x B x H x pairs x D = 4 x 2 x 4 x 15 x 8 = 3,840 (")
    assert c.lines[2].startswith("fused (flash) bytes = (Q + O: 2 x 2 x 4 x 3 x 8 + K + V: 2 x 2 x 2 (2 KV heads) x 6 x 8) "
                                 "x 2 B (fp16) = 1,536 B (")
    assert c.lines[3] == "score matrix = 3 x 6 x 2 B = 36 B per head per layer (288 B for all 8 heads)"
    assert "= 2,688 B (" in c.lines[4] and c.lines[4].endswith("), 1.75x the fused kernel's")
    assert c.label == "attention 2,4,6,8 causal q_len 3 fp16"
    assert c.dims == {"batch": 2, "heads": 4, "seq": 6, "head_dim": 8, "causal": True, "kv_heads": 2, "q_len": 3}


def test_attention_defaults_full_queries_and_all_kv_heads():
    # B 1, H 2, S 4, D 2, fp32, not causal: pairs 4 x 4 = 16; FLOPs 4 x 1 x 2 x 16 x 2 = 256;
    # Q, K, V, O each 1 x 2 x 4 x 2 = 16 elements: 64 x 4 B = 256 B
    a = Attention(1, 2, 4, 2)
    assert (a.s_q, a.h_kv, a.pairs()) == (4, 2, 16)
    c = a.count("fp32")
    assert (c.flops, c.bytes) == (256, 256)
    assert c.lines[0] == "pairs per head = 4 x 4 = 16"
    assert "K + V: 2 x 1 x 2 x 4 x 2) x 4 B (fp32)" in c.lines[2] and "KV heads" not in c.lines[2]
    assert c.label == "attention 1,2,4,2 fp32"
    # causal prefill of 4: 4 x 4 - 4 x 3 / 2 = 10 pairs (1 + 2 + 3 + 4); kv_heads equal to the heads is no grouping
    c = Attention(1, 2, 4, 2, causal=True, kv_heads=2, q_len=4).count("fp32")
    assert c.figures["pairs_per_head"] == 10 and c.label == "attention 1,2,4,2 causal q_len 4 fp32"
    assert "KV heads" not in c.lines[2]


def test_attention_guards_at_their_limits():
    assert Attention(1, 8, 4, 2, kv_heads=8).h_kv == 8 and Attention(1, 8, 4, 2, kv_heads=1).h_kv == 1
    with pytest.raises(UsageError, match="--kv-heads 3 must divide the 8 query heads"):
        Attention(1, 8, 4, 2, kv_heads=3)
    with pytest.raises(UsageError, match="--kv-heads 16 must divide the 8 query heads"):
        Attention(1, 8, 4, 2, kv_heads=16)
    with pytest.raises(UsageError, match="--kv-heads must be a whole number greater than zero"):
        Attention(1, 8, 4, 2, kv_heads=0)
    assert Attention(1, 1, 4, 2, q_len=4).s_q == 4
    with pytest.raises(UsageError, match="--q-len 5 is more than the 4 keys"):
        Attention(1, 1, 4, 2, q_len=5)
    with pytest.raises(UsageError, match="--q-len must be a whole number greater than zero"):
        Attention(1, 1, 4, 2, q_len=0)
    with pytest.raises(UsageError, match=r"the attention's D \(head dim\) must be"):
        Attention(1, 1, 4, 0)
    with pytest.raises(UsageError, match="the GEMM's batch must be"):
        Gemm(1, 1, 1, batch=0)


def test_elementwise_every_figure():
    # 1,000 elements, 3 inputs, 2 outputs, 1.5 FLOPs per output element, fp16:
    # FLOPs 1,000 x 2 x 1.5 = 3,000; bytes 1,000 x (3 + 2) x 2 B = 10,000; per element 3 FLOP / 10 B = 0.3
    c = Elementwise(1000, 3, 2, 1.5).count("fp16")
    assert (c.flops, c.bytes) == (3000, 10000)
    assert c.lines[0].startswith("FLOPs = N x outputs x FLOPs per output element = 1,000 x 2 x 1.5 = 3,000 (")
    assert "x 2 B (fp16) = 1,000 x (3 + 2) x 2 = 10,000 B (" in c.lines[1]
    assert c.lines[2] == "intensity = 3 FLOP / 10 B per element = 0.3 FLOP/byte"
    assert c.label == "elementwise 1000 x 3 in 2 out fp16"
    assert c.dims == {"n": 1000, "inputs": 3, "outputs": 2, "flops_per_element": 1.5}
    # 4 significant digits: 1 FLOP per 3 x 4 B = 1 / 12 = 0.083333...
    assert Elementwise(3, 2, 1).count("fp32").lines[2] == "intensity = 1 FLOP / 12 B per element = 0.08333 FLOP/byte"
    # the defaults: one input, one output, one FLOP each: 10 FLOPs, 10 x 2 x 4 B = 80 B in fp32
    d = Elementwise(10).count("fp32")
    assert (d.flops, d.bytes) == (10, 80)
    # no input (a fill): 0 read, 1 written: 10 x 1 x 8 B = 80 B in fp64
    assert Elementwise(10, 0, 1).count("fp64").bytes == 80


def test_elementwise_flops_per_element_guard():
    assert Elementwise(4, 1, 1, 0.5).count("fp32").flops == 2  # 4 x 1 x 0.5
    assert Elementwise(4, 1, 1, 3).count("fp32").flops == 12
    for bad in (0, 0.0, -1, float("inf"), float("nan"), True, "2"):
        with pytest.raises(UsageError, match="--flops-per-element must be a number greater than zero"):
            Elementwise(4, 1, 1, bad)
    with pytest.raises(UsageError, match="--inputs must be a whole number zero or more"):
        Elementwise(4, -1, 1)


def test_shape_from_options_each_branch():
    g = shape_from_options(gemm="8x4x2")
    assert g == Gemm(8, 4, 2, batch=1, accumulate=False)
    assert shape_from_options(gemm="8x4x2", batch="3", accumulate=True) == Gemm(8, 4, 2, batch=3, accumulate=True)
    assert shape_from_options(attention="1,2,8,4") == Attention(1, 2, 8, 4)
    assert shape_from_options(attention="1,2,8,4", causal=True, kv_heads="1", q_len="2") == \
        Attention(1, 2, 8, 4, causal=True, kv_heads=1, q_len=2)
    e = shape_from_options(elementwise="2^10", inputs="2", outputs=1)
    assert e == Elementwise(1024, 2, 1, 1.0)
    assert shape_from_options(elementwise=16, inputs=0, outputs=2, flops_per_element="4") == Elementwise(16, 0, 2, 4.0)
    with pytest.raises(UsageError, match="--gemm and --attention were both given"):
        shape_from_options(gemm="8x8x8", attention="1,1,8,8")
    with pytest.raises(UsageError, match="^--causal goes with --attention, not --gemm$"):
        shape_from_options(gemm="8x8x8", causal=True)
    with pytest.raises(UsageError, match="^--accumulate goes with --gemm; give --gemm too$"):
        shape_from_options(accumulate=True)
    with pytest.raises(UsageError, match="^--kv-heads goes with --attention, not --elementwise$"):
        shape_from_options(elementwise=8, inputs=1, outputs=1, kv_heads=2)
    for kw in (dict(inputs=1), dict(outputs=1), {}):
        with pytest.raises(UsageError, match="--elementwise N needs --inputs I and --outputs O"):
            shape_from_options(elementwise=8, **kw)
    with pytest.raises(UsageError, match=r"--inputs '1.5' must be a whole number"):
        shape_from_options(elementwise=8, inputs="1.5", outputs=1)
