"""The LLM model's extensions: mixture of experts (--active-params), several GPUs (--num-gpus) and
quantization scales (--quant-group, --bytes-per-param). Arithmetic a reader can redo (docs/compare.md).

Figures: H100 SXM 3350 GB/s, 989.5 TFLOP/s bf16/fp16 dense, 80 GB, from the bundled sheet.
Llama-3 70B: 70,553,706,496 params, 80 layers, 8 KV heads of 128 (KV 327,680 B per token in bf16).
"""

import json

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.model.llm import estimate as L
from gpuwhy.model.llm.estimate import scaled_estimate
from gpuwhy.model.llm.models import load_model
from gpuwhy.model.llm.roofline import gpu_from_sheet
from gpuwhy.model.llm.scaling import Scaling, bits_per_weight, effective_bytes_per_weight, kv_split
from gpuwhy.specs import library

H100 = library().match("H100 SXM")
BW, PEAK, MEM = 3350e9, 989.5e12, 80e9
LLAMA70 = load_model("llama-3-70b")


def gpu(dtype="bf16"):
    return gpu_from_sheet(H100, dtype)


@pytest.mark.parametrize(
    "dtype,group,scale,bits",
    [
        ("int4", 32, 16, 4.5),  # 4 + 16/32: GGUF Q4_0, GPTQ/AWQ with fp16 scales per 32
        ("fp4", 32, 8, 4.25),  # 4 + 8/32: OCP MXFP4 (an E8M0 scale per 32)
        ("fp4", 16, 8, 4.5),  # 4 + 8/16: NVFP4 (an fp8 scale per 16)
        ("int8", 128, 16, 8.125),  # 8 + 16/128
        ("int4", None, 16, 4.0),  # no group: the scales are left out, as llm.py does
    ],
)
def test_bits_per_weight_with_scales(dtype, group, scale, bits):
    assert bits_per_weight(dtype, group, scale) == pytest.approx(bits)


def test_bytes_per_param_override_and_conflicts():
    assert effective_bytes_per_weight("int4", Scaling(bytes_per_param=0.5625))[0] == 0.5625
    with pytest.raises(UsageError, match="--bytes-per-param sets"):
        effective_bytes_per_weight("int4", Scaling(bytes_per_param=0.5625, quant_group=32))
    with pytest.raises(UsageError, match="quantized weights"):
        bits_per_weight("fp16", 32)
    for bad, msg in (
        (dict(num_gpus=0), "--num-gpus must be a whole number of GPUs, at least 1, got 0"),
        (dict(active_params=-1.0), "--active-params must be greater than zero, got -1.0"),
        (dict(bytes_per_param=0.0), r"--bytes-per-param must be above 0 and at most 8 \(bytes per weight, e.g. 0.5625\), got 0.0"),
        (dict(bytes_per_param=9.0), "--bytes-per-param must be above 0 and at most 8 .*got 9.0"),
        (dict(allreduce_latency_s=-1.0), "--allreduce-latency must be zero or more seconds, got -1.0"),
    ):
        with pytest.raises(UsageError, match=msg):
            Scaling(**bad)


def test_default_scaling_equals_llm_estimate():
    kw = dict(batch=4, shape=LLAMA70.attention(), context=100, prompt_len=50, sweep=True)
    a = L.estimate(8e9, "fp16", gpu("fp16"), **kw).to_dict()
    b = scaled_estimate(8e9, "fp16", gpu("fp16"), Scaling(), **kw).estimate.to_dict()
    a.pop("leaves_out"), b.pop("leaves_out")
    assert a == b


def test_active_params_fit_all_weights_read_only_active_ones():
    # 46.7B params, 12.9B active, fp16, batch 1: fit 46.7e9 x 2 = 93.4 GB (more than 80 GB: a warning);
    # read 12.9e9 x 2 = 25.8 GB per step -> 25.8e9 / 3350e9 = 7.701 ms -> 129.8 tokens/s; FLOPs 2 x 12.9e9.
    e = scaled_estimate(46.7e9, "fp16", gpu("fp16"), Scaling(active_params=12.9e9))
    d = e.estimate.decode
    assert e.estimate.weight_bytes == pytest.approx(93.4e9)
    assert d.weight_bytes == pytest.approx(25.8e9)
    assert d.matmul_flops == pytest.approx(2 * 12.9e9)
    assert d.step_time_s == pytest.approx(25.8e9 / BW)
    assert d.tokens_per_s_per_seq == pytest.approx(BW / 25.8e9)
    assert round(d.tokens_per_s_per_seq, 1) == 129.8
    assert any("do not fit" in w for w in e.estimate.warnings)
    # The dense model of the same size reads all 93.4 GB: 46.7 / 12.9 = 3.62x slower.
    dense = scaled_estimate(46.7e9, "fp16", gpu("fp16"), Scaling())
    assert dense.estimate.decode.step_time_s / d.step_time_s == pytest.approx(46.7 / 12.9)


