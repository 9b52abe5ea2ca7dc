"""Every figure of `gpuwhy llm`, checked against arithmetic written out here.

Datasheet and model figures:
  H200 SXM (https://www.nvidia.com/en-us/data-center/h200/): 4800 GB/s, 989.5 TFLOP/s dense bf16, 141 GB
  RTX 5070 (bundled sheet): 672 GB/s, 61.7 TFLOP/s dense fp16, 12 GB
  Llama-3 8B (https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json): 8,030,261,248
    parameters, 32 layers, 32 query heads, 8 KV heads of 128, max context 8192, bf16
  KV bytes per token, bf16: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B; fp8: 65,536 B
"""

from __future__ import annotations

import json
import math
from functools import partial

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.model.llm.estimate import estimate, scaled_estimate, sweep_batches
from gpuwhy.model.llm.result import ceiling_sentence
from gpuwhy.model.llm.roofline import (
    AttentionShape,
    LlmGpu,
    StepTerms,
    batch_ridge,
    batch_ridge_with_kv,
    check_count,
    decode_step,
    kv_bytes_per_token,
    kv_cache,
    max_batch_fit,
    prefill,
)
from gpuwhy.model.llm.scaling import Scaling
from gpuwhy.units import fmt_params, fmt_rate, fmt_si, fmt_time

P8B = 8_030_261_248
LLAMA3_8B = AttentionShape(layers=32, kv_heads=8, head_dim=128, heads=32)
KV_BF16 = 2 * 32 * 8 * 128 * 2  # 131,072 B per token
KV_FP8 = 2 * 32 * 8 * 128 * 1  # 65,536 B per token
H200 = LlmGpu("H200 SXM", 4800e9, 989.5e12, "bf16", memory_bytes=141e9)
RTX5070 = LlmGpu("GeForce RTX 5070", 672e9, 61.7e12, "fp16", memory_bytes=12e9)
# The arithmetic lines' formats (gpuwhy.units, 4 figures): bytes, times, FLOPs, parameter counts.
B4, T4, FLOP4 = partial(fmt_si, unit="B", digits=4), partial(fmt_time, digits=4), partial(fmt_si, unit="FLOP", digits=4)


# --- prefill: Llama-3 8B, a 2048-token prompt at batch 8 on the H200 --------------------------------

# matmul    2 x 8,030,261,248 x 2048 tokens x 8 prompts                      = 2.631356e14 FLOP
# attention 8 x 2 x 32 layers x 32 heads x 128 x 2048 x 2049 (causal sum)     = 8.800388e12 FLOP
# FLOPs     2.719360e14 ; t_compute = 2.719360e14 / 989.5e12 = 0.274822 s
# bytes     weights 8,030,261,248 x 2 = 16.0605e9 + KV written 8 x 2048 x 131,072 = 2.1475e9 -> 18.2080e9 B
# t_memory  18.2080e9 / 4800e9 = 3.7933 ms ; TTFT = max = 0.274822 s (compute-bound)
# prompt tokens/s 2048 x 8 / 0.274822 = 59,617
PF_MATMUL = 2 * P8B * 2048 * 8
PF_ATTN = 8 * 2 * 32 * 32 * 128 * 2048 * 2049
PF_BYTES = P8B * 2 + 8 * 2048 * KV_BF16


def test_prefill_llama3_8b_2048_tokens_batch_8():
    p = prefill(P8B, "bf16", H200, prompt_len=2048, batch=8, shape=LLAMA3_8B)
    assert p.matmul_flops == PF_MATMUL and p.attention_flops == PF_ATTN
    assert p.flops == pytest.approx(2.71936e14, rel=1e-5)
    assert p.bytes == PF_BYTES == 18_208_006_144
    assert p.t_compute_s == pytest.approx((PF_MATMUL + PF_ATTN) / 989.5e12) and round(p.t_compute_s, 4) == 0.2748
    assert p.t_memory_s == pytest.approx(PF_BYTES / 4800e9) and round(p.t_memory_s * 1e3, 2) == 3.79
    assert p.ttft_s == p.t_compute_s and p.regime == "compute"
    assert round(p.tokens_per_s) == 59_617


def test_prefill_cli_json_and_text(cli):
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", "--prompt-len", "2048", "--batch", "8", "--json")
    assert code == 0, err
    pf = json.loads(out)["prefill"]
    assert pf["flops"] == PF_MATMUL + PF_ATTN and pf["bytes"] == PF_BYTES
    assert pf["ttft_s"] == pytest.approx(0.274822, rel=1e-5) and pf["regime"] == "compute"
    assert pf["tokens_per_s"] == pytest.approx(2048 * 8 / ((PF_MATMUL + PF_ATTN) / 989.5e12))
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", "--prompt-len", "2048", "--batch", "8")
    text = " ".join(out.split())
    for shown in (
        "FLOPs 272 TFLOP (2 x params x tokens = 263 TFLOP + attention 8.8 TFLOP)",
        "t_compute 275 ms",
        "t_memory 3.79 ms (18.2 GB)",
        "time to first token 275 ms, compute-bound",
        "prompt tokens/s 59,617",
    ):
        assert shown in text, shown


