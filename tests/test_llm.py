"""`gpuwhy llm`: the LLM inference roofline against the worked figures of issue 7.

The RTX 5070 figures (672 GB/s, 61.7 TFLOP/s fp16 dense, 493.9 fp4, 12 GB) are
the issue's, taken from the RTX 5070 spec sheet; the CLI tests read them from
the bundled sheet.
"""

from __future__ import annotations

import json
import math

import pytest

from conftest import run_cli
from gpuwhy.errors import SpecError, UsageError
from gpuwhy.model.llm import estimate as llm, dtypes as llm_dtypes, result as llm_result, roofline as llm_roofline
from gpuwhy.model.llm.estimate import estimate
from gpuwhy.model.llm.dtypes import compute_precision, parse_params
from gpuwhy.model.llm.roofline import (
    AttentionShape,
    LlmGpu,
    attention_flops_decode,
    attention_flops_prefill,
    batch_ridge,
    batch_ridge_with_kv,
    decode_step,
    kv_bytes_per_token,
    kv_cache,
    max_batch_fit,
    prefill,
)
from gpuwhy.model.llm.models import load_models, validate_model

RTX5070_PEAKS = {"fp32": 30.9, "fp16": 61.7, "bf16": 61.7, "fp8": 123.5, "fp4": 493.9}  # TFLOP/s dense
H200_PEAKS = {"fp32": 67.0, "fp16": 989.5, "bf16": 989.5, "fp8": 1979.0, "int8": 1979.0}


def rtx5070(weight_dtype: str = "fp16") -> LlmGpu:
    prec, note = compute_precision(weight_dtype, RTX5070_PEAKS)
    return LlmGpu("RTX 5070", 672e9, RTX5070_PEAKS[prec] * 1e12, prec, memory_bytes=12e9, precision_note=note)


# --- the worked figures -------------------------------------------------------------


def test_3b_fp16_on_rtx5070_is_memory_bound_at_112_tokens_per_s():
    s = decode_step(3e9, "fp16", rtx5070())
    assert s.weight_bytes == pytest.approx(6e9)  # 3e9 x 2 B
    assert s.t_memory_s == pytest.approx(8.93e-3, rel=1e-3)  # 6e9 / 672e9
    assert round(s.t_memory_s * 1e3, 1) == 8.9
    assert s.t_compute_s < 0.1e-3  # 6e9 FLOP / 61.7e12 = 97 us
    assert s.regime == "memory"
    assert round(s.bound_ratio) == 92
    assert round(s.tokens_per_s_per_seq) == 112  # 672e9 / 6e9
    sentence = estimate(3e9, "fp16", rtx5070()).ceiling
    assert "no kernel can beat 112 tokens/s" in sentence
    assert "without reading fewer bytes" in sentence


def test_batch_64_barely_changes_the_step_and_multiplies_throughput():
    one = decode_step(3e9, "fp16", rtx5070(), batch=1)
    b64 = decode_step(3e9, "fp16", rtx5070(), batch=64)
    assert b64.regime == "memory"
    assert b64.step_time_s / one.step_time_s < 1.01
    ratio = b64.tokens_per_s_total / one.tokens_per_s_total
    assert 63 <= ratio <= 64
    assert b64.tokens_per_s_per_seq == pytest.approx(one.tokens_per_s_per_seq, rel=0.01)


def test_batch_ridge_is_about_92_and_the_parameter_count_cancels():
    r = batch_ridge(61.7e12, 2.0, 672e9)
    assert round(r) == 92  # 61.7e12 x 2 / (2 x 672e9) = 91.8
    for params in (124e6, 3e9, 70e9):
        assert decode_step(params, "fp16", rtx5070(), batch=91).regime == "memory"
        assert decode_step(params, "fp16", rtx5070(), batch=93).regime == "compute"
    assert estimate(3e9, "fp16", rtx5070()).batch_ridge == pytest.approx(r)


@pytest.mark.parametrize("dtype", ["int4", "fp4"])
def test_4bit_weights_are_1_5_gb_and_the_ceiling_rises_4x(dtype):
    fp16 = decode_step(3e9, "fp16", rtx5070())
    q = decode_step(3e9, dtype, rtx5070(dtype))
    assert q.weight_bytes == pytest.approx(1.5e9)
    assert q.tokens_per_s_per_seq / fp16.tokens_per_s_per_seq == pytest.approx(4.0)
    assert round(q.tokens_per_s_per_seq) == 448
    assert rtx5070(dtype).precision == "fp4"