def test_active_params_at_batch_8_bound_both_ways():
    # Batch 8: at least the active 25.8 GB (all tokens on the same experts), at most min(46.7B, 8 x 12.9B) x 2 = 93.4 GB.
    # Upper end: t_memory 93.4e9 / 3350e9 = 27.88 ms > t_compute 2 x 12.9e9 x 8 / 989.5e12 = 0.209 ms -> 8 / 27.88 ms = 286.9 tokens/s.
    e = scaled_estimate(46.7e9, "fp16", gpu("fp16"), Scaling(active_params=12.9e9), batch=8)
    s = e.scaling
    assert s.weight_read_bytes_per_step == pytest.approx(25.8e9)
    assert s.weight_read_bytes_per_step_max == pytest.approx(93.4e9)
    assert s.tokens_per_s_total == pytest.approx(8 * BW / 25.8e9)
    assert s.tokens_per_s_total_low == pytest.approx(8 * BW / 93.4e9)
    # Batch ridge 989.5e12 x 2 / (2 x 3350e9) = 295.4 with shared experts; x 46.7/12.9 once spread.
    assert e.estimate.batch_ridge == pytest.approx(PEAK / BW)
    assert s.batch_ridge_spread == pytest.approx(PEAK / BW * 46.7 / 12.9)


def test_num_gpus_split_weights_and_bandwidth_with_allreduce_allowance():
    # Llama-3 70B bf16 on 4 x H100 SXM, batch 1, context 1024:
    # bytes = 70,553,706,496 x 2 + 1024 x 327,680 = 141,107,412,992 + 335,544,320 = 141,442,957,312
    # t_memory = that / (4 x 3350e9) = 10.555 ms; allowance 2 x 80 layers x 10 us = 1.6 ms; step 12.155 ms -> 82.27 tokens/s
    e = scaled_estimate(LLAMA70.params, "bf16", gpu(), Scaling(num_gpus=4), shape=LLAMA70.attention(), context=1024)
    d, s = e.estimate.decode, e.scaling
    weights = 70_553_706_496 * 2
    kv = 1024 * 327_680
    assert d.bytes == weights + kv
    assert d.t_memory_s == pytest.approx((weights + kv) / (4 * BW))
    assert s.allreduces_per_step == 160 and s.allreduce_time_s == pytest.approx(1.6e-3)
    assert d.step_time_s == pytest.approx((weights + kv) / (4 * BW) + 1.6e-3)
    assert round(d.tokens_per_s_per_seq, 2) == 82.27
    assert s.weight_bytes_per_gpu == pytest.approx(weights / 4)
    assert e.estimate.gpu.name == "4 x H100 SXM" and e.estimate.gpu.memory_bytes == 4 * MEM
    assert e.estimate.warnings == ()  # 141 GB fits in 4 x 80 GB
    # On one GPU the weights alone do not fit.
    one = scaled_estimate(LLAMA70.params, "bf16", gpu(), Scaling(num_gpus=1, bytes_per_param=2.0), shape=LLAMA70.attention(), context=1024)
    assert any("do not fit" in w for w in one.estimate.warnings)
    # Largest batch at 1024 tokens: floor((320e9 - 141.107e9) / 335,544,320) = 533.
    assert e.estimate.max_batch == (4 * 80_000_000_000 - weights) // kv


def test_num_gpus_allreduce_latency_is_an_input_and_needs_the_shape():
    shape = LLAMA70.attention()
    e = scaled_estimate(LLAMA70.params, "bf16", gpu(), Scaling(num_gpus=2, allreduce_latency_s=0.0), shape=shape)
    assert e.estimate.decode.step_time_s == pytest.approx(LLAMA70.params * 2 / (2 * BW))
    e = scaled_estimate(LLAMA70.params, "bf16", gpu(), Scaling(num_gpus=2, allreduce_latency_s=5e-6), shape=shape)
    assert e.scaling.allreduce_time_s == pytest.approx(2 * 80 * 5e-6)
    no_shape = scaled_estimate(8e9, "bf16", gpu(), Scaling(num_gpus=2))
    assert no_shape.scaling.allreduce_time_s == 0 and any("all-reduce allowance" in w for w in no_shape.estimate.warnings)


