"""`gpuwhy ncu` on the hierarchical roofline: L2 and L1 bytes judged against their roofs (no GPU).

A made-up raw export of one L2-resident kernel on an H100 PCIe (whose sheet gives an L2
bandwidth, 6,900 GB/s, with its source): 100 us, 20 MB through DRAM (200 GB/s, 10% of the
2,000 GB/s roof), 552 MB through the L2 (5,520 GB/s, 80% of its roof), 1e8 FLOPs.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpuwhy.importers.ncu import analyze, read_ncu_csv

COLUMNS = ["ID", "Kernel Name", "Device", "device__attribute_display_name", "gpu__time_duration.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
           "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed"]
UNITS = ["", "", "", "", "nsecond", "byte", "byte", "byte", "byte", "inst", "%", "%", "%", "%"]
ROW = ["0", "l2_resident_stencil(float const*, float*)", "0", "NVIDIA H100 PCIe", "100000", "10000000", "10000000",
       "552000000", "600000000", "50000000", "45", "82", "10", "82"]


def _export(drop: tuple[str, ...] = ()) -> str:
    keep = [i for i, c in enumerate(COLUMNS) if c not in drop]
    s = io.StringIO()
    w = csv.writer(s, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for r in (COLUMNS, UNITS, ROW):
        w.writerow([r[i] for i in keep])
    return s.getvalue()


def _kernel(text: str):
    (d,) = analyze(read_ncu_csv("l2.csv", text=text), local_gpu=False).devices
    (k,) = d.kernels
    return k


def test_an_l2_resident_kernel_is_judged_against_the_l2():
    k = _kernel(_export())
    assert k.regime == "memory" and k.deciding_level == "L2"
    assert k.roof_pct == pytest.approx(80.0, abs=0.1)  # the L2's share, not DRAM's 10%
    l2, dram = k.hierarchy.point("L2"), k.hierarchy.point("DRAM")
    assert l2.roof.kind == "spec" and "gpu-benches" in l2.roof.source
    assert l2.intensity == pytest.approx(1e8 / 552e6) and dram.fraction_of_roof == pytest.approx(0.10)
    assert "L2" in k.top_remedy and k.notes[0].startswith("the L2 roof is nearer than the DRAM roof")


def test_the_same_kernel_without_l2_figures_would_be_latency_bound():
    """Judged against DRAM alone (no L2/L1 bytes or throughputs) it reaches 10% of the roof with
    an idle SM (45%): latency-bound. With ncu's memory throughput (82%) it is not: a busy unit."""
    k = _kernel(_export(drop=("lts__t_bytes.sum", "l1tex__t_bytes.sum", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                              "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")))
    assert k.regime == "latency" and k.deciding_level == "DRAM"
    assert k.notes[0].startswith("memory latency-bound: too few bytes in flight")
    assert any("More independent loads per thread" in h for h in k.remedies.helps)
    k = _kernel(_export(drop=("lts__t_bytes.sum", "l1tex__t_bytes.sum")))
    assert k.regime == "memory" and k.notes[0] == ("at 10% of the DRAM roof but ncu's memory throughput is 82% busy: "
                                                   "bound by that unit, not by latency")


def test_json_holds_each_levels_intensity_and_roof(cli, tmp_path):
    p = tmp_path / "l2.csv"
    p.write_text(_export())
    code, out, err = cli("ncu", str(p), "--json")
    assert code == 0, err
    k = json.loads(out)["devices"][0]["kernels"][0]
    assert k["deciding_level"] == "L2" and k["hierarchy"]["deciding_level"] == "L2"
    levels = {x["level"]: x for x in k["hierarchy"]["levels"]}
    assert set(levels) == {"DRAM", "L2", "L1"}
    assert levels["L2"]["roof"]["bandwidth_gbs"] == 6900 and levels["L2"]["pct_of_roof"] == pytest.approx(80.0)
    assert levels["L1"]["roof"]["kind"] == "clock"  # no SM clock in the export: at the sheet's boost clock
    code, out, err = cli("ncu", str(p))
    assert code == 0, err
    assert "hierarchical roofline" in out and "L2" in out
