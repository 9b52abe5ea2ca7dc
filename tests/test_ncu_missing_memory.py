"""ncu exports that lack some memory counters (issue 31): the one that is missing is named and what
is there is used (one DRAM direction: a lower bound, said in the verdict); with no memory figure at
all the busiest pipe still gives a partial verdict, with the metric that would decide it."""

from __future__ import annotations

import json

import pytest

from gpuwhy.importers.ncu import analyze, read_ncu_csv

HEAD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
        "Device", "CC"]
PIPE_TENSOR = "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"
PIPE_FMA = "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"


def _export(tmp_path, metrics: list[tuple[str, str]], rows: list[tuple[str, list[str]]]):
    """A raw-page export with ``metrics`` (name, unit) and one launch per (kernel, values) on GPU 0."""
    lines = [HEAD + [m for m, _ in metrics], [""] * len(HEAD) + [u for _, u in metrics]]
    for i, (name, vals) in enumerate(rows):
        lines.append([str(i), "1", "python", "h", f"void {name}(float*)", "1", "7", "(256, 1, 1)", "(132, 1, 1)", "0",
                      "9.0", *vals])
    p = tmp_path / "export.csv"
    p.write_text("".join(",".join(f'"{c}"' for c in r) + "\n" for r in lines))
    return p


def _kernels(path):
    rep = analyze(read_ncu_csv(str(path)), gpu="H200 SXM", local_gpu=False)
    return {k.name: k for k in rep.devices[0].kernels}


def test_read_counter_without_the_write_column_is_used_as_a_lower_bound(tmp_path):
    # 100 us; copy_k reads 400 MB (4 TB/s, 83% of the H200's 4.8 TB/s); math_k 1e10 FFMA (2e10 FLOP) and 1 kB read
    p = _export(tmp_path, [("gpu__time_duration.sum", "nsecond"), ("dram__bytes_read.sum", "byte"), (FFMA, "inst")],
                [("copy_k", ["100000", "400000000", "1000"]), ("math_k", ["100000", "1000", "10000000000"])])
    k = _kernels(p)
    copy, math_k = k["copy_k"], k["math_k"]
    assert copy.classifiable and copy.regime == "memory" and copy.bytes == 4e8
    assert copy.estimated == ("dram_bytes",) and copy.basis == "estimate"
    assert copy.how["dram_bytes"] == "dram__bytes_read.sum only (dram__bytes_write.sum is not in the export): a lower bound"
    assert any("at least 83% of the DRAM roof" in n and "can only make it more memory-bound" in n for n in copy.notes)
    assert not any("n/a" in n for n in copy.notes)
    assert math_k.regime == "compute"
    assert any("lower bound" in n and "nearer the DRAM roof than this compute-bound verdict" in n for n in math_k.notes)


def test_n_a_memory_counters_are_named_one_by_one(tmp_path):
    p = _export(tmp_path, [("gpu__time_duration.sum", "nsecond"), ("dram__bytes_read.sum", "byte"), (FFMA, "inst")],
                [("k", ["100000", "n/a", "1000"])])
    k = _kernels(p)["k"]
    assert not k.classifiable
    assert k.reason == "no DRAM bytes (dram__bytes_read.sum is n/a; dram__bytes_write.sum is not in the export)"


@pytest.mark.parametrize("tensor, fma, short, words", [
    ("61.0", "3.0", "near compute-bound", ["its busiest pipe (tensor_op_hmma) ran at 61% of peak",
                                           "compute-bound, or within 1.64x of it"]),
    ("1.0", "7.0", "not compute-bound", ["its busiest pipe (fma) ran at 7% of peak", "under the 60%"]),
])
def test_pipes_alone_give_a_partial_verdict_and_the_metric_that_decides(tmp_path, cli, tensor, fma, short, words):
    p = _export(tmp_path, [("gpu__time_duration.sum", "nsecond"), (PIPE_TENSOR, "%"), (PIPE_FMA, "%")],
                [("k", ["100000", tensor, fma])])
    k = _kernels(p)["k"]
    assert not k.classifiable and k.regime is None
    assert k.reason.startswith(f"partial verdict, {short}: ")
    for w in words:
        assert w in k.reason
    assert "add --metrics dram__bytes_read.sum,dram__bytes_write.sum" in k.reason
    assert k.how["regime"].startswith(f"partial: {short} (")
    code, out, err = cli("ncu", str(p), "--gpu", "H200 SXM")
    assert code == 0 and short in out and "partial verdict" in out, out + err
    code, out, err = cli("ncu", str(p), "--gpu", "H200 SXM", "--json")
    doc = json.loads(out)
    assert doc["devices"][0]["kernels"][0]["how"]["regime"].startswith(f"partial: {short}")
