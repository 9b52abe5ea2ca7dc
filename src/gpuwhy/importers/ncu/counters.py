"""Which Nsight Compute counters gpuwhy reads, and what one launch's add up to:
its duration, DRAM bytes and FLOPs (:func:`launch_figures`).

Counters (names as ``ncu --query-metrics`` lists them; the exact command line is
in docs/diagnose.md and :func:`ncu_command_line`):

- duration: ``gpu__time_duration.sum`` (the details page's ``Duration`` as a
  fallback);
- DRAM bytes: ``dram__bytes_read.sum + dram__bytes_write.sum`` (else
  ``dram__bytes.sum``);
- CUDA-core FLOPs from the SASS thread-instruction counters
  ``smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum``: add
  and mul count one FLOP, fma two (the weighting of Nsight Compute's own
  roofline charts). A packed half2 instruction (HADD2/HFMA2) is counted per
  thread instruction, as those counters do, so fp16 CUDA-core work may be
  undercounted by up to 2x;
- tensor-core FLOPs from ``sm__ops_path_tensor_*.sum`` (``src_<type>[_dst_<type>]``,
  optionally ``op_<inst>_`` and ``_sparsity_on/off``): each counted op is taken
  as one FLOP (an MMA's multiply-add is two ops), per NVIDIA's guidance that
  these counters give FLOPs directly. Where a generic ``src_X_dst_Y`` counter
  exists it is used alone (it already includes the per-instruction families);
  otherwise the families are summed. A kernel that executed tensor-pipe
  instructions (``sm__inst_executed_pipe_tensor*``) but has no
  ``sm__ops_path_tensor_*`` counter is "not classifiable": its FLOPs would be
  missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .read import Launch
from ...units import fmt_num

TIME_METRICS = ("gpu__time_duration.sum", "gpu__time_duration", "gpu__time_duration.avg", "Duration")
DRAM_READ = ("dram__bytes_read.sum",)
DRAM_WRITE = ("dram__bytes_write.sum",)
DRAM_TOTAL = ("dram__bytes.sum",)

#: (precision of the ceiling, metric, FLOPs per counted thread instruction).
SASS_FLOP_METRICS: tuple[tuple[str, str, int], ...] = (
    ("fp32", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1),
    ("fp32", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1),
    ("fp32", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2),
    ("fp64", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1),
    ("fp64", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1),
    ("fp64", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2),
    ("fp16", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1),
    ("fp16", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1),
    ("fp16", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2),
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

_TENSOR_OPS_RE = re.compile(
    r"^sm__ops_path_tensor_(?:op_(?P<op>[a-z0-9]+?)_)?src_(?P<src>[a-z0-9]+?)(?:_dst_(?P<dst>[a-z0-9]+?))?"
    r"(?:_sparsity_(?P<sp>on|off))?\.sum$"
)
_TENSOR_INST_RE = re.compile(r"^(?:sm|smsp)__inst_executed_pipe_tensor[a-z0-9_]*\.sum$")
#: Tensor-path source type -> the sheet precision whose peak bounds it.
_TENSOR_PRECISION = {
    "fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64_tensor", "fp8": "fp8", "e4m3": "fp8",
    "e5m2": "fp8", "fp6": "fp8", "fp4": "fp4", "int8": "int8", "int4": "int8", "int1": "int8",
}


@dataclass(frozen=True)
class LaunchFigures:
    """The roofline inputs of one launch, or why they are missing.

    ``time_s`` seconds, ``bytes`` DRAM bytes (read + write), ``flops`` total
    FLOPs, ``flops_by`` FLOPs per source (``fp32``, ``fp64``, ``fp16``,
    ``tensor_bf16``, ...), ``precision`` the sheet precision of the largest
    source. ``reason`` is empty when the launch is classifiable.
    """

    time_s: float | None
    bytes: float | None
    flops: float | None
    flops_by: dict[str, float]
    precision: str
    tensor_inst: float | None
    reason: str
    notes: tuple[str, ...] = ()


def _metric(la: Launch, names: Iterable[str], want: str | None) -> tuple[float | None, bool, str | None]:
    """(SI value, present as a column/row, note) of the first of ``names`` the launch has."""
    for n in names:
        if n in la.metrics:
            v, dim = la.metrics[n]
            if v is None:
                return None, True, None
            if want and dim is not None and dim != want:
                return None, True, f"{n} has unit dimension {dim}, expected {want}; ignored"
            if want == "time" and dim is None:
                # ncu's base time unit is the nanosecond (--print-units base).
                return v * 1e-9, True, f"{n} has no unit; read as nanoseconds (ncu's base unit)"
            return v, True, None
    return None, False, None


def launch_figures(la: Launch) -> LaunchFigures:
    """FLOPs, DRAM bytes and duration of one launch from its counters (see the module docstring)."""
    notes: list[str] = []
    t, t_present, n = _metric(la, TIME_METRICS, "time")
    if n:
        notes.append(n)
    rd, rd_present, n1 = _metric(la, DRAM_READ, "bytes")
    wr, wr_present, n2 = _metric(la, DRAM_WRITE, "bytes")
    tot, tot_present, n3 = _metric(la, DRAM_TOTAL, "bytes")
    notes += [x for x in (n1, n2, n3) if x]
    if rd is not None and wr is not None:
        b = rd + wr
    elif tot is not None:
        b = tot
        if rd_present or wr_present:
            notes.append("dram__bytes_read/write incomplete; used dram__bytes.sum")
    else:
        b = None

    flops_by: dict[str, float] = {}
    sass_present: list[str] = []
    sass_na: list[str] = []
    for prec, name, weight in SASS_FLOP_METRICS:
        if name in la.metrics:
            sass_present.append(name)
            v = la.metrics[name][0]
            if v is None:
                sass_na.append(name)
            else:
                flops_by[prec] = flops_by.get(prec, 0.0) + weight * v
    tensor_present = False
    # Tensor path. Per (instruction family or None, src, dst): the plain counter, else
    # sparsity on + off. Per (src, dst): the generic counter (no op_ family) when
    # present, else the families summed.
    parts: dict[tuple[str | None, str, str], dict[str, float]] = {}
    tensor_inst = None
    for name, (v, _dim) in la.metrics.items():
        m = _TENSOR_OPS_RE.match(name)
        if m:
            tensor_present = True
            if v is not None:
                key = (m.group("op"), m.group("src"), m.group("dst") or "")
                parts.setdefault(key, {})[m.group("sp") or "plain"] = v
        elif _TENSOR_INST_RE.match(name) and v is not None:
            tensor_inst = max(tensor_inst or 0.0, v)
    generic: dict[tuple[str, str], float] = {}
    family: dict[tuple[str, str], float] = {}
    for (op, src, dst), got in parts.items():
        val = got["plain"] if "plain" in got else got.get("on", 0.0) + got.get("off", 0.0)
        target = family if op else generic
        target[(src, dst)] = target.get((src, dst), 0.0) + val
    tensor: dict[tuple[str, str], float] = dict(family)
    tensor.update(generic)
    for (src, dst), v in tensor.items():
        label = f"tensor_{src}" + (f"_{dst}" if dst else "")
        flops_by[label] = flops_by.get(label, 0.0) + v

    reason = ""
    if t is None:
        reason = "no duration (gpu__time_duration.sum is " + ("n/a" if t_present else "not in the export") + ")"
    elif t <= 0:
        reason = "duration is zero"
    elif b is None:
        present = rd_present or wr_present or tot_present
        reason = "no DRAM bytes (dram__bytes_read.sum/dram__bytes_write.sum " + ("are n/a" if present else "are not in the export") + ")"
    elif not sass_present and not tensor_present:
        reason = "no FLOP counters (smsp__sass_thread_inst_executed_op_* or sm__ops_path_tensor_*) in the export"
    elif sass_present and len(sass_na) == len(sass_present):
        reason = "the CUDA-core FLOP counters (smsp__sass_thread_inst_executed_op_*) are n/a"
    elif not flops_by:
        reason = "every FLOP counter is n/a"
    elif tensor_inst and not tensor:
        reason = (
            f"{fmt_num(tensor_inst)} tensor-core instructions executed but the export has no sm__ops_path_tensor_* counter, "
            "so its FLOPs are unknown; add those metrics (see docs/diagnose.md)"
        )
    elif b == 0 and sum(flops_by.values()) == 0:
        reason = "no FLOPs and no DRAM bytes counted (data stayed in cache, or the kernel does neither)"
    if not reason:
        if sass_na:
            short = ", ".join(n.split("_op_")[1].split("_")[0] for n in sass_na)
            notes.append(f"FLOPs are a lower bound: the {short} counters are n/a")
        if not sass_present:
            notes.append("no CUDA-core FLOP counters in the export: FLOPs are tensor-core work only")
        if tensor_present and not tensor:
            notes.append("the tensor-core FLOP counters are n/a")
    flops = sum(flops_by.values()) if flops_by else None
    return LaunchFigures(t, b, flops, flops_by, precision_of(flops_by), tensor_inst, reason, tuple(notes))


def precision_of(flops_by: dict[str, float]) -> str:
    """The sheet precision of the largest FLOP source (``tensor_bf16`` -> ``bf16``, ``fp32`` -> ``fp32``);
    ``fp32`` when no source counted any FLOP."""
    if not flops_by:
        return "fp32"
    label, most = max(flops_by.items(), key=lambda kv: kv[1])
    if most <= 0:
        return "fp32"
    return _TENSOR_PRECISION.get(label.split("_")[1], "fp16") if label.startswith("tensor_") else label


def ncu_command_line(metrics: Iterable[str] | None = None) -> str:
    """The ``ncu`` command line gpuwhy documents (raw page, counters only, clocks not locked)."""
    ms = ",".join(metrics or (*CORE_METRICS, *TENSOR_METRICS))
    return f"ncu --csv --page raw --print-units base --clock-control none --metrics {ms} ./app > report.csv"


__all__ = [
    "CORE_METRICS",
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
