"""The guards of model/llm_scaling.py, called directly (the Python API is a public surface), at both sides
of each limit: the quantization group and scale width, the Scaling fields, the all-reduce defaults."""

from __future__ import annotations

import math

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.model.llm.roofline import AttentionShape
from gpuwhy.model.llm.scaling import Scaling, allreduce_time, bits_per_weight


def test_group_scales_add_their_bits_per_weight():
    # int4 with a 16-bit scale per 32 weights: 4 + 16/32 = 4.5 bits; a group of 1: 4 + 16 = 20
    assert bits_per_weight("int4", 32) == 4.5 and bits_per_weight("int4", 1) == 20.0
    assert bits_per_weight("int4", 32, scale_bits=8) == 4.25 and bits_per_weight("int4", 32, scale_bits=1e-9) == 4.0 + 1e-9 / 32
    assert bits_per_weight("int4", None) == 4.0


@pytest.mark.parametrize("group", [0, -32, True, 2.5, "32"])
def test_a_group_that_is_no_whole_number_of_weights_is_refused(group):
    with pytest.raises(UsageError, match=r"^--quant-group must be a whole number of weights per scale, at least 1, got "):
        bits_per_weight("int4", group)


@pytest.mark.parametrize("bits", [0.0, -8.0, math.nan, math.inf])
def test_a_scale_width_not_above_zero_is_refused(bits):
    with pytest.raises(UsageError, match=r"^--scale-bits must be greater than zero, got "):
        bits_per_weight("int4", 32, scale_bits=bits)


def test_scaling_limits_at_both_sides():
    assert Scaling(num_gpus=1).num_gpus == 1
    for bad in (0, True, 2.0):
        with pytest.raises(UsageError, match=r"^--num-gpus must be a whole number of GPUs, at least 1, got "):
            Scaling(num_gpus=bad)
    assert Scaling(active_params=1e-9).active_params == 1e-9  # just above zero is a count
    for bad in (0.0, -1.0, math.inf):
        with pytest.raises(UsageError, match=r"^--active-params must be greater than zero, got "):
            Scaling(active_params=bad)
    assert Scaling(bytes_per_param=8).bytes_per_param == 8  # 8 bytes (fp64) is the most
    for bad in (0.0, 8.000001, math.nan):
        with pytest.raises(UsageError, match=r"^--bytes-per-param must be above 0 and at most 8"):
            Scaling(bytes_per_param=bad)
    assert Scaling(num_gpus=2, allreduce_busbw_gbs=1e-9).allreduce_busbw_gbs == 1e-9


def test_allreduce_time_without_a_message_is_its_latency():
    shape = AttentionShape(layers=3, kv_heads=2, head_dim=4)
    assert allreduce_time(2, shape, 1e-5) == (6, pytest.approx(6e-5))  # no bytes given: latency only
    assert allreduce_time(2, shape, 1e-5, busbw_gbs=100.0) == (6, pytest.approx(6e-5))  # 0 bytes at any rate: 0 s