@pytest.mark.parametrize("params", [124e6, 124_439_808])
def test_gpt2_fp32_ceiling_about_1350_tokens_per_s(params):
    gpu = rtx5070("fp32")
    assert gpu.precision == "fp32"
    s = decode_step(params, "fp32", gpu)
    assert s.weight_bytes == pytest.approx(0.5e9, rel=0.01)  # 124e6 x 4 B = 0.496 GB
    assert s.t_memory_s == pytest.approx(0.74e-3, rel=0.01)
    assert s.tokens_per_s_per_seq == pytest.approx(1350, rel=0.01)
    assert s.regime == "memory"


# --- KV cache, attention, prefill -------------------------------------------------------------

LLAMA3_8B = AttentionShape(layers=32, kv_heads=8, head_dim=128, heads=32)


def test_kv_cache_per_token_and_per_sequence():
    assert kv_bytes_per_token(LLAMA3_8B, "fp16") == 131_072  # 2 x 32 x 8 x 128 x 2 B = 128 KiB
    assert kv_bytes_per_token(LLAMA3_8B, "fp8") == 65_536
    assert kv_bytes_per_token(AttentionShape(80, 8, 128, 64), "bf16") == 327_680  # Llama-3 70B
    assert kv_bytes_per_token(AttentionShape(12, 12, 64), "fp32") == 73_728  # GPT-2: 2 x 12 x 12 x 64 x 4 B
    kv = kv_cache(LLAMA3_8B, "fp16", 8192, batch=4)
    assert kv.bytes_per_seq == 2**30  # 8192 tokens x 128 KiB = 1 GiB
    assert kv.bytes_total == 4 * 2**30


def test_decode_step_counts_kv_read_and_attention():
    gpu = LlmGpu("H200", 4.8e12, 989.5e12, "bf16", memory_bytes=141e9)
    s = decode_step(8.03e9, "bf16", gpu, batch=16, shape=LLAMA3_8B, kv_dtype="bf16", context=4096)
    assert s.kv_read_bytes == 16 * 4096 * 131_072
    assert s.bytes == pytest.approx(8.03e9 * 2 + 16 * 4096 * 131_072)
    assert s.attention_flops == 16 * 4 * 32 * 32 * 128 * 4096
    assert s.flops == pytest.approx(2 * 8.03e9 * 16 + s.attention_flops)
    assert s.kv_cache_bytes == 16 * 4096 * 131_072
    assert s.fits_in_memory is True
    assert attention_flops_decode(LLAMA3_8B, 0) == 0


def test_largest_batch_that_fits_beside_the_weights():
    # Llama-3 8B bf16 on 141 GB: (141e9 - 16.06e9) / 1 GiB per 8192-token sequence = 116.4
    assert max_batch_fit(8_030_261_248 * 2, 2**30, 141e9) == 116
    assert max_batch_fit(20e9, 1e9, 12e9) == 0  # the weights alone do not fit
    with pytest.raises(UsageError, match="the KV cache per sequence must be greater than zero"):
        max_batch_fit(1e9, 0, 12e9)


def test_batch_ridge_with_kv_is_where_the_two_times_meet():
    gpu = LlmGpu("H200", 4.8e12, 989.5e12, "bf16", memory_bytes=141e9)
    mha = AttentionShape(layers=32, kv_heads=32, head_dim=128)  # no GQA: 4x the KV read
    r = batch_ridge_with_kv(8e9, 2.0, gpu, LLAMA3_8B, "bf16", 256)
    assert r > batch_ridge(gpu.peak_flops, 2.0, gpu.bandwidth)  # the KV read pushes the ridge out
    b = decode_step(8e9, "bf16", gpu, batch=int(round(r)), shape=LLAMA3_8B, kv_dtype="bf16", context=256)
    assert b.t_compute_s == pytest.approx(b.t_memory_s, rel=0.01)
    assert batch_ridge_with_kv(8e9, 2.0, gpu, mha, "bf16", 8192) == math.inf