def test_prefill_tie_is_compute_bound_and_overhead_is_added():
    # 2 B per weight, no shape: t_compute = 2 P L / peak, t_memory = 2 P / bw; equal at L = peak / bw = 64.
    g = LlmGpu("binary", 2.0**30, 2.0**36, "fp16")
    tie = prefill(2**20, "fp16", g, prompt_len=64)
    assert tie.t_compute_s == tie.t_memory_s == 2.0**-9 and tie.regime == "compute"
    below = prefill(2**20, "fp16", g, prompt_len=63)
    assert below.regime == "memory" and below.ttft_s == 2.0**-9
    # the all-reduce allowance adds to the TTFT: 2^-9 s + 1 ms
    withc = prefill(2**20, "fp16", g, prompt_len=64, terms=StepTerms(overhead_s=1e-3))
    assert withc.ttft_s == pytest.approx(2.0**-9 + 1e-3) and withc.tokens_per_s == pytest.approx(64 / (2.0**-9 + 1e-3))


def test_prefill_guards():
    with pytest.raises(UsageError, match="prompt length must be a whole number greater than zero, got 0"):
        prefill(3e9, "fp16", RTX5070, prompt_len=0)
    with pytest.raises(UsageError, match="batch must be a whole number greater than zero, got 0"):
        prefill(3e9, "fp16", RTX5070, prompt_len=8, batch=0)


# --- decode: the KV-cache dtype, the KV read and the fit ---------------------------------------------


@pytest.mark.parametrize("kv, per_token", [("bf16", KV_BF16), ("fp8", KV_FP8)])
def test_decode_reads_the_kv_cache_in_its_dtype(kv, per_token):
    # batch 16 x context 4096 x per token: bf16 8.590e9 B, fp8 4.295e9 B of KV read per step.
    s = decode_step(P8B, "bf16", H200, batch=16, shape=LLAMA3_8B, kv_dtype=kv, context=4096)
    assert s.kv_read_bytes == 16 * 4096 * per_token
    assert s.bytes == P8B * 2 + 16 * 4096 * per_token
    assert s.t_memory_s == pytest.approx((P8B * 2 + 16 * 4096 * per_token) / 4800e9)
    assert s.kv_cache_bytes == 16 * 4096 * per_token
    # attention FLOPs do not depend on the KV dtype: 16 x 4 x 32 x 32 x 128 x 4096 = 34.36e9
    assert s.attention_flops == 16 * 4 * 32 * 32 * 128 * 4096
    assert s.matmul_flops == 2 * P8B * 16


def test_kv_dtype_through_the_cli(cli):
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", "--batch", "16", "--context", "4096", "--kv-dtype", "fp8", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["kv_dtype"] == "fp8"
    assert d["decode"]["kv_read_bytes"] == 16 * 4096 * KV_FP8 == 4_294_967_296
    assert d["decode"]["bytes"] == P8B * 2 + 4_294_967_296
    # t_memory 20.3555e9 / 4800e9 = 4.2407 ms -> 235.8 tokens/s per sequence, 3,773 in total
    assert d["decode"]["t_memory_s"] == pytest.approx(20_355_489_792 / 4800e9)
    assert round(d["decode"]["tokens_per_s_per_seq"], 1) == 235.8 and round(d["decode"]["tokens_per_s_total"]) == 3773
    kv = d["kv_cache"]
    assert kv == {"dtype": "fp8", "bytes_per_element": 1.0, "bytes_per_token": 65536.0, "seq_len": 4096,
                  "bytes_per_seq": 4096 * 65536.0, "batch": 16, "bytes_total": 16 * 4096 * 65536.0}
    # largest batch: (141e9 - 16.0605e9) / (4096 x 65,536 B) = 124.94e9 / 268.4e6 = 465.4 -> 465
    assert d["max_batch"] == 465
    code, out, _ = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", "--batch", "16", "--context", "4096", "--kv-dtype", "fp8")
    text = " ".join(out.split())
    for shown in (
        "bytes 20.4 GB (weights 16.1 GB + KV read 4.29 GB)",
        "FLOPs 291 GFLOP (2 x params x batch = 257 GFLOP + attention 34.4 GFLOP)",
        "t_memory 4.24 ms (bytes / 4800 GB/s)",
        "t_compute 294 us (FLOPs / 989.5 TFLOP/s)",
        "step time 4.24 ms, memory-bound (14x the other term)",
        "tokens/s 236 per sequence, 3,773 in total",
        "KV cache (fp8)",
        "per token 65.5 kB (65,536 B = 2 x 32 layers x 8 KV heads x 128 x 1 B)",
        "per sequence 268 MB at 4,096 tokens",
        "for the batch 4.29 GB (16 sequences)",
        "largest batch 465 sequences of 4,096 tokens",
    ):
        assert shown in text, shown


def test_fits_in_memory_at_and_past_the_limit():
    # Memory exactly weights + 116 sequences of 8192 tokens (1 GiB each): 116 fit (equal), 117 do not.
    mem = P8B * 2 + 116 * 8192 * KV_BF16
    g = LlmGpu("exact", 4800e9, 989.5e12, "bf16", memory_bytes=mem)
    fit = decode_step(P8B, "bf16", g, batch=116, shape=LLAMA3_8B, context=8192)
    assert fit.kv_cache_bytes == 116 * 2**30 and fit.fits_in_memory is True
    over = decode_step(P8B, "bf16", g, batch=117, shape=LLAMA3_8B, context=8192)
    assert over.fits_in_memory is False
    assert max_batch_fit(P8B * 2, 8192 * KV_BF16, mem) == 116
    assert max_batch_fit(P8B * 2, 8192 * KV_BF16, mem - 1) == 115
    # no memory size, no shape or no tokens: unknown
    assert decode_step(P8B, "bf16", LlmGpu("x", 1e12, 1e15, "bf16"), batch=4, shape=LLAMA3_8B, context=8).fits_in_memory is None
    assert decode_step(P8B, "bf16", g, batch=4).fits_in_memory is None
    assert decode_step(P8B, "bf16", g, batch=4, shape=LLAMA3_8B, context=0).kv_cache_bytes is None


