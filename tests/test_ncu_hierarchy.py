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


# ------------------------------------------------------------------ the picture (--plot)


def test_plot_draws_each_kernel_once_per_level_with_its_own_verdict():
    from pathlib import Path

    from test_plot_levels import check_drawing

    from gpuwhy.importers.ncu import load_ncu_report
    from gpuwhy.render.ncu_chart import MAX_POINTS, ncu_chart
    from gpuwhy.specs import library

    real = Path(__file__).parent / "fixtures" / "real" / "ncu_full_raw.csv"
    (d,) = load_ncu_report(real, top=10, local_gpu=False).devices
    ch = ncu_chart(d, library().match("H200"))
    assert len(ch.workloads) == MAX_POINTS and any("top 5 kernels by time are drawn" in n for n in ch.notes)
    soft = next(w for w in ch.workloads if w.name == "cunn_SoftMaxForwardReg")
    assert soft.label == "cunn_SoftMaxForwardReg: issue-bound, 38% of SOL"  # gpuwhy's verdict, not the chart's own
    assert [lv for lv, _ in soft.levels] == ["L2", "L1"] and soft.levels[0][1] == pytest.approx(3.03, abs=0.01)
    gemm = next(w for w in ch.workloads if w.name.startswith("nvjet"))
    assert [lv for lv, _ in gemm.levels] == ["L2"]  # 12 KB through L1 (0.007% of its DRAM bytes): no marker
    assert any(w.name == "vectori\u2026<GeluCUDAKernelImpl>" for w in ch.workloads)
    check_drawing(ch)  # every label inside the axes, apart from the others and from the points


def test_plot_option(cli, tmp_path):
    pytest.importorskip("matplotlib")
    p = tmp_path / "l2.csv"
    p.write_text(_export())
    out = tmp_path / "ncu.png"
    code, _, err = cli("ncu", str(p), "--plot", str(out))
    assert code == 0, err
    assert out.stat().st_size > 10_000 and f"drawn to {out}" in err
    code, _, err = cli("ncu", str(p), "--plot", str(tmp_path / "ncu.pdf"))
    assert code == 2 and "--plot" in err and err.count("\n") == 1
