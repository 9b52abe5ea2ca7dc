"""`gpuwhy llm`: speculative decoding, cost per token, the largest batch's reason, --model against
--params; and `gpuwhy mfu`. Every figure worked by hand in the comments."""

import json
import re

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.model.llm.cost import cost_batches, usd_per_million
from gpuwhy.model.llm.roofline import LlmGpu, decode_step
from gpuwhy.model.llm.speculative import expected_tokens, speculative
from gpuwhy.model.llm.mfu import MfuShape, mfu

H200 = LlmGpu("H200 SXM", bandwidth=4.8e12, peak_flops=989.5e12, precision="fp16", memory_bytes=141e9)


def _llm(cli, *args):
    code, out, err = cli("llm", *args, "--json")
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------ speculative decoding --


def test_expected_tokens_of_the_syllabus():
    # (1 - 0.8^6) / (1 - 0.8) = (1 - 0.262144) / 0.2 = 3.68928: "about 3.7" (the syllabus rounds to 3.6)
    assert expected_tokens(5, 0.8) == pytest.approx(3.68928)
    assert expected_tokens(5, 1.0) == 6  # every drafted token accepted: K + 1
    assert expected_tokens(3, 0.0) == 1  # none accepted: the target's own token
    k_words, a_words = "--speculative K must be a whole number of drafted tokens, 1 or more", "--acceptance must be a probability"
    for k, a, words in ((0, 0.8, k_words), (5, 1.2, a_words), (5, -0.1, a_words), (2.5, 0.8, k_words)):
        with pytest.raises(UsageError, match=rf"^{re.escape(words)}.*, got {re.escape(repr(k if words == k_words else a))}$"):
            expected_tokens(k, a)


def test_speculative_speedup_with_a_draft():
    # target 8B fp16 on the H200, batch 1: t_step = 16e9 / 4.8e12 = 3.3333 ms (t_compute 16.17 us)
    # verify: 6 tokens' FLOPs, 97 us, still below 3.3333 ms; draft 1B fp16: 2e9 / 4.8e12 = 0.41667 ms
    # cycle = 5 x 0.41667 + 3.3333 = 5.41667 ms; speed-up = 3.68928 x 3.3333 / 5.41667 = 2.2703
    target = decode_step(8e9, "fp16", H200)
    sp = speculative(target, 5, 0.8, H200, "fp16", draft_params=1e9, target_params=8e9)
    assert sp.verify_step_s == pytest.approx(16e9 / 4.8e12)
    assert sp.cycle_s == pytest.approx(5 * 2e9 / 4.8e12 + 16e9 / 4.8e12)
    assert sp.speedup == pytest.approx(3.68928 * (16e9 / 4.8e12) / (5 * 2e9 / 4.8e12 + 16e9 / 4.8e12))
    assert sp.tokens_per_s_per_seq == pytest.approx(3.68928 / sp.cycle_s)


def test_speculative_cli_without_a_draft_is_an_upper_bound(cli):
    doc = _llm(cli, "--params", "8B", "--gpu", "H200", "--speculative", "5", "--acceptance", "0.8")
    sp = doc["speculative"]
    assert sp["tokens_per_step"] == pytest.approx(3.68928)
    # no draft: cycle = the verify step = the decode step, so the speed-up is E itself, 3.69x (3-4x)
    assert sp["speedup"] == pytest.approx(3.68928)
    assert any("upper bound" in n for n in sp["notes"])
    code, out, _ = cli("llm", "--params", "8B", "--gpu", "H200", "--speculative", "5", "--acceptance", "0.8")
    assert "3.689" in out and "3.69x" in out


def test_speculative_with_a_bundled_draft_model(cli):
    doc = _llm(cli, "--model", "llama-3-70b", "--gpu", "B200", "--context", "1024", "--speculative", "4",
               "--acceptance", "0.7", "--draft-model", "llama-3-8b")
    sp = doc["speculative"]
    assert sp["draft"] == "Llama-3 8B" and sp["draft_step"]["kv_read_bytes"] > 0
    assert 1 < sp["speedup"] < sp["tokens_per_step"]