def test_the_batch_that_does_not_fit_is_warned_with_its_figures():
    # Llama-3 8B bf16 on the H200 at 8192 tokens: (141e9 - 16.0605e9) / 2^30 = 116.36 -> 116 sequences fit.
    e = estimate(P8B, "bf16", H200, batch=117, shape=LLAMA3_8B, context=8192)
    assert e.max_batch == 116 and e.decode.fits_in_memory is False
    assert e.warnings == ("batch 117 does not fit: at 8192 tokens per sequence the H200 SXM's memory holds the KV cache "
                          "of at most 116 sequences beside the weights",)
    assert estimate(P8B, "bf16", H200, batch=116, shape=LLAMA3_8B, context=8192).warnings == ()
    # 70e9 x 2 B = 140 GB of weights do not fit in the RTX 5070's 12 GB
    big = estimate(70e9, "fp16", RTX5070)
    assert big.warnings == ("the weights (140 GB) do not fit in the GeForce RTX 5070's 12 GB; the figures assume they did "
                            "(quantize the weights or split the model across GPUs)",)


def test_max_batch_fit_guards():
    assert max_batch_fit(20e9, 1e9, 12e9) == 0  # the weights alone do not fit: 0, not negative
    assert max_batch_fit(0.0, 1.0, 3.0) == 3
    with pytest.raises(UsageError, match="KV cache per sequence must be greater than zero"):
        max_batch_fit(1e9, 0, 12e9)


# --- decode regime and the batch ridge at their boundaries --------------------------------------------


def test_decode_at_the_batch_ridge_is_still_memory_bound():
    # 2 B per weight, peak = 64 x bandwidth: batch ridge = peak x 2 / (2 x bw) = 64.
    g = LlmGpu("binary", 2.0**30, 2.0**36, "fp16")
    assert batch_ridge(g.peak_flops, 2.0, g.bandwidth) == 64.0
    at = decode_step(2**20, "fp16", g, batch=64)
    # t_memory = 2^21 B / 2^30 = 2^-9 s; t_compute = 2 x 2^20 x 64 / 2^36 = 2^-9 s
    assert at.t_memory_s == at.t_compute_s == 2.0**-9
    assert at.regime == "memory" and at.bound_ratio == 1.0
    above = decode_step(2**20, "fp16", g, batch=65)
    assert above.regime == "compute" and above.bound_ratio == 65 / 64
    assert above.tokens_per_s_total == 65 / (65 / 64 * 2.0**-9) and above.tokens_per_s_per_seq == 1 / (65 / 64 * 2.0**-9)


def test_decode_step_overhead_is_added_and_not_in_the_regime():
    s = decode_step(2**20, "fp16", LlmGpu("binary", 2.0**30, 2.0**36, "fp16"), batch=32, terms=StepTerms(overhead_s=2.0**-9))
    assert s.step_time_s == 2.0**-8 and s.regime == "memory" and s.bound_ratio == 2.0


def test_batch_ridge_guards():
    for args in ((0.0, 2.0, 1.0), (1.0, 0.0, 1.0), (1.0, 2.0, 0.0)):
        with pytest.raises(UsageError, match="batch ridge needs a peak, bytes per weight and bandwidth greater than zero"):
            batch_ridge(*args)


def test_batch_ridge_with_kv_worked_example():
    # 8e9 params bf16 on the H200, Llama-3 8B shape, context 256:
    #   K = 256 x 131,072 = 33,554,432 B ; A = 4 x 32 x 32 x 128 x 256 = 134,217,728 FLOP
    #   batch = (8e9 x 2 / 4800e9) / ((2 x 8e9 + A) / 989.5e12 - K / 4800e9)
    #         = 3.33333e-3 / (1.630540e-5 - 6.99050e-6) = 3.33333e-3 / 9.31490e-6 = 357.85
    k, a = 256 * KV_BF16, 4 * 32 * 32 * 128 * 256
    want = (8e9 * 2 / 4800e9) / ((2 * 8e9 + a) / 989.5e12 - k / 4800e9)
    r = batch_ridge_with_kv(8e9, 2.0, H200, LLAMA3_8B, "bf16", 256)
    assert r == pytest.approx(want) and round(r, 2) == 357.85
    # two KV copies double K: 3.33333e-3 / (1.630540e-5 - 1.398101e-5) = 1434.1
    r2 = batch_ridge_with_kv(8e9, 2.0, H200, LLAMA3_8B, "bf16", 256, kv_copies=2.0)
    assert r2 == pytest.approx((8e9 * 2 / 4800e9) / ((2 * 8e9 + a) / 989.5e12 - 2 * k / 4800e9)) and round(r2) == 1434