def test_kv_cache_splits_over_at_most_kv_heads_gpus():
    # 16 GPUs but 8 KV heads: each head lives on 2 GPUs, so the group holds (and reads) the KV cache twice.
    shape = LLAMA70.attention()
    assert kv_split(4, shape) == 4 and kv_split(16, shape) == 8
    e = scaled_estimate(LLAMA70.params, "bf16", gpu(), Scaling(num_gpus=16), shape=shape, context=1000)
    assert e.estimate.decode.kv_read_bytes == pytest.approx(2 * 1000 * 327_680)


def test_quantized_size_with_scales():
    # int4 + a 16-bit scale per 32: 0.5625 B per weight; 8e9 x 0.5625 = 4.5 GB; read per step the same -> 3350e9 / 4.5e9 = 744 tokens/s.
    e = scaled_estimate(8e9, "int4", gpu("int4"), Scaling(quant_group=32))
    assert e.estimate.bytes_per_weight == 0.5625 and e.estimate.weight_bytes == pytest.approx(4.5e9)
    assert e.estimate.decode.tokens_per_s_per_seq == pytest.approx(BW / 4.5e9)
    same = scaled_estimate(8e9, "int4", gpu("int4"), Scaling(bytes_per_param=0.5625))
    assert same.estimate.decode.step_time_s == e.estimate.decode.step_time_s


def test_active_params_above_params_is_refused():
    with pytest.raises(UsageError, match="--active-params"):
        scaled_estimate(8e9, "fp16", gpu("fp16"), Scaling(active_params=9e9))


# --- `gpuwhy llm` with the new options -----------------------------------------


def test_cli_llm_active_params_and_num_gpus_json(cli):
    code, out, err = cli("llm", "--model", "llama-3-70b", "--gpu", "H100 SXM", "--num-gpus", "4", "--context", "1024", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "llm" and doc["scaling"]["num_gpus"] == 4
    assert doc["scaling"]["allreduce_time_s"] == pytest.approx(1.6e-3)
    assert round(doc["decode"]["tokens_per_s_per_seq"], 2) == 82.27
    assert any("2 per layer x 80 layers x 10 us = 1.6 ms" in line for line in doc["scaling"]["lines"])
    code, out, err = cli("llm", "--params", "46.7B", "--active-params", "12.9B", "--gpu", "H100 SXM", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["weight_bytes"] == pytest.approx(93.4e9) and doc["decode"]["weight_bytes"] == pytest.approx(25.8e9)


def test_cli_llm_quant_group_human_output(cli):
    code, out, err = cli("llm", "--params", "8B", "--weight-dtype", "int4", "--quant-group", "32", "--gpu", "H100 SXM")
    assert code == 0, err
    assert "4 + 16/32 = 4.5 bits = 0.5625 B per weight" in out


def test_cli_llm_without_new_options_is_unchanged(cli):
    code, out, err = cli("llm", "--params", "3B", "--gpu", "rtx 5070", "--json")
    assert code == 0, err
    assert "scaling" not in json.loads(out)


BAD = [
    (["--params", "8B", "--num-gpus", "0"], "--num-gpus"),
    (["--params", "8B", "--num-gpus", "1.5"], "--num-gpus"),
    (["--params", "8B", "--active-params", "100B"], "--active-params"),
    (["--params", "8B", "--active-params", "-1B"], "--active-params"),
    (["--params", "8B", "--quant-group", "32"], "quantized weights"),
    (["--params", "8B", "--weight-dtype", "int4", "--scale-bits", "8"], "--scale-bits needs --quant-group"),
    (["--params", "8B", "--bytes-per-param", "0"], "--bytes-per-param"),
    (["--params", "8B", "--num-gpus", "2", "--allreduce-latency", "fast"], "--allreduce-latency"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_cli_bad_input_exit_2_one_line(args, needle, cli):
    code, out, err = cli("llm", *args, "--gpu", "H100 SXM")
    assert code == 2, (out, err)
    assert out == "" and err.count("\n") == 1 and needle in err, err


def test_module_is_pure():
    import inspect

    from gpuwhy.model.llm import scaling as mod

    src = inspect.getsource(mod)
    for word in ("open(", "print(", "import yaml", "pynvml", "cuda.bindings"):
        assert word not in src
