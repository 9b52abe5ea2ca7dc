"""Every figure and line of the GEMM shape advice (model/gemm_shape.py), checked against arithmetic
written out here: the alignment multiple of each dtype (16 bytes of it), the typical tile of each
architecture, tile and wave quantization, and each cut-off at both sides.

Rules: NVIDIA's "Matrix Multiplication Background User's Guide"
(https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html).
"""

from __future__ import annotations

import re

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.model.kernels.gemm_shape import GUIDE_URL, Misalignment, alignment, gemm_advice, typical_tile, waves
from gpuwhy.model.kernels.shapes import Gemm

# --- alignment: 16 bytes of the operand type ---------------------------------------------------

#: dtype -> elements in 16 bytes (fp16/bf16 2 B, fp8/int8 1 B, tf32 4 B, fp64 8 B, fp4 half a byte)
SIXTEEN_BYTES = {"fp16": 16 // 2, "bf16": 16 // 2, "fp8": 16 // 1, "int8": 16 // 1, "tf32": 16 // 4,
                 "fp64_tensor": 16 // 8, "fp4": 32}


@pytest.mark.parametrize("dtype, mult", sorted(SIXTEEN_BYTES.items()))
def test_each_dtype_aligns_at_16_bytes(dtype, mult):
    # 64 x mult is aligned on every dimension; one more element on K is not: it lies between 64 x mult and 65 x mult
    assert alignment(Gemm(64 * mult, 64 * mult, 64 * mult), dtype) == (mult, ())
    got, (bad,) = alignment(Gemm(64 * mult, 64 * mult, 64 * mult + 1), dtype)
    assert got == mult and (bad.dim, bad.size, bad.multiple, bad.down, bad.up) == ("K", 64 * mult + 1, mult, 64 * mult, 65 * mult)
    # 1 element below one multiple on M: down would be 0, so up
    if mult > 1:
        (m,) = alignment(Gemm(mult - 1, 64 * mult, 64 * mult), dtype)[1]
        assert (m.dim, m.down, m.up, m.nearest) == ("M", 0, mult, mult)


def test_no_rule_for_cuda_core_types_or_without_tensor_cores():
    assert alignment(Gemm(4095, 4095, 4095), "fp32") == (None, ()) and alignment(Gemm(3, 5, 7), "fp64") == (None, ())
    with pytest.raises(UsageError, match=r"^unknown dtype 'fp7'; use one of: "):
        alignment(Gemm(8, 8, 8), "fp7")


def test_misalignment_sentence_and_nearest_size():
    m = Misalignment("K", 4095, 8, 4088, 4096)
    assert m.sentence("fp16") == ("K = 4,095 is not a multiple of 8 (16 bytes of fp16): tensor cores lose efficiency; "
                                  "the nearest aligned size is 4,096")
    # nearer down: 4,100 is 4 above 4,096 and 12 below 4,112; padding up is named too
    m = Misalignment("M", 4100, 16, 4096, 4112)
    assert m.nearest == 4096
    assert m.sentence("int8") == ("M = 4,100 is not a multiple of 16 (16 bytes of int8): tensor cores lose efficiency; "
                                  "the nearest aligned size is 4,096 (pad up to 4,112)")
    assert m.to_dict() == {"dim": "M", "size": 4100, "multiple": 16, "down": 4096, "up": 4112, "nearest": 4096}
    # a tie (8 each way) goes up; so does a size below one multiple (down 0)
    assert Misalignment("M", 4104, 16, 4096, 4112).nearest == 4112
    assert Misalignment("M", 3, 8, 0, 8).nearest == 8


# --- the typical tile --------------------------------------------------------------------------


@pytest.mark.parametrize("cc, tile", [("7.0", (128, 128)), ("7.5", (128, 128)), ("8.0", (128, 128)), ("8.9", (128, 128)),
                                      ("9.0", (128, 256)), ("10.0", (128, 256)), ("12.0", (128, 128)), ("6.1", (128, 128))])
def test_typical_tile_per_architecture(cc, tile):
    got, why = typical_tile(cc)
    assert got == tile
    assert why == (f"a typical {tile[0]}x{tile[1]} tile for compute capability {cc} (stated, not what cuBLAS picks; "
                   "--tile to change)")


def test_typical_tile_of_a_gpu_that_is_not_nvidias():
    assert typical_tile("gfx942") == ((128, 128), "a typical 128x128 tile (compute capability 'gfx942' is not NVIDIA's; assumed)")


# --- waves -------------------------------------------------------------------------------------


def test_wave_figures_and_sentence():
    # 4,097 tiles on 132 SMs: 4,097 / 132 = 31.038 waves, 32 launched, the last holds 4,097 - 31 x 132 = 5 tiles:
    # 5 / 132 = 3.8% full; 4,097 / (32 x 132) = 4,097 / 4,224 = 97.0% of the SM-time does work
    w = waves(4097, 132)
    assert (w.waves, w.wave_count, w.last_wave_fill, w.efficiency) == (4097 / 132, 32, 5 / 132, 4097 / 4224)
    assert w.sentence() == "4,097 tiles on 132 SMs = 31.04 waves: the last wave runs 4% full (97.0% of the SM-time does work)"
    assert w.to_dict() == {"tiles": 4097, "per_wave": 132, "waves": 4097 / 132, "wave_count": 32,
                           "last_wave_fill": 5 / 132, "efficiency": 4097 / 4224}
    # one tile past whole waves: the last wave runs 1 / 132 full
    assert waves(133, 132).last_wave_fill == 1 / 132 and waves(133, 132).wave_count == 2
    # whole waves: the last runs full, 1.0
    w = waves(264, 132)
    assert (w.waves, w.wave_count, w.last_wave_fill, w.efficiency) == (2.0, 2, 1.0, 1.0)
    assert w.sentence() == "264 tiles on 132 SMs = 2.00 waves: every wave runs full"
    # fewer tiles than SMs: 9 of 10
    w = waves(9, 10)
    assert (w.wave_count, w.last_wave_fill, w.efficiency) == (1, 0.9, 0.9)
    assert w.sentence() == "9 tiles on 10 SMs = 0.90 waves: the last wave runs 90% full (90.0% of the SM-time does work)"


@pytest.mark.parametrize("tiles, sms, words", [
    (0, 132, "the tiles must be a whole number greater than zero, got 0"),
    (True, 132, "the tiles must be a whole number greater than zero, got True"),
    (1.5, 132, "the tiles must be a whole number greater than zero, got 1.5"),
    (1.0, 132, "the tiles must be a whole number greater than zero, got 1.0"),
    (4, 0, "the SM count must be a whole number greater than zero, got 0"),
    (4, -2, "the SM count must be a whole number greater than zero, got -2"),
])
def test_wave_counts_must_be_whole_and_positive(tiles, sms, words):
    with pytest.raises(UsageError, match=f"^{re.escape(words)}$"):
        waves(tiles, sms)


def test_one_tile_on_one_sm_is_allowed():
    w = waves(1, 1)
    assert (w.waves, w.wave_count, w.last_wave_fill, w.efficiency) == (1.0, 1, 1.0, 1.0)


# --- the advice --------------------------------------------------------------------------------


def test_advice_figures_and_lines_with_both_dimensions_padded():
    # A100 (108 SMs, cc 8.0, 128x128): M = 8,200 -> ceil(8200/128) = 65 (8,200 mod 128 = 8: the last row 8/128 = 6% used);
    # N = 8,256 -> 65 (8,256 mod 128 = 64: 50% used). Area: 8,200 x 8,256 / (65 x 128)^2 = 67,699,200 / 69,222,400 = 97.80%.
    # 65 x 65 = 4,225 tiles / 108 = 39.12 waves; the 40th holds 4,225 - 39 x 108 = 13 tiles: 12% full;
    # 4,225 / (40 x 108) = 97.8%. Shape efficiency 0.97800 x 0.97801 = 95.65%: above 90%, no quantization line.
    a = gemm_advice(Gemm(8200, 8256, 4096), "bf16", 108, "8.0")
    tile_eff = 8200 * 8256 / (65 * 128 * 65 * 128)
    assert (a.tile, a.tiles_m, a.tiles_n, a.multiple, a.misaligned) == ((128, 128), 65, 65, 8, ())
    assert a.tile_efficiency == tile_eff and a.waves.tiles == 4225 and a.sm_count == 108
    assert a.efficiency == tile_eff * (4225 / 4320)
    assert a.lines == (
        "alignment: M, N and K are multiples of 8 (bf16): tensor cores can run at full efficiency",
        "tiles: a typical 128x128 tile for compute capability 8.0 (stated, not what cuBLAS picks; --tile to change): "
        "ceil(8,200/128) x ceil(8,256/128) = 65 x 65 = 4,225 tiles, 97.8% of their area is the output "
        "(M = 8,200 leaves the last row of tiles 6% used; N = 8,256 leaves the last column of tiles 50% used)",
        "waves: 4,225 tiles on 108 SMs = 39.12 waves: the last wave runs 12% full (97.8% of the SM-time does work)",
    )
    d = a.to_dict()
    assert d["efficiency"] == a.efficiency and d["tile_efficiency"] == tile_eff and d["source"] == GUIDE_URL
    assert (d["alignment_elements"], d["tile"], d["tiles_m"], d["tiles_n"], d["sm_count"]) == (8, [128, 128], 65, 65, 108)
    assert d["waves"]["wave_count"] == 40 and d["lines"] == list(a.lines)


def test_a_shape_padded_on_n_only_and_its_area_to_four_digits():
    # N = 200 on a 128x256 tile (cc 9.0): one column of tiles, 200/256 = 78.125% of the area; 78% of it used
    a = gemm_advice(Gemm(256, 200, 64), "fp16", 132, "9.0")
    assert a.tile_efficiency == 0.78125
    assert ("tiles: a typical 128x256 tile for compute capability 9.0 (stated, not what cuBLAS picks; --tile to change): "
            "ceil(256/128) x ceil(200/256) = 2 x 1 = 2 tiles, 78.12% of their area is the output "
            "(N = 200 leaves the last column of tiles 78% used)") in a.lines


def test_quantization_line_below_ninety_percent_only():
    # 9 tiles of 128x128 on 10 SMs: all area used, 9/10 = 0.9 of the SM-time: at 90%, no line
    a = gemm_advice(Gemm(9 * 128, 128, 64), "fp32", 10, tile=(128, 128))
    assert a.efficiency == 0.9 and not any(line.startswith("quantization") for line in a.lines)
    assert a.lines[:2] == ("alignment: fp32 runs on CUDA cores: no tensor-core alignment rule applies",
                           "tiles: the 128x128 tile asked for: ceil(1,152/128) x ceil(128/128) = 9 x 1 = 9 tiles, "
                           "all of their area is the output")
    # 8 x batch 2 = 16 tiles on 10 SMs: 2 waves, 16/20 = 80%: the line, and 1 / 0.8 = 1.25x at most
    a = gemm_advice(Gemm(8 * 128, 128, 64, batch=2), "fp8", 10, "8.0", tensor_cores=False)
    assert a.multiple is None and a.misaligned == () and a.waves.tiles == 16 and a.efficiency == 0.8
    assert a.lines == (
        "alignment: fp8 without tensor cores: no tensor-core alignment rule applies",
        "tiles: a typical 128x128 tile for compute capability 8.0 (stated, not what cuBLAS picks; --tile to change): "
        "ceil(1,024/128) x ceil(128/128) x batch 2 = 8 x 1 x batch 2 = 16 tiles, all of their area is the output",
        "waves: 16 tiles on 10 SMs = 1.60 waves: the last wave runs 60% full (80.0% of the SM-time does work)",
        "quantization: the shape uses 80% of the tensor-core time (at most 1.25x faster when compute-bound with a shape "
        "or tile that fills the tiles and waves)",
    )
    # both losses: M = 200 on 128-row tiles, 2 tiles of which 200 / 256 = 78.125% is output, on 4 SMs: half a wave;
    # 0.78125 x 0.5 = 39.06% of the time, 1 / 0.390625 = 2.56x; M leaves its last row 72 / 128 = 56% used
    a = gemm_advice(Gemm(200, 128, 64), "bf16", 4, "8.0")
    assert a.efficiency == 0.390625
    assert a.lines[1].endswith("78.12% of their area is the output (M = 200 leaves the last row of tiles 56% used)")
    assert a.lines[-1].startswith("quantization: the shape uses 39% of the tensor-core time (at most 2.56x faster")
    # 224 rows: the last 96 of 128 used, 75%
    assert gemm_advice(Gemm(224, 128, 64), "bf16", 4, "8.0").lines[1].endswith("(M = 224 leaves the last row of tiles 75% used)")
    # just under 90%: 8,999 tiles on 10,000 SMs (one wave, 89.99%): the line, 1 / 0.8999 = 1.11x
    a = gemm_advice(Gemm(8999 * 128, 128, 64), "fp32", 10_000, tile=(128, 128))
    assert a.lines[-1].startswith("quantization: the shape uses 90% of the tensor-core time (at most 1.11x faster")


def test_batch_is_named_from_two():
    one = gemm_advice(Gemm(128, 128, 64, batch=1), "bf16", 4, "8.0")
    two = gemm_advice(Gemm(128, 128, 64, batch=2), "bf16", 4, "8.0")
    assert "batch" not in one.lines[1] and one.waves.tiles == 1
    assert "ceil(128/128) x ceil(128/128) x batch 2 = 1 x 1 x batch 2 = 2 tiles" in two.lines[1] and two.waves.tiles == 2


def test_misaligned_dimensions_are_lines_of_their_own():
    a = gemm_advice(Gemm(4095, 4096, 4097), "fp16", 132, "9.0")
    assert [m.dim for m in a.misaligned] == ["M", "K"] and a.multiple == 8
    assert a.lines[:2] == (
        "alignment: M = 4,095 is not a multiple of 8 (16 bytes of fp16): tensor cores lose efficiency; "
        "the nearest aligned size is 4,096",
        "alignment: K = 4,097 is not a multiple of 8 (16 bytes of fp16): tensor cores lose efficiency; "
        "the nearest aligned size is 4,096 (pad up to 4,104)",
    )


def test_a_tile_asked_for():
    a = gemm_advice(Gemm(8192, 8192, 8192), "bf16", 132, "9.0", tile=(256, 128))
    assert a.tile == (256, 128) and a.tile_source == "the 256x128 tile asked for" and (a.tiles_m, a.tiles_n) == (32, 64)
    assert gemm_advice(Gemm(64, 64, 64), "bf16", 1, tile=(1, 1)).waves.tiles == 64 * 64  # the smallest tile
    for bad in ((0, 128), (128, -1), (128.0, 128), (True, 128)):
        with pytest.raises(UsageError, match=f"^the tile must be two whole numbers above zero, got {re.escape(repr(bad))}$"):
            gemm_advice(Gemm(64, 64, 64), "bf16", 132, "9.0", tile=bad)