def test_batch_ridge_with_kv_never_when_the_kv_read_outruns_the_compute():
    # One layer, one head of 1, fp32 KV: K = 8 B x context, A = 4 x context. With peak = bandwidth = 1 and
    # context 2^20: (2 P + 2^22) - 2^23 = 0 at P = 2^21 (exactly balanced: never compute-bound); below it, never.
    tiny = AttentionShape(layers=1, kv_heads=1, head_dim=1, heads=1)
    unit = LlmGpu("unit", 1.0, 1.0, "fp32")
    assert batch_ridge_with_kv(2**21, 4.0, unit, tiny, "fp32", 2**20) == math.inf
    assert batch_ridge_with_kv(2**21 - 1, 4.0, unit, tiny, "fp32", 2**20) == math.inf
    # one more parameter: denominator 2, ridge (2^21 + 1) x 4 / 2
    assert batch_ridge_with_kv(2**21 + 1, 4.0, unit, tiny, "fp32", 2**20) == (2**21 + 1) * 4 / 2


def test_estimate_ridges_and_sweep():
    e = estimate(P8B, "bf16", H200, batch=8, shape=LLAMA3_8B, context=256, sweep=True)
    assert e.batch_ridge == pytest.approx(989.5e12 * 2 / (2 * 4800e9))  # 206.15
    k, a = 256 * KV_BF16, 4 * 32 * 32 * 128 * 256
    assert e.batch_ridge_with_kv == pytest.approx((P8B * 2 / 4800e9) / ((2 * P8B + a) / 989.5e12 - k / 4800e9))
    # largest batch at 256 tokens: (141e9 - 16.0605e9) / (256 x 131,072) = 3723.5 -> 3723
    assert e.max_batch == 3723
    assert [s.batch for s in e.sweep] == [1, 8, 32, 64, 128, 206, 256, 512, 1024, 3723]
    assert estimate(P8B, "bf16", H200, shape=LLAMA3_8B).batch_ridge_with_kv is None  # context 0


def test_sweep_batches():
    assert sweep_batches(3, 91.8, 40) == (1, 3, 8, 32, 40, 64, 92, 128, 256, 512, 1024)
    assert sweep_batches(1, math.inf, None) == (1, 8, 32, 64, 128, 256, 512, 1024)
    assert sweep_batches(1, 0.6, 0, base=(2,)) == (1, 2)  # a ridge below 1 and no fit are left out
    assert sweep_batches(1, 1.0, None, base=(4,)) == (1, 4)


# --- the ceiling sentence -------------------------------------------------------------------------------


def test_ceiling_sentences():
    # 3B fp16 on the RTX 5070 at batch 256: t_compute = 2 x 3e9 x 256 / 61.7e12 = 24.895 ms > t_memory 8.93 ms:
    # 256 / 24.895 ms = 10,283 tokens/s in total, 40.2 per sequence
    s = decode_step(3e9, "fp16", RTX5070, batch=256)
    assert s.regime == "compute"
    assert ceiling_sentence(s, "GeForce RTX 5070", "fp16") == (
        "no kernel can beat 10,283 tokens/s in total at batch 256 (40.2 per sequence) on the GeForce RTX 5070 "
        "without doing fewer FLOPs per token or using a faster precision than fp16"
    )
    # batch 1: 672e9 / 6e9 = 112 tokens/s, no "in total"; batch 2: 2 x 111.96 = 224 in total
    one = decode_step(3e9, "fp16", RTX5070)
    assert ceiling_sentence(one, "X", "fp16") == "no kernel can beat 112 tokens/s per sequence on the X without reading fewer bytes per step"
    two = decode_step(3e9, "fp16", RTX5070, batch=2)
    assert "(224 tokens/s in total at batch 2)" in ceiling_sentence(two, "X", "fp16")


@pytest.mark.parametrize("x, text", [(99.94, "99.9"), (100.0, "100"), (1234.5, "1,234"), (2.5, "2.5"), (math.inf, "unbounded")])
def test_fmt_rate(x, text):
    assert fmt_rate(x) == text


@pytest.mark.parametrize(
    "fn, x, text",
    [
        (B4, 16_060_522_496, "16.06 GB"),
        (B4, 999.96e6, "1 GB"),  # from 0.9995 x the unit up
        (B4, 999.4e6, "999.4 MB"),
        (B4, 1.5e12, "1.5 TB"),
        (B4, 2048.0, "2.048 kB"),
        (B4, 12.0, "12 B"),
        (T4, 3.3458e-3, "3.346 ms"),
        (T4, 1.5, "1.5 s"),
        (T4, 16.23e-6, "16.23 us"),
        (T4, 40e-9, "40 ns"),
        (FLOP4, 2.5e15, "2.5 PFLOP"),
        (FLOP4, 1.141e12, "1.141 TFLOP"),
        (FLOP4, 25.8e9, "25.8 GFLOP"),
        (FLOP4, 3e6, "3 MFLOP"),
        (FLOP4, 12.0, "12 FLOP"),
        (fmt_params, 8.03e9, "8.03B"),
        (fmt_params, 1.2e12, "1.2T"),
        (fmt_params, 124e6, "124M"),
        (fmt_params, 500.0, "500"),
    ],
)
def test_arithmetic_number_formats(fn, x, text):
    assert fn(x) == text


# --- the arithmetic lines of the scaling options ------------------------------------------------------


