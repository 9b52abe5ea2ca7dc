"""Which Nsight Compute metrics gpuwhy asks for: the documented command line
(:func:`ncu_command_line`) and, for `gpuwhy ncu -- CMD`, the list chosen for a GPU
from what ``ncu --query-metrics`` says it has (:func:`choose_metrics`).

How the counters of one launch add up to time, bytes and FLOPs is
:mod:`gpuwhy.importers.ncu.figures`'s job (:func:`launch_figures` is re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .figures import (
    DRAM_READ,
    DRAM_TOTAL,
    DRAM_WRITE,
    SASS_FLOP_METRICS,
    TIME_METRICS,
    LaunchFigures,
    launch_figures,
    precision_of,
)

#: The metrics to ask ncu for (``--metrics``), in the order docs/diagnose.md lists them.
#: The tensor ones differ between GPU generations: keep those ``ncu --query-metrics`` lists.
CORE_METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    *(m for _, m, _ in SASS_FLOP_METRICS),
    "device__attribute_display_name",
)
TENSOR_METRICS = (
    "sm__inst_executed_pipe_tensor.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_int8.sum",
)

#: What `gpuwhy ncu -- CMD` asks for besides :data:`CORE_METRICS` (each kept only where
#: ``ncu --query-metrics`` lists its base name): L2/L1 bytes, ncu's Speed-of-Light
#: throughputs, the arithmetic pipes, the SM clock and the tensor-pipe instructions.
RUN_METRICS = (
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_elapsed.avg.per_second",
    "sm__inst_executed_pipe_tensor.sum",
    "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum",
)
_OPS_BASE_RE = re.compile(r"^sm__ops_path_tensor_src_(?P<src>[a-z0-9]+?)(?P<rest>(?:_dst_[a-z0-9]+)?(?:_sparsity_(?:on|off))?)$")
_QUERY_LINE_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_.]*__[A-Za-z0-9_]+)\s+(Counter|Ratio|Throughput|Metric)\b")


def metric_base(metric: str) -> str:
    """The base name ``ncu --query-metrics`` lists for a metric (``lts__t_bytes.sum`` -> ``lts__t_bytes``)."""
    return metric.split(".", 1)[0]


def parse_query_metrics(text: str) -> set[str]:
    """The metric base names in ``ncu --query-metrics`` output (one table per GPU)."""
    out = set()
    for line in text.splitlines():
        m = _QUERY_LINE_RE.match(line)
        if m:
            out.add(m.group(1))
    return out


def choose_metrics(bases: set[str]) -> tuple[list[str], list[str]]:
    """``(metrics to ask for, wanted ones this GPU lacks)`` given the base names its ncu lists.

    :data:`CORE_METRICS` and :data:`RUN_METRICS` are kept where their base is listed
    (``device__attribute_*`` always: ncu collects them without listing them); the tensor
    FLOP counters are every ``sm__ops_path_tensor_src_<type>[_dst_<type>]`` this GPU has
    (the sparsity halves only for a type without a plain counter), so a generation's
    missing types (no fp8 before Hopper) are never asked for.
    """
    chosen: list[str] = []
    dropped: list[str] = []
    for m in (*CORE_METRICS, *RUN_METRICS):
        if m.startswith("device__attribute_") or metric_base(m) in bases:
            chosen.append(m)
        else:
            dropped.append(m)
    plain: dict[str, list[str]] = {}
    split: dict[str, list[str]] = {}
    for b in sorted(bases):
        m = _OPS_BASE_RE.match(b)
        if not m:
            continue
        (split if "_sparsity_" in m.group("rest") else plain).setdefault(m.group("src"), []).append(b)
    for src in sorted(set(plain) | set(split)):
        chosen += [f"{b}.sum" for b in plain.get(src) or split.get(src, [])]
    wanted_ops = [m for m in TENSOR_METRICS if m.startswith("sm__ops_path_tensor_")]
    dropped += [m for m in wanted_ops if m not in chosen]
    return chosen, dropped


def ncu_command_line(metrics: Iterable[str] | None = None) -> str:
    """The ``ncu`` command line gpuwhy documents (raw page, counters only, clocks not locked)."""
    ms = ",".join(metrics or (*CORE_METRICS, *TENSOR_METRICS))
    return f"ncu --csv --page raw --print-units base --clock-control none --metrics {ms} ./app > report.csv"


__all__ = [
    "CORE_METRICS",
    "RUN_METRICS",
    "choose_metrics",
    "metric_base",
    "parse_query_metrics",
    "DRAM_READ",
    "DRAM_TOTAL",
    "DRAM_WRITE",
    "SASS_FLOP_METRICS",
    "TENSOR_METRICS",
    "TIME_METRICS",
    "LaunchFigures",
    "launch_figures",
    "ncu_command_line",
    "precision_of",
]
