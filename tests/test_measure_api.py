"""gpuwhy.api.measure without a GPU: the error paths and the byte/dtype logic (fake arrays).

The GPU test at the end runs only where there is a GPU and PyTorch.
"""

from __future__ import annotations

import pytest

import gpuwhy
from conftest import gpu_available
from gpuwhy.errors import NoDeviceError, UsageError
from gpuwhy.api.measure import MeasuredClassification, bytes_lower_bound, infer_dtype, is_torch_tensor


class FakeArray:
    """Just enough of an array: nbytes, dtype and a data pointer."""

    def __init__(self, nbytes: int, ptr: int, dtype: str = "float32"):
        self.nbytes = nbytes
        self._ptr = ptr
        self.dtype = dtype

    def data_ptr(self) -> int:
        return self._ptr


class FakeNumpyLike:
    def __init__(self, nbytes: int, ptr: int):
        self.nbytes = nbytes
        self.__array_interface__ = {"data": (ptr, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        self.dtype = "uint8"


def test_bytes_are_inputs_plus_outputs():
    a, b, out = FakeArray(400, 1), FakeArray(400, 2), FakeArray(400, 3)
    assert bytes_lower_bound((a, b), {}, out) == (1200.0, 2, 1)


def test_an_output_that_is_an_input_counts_once():
    a, b = FakeArray(400, 1), FakeArray(400, 2)
    same_as_a = FakeArray(400, 1)  # an in-place op returns its input
    assert bytes_lower_bound((a, b), {}, same_as_a) == (800.0, 2, 0)


def test_nested_arguments_kwargs_and_non_arrays():
    a, b, c = FakeArray(100, 1), FakeArray(200, 2), FakeNumpyLike(50, 3)
    got = bytes_lower_bound(([a, {"x": b}], 3.0, "text"), {"out": c, "alpha": 2}, (None, [a]))
    assert got == (350.0, 3, 0)


def test_dtype_of_the_largest_array():
    small, big = FakeArray(10, 1, "torch.float32"), FakeArray(1000, 2, "torch.bfloat16")
    assert infer_dtype((small, big), {}) == "bf16"
    assert infer_dtype((FakeArray(8, 3, "float64"),), {}) == "fp64"
    assert infer_dtype((FakeArray(8, 3, "complex64"),), {}) is None
    assert infer_dtype((1, 2), {}) is None


def test_fakes_are_not_torch_tensors():
    assert not is_torch_tensor(FakeArray(1, 1))


def test_non_torch_callable_needs_flops():
    with pytest.raises(UsageError, match="pass flops=N"):
        gpuwhy.measure(lambda x: x, FakeArray(400, 1))


def test_no_arrays_and_no_bytes():
    with pytest.raises(UsageError, match="pass bytes=N"):
        gpuwhy.measure(lambda: None, flops=1e9)


def test_bad_numbers_and_non_callables():
    with pytest.raises(UsageError, match="flops \'-5\' must be greater than zero"):
        gpuwhy.measure(lambda: None, flops="-5", bytes=1e9)
    with pytest.raises(UsageError, match="needs a callable"):
        gpuwhy.measure(42, flops=1, bytes=1)


@pytest.mark.skipif(gpu_available()[0], reason="a GPU is present: the no-GPU error path does not apply")
def test_no_gpu_is_no_device_error():
    with pytest.raises(NoDeviceError, match="needs a GPU"):
        gpuwhy.measure(lambda a: None, FakeArray(4, 1), flops=1e9)
    # gpuwhy.measure stays the function after the gpuwhy.api.measure submodule was imported.
    with pytest.raises(NoDeviceError, match="gpuwhy.measure needs a GPU and found none"):
        gpuwhy.measure(lambda: None, flops=1e9, bytes=1e9)


def test_result_type_is_a_classification():
    from gpuwhy.api.classify import Classification

    assert issubclass(MeasuredClassification, Classification)


def _torch_cuda():
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


@pytest.mark.gpu
def test_measure_torch_add_on_the_gpu():
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("needs PyTorch with CUDA")
    n = 1 << 24
    a = torch.randn(n, device="cuda")
    b = torch.randn_like(a)
    r = gpuwhy.measure(torch.add, a, b)
    assert r.verdict.workload.flops == n  # one add per element
    assert r.verdict.workload.bytes == 12 * n  # a, b, out
    assert r.bytes_is_lower_bound and "lower bound" in r.bytes_source
    assert r.verdict.regime in ("memory", "overhead")
    assert r.measurement.reps >= 10 and r.time_s > 0
    assert r.timer == "torch.cuda.Event" and r.l2_flush_bytes > 0
    assert "memory" in str(r) or "overhead" in str(r)
    # 12 x 2^24 B = 201 MB: at least half the sheet's DRAM bandwidth (the H200 moved 2^28 elements at 91% of it)
    assert r.verdict.achieved_bandwidth >= 0.5 * r.verdict.ceilings.bandwidth, r.verdict.achieved_bandwidth


@pytest.mark.gpu
def test_measure_bf16_matmul_is_compute_bound():
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("needs PyTorch with CUDA")
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    r = gpuwhy.measure(torch.matmul, x, x)
    assert r.dtype == "bf16" and r.verdict.workload.flops == 2 * 4096**3
    assert r.verdict.regime == "compute"
    # cuBLAS at half the dense bf16 peak or more (the H200: 8192^3 at 709 TFLOP/s, 72% of 989.5)
    assert r.verdict.compute_sol_pct >= 50.0, r.verdict.compute_sol_pct


class FakeTensor:
    """Just enough of a CUDA tensor for measure's byte and dtype logic (is_torch_tensor is patched)."""

    def __init__(self, numel: int, ptr: int, dtype: str = "torch.float32", size: int = 4):
        self._numel, self._ptr, self._size = numel, ptr, size
        self.dtype = dtype

    def numel(self) -> int:
        return self._numel

    def element_size(self) -> int:
        return self._size

    def data_ptr(self) -> int:
        return self._ptr


def test_a_torch_call_with_no_flops_counted_is_judged_by_its_bytes(monkeypatch):
    """Issue 31: gpuwhy.measure(torch.nn.functional.layer_norm, x, (8192,)) raised "no FLOPs were
    counted ... pass flops=N" (FlopCounterMode has no layer_norm formula and it is no pointwise op).
    Judged against the memory roofs instead, saying the FLOPs were not counted. The GPU parts (the
    device, the L2 plan, the timing, the FLOP counter) are faked; the judging is the real one."""
    import gpuwhy.api.measure as M
    from gpuwhy.engine.timing import Measurement
    from gpuwhy.model.roofline.classify import FLOPS_NOT_COUNTED

    x, out = FakeTensor(4096 * 8192, 1), FakeTensor(4096 * 8192, 2)  # 128 MiB in, 128 MiB out (fp32)
    t = 2 * 4096 * 8192 * 4 / (0.8 * 3350e9)  # 80% of the H100 SXM's DRAM roof
    monkeypatch.setattr(M, "is_torch_tensor", lambda v: isinstance(v, FakeTensor))
    monkeypatch.setattr(M, "_device_index", lambda args, kwargs, is_torch: 0)
    monkeypatch.setattr(M, "_count_flops_torch", lambda call: (0.0, "torch.utils.flop_counter counted none", out, False))
    monkeypatch.setattr(M, "_l2_plan", lambda index, is_torch, sheet, ws, flush, notes: (None, 0, None))
    monkeypatch.setattr(M, "_timed", lambda call, index, is_torch, warmup, reps, flush: (
        Measurement(t, t, t, t, 0.0, 10, 3), out, "torch.cuda.Event"))

    def layer_norm(x, shape):  # never called: the counter and the timing are faked
        raise AssertionError("called")

    r = gpuwhy.measure(layer_norm, x, (8192,), gpu="H100 SXM")
    v = r.verdict
    assert v.workload.flops is None and not v.flops_counted
    assert v.regime == "memory" and v.memory_sol_pct == pytest.approx(80.0, rel=1e-6) and v.sol_pct == pytest.approx(80.0, rel=1e-6)
    assert v.arithmetic_intensity is None and v.achieved_flops is None and v.compute_sol_pct is None
    assert FLOPS_NOT_COUNTED in v.warnings and "not counted" in r.flops_source
    assert "FLOPs not counted (memory roofs only)" in str(r) and "80% of the roof" in str(r)
    d = r.to_dict()
    assert d["workload"]["flops"] is None and d["t_compute_s"] is None and d["arithmetic_intensity"] is None
    assert d["achieved_tflops"] is None and d["attainable_tflops"] is None and d["regime"] == "memory"
    assert not any("Reuse data" in h for h in d["remedies"]["helps"])  # no compute roof to reuse toward


def test_a_classification_with_no_flops_renders_and_validates(capsys):
    import json

    from gpuwhy.api.classify import run_classify
    from gpuwhy.model.roofline.classify import Workload
    from gpuwhy.render.jsonout import document
    from gpuwhy.render.tables import render_classification

    from json_documents import SCHEMAS
    from schema_check import Validator

    c = run_classify(Workload(flops=None, bytes=2**28, time_s=2**28 / 2.68e12, name="layer_norm"), "H100 SXM")
    render_classification(c)
    text = capsys.readouterr().out
    assert "FLOPs not counted" in text and "of the memory roof (the compute roof not checked)" in text
    assert "n/a FLOP" not in text
    Validator(SCHEMAS).validate(json.loads(json.dumps(document("classify", c.to_dict()))), "classify.schema.json")