def test_arithmetic_lines_dense_one_gpu():
    # weights 8.03e9 x 2 = 16.06 GB; t_memory 16.06e9 / 4800e9 = 3.346 ms; t_compute 2 x 8.03e9 / 989.5e12 = 16.23 us;
    # 1 / 3.346 ms = 299 tokens/s
    r = scaled_estimate(P8B, "bf16", H200, Scaling(), 1, shape=LLAMA3_8B)
    assert r.scaling.lines == (
        "bytes per weight: 16-bit bf16 = 2 B per weight",
        "weights to fit: 8.03B params x 2 B = 16.06 GB",
        "times: t_memory = 16.06 GB / 4800 GB/s = 3.346 ms; t_compute = 16.06 GFLOP / 989.5 TFLOP/s = 16.23 us",
        "step: max(3.346 ms, 16.23 us) = 3.346 ms -> 299 tokens/s per sequence",
    )


def test_arithmetic_lines_experts_on_two_gpus():
    # 46.7e9 params, 12.9e9 active, bf16, 2 x H200, batch 8, context 1024 (Llama-3 8B attention shape):
    #   weights 93.4 GB, 46.7 GB per GPU; read 12.9e9 x 2 = 25.8 GB + KV 8 x 1024 x 131,072 = 1.074 GB -> 26.87 GB
    #   t_memory 26.87e9 / 9600e9 = 2.799 ms; FLOPs 2 x 12.9e9 x 8 + 8 x 4 x 32 x 32 x 128 x 1024 = 210.7 GFLOP / 1979e12 = 106.5 us
    #   all-reduce 2 x 32 x 10 us = 640 us; step 3.439 ms -> 291 tokens/s per sequence, 8 x 290.8 = 2,326 in total
    #   spread: min(46.7e9, 8 x 12.9e9) x 2 = 93.4 GB + 1.074 GB = 94.47 GB / 9600e9 = 9.841 ms + 640 us = 10.48 ms -> 763 tokens/s
    #   batch ridge 1979e12 x 2 / (2 x 9600e9) = 206.1; x 46.7 / 12.9 = 746
    r = scaled_estimate(46.7e9, "bf16", H200, Scaling(active_params=12.9e9, num_gpus=2), 8, shape=LLAMA3_8B, context=1024)
    assert r.scaling.lines == (
        "bytes per weight: 16-bit bf16 = 2 B per weight",
        "weights to fit: 46.7B params x 2 B = 93.4 GB; per GPU / 2 = 46.7 GB",
        "weights read per step: 12.9B active params x 2 B = 25.8 GB (each token reads only its experts; at batch 8 tokens on "
        "different experts read up to min(params, 8 x active) x 2 B = 93.4 GB)",
        "FLOPs per token: 2 x 12.9B active params = 25.8 GFLOP + attention",
        "2 GPUs (tensor parallel): bandwidth 2 x 4800 GB/s = 9600 GB/s, peak 2 x 989.5 = 1979 TFLOP/s, memory 2 x 141 GB = 282 GB",
        "times: t_memory = 26.87 GB / 9600 GB/s = 2.799 ms (each GPU reads 13.44 GB at 4800 GB/s); "
        "t_compute = 210.7 GFLOP / 1979 TFLOP/s = 106.5 us",
        "all-reduce allowance: 2 per layer x 32 layers x 10 us = 640 us per step (assumed; measure it with `gpuwhy bench --allreduce` or set --allreduce-latency)",
        "step: max(2.799 ms, 106.5 us) + 640 us = 3.439 ms -> 291 tokens/s per sequence, 2,326 in total",
        "experts spread: with every token on different experts, step 10.48 ms -> 763 tokens/s in total",
        "batch ridge: 206 if the batch's tokens share experts; 746 (x params/active) once they spread over all experts",
    )
    rep = r.scaling
    assert rep.allreduce_time_s == pytest.approx(640e-6) and rep.allreduces_per_step == 64
    assert rep.batch_ridge_spread == pytest.approx(1979e12 * 2 / (2 * 9600e9) * 46.7 / 12.9)
    assert rep.weight_bytes_per_gpu == pytest.approx(46.7e9)
    assert rep.step_spread.weight_bytes == pytest.approx(46.7e9 * 2)


def test_more_gpus_than_kv_heads_keeps_copies():
    # 16 GPUs, 8 KV heads: the KV cache splits 8 ways, each entry on 2 GPUs (kv_copies = 16 / 8 = 2).
    # Llama-3 70B shape (80 layers, 8 KV heads of 128, 64 heads), int4 + a 16-bit scale per 32 = 0.5625 B per weight.
    shape = AttentionShape(80, 8, 128, 64)
    r = scaled_estimate(70e9, "int4", H200, Scaling(quant_group=32, num_gpus=16), 8, shape=shape, context=1024)
    # KV (fp16 for int4 weights): 8 x 1024 x 2 x 80 x 8 x 128 x 2 B x 2 copies = 5.369e9 B; weights 39.375e9 B
    assert r.estimate.decode.kv_read_bytes == 8 * 1024 * (2 * 80 * 8 * 128 * 2) * 2
    assert r.estimate.decode.bytes == pytest.approx(70e9 * 0.5625 + 5_368_709_120)
    assert r.estimate.notes[-1] == "16 GPUs but 8 KV heads: each KV head is kept on 2 GPUs, so the KV cache splits only 8 ways"
    # step max(44.74e9 / 76.8e12, 1.1415e12 / 15.832e15) + 2 x 80 x 10 us = 582.6 us + 1.6 ms = 2.183 ms
    assert r.estimate.decode.step_time_s == pytest.approx((70e9 * 0.5625 + 5_368_709_120) / 76.8e12 + 1.6e-3)