@pytest.mark.parametrize("args", [
    ["--speculative", "5", "--acceptance", "1.2"],
    ["--speculative", "0", "--acceptance", "0.8"],
    ["--speculative", "2.5", "--acceptance", "0.8"],
    ["--speculative", "5"],
    ["--acceptance", "0.8"],
    ["--draft-params", "1B"],
    ["--speculative", "5", "--acceptance", "0.8", "--draft-params", "1B", "--draft-model", "gpt2"],
    ["--speculative", "5", "--acceptance", "0.8", "--draft-params", "9B"],
    ["--speculative", "5", "--acceptance", "0.8", "--draft-model", "nope"],
    ["--cost-per-hour", "0"],
    ["--cost-per-hour", "cheap"],
])
def test_bad_serving_options_exit_2_with_one_line(cli, args):
    code, out, err = cli("llm", "--params", "8B", "--gpu", "H200", *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------- cost --


def test_usd_per_million():
    # 3.50 USD/h at 300 tokens/s: 3.5 / (3600 x 300) x 1e6 = 3.2407
    assert usd_per_million(3.5, 300) == pytest.approx(3.5 / 1.08e6 * 1e6)
    with pytest.raises(UsageError, match=r"^--cost-per-hour must be a price in USD greater than zero, got 0$"):
        usd_per_million(0, 300)


def test_cost_table_worked_by_hand(cli):
    # 8B fp16 on the H200 at 3.50 USD/h, no shape (no KV cache), batch 1: 16e9 B / 4.8e12 = 3.3333 ms:
    # 300 tokens/s -> 3.2407 USD per 1M tokens; at 85% of the ceiling 3.8126, at 60% 5.4012.
    # batch 8: t_compute 2 x 8e9 x 8 / 989.5e12 = 0.129 ms < 3.3333 ms: 2,400 tokens/s -> 0.40509
    # batch 256: t_compute 4.139 ms > t_memory: compute-bound, 256 / 4.139 ms = 61,844 tokens/s -> 0.015720
    # fp8 weights, batch 1: 8e9 B -> 600 tokens/s -> 1.6204; int4: 4e9 B -> 1,200 tokens/s -> 0.81019
    doc = _llm(cli, "--params", "8B", "--weight-dtype", "fp16", "--gpu", "H200", "--cost-per-hour", "3.5")
    rows = {(r["weight_dtype"], r["batch"]): r for r in doc["cost"]["rows"]}
    assert rows[("fp16", 1)]["tokens_per_s"] == pytest.approx(300)
    assert rows[("fp16", 1)]["usd_per_m_tokens"] == pytest.approx(3.2407, rel=1e-4)
    assert rows[("fp16", 1)]["usd_per_m_tokens_at_85pct"] == pytest.approx(3.2407 / 0.85, rel=1e-4)
    assert rows[("fp16", 1)]["usd_per_m_tokens_at_60pct"] == pytest.approx(5.4012, rel=1e-4)
    assert rows[("fp16", 8)]["usd_per_m_tokens"] == pytest.approx(0.40509, rel=1e-4)
    assert rows[("fp16", 256)]["regime"] == "compute"
    assert rows[("fp16", 256)]["usd_per_m_tokens"] == pytest.approx(3.5 / 3600 / (256 / (2 * 8e9 * 256 / 989.5e12)) * 1e6)
    assert rows[("fp8", 1)]["usd_per_m_tokens"] == pytest.approx(1.6204, rel=1e-4)
    assert rows[("int4", 1)]["usd_per_m_tokens"] == pytest.approx(0.81019, rel=1e-4)
    # batching and quantization together: 3.24 -> 0.0157 USD, 200x cheaper per token
    assert rows[("fp16", 1)]["usd_per_m_tokens"] / rows[("int4", 256)]["usd_per_m_tokens"] > 100


def test_cost_counts_every_gpu_and_keeps_only_batches_that_fit(cli):
    # llama-3-8b bf16 on the H200 at context 8192: 1 GiB of KV per sequence, (141e9 - 16.06e9) / 2^30 = 116 fit
    doc = _llm(cli, "--model", "llama-3-8b", "--gpu", "H200", "--context", "8192", "--cost-per-hour", "2", "--num-gpus", "2")
    assert doc["cost"]["usd_per_hour"] == 4 and doc["cost"]["num_gpus"] == 2
    batches = [r["batch"] for r in doc["cost"]["rows"] if r["weight_dtype"] == "bf16"]
    assert batches == sorted(batches) and max(batches) == doc["max_batch"]
    assert cost_batches(1, 116) == (1, 8, 64, 116) and cost_batches(300, None) == (1, 8, 64, 256, 300)


# ---------------------------------------------------- largest batch, reason --


def test_largest_batch_names_the_kv_cache_when_it_is_what_does_not_fit(cli):
    # llama-3.2-3b bf16 on the RTX 5070 (12 GB): weights 6.43 GB fit, 5.57 GB left;
    # one sequence at 131,072 tokens holds 114,688 B x 131,072 = 15.03 GB of KV: none fits, and not for the weights
    doc = _llm(cli, "--model", "llama-3.2-3b", "--gpu", "rtx 5070", "--context", "131072")
    assert doc["max_batch"] == 0
    assert "KV cache" in doc["max_batch_reason"] and "weights alone" not in doc["max_batch_reason"]
    assert any("KV cache at 131,072 tokens" in w for w in doc["warnings"])
    # llama-3-70b bf16 (141.1 GB) on the H200 (141 GB): the weights are what does not fit
    doc = _llm(cli, "--model", "llama-3-70b", "--gpu", "H200")
    assert doc["max_batch_reason"].startswith("none: the weights alone")


def test_model_and_contradicting_params_is_an_error(cli):
    code, out, err = cli("llm", "--model", "llama-3-8b", "--params", "7B", "--gpu", "H200")
    assert code == 2 and out == "" and "contradicts" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("llm", "--model", "llama-3-8b", "--params", "8.03B", "--gpu", "H200")  # agrees: fine
    assert code == 0, err


# -------------------------------------------------------------------- MFU --


def test_mfu_worked_by_hand(cli):
    # 6 x 8e9 x 12,000 = 5.76e14 FLOP/s over 8 x 989.5e12 = 7.916e15: 7.2764%, a cost emergency
    code, out, err = cli("mfu", "--params", "8B", "--tokens-per-s", "12000", "--gpus", "8", "--gpu", "H100 SXM", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["flops_per_token"] == 4.8e10
    assert doc["mfu_pct"] == pytest.approx(100 * 5.76e14 / 7.916e15)
    assert doc["verdict"] == "cost emergency"
    code, out, _ = cli("mfu", "--params", "8B", "--tokens-per-s", "12000", "--gpus", "8", "--gpu", "H100 SXM")
    assert "7.28%" in out and "cost emergency" in out


def test_mfu_with_attention_and_inference():
    # training with the shape: + 12 x 32 x 4096 x 8192 = 1.2885e10 per token -> 6.0885e10 x 12,000 / 7.916e15 = 9.2297%
    m = mfu(8e9, 12000, 8, 989.5e12, train=True, shape=MfuShape(32, 4096, 8192))
    assert m.attention_flops_per_token == 12 * 32 * 4096 * 8192
    assert m.mfu_pct == pytest.approx(100 * (4.8e10 + 12 * 32 * 4096 * 8192) * 12000 / 7.916e15)
    # inference: 2 x 8e9 x 12,000 = 1.92e14 on one 989.5 TFLOP/s GPU: 19.40%
    assert mfu(8e9, 12000, 1, 989.5e12, train=False).mfu_pct == pytest.approx(19.4037, rel=1e-4)
    # 2N + 4 L H S for inference with the shape
    assert mfu(8e9, 1, 1, 1e15, train=False, shape=MfuShape(32, 4096, 1000)).flops_per_token == 1.6e10 + 4 * 32 * 4096 * 1000
    # above 100% is impossible: an input error naming the MFU and the peak (issue 31: it was a verdict, exit 0)
    with pytest.raises(UsageError, match=r"MFU 4,851% is impossible: .* 1 x 989.5 TFLOP/s bf16 dense peak"):
        mfu(8e9, 1e6, 1, 989.5e12)
    assert mfu(8e9, 20_613, 1, 989.5e12).mfu_pct == pytest.approx(99.997, rel=1e-4)  # just below: judged
    assert mfu(1e9, 100_000, 1, 989.5e12).verdict == "ok"  # 6e14 / 9.895e14 = 60.6%


def test_mfu_above_100_pct_exits_2_naming_it(cli):
    # 6 x 8e9 x 30,000 / 989.5e12 = 145.5%: printed as "impossible" with exit 0 before issue 31
    code, out, err = cli("mfu", "--params", "8B", "--tokens-per-s", "30000", "--gpu", "H100 SXM")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "MFU 146% is impossible" in err and "989.5 TFLOP/s bf16 dense peak of the H100 SXM" in err
    code, out, err = cli("mfu", "--params", "8B", "--tokens-per-s", "30000", "--gpu", "H100 SXM", "--json")
    assert code == 2 and "impossible" in err


@pytest.mark.parametrize("args", [
    ["--params", "8B", "--tokens-per-s", "12000", "--gpus", "0"],
    ["--params", "8B", "--tokens-per-s", "0"],
    ["--params", "8B", "--tokens-per-s", "-5"],
    ["--params", "8B"],
    ["--params", "8B", "--tokens-per-s", "1k", "--train", "--infer"],
    ["--params", "8B", "--tokens-per-s", "1k", "--seq-len", "4096"],
    ["--params", "8", "--tokens-per-s", "1k"],
    ["--params", "8B", "--tokens-per-s", "1k", "--dtype", "fp8", "--gpu", "A100 SXM4 80GB"],
])
def test_mfu_bad_input_exits_2_with_one_line(cli, args):
    if "--gpu" not in args:
        args = args + ["--gpu", "H100 SXM"]
    code, out, err = cli("mfu", *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
