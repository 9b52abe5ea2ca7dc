"""A kernel is overhead-bound only when it is launch-sized (mean duration below SHORT_KERNEL_S, 10 us).

The case from the H100 decode run of `gpuwhy run --kernels` (docs/results/2026-12-06-run.md):
cuBLAS's sgemm_largek_lds64 at batch 1 ran 41 us a launch while its work, a few MB through
DRAM, takes about 2 us at the roof: less than one 5 us launch, so the three-term model called
it overhead-bound. Its launches are not what costs: the kernel itself runs 20x longer than its
work needs. A made-up raw export on the H100 PCIe sheet (2,000 GB/s DRAM, 51.2 TFLOP/s fp32,
5 us default launch overhead): 4 MB through DRAM, 1e6 FLOPs, SM 10% busy.
"""

from __future__ import annotations

import csv
import io

import pytest

from gpuwhy.importers.ncu import analyze, read_ncu_csv
from gpuwhy.model.roofline.classify import SHORT_KERNEL_S

COLUMNS = ["ID", "Kernel Name", "Device", "device__attribute_display_name", "gpu__time_duration.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
           "sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed"]
UNITS = ["", "", "", "", "nsecond", "byte", "byte", "inst", "%", "%"]
BYTES = 4_000_000  # 2 us at 2,000 GB/s


def _kernel(duration_ns: float, drop: tuple[str, ...] = ()):
    dram_pct = 100 * (BYTES / (duration_ns * 1e-9)) / 2000e9
    row = ["0", "sgemm_largek_lds64", "0", "NVIDIA H100 PCIe", f"{duration_ns}", f"{BYTES // 2}", f"{BYTES // 2}",
           "500000", "10", f"{dram_pct}"]
    keep = [i for i, c in enumerate(COLUMNS) if c not in drop]
    s = io.StringIO()
    w = csv.writer(s, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for r in (COLUMNS, UNITS, row):
        w.writerow([r[i] for i in keep])
    (d,) = analyze(read_ncu_csv("k.csv", text=s.getvalue()), local_gpu=False).devices
    (k,) = d.kernels
    return k


def test_short_kernel_cutoff_is_10_us():
    assert SHORT_KERNEL_S == 10e-6


def test_launch_sized_kernel_stays_overhead_bound():
    k = _kernel(9_990)  # just under 10 us: the launch (5 us) costs more than the work (2 us)
    assert k.regime == "overhead"


@pytest.mark.parametrize("ns", [10_000, 41_200])
def test_a_longer_kernel_is_judged_on_its_work(ns):
    k = _kernel(ns)
    # 2 us of DRAM work in 10 (41.2) us: 20% (4.9%) of the DRAM roof, SM 10% busy: too few bytes in flight
    assert k.regime == "latency" and k.deciding_level == "DRAM"
    assert k.roof_pct == pytest.approx(100 * 2e-6 / (ns * 1e-9), rel=1e-6)


def test_the_same_rule_without_flop_counters():
    drop = ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",)
    assert _kernel(9_990, drop).regime == "overhead"
    k = _kernel(41_200, drop)  # judged from utilisations: DRAM 4.9% against SM 10%: compute side, not overhead
    assert k.regime != "overhead" and k.basis == "utilisation"


def test_launch_sized_at_the_cutoff_up_to_float_rounding():
    from gpuwhy.model.roofline.classify import launch_sized

    mean = 10.0 * 1e-6  # 10 us in trace microseconds times 1e-6: 9.999999999999999e-06 in floats
    assert mean < SHORT_KERNEL_S and not launch_sized(mean)  # equal to 10 us, so not below it
    assert launch_sized(9.999e-6) and not launch_sized(10e-6) and not launch_sized(10.001e-6)
    assert launch_sized(0.0) and not launch_sized(float("inf"))
    assert launch_sized(10e-6 * (1 - 5e-9))  # 5 parts in 1e9 below: below it (rounding is parts in 1e16)