# --- the request's own guards (the Python API is a public surface) -----------------------------------------


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"batch": 0}, "batch must be a whole number greater than zero, got 0"),
        ({"batch": True}, "batch must be a whole number greater than zero, got True"),
        ({"params": 0.0}, "params must be greater than zero, got 0.0"),
        ({"params": math.nan}, "params must be greater than zero, got nan"),
        ({"prompt_len": 0}, "prompt length must be a whole number greater than zero, got 0"),
        ({"context": -1}, "context must be a whole number zero or more, got -1"),
        ({"context": 8193, "max_context": 8192}, "context 8193 is longer than the model's maximum context 8192; give at most 8192"),
        ({"prompt_len": 9000, "context": 10, "max_context": 8192}, "context 9000 is longer than the model's maximum context 8192"),
        ({"kv_dtype": "fp12"}, "unknown --kv-dtype 'fp12'"),
        ({"weight_dtype": "q5"}, "unknown --weight-dtype 'q5'"),
    ],
)
def test_scaled_estimate_guards(kwargs, msg):
    args = {"params": 3e9, "weight_dtype": "fp16", "gpu": RTX5070, "shape": LLAMA3_8B, **kwargs}
    with pytest.raises(UsageError, match=msg):
        scaled_estimate(**args)


def test_context_at_the_models_maximum_is_allowed():
    e = estimate(P8B, "bf16", H200, shape=LLAMA3_8B, context=8192, max_context=8192)
    assert e.decode.context == 8192 and e.fit_seq_len == 8192
    # without a context or prompt, the fit uses the maximum context: (141e9 - 16.06e9) / (8192 x 131,072) = 116
    e = estimate(P8B, "bf16", H200, shape=LLAMA3_8B, max_context=8192)
    assert e.decode.context == 0 and e.fit_seq_len == 8192 and e.max_batch == 116
    assert any(n.startswith("context 0: the decode step reads no KV cache") for n in e.notes)


def test_active_params_guard():
    with pytest.raises(UsageError, match="--active-params 4e9 is more than the 3e9 parameters"):
        scaled_estimate(3e9, "fp16", RTX5070, Scaling(active_params=4e9))
    # equal is allowed (a dense model)
    assert scaled_estimate(3e9, "fp16", RTX5070, Scaling(active_params=3e9)).scaling.batch_ridge_spread is None


def test_decode_step_guards():
    with pytest.raises(UsageError, match="params must be greater than zero, got 0"):
        decode_step(0, "fp16", RTX5070)
    with pytest.raises(UsageError, match="params must be greater than zero, got inf"):
        decode_step(math.inf, "fp16", RTX5070)
    with pytest.raises(UsageError, match="context must be a whole number zero or more, got -1"):
        decode_step(3e9, "fp16", RTX5070, context=-1)
    assert check_count(0, "x", allow_zero=True) == 0
    with pytest.raises(UsageError, match="x must be a whole number greater than zero, got 1.5"):
        check_count(1.5, "x")


def test_shape_and_gpu_guards():
    with pytest.raises(UsageError, match="the model shape's layers must be a whole number greater than zero, got 0"):
        AttentionShape(0, 8, 128)
    with pytest.raises(UsageError, match="the model shape's head_dim must be a whole number greater than zero, got True"):
        AttentionShape(32, 8, True)
    with pytest.raises(UsageError, match="the model shape's heads must be a whole number greater than zero, got 0"):
        AttentionShape(32, 8, 128, heads=0)
    assert AttentionShape(32, 8, 128).query_heads == 8
    with pytest.raises(UsageError, match="the bad figures need a bandwidth and a peak greater than zero"):
        LlmGpu("bad", 0.0, 1.0, "fp16")
    with pytest.raises(UsageError, match="the bad figures need a bandwidth and a peak greater than zero"):
        LlmGpu("bad", 1.0, 0.0, "fp16")


def test_kv_sizes_by_dtype():
    # 2 x 32 x 8 x 128 = 65,536 elements per token: fp32 4 B, fp16 2 B, fp8 1 B, int4 0.5 B
    assert [kv_bytes_per_token(LLAMA3_8B, d) for d in ("fp32", "fp16", "fp8", "int4")] == [262144, 131072, 65536, 32768]
    kv = kv_cache(LLAMA3_8B, "FP8", None, batch=3)
    assert kv.dtype == "fp8" and kv.seq_len is None and kv.bytes_per_seq is None and kv.bytes_total is None
    kv = kv_cache(LLAMA3_8B, "int4", 100, batch=3)
    assert kv.bytes_per_element == 0.5 and kv.bytes_per_seq == 3_276_800 and kv.bytes_total == 9_830_400


# --- what the estimate adds: notes, warnings, the words of what is left out -----------------------------------


def test_sweep_batches_adds_a_ridge_from_1_up():
    assert sweep_batches(3, 1.0, None, base=(4,)) == (1, 3, 4)  # a ridge of 1 is a batch of 1
    assert sweep_batches(3, 1.6, None, base=(4,)) == (2, 3, 4)  # rounded
    assert sweep_batches(3, 0.99, None, base=(4,)) == (3, 4)


def test_request_checks_come_in_their_order():
    # params is checked before the prompt length (both bad: the params message)
    for params in (0.0, math.inf):
        with pytest.raises(UsageError, match=f"params must be greater than zero, got {params!r}"):
            scaled_estimate(params, "fp16", RTX5070, prompt_len=0)