def test_prefill_is_compute_bound_and_gives_time_to_first_token():
    p = prefill(3e9, "fp16", rtx5070(), prompt_len=512)
    assert p.flops == pytest.approx(2 * 3e9 * 512)  # 3.07 TFLOP
    assert p.t_compute_s == pytest.approx(3.072e12 / 61.7e12)  # 49.8 ms
    assert p.regime == "compute"
    assert p.ttft_s == pytest.approx(p.t_compute_s)
    assert attention_flops_prefill(LLAMA3_8B, 1) == 4 * 32 * 32 * 128  # one token attends to itself
    ps = prefill(8e9, "fp16", rtx5070(), prompt_len=1024, shape=LLAMA3_8B)
    assert ps.attention_flops == 2 * 32 * 32 * 128 * 1024 * 1025
    assert ps.bytes == pytest.approx(8e9 * 2 + 1024 * 131_072)


def test_estimate_context_defaults_fit_and_sweep():
    e = estimate(3e9, "fp16", rtx5070(), batch=4, shape=LLAMA3_8B, prompt_len=1000, sweep=True)
    assert e.decode.context == 1000  # the context defaults to the prompt length
    assert e.fit_seq_len == 1000
    assert e.max_batch == max_batch_fit(6e9, 1000 * 131_072, 12e9)
    batches = [r.batch for r in e.sweep]
    assert batches == sorted(batches)
    assert {1, 8, 64, 256, 92, 4, e.max_batch} <= set(batches)
    assert e.prefill is not None and e.prefill.prompt_len == 1000
    big = estimate(70e9, "fp16", rtx5070())
    assert any("do not fit" in w for w in big.warnings)


def test_peak_choice_per_weight_dtype():
    assert compute_precision("fp16", RTX5070_PEAKS) == ("fp16", None)
    assert compute_precision("bf16", RTX5070_PEAKS) == ("bf16", None)
    assert compute_precision("fp8", RTX5070_PEAKS) == ("fp8", None)
    assert compute_precision("fp32", RTX5070_PEAKS) == ("fp32", None)
    assert compute_precision("int8", H200_PEAKS) == ("int8", None)
    assert compute_precision("fp4", RTX5070_PEAKS) == ("fp4", None)
    prec, note = compute_precision("int4", H200_PEAKS)  # no fp4 on Hopper: dequantized to fp16
    assert prec == "fp16" and "dequantized" in note
    prec, note = compute_precision("int8", RTX5070_PEAKS)
    assert prec == "fp16" and "dequantized" in note
    with pytest.raises(UsageError, match="unknown --weight-dtype \'fp12\'"):
        compute_precision("fp12", RTX5070_PEAKS)


@pytest.mark.parametrize(
    "text, value",
    [("3B", 3e9), ("3b", 3e9), ("124M", 124e6), ("8e9", 8e9), ("70.6B", 70.6e9), ("1.5G", 1.5e9), ("1T", 1e12), (" 7B ", 7e9)],
)
def test_parse_params_reads_b_as_billion(text, value):
    assert parse_params(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "text, msg",
    [
        ("", "--params '' is not a parameter count; give e.g. 3B, 124M or 8e9"),
        ("3", r"--params '3' is 3 parameters, too few for an LLM; did you mean 3B \(billion\)\?"),
        ("three", "--params 'three' is not a parameter count"),
        ("3X", "--params '3X' has an unknown suffix 'X'; use k, M, B"),
        ("3GB", "--params '3GB' has an unknown suffix 'GB'"),
        ("-3B", "--params '-3B' must be a finite number greater than zero"),
        ("0", "--params '0' must be a finite number greater than zero"),
        ("nan", "--params 'nan' is not a parameter count"),
        ("inf", "--params 'inf' is not a parameter count"),
        ("1e20", r"--params '1e20' is 100e18 parameters, more than 1e14"),
    ],
)
def test_parse_params_rejects_bad_input(text, msg):
    with pytest.raises(UsageError, match=msg) as exc:
        parse_params(text)
    assert "\n" not in str(exc.value)


# --- model shapes -----------------------------------------------------------------------------


