"""`gpuwhy bench` on a real GPU: correctness at awkward sizes, a short sweep, launch
overhead, errors and memory hygiene. Skipped where there is no GPU (conftest.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import run_cli

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ctx():
    from gpuwhy.engine.context import open_device

    with open_device(None) as c:
        yield c


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_every_memory_kernel_is_correct_at_awkward_sizes(ctx, dtype):
    from gpuwhy.bench.memory import ALL_CASES, CHECK_SIZES, MemoryBench

    bench = MemoryBench(ctx, dtype)
    rng = np.random.default_rng()
    sizes = (*CHECK_SIZES, 2, 3, 5, 4096 + 3, 3 * 2**20 + 1)
    for case in ALL_CASES:
        check = bench.check(case, sizes, rng)
        assert check.sizes == sizes


def test_a_broken_result_is_caught(ctx):
    """The check compares what the GPU wrote: corrupt the reference and it must fail."""
    from gpuwhy.bench.memory import CopyCase, MemoryBench
    from gpuwhy.errors import MeasurementError

    class OffByOne(CopyCase):
        def verify(self, inputs, outputs, value):
            return super().verify([np.roll(inputs[0], 1)], outputs, value)

    with pytest.raises(MeasurementError, match="wrong result"):
        MemoryBench(ctx, "fp32").check(OffByOne("vec16"), (1000,))


def test_short_sweep_shows_the_regimes(ctx):
    from gpuwhy.bench.memory import MemoryBench, select_cases
    from gpuwhy.bench.results import REGIME_DRAM, REGIME_L2, sustained_dram

    bench = MemoryBench(ctx, "fp32")
    l2 = ctx.info.l2_bytes
    big = 1 << max(20, (l2 - 1).bit_length())  # fp32 read working set 4 x big >= 4 x L2
    free0, _ = ctx.mem_info()
    rows = []
    for n in (2**12, 2**18, big):
        got, notes = bench.time_size(select_cases(["read-vec16", "copy-vec16"]), n, spec_gbs=None, budget_s=0.01)
        rows += got
    free1, _ = ctx.mem_info()
    assert abs(free1 - free0) < 64 * 2**20  # everything allocated was freed
    by = {(r.kernel, r.elements): r for r in rows}
    assert by[("read-vec16", 2**12)].regime == REGIME_L2
    assert by[("read-vec16", big)].regime == REGIME_DRAM and by[("copy-vec16", big)].regime == REGIME_DRAM
    for r in rows:
        assert r.time.median_s > 0 and r.gbs > 0 and r.time.min_s <= r.time.median_s <= r.time.max_s
    # a big read takes longer than a tiny one, and moves data far faster per second
    assert by[("read-vec16", big)].time.median_s > by[("read-vec16", 2**12)].time.median_s
    assert by[("read-vec16", big)].gbs > 10 * by[("read-vec16", 2**12)].gbs
    best = sustained_dram(rows, l2)
    assert best is not None and best.elements == big


def test_launch_overhead_is_positive_four_ways(ctx):
    from gpuwhy.bench.launch import measure_launch_overhead

    lo = measure_launch_overhead(ctx, quick=True, graph_kernels=200)
    # H200 (docs/results/2026-11-29-h200.md): event 3.4 us, submit 5.2 us, round trip 10.1 us, in a graph 0.50 us.
    # A launch path three times slower than that (four in a graph) is a regression, not a slow machine.
    assert 0 < lo.event.median_s < 10e-6
    assert 0 < lo.submit.median_s < 16e-6
    assert 0 < lo.round_trip.median_s < 30e-6
    assert 0 < lo.graph_per_kernel.median_s < 2e-6
    assert lo.graph_per_kernel.median_s < lo.round_trip.median_s


def test_cuda_error_becomes_measurement_error(tmp_path):
    """A kernel fault (bad pointers: an illegal address) surfaces as MeasurementError,
    in a separate process because the fault poisons that process's CUDA context."""
    import subprocess
    import sys

    from conftest import ROOT

    script = (
        "import sys, numpy as np\n"
        "from gpuwhy.engine.context import open_device\n"
        "from gpuwhy.errors import MeasurementError\n"
        "try:\n"
        "    with open_device(None) as c:\n"
        "        buf = c.alloc(1 << 20)\n"
        "        k = c.kernel('memory.cu', 'copy_naive_f32')\n"
        "        c.launch(k, 4096, 256, 16, 64, np.int32(1 << 20))\n"
        "        c.sync()\n"
        "except MeasurementError as e:\n"
        "    print('ERR', e)\n"
        "    sys.exit(4)\n"
    )
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CACHE_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 4, r.stdout + r.stderr
    assert r.stdout.startswith("ERR") and "CUDA" in r.stdout


def test_out_of_memory_is_reported_and_nothing_leaks(ctx):
    from gpuwhy.engine.context import DeviceOutOfMemory

    free0, total = ctx.mem_info()
    with pytest.raises(DeviceOutOfMemory, match="cannot allocate|OUT_OF_MEMORY|out of memory"):
        ctx.alloc(4 * total)
    free1, _ = ctx.mem_info()
    assert abs(free1 - free0) < 64 * 2**20


def test_cli_quick_json_on_the_gpu(ctx, tmp_path):
    from gpuwhy.device.sheet import sheet_for

    r = run_cli("bench", "--quick", "--json", "--kernel", "read-vec16", "--kernel", "vecadd",
                env={"XDG_CACHE_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["launch_overhead"]["event_s"] > 0 and doc["sustained_dram_gbs"] > 0
    sheet = sheet_for(device=ctx.info).sheet
    if sheet is not None:  # a GPU gpuwhy has a sheet for: the quick sweep reaches 80% of its DRAM bandwidth
        # (the H200 reached 4,602 GB/s, 95.9% of 4800: docs/results/2026-11-29-h200.md)
        assert doc["sustained_dram_pct_of_spec"] == pytest.approx(100 * doc["sustained_dram_gbs"] / sheet.memory_bandwidth_gbs)
        assert 80.0 <= doc["sustained_dram_pct_of_spec"] <= 105.0, doc["sustained_dram_gbs"]
    assert {c["kernel"] for c in doc["checks"]} == {"read-vec16", "vecadd-naive", "vecadd-vec16"}
    assert doc["profile_path"] and doc["cpu_vecadd"]["speedup"] > 1