def test_weights_that_exactly_fill_the_memory_fit():
    g = LlmGpu("exact", 672e9, 61.7e12, "fp16", memory_bytes=6e9)
    assert estimate(3e9, "fp16", g).warnings == ()  # 3e9 x 2 B = 6e9 B: they fit, with nothing to spare
    assert estimate(3e9 + 1, "fp16", g).warnings[0].startswith("the weights (6 GB) do not fit in the exact's 6 GB")


def test_active_params_tolerance_is_one_part_in_a_billion():
    # active may exceed params by rounding only: 3e9 x (1 + 1e-9) = 3,000,000,003 is allowed, 3,000,000,015 is not
    assert scaled_estimate(3e9, "fp16", RTX5070, Scaling(active_params=3e9 * (1 + 1e-9))).scaling.active_params == 3e9 * (1 + 1e-9)
    with pytest.raises(UsageError, match="is more than the 3e9 parameters"):
        scaled_estimate(3e9, "fp16", RTX5070, Scaling(active_params=3e9 * (1 + 5e-9)))


def test_kv_head_notes():
    one_kv = AttentionShape(layers=4, kv_heads=1, head_dim=64, heads=8)
    r = scaled_estimate(3e9, "fp16", RTX5070, Scaling(num_gpus=2), shape=one_kv, context=16)
    assert "2 GPUs but 1 KV heads: each KV head is kept on 2 GPUs, so the KV cache splits only 1 ways" in r.estimate.notes
    two_kv = AttentionShape(layers=4, kv_heads=2, head_dim=64, heads=8)
    r = scaled_estimate(3e9, "fp16", RTX5070, Scaling(num_gpus=3), shape=two_kv, context=16)
    # 3 GPUs over min(3, 2) = 2 ways: 3 / 2 = 1.5 GPUs per KV head, each entry held 1.5 times
    assert "3 GPUs but 2 KV heads: each KV head is kept on 1.5 GPUs, so the KV cache splits only 2 ways" in r.estimate.notes
    assert r.estimate.decode.kv_read_bytes == 16 * (2 * 4 * 2 * 64 * 2) * 1.5
    r = scaled_estimate(3e9, "fp16", RTX5070, Scaling(num_gpus=8), shape=LLAMA3_8B, context=16)
    assert not any("KV heads" in n for n in r.estimate.notes)  # 8 GPUs, 8 KV heads: one each