def test_bundled_models_load_and_match():
    lib = load_models()
    assert len(lib) >= 4
    assert lib.match("gpt2").params == 124_439_808
    assert lib.match("llama-3-8b").params == 8_030_261_248
    assert lib.match("Llama-3 70B").attention().kv_heads == 8
    m = lib.match("llama-3.2-3b")
    assert (m.layers, m.attention_heads, m.kv_heads, m.head_dim, m.max_context) == (28, 24, 8, 128, 131072)
    for model in lib.models:
        assert model.source.startswith("https://")
        assert model.hidden_size == model.attention_heads * model.head_dim
    with pytest.raises(UsageError, match="--model \'llama\' is ambiguous: it matches Llama-3 70B, Llama-3 8B, Llama-3.2 3B"):
        lib.match("llama")  # ambiguous
    with pytest.raises(UsageError, match="unknown model \'nope\'; known: "):
        lib.match("nope")


GOOD = {
    "name": "Tiny 1M",
    "params": 1_000_000,
    "layers": 2,
    "hidden_size": 64,
    "attention_heads": 4,
    "kv_heads": 2,
    "head_dim": 16,
    "vocab_size": 1000,
    "max_context": 256,
    "source": "https://example.org/config.json",
}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"params": "8B"}, "params"),
        ({"layers": 0}, "layers"),
        ({"kv_heads": 3}, "kv_heads"),
        ({"head_dim": 1.5}, "head_dim"),
        ({"source": "config.json"}, "source"),
        ({"dtype": "fp12"}, "dtype"),
        ({"heads": 4}, "heads"),
        ({"layers": None}, "layers"),
    ],
)
def test_malformed_model_names_file_and_field(change, field):
    data = {**GOOD, **change}
    if change.get("layers", 1) is None:
        del data["layers"]
    with pytest.raises(SpecError) as exc:
        validate_model(data, "my/tiny.yaml")
    msg = str(exc.value)
    assert msg.startswith("my/tiny.yaml:") and repr(field) in msg and "\n" not in msg