def test_more_gpus_than_kv_heads_fit_fewer_sequences():
    # 16 H200s hold 16 x 141e9 = 2256e9 B; Llama-3 70B int4 + scales: 70e9 x 0.5625 = 39.375e9 B; each sequence of
    # 1024 tokens holds 1024 x 327,680 B x 2 copies = 671,088,640 B: (2256e9 - 39.375e9) / 671,088,640 = 3303.0 -> 3303
    shape = AttentionShape(80, 8, 128, 64)
    r = scaled_estimate(70e9, "int4", H200, Scaling(quant_group=32, num_gpus=16), 8, shape=shape, context=1024)
    assert r.estimate.max_batch == int((16 * 141e9 - 70e9 * 0.5625) // (1024 * 327_680 * 2)) == 3303


def test_ridge_with_kv_from_a_context_of_one():
    e = estimate(P8B, "bf16", H200, shape=LLAMA3_8B, context=1)
    k, a = KV_BF16, 4 * 32 * 32 * 128
    assert e.batch_ridge_with_kv == pytest.approx((P8B * 2 / 4800e9) / ((2 * P8B + a) / 989.5e12 - k / 4800e9))


def test_prefill_expert_note_only_for_experts():
    dense = scaled_estimate(3e9, "fp16", RTX5070, Scaling(), prompt_len=64)
    assert not any("every expert" in n for n in dense.estimate.notes)
    moe = scaled_estimate(3e9, "fp16", RTX5070, Scaling(active_params=1e9), prompt_len=64)
    assert "prefill reads all the weights once: a long prompt's tokens reach every expert" in moe.estimate.notes
    # the prefill reads every weight (3e9 x 2 B) but does 2 x 1e9 FLOPs per token
    assert moe.estimate.prefill.bytes == 6e9 and moe.estimate.prefill.matmul_flops == 2 * 1e9 * 64


def test_estimate_defaults_to_batch_1():
    assert estimate(3e9, "fp16", RTX5070).decode.batch == 1


def test_leaves_out_words_follow_the_options():
    plain = estimate(3e9, "fp16", RTX5070)
    assert plain.leaves_out == (
        "activations (their DRAM traffic and memory footprint)",
        "the write of each new token's KV entries, sampling, and the scales of quantized formats",
        "kernel-launch and host overhead, and communication between GPUs",
    )
    scaled = scaled_estimate(3e9, "fp16", RTX5070).estimate
    assert scaled.leaves_out == (
        "activations (their DRAM traffic and memory footprint)",
        "the write of each new token's KV entries and sampling, and the scales of quantized formats (--quant-group counts them)",
        "kernel-launch and host overhead, and communication between GPUs",
    )
    quant = scaled_estimate(3e9, "int4", RTX5070, Scaling(quant_group=32, num_gpus=2)).estimate
    assert quant.leaves_out[1:] == (
        "the write of each new token's KV entries and sampling",
        "kernel-launch and host overhead, and the all-reduces' transfer time (only their latency is counted: "
        "`gpuwhy bench --allreduce` measures the bus bandwidth that adds it)",
    )
    measured = scaled_estimate(3e9, "int4", RTX5070, Scaling(quant_group=32, num_gpus=2, allreduce_busbw_gbs=350.0)).estimate
    assert measured.leaves_out[2] == "kernel-launch and host overhead"  # the transfer time is in the allowance
    per_param = scaled_estimate(3e9, "int4", RTX5070, Scaling(bytes_per_param=0.6)).estimate
    assert per_param.leaves_out[1] == "the write of each new token's KV entries and sampling"


def test_arithmetic_lines_batch_words():
    # experts at batch 1: no "at batch" clause, no spread line; 1 / t per sequence only
    r = scaled_estimate(46.7e9, "bf16", H200, Scaling(active_params=12.9e9), 1)
    assert "weights read per step: 12.9B active params x 2 B = 25.8 GB (each token reads only its experts)" in r.scaling.lines
    assert not any(x.startswith("experts spread") for x in r.scaling.lines)
    assert r.scaling.lines[-2].endswith("tokens/s per sequence")
    # a dense model at batch 2: "in total", no spread line; 16.06e9 / 4800e9 = 3.346 ms -> 299 per sequence, 598 in total
    r = scaled_estimate(P8B, "bf16", H200, Scaling(), 2, shape=LLAMA3_8B)
    assert r.scaling.lines[-1] == "step: max(3.346 ms, 32.46 us) = 3.346 ms -> 299 tokens/s per sequence, 598 in total"
    r = scaled_estimate(P8B, "bf16", H200, Scaling(), 8, shape=LLAMA3_8B)
    assert not any(x.startswith("experts spread") for x in r.scaling.lines)


def test_experts_spread_line_only_when_it_is_slower():
    # 2e9 params, 1e9 active, fp16 on the RTX 5070. At batch 2 the tokens may read min(2e9, 2 x 1e9) = all the
    # weights: 4e9 B / 672e9 = 5.95 ms vs 2e9 B / 672e9 = 2.98 ms sharing experts -> the spread line.
    two = scaled_estimate(2e9, "fp16", RTX5070, Scaling(active_params=1e9), 2)
    assert two.scaling.lines[2] == ("weights read per step: 1B active params x 2 B = 2 GB (each token reads only its experts; "
                                    "at batch 2 tokens on different experts read up to min(params, 2 x active) x 2 B = 4 GB)")
    assert "experts spread: with every token on different experts, step 5.952 ms -> 336 tokens/s in total" in two.scaling.lines
    # At batch 4096 both are compute-bound at 2 x 1e9 x 4096 / 61.7e12 = 132.8 ms: the spread changes nothing, no line.
    big = scaled_estimate(2e9, "fp16", RTX5070, Scaling(active_params=1e9), 4096)
    assert big.scaling.step_spread.step_time_s == big.scaling.step.step_time_s
    assert not any(x.startswith("experts spread") for x in big.scaling.lines)


def test_unit_boundary_of_the_arithmetic_formats():
    # issue 19: one formatter (gpuwhy.units): the larger unit once the figure rounds to 1000 of the smaller
    assert B4(1e9 * 0.9995) == "999.5 MB"
    assert B4(999.96e6) == "1 GB"


def test_to_dict_figures():
    assert H200.to_dict() == {"name": "H200 SXM", "memory_bandwidth_gbs": 4800.0, "peak_tflops": 989.5, "precision": "bf16",
                              "memory_size_gb": 141.0, "source": "spec sheet", "precision_note": None}
    assert LlmGpu("x", 1e12, 1e15, "fp16").to_dict()["memory_size_gb"] is None
    s = decode_step(3e9, "fp16", RTX5070, batch=4)
    # 2 x 3e9 x 4 FLOP over 6e9 B = 4 FLOP/byte
    assert s.to_dict()["arithmetic_intensity"] == 4.0 and s.to_dict()["flops"] == 2.4e10


def test_decode_step_defaults_and_small_counts():
    s = decode_step(P8B, "bf16", H200, shape=LLAMA3_8B)  # no context given: 0 cached tokens, no KV read
    assert s.context == 0 and s.kv_read_bytes == 0.0 and s.attention_flops == 0.0 and s.kv_cache_bytes is None
    tiny = decode_step(0.5, "fp16", RTX5070)  # any positive count of parameters is a count
    assert tiny.weight_bytes == 1.0
    assert scaled_estimate(0.5, "fp16", RTX5070).estimate.weight_bytes == 1.0


@pytest.mark.parametrize("heads", [True, 2.5, -1])
def test_heads_must_be_a_whole_positive_number(heads):
    with pytest.raises(UsageError, match=f"the model shape's heads must be a whole number greater than zero, got {heads!r}"):
        AttentionShape(32, 8, 128, heads=heads)


def test_small_positive_figures_and_defaults():
    assert batch_ridge(1.0, 0.5, 0.25) == 1.0  # 1 x 0.5 / (2 x 0.25)
    kv = kv_cache(LLAMA3_8B, "fp16", 8192)  # one sequence unless told: 8192 x 131,072 B = 1 GiB
    assert kv.batch == 1 and kv.bytes_total == kv.bytes_per_seq == 2**30


def test_prefill_writes_each_kv_copy():
    # 2 copies of each KV entry (more GPUs than KV heads): 8 x 2048 x 131,072 B x 2 beside the weights
    p = prefill(P8B, "bf16", H200, prompt_len=2048, batch=8, shape=LLAMA3_8B, terms=StepTerms(kv_copies=2.0))
    assert p.bytes == P8B * 2 + 8 * 2048 * KV_BF16 * 2