def _write_model(folder, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(text)


def test_user_models_via_flag_and_env(tmp_path):
    import yaml

    _write_model(tmp_path / "m", yaml.safe_dump(GOOD))
    code = run_cli("llm", "--model", "tiny", "--models", str(tmp_path / "m"), "--gpu", "h200", "--json")
    assert code.returncode == 0, code.stderr
    doc = json.loads(code.stdout)
    assert doc["model"] == "Tiny 1M" and doc["shape"]["kv_heads"] == 2
    env = run_cli("llm", "--model", "tiny 1m", "--gpu", "h200", "--json", env={"GPUWHY_MODELS": str(tmp_path / "m")})
    assert env.returncode == 0, env.stderr
    _write_model(tmp_path / "bad", yaml.safe_dump({**GOOD, "kv_heads": "two"}))
    bad = run_cli("llm", "--model", "tiny", "--models", str(tmp_path / "bad"), "--gpu", "h200")
    assert bad.returncode == 2 and bad.stdout == ""
    line = bad.stderr.strip()
    assert "\n" not in line and "tiny.yaml" in line and "'kv_heads'" in line


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_3b_on_rtx5070_json():
    r = run_cli("llm", "--params", "3B", "--gpu", "rtx 5070", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "llm"
    assert doc["gpu"]["memory_bandwidth_gbs"] == 672 and doc["gpu"]["peak_tflops"] == 61.7
    d = doc["decode"]
    assert doc["weight_bytes"] == 6e9
    assert round(d["t_memory_s"] * 1e3, 1) == 8.9 and d["t_compute_s"] < 1e-4
    assert round(d["bound_ratio"]) == 92 and d["regime"] == "memory"
    assert round(d["tokens_per_s_per_seq"]) == 112
    assert round(doc["batch_ridge"]) == 92
    assert "112 tokens/s" in doc["ceiling"]
    assert doc["engine_efficiency"] == [0.6, 0.85] and doc["leaves_out"]


def test_cli_human_output_and_sweep():
    r = run_cli("llm", "--params", "3B", "--gpu", "rtx 5070", "--sweep-batch", env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for needle in ("6 GB", "8.93 ms", "97.2 us", "92x", "112 tokens/s", "batch ridge", "batch sweep", "60-85%", "activations"):
        assert needle in out, needle
    j = json.loads(run_cli("llm", "--params", "3B", "--gpu", "rtx 5070", "--sweep-batch", "--json").stdout)
    rows = {row["batch"]: row for row in j["sweep"]}
    assert {1, 8, 64, 92, 256} <= set(rows)
    assert rows[64]["step_time_s"] == pytest.approx(rows[1]["step_time_s"])
    assert rows[256]["regime"] == "compute"


def test_cli_4bit_gpt2_model_and_prefill():
    q = json.loads(run_cli("llm", "--params", "3B", "--weight-dtype", "int4", "--gpu", "rtx 5070", "--json").stdout)
    assert q["weight_bytes"] == 1.5e9 and round(q["decode"]["tokens_per_s_per_seq"]) == 448
    assert q["gpu"]["precision"] == "fp4" and any("int4" in n for n in q["notes"])
    g = json.loads(run_cli("llm", "--model", "gpt2", "--gpu", "rtx 5070", "--json").stdout)
    assert g["weight_dtype"] == "fp32"  # GPT-2 is published in fp32
    assert g["decode"]["tokens_per_s_per_seq"] == pytest.approx(1350, rel=0.01)
    p = json.loads(
        run_cli("llm", "--model", "llama-3.2-3b", "--gpu", "rtx 5070", "--prompt-len", "512", "--context", "4096", "--json").stdout
    )
    assert p["kv_cache"]["bytes_per_token"] == 2 * 28 * 8 * 128 * 2
    assert p["decode"]["kv_read_bytes"] == 4096 * 2 * 28 * 8 * 128 * 2
    assert p["prefill"]["ttft_s"] > 0 and p["prefill"]["regime"] == "compute"
    assert p["max_batch"] == int((12e9 - 3_212_749_824 * 2) // (4096 * 114_688))


@pytest.mark.parametrize(
    "args",
    [
        ["--gpu", "rtx 5070"],  # no params
        ["--params", "3B", "--batch", "-3", "--gpu", "rtx 5070"],
        ["--params", "3B", "--batch", "0", "--gpu", "rtx 5070"],
        ["--params", "3B", "--weight-dtype", "fp12", "--gpu", "rtx 5070"],
        ["--params", "3B", "--kv-dtype", "fp12", "--gpu", "rtx 5070"],
        ["--model", "nope", "--gpu", "rtx 5070"],
        ["--params", "3", "--gpu", "rtx 5070"],
        ["--params", "lots", "--gpu", "rtx 5070"],
        ["--params", "3B", "--layers", "28", "--gpu", "rtx 5070"],
        ["--model", "gpt2", "--layers", "12", "--kv-heads", "12", "--head-dim", "64", "--gpu", "rtx 5070"],
        ["--model", "gpt2", "--context", "4096", "--gpu", "rtx 5070"],
        ["--params", "3B", "--measured"],
        ["--params", "3B", "--gpu", "no such gpu"],
    ],
)
def test_cli_bad_input_exit_2_one_line(args, cli):
    code, out, err = cli("llm", *args)
    assert code == 2, err
    assert out == ""
    assert err.startswith("gpuwhy: error:") and err.count("\n") == 1


@pytest.mark.parametrize("args", [[], ["--params", "3B", "--batch", "-3"], ["--params", "3B", "--weight-dtype", "q5"], ["--model", "nope"]])
def test_cli_bad_input_subprocess(args):
    r = run_cli("llm", *args, "--gpu", "rtx 5070")
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_cli_through_typer():
    from typer.testing import CliRunner

    from gpuwhy.cli import register  # noqa: F401
    from gpuwhy.cli.app import app

    runner = CliRunner()
    ok = runner.invoke(app, ["llm", "--params", "3B", "--gpu", "rtx 5070", "--json"])
    assert ok.exit_code == 0, ok.output
    assert round(json.loads(ok.stdout)["decode"]["tokens_per_s_per_seq"]) == 112
    bad = runner.invoke(app, ["llm", "--params", "3B", "--batch", "-3", "--gpu", "rtx 5070"])
    assert isinstance(bad.exception, UsageError) and bad.exception.exit_code == 2


def test_llm_module_is_pure():
    import inspect

    for mod in (llm, llm_dtypes, llm_result, llm_roofline):  # llm.py before it was split
        src = inspect.getsource(mod)
        for word in ("open(", "print(", "import yaml", "pynvml", "cuda"):
            assert word not in src
