"""Nsight Compute CSV exports (``ncu --csv``, raw or details page) into per-kernel roofline verdicts.

- :mod:`.read`: the CSV into launches and their metrics (units, column names,
  profiler noise): :func:`read_ncu_csv`.
- :mod:`.counters`: which counters are read, and one launch's duration, DRAM
  bytes and FLOPs from them: :func:`launch_figures`.
- :mod:`.analyse`: launches grouped by GPU and kernel and judged on the
  roofline: :func:`analyze`, :func:`load_ncu_report`.
"""

from __future__ import annotations

from .analyse import NcuDevice, NcuKernel, NcuReport, analyze, load_ncu_report
from .counters import (
    CORE_METRICS,
    SASS_FLOP_METRICS,
    TENSOR_METRICS,
    LaunchFigures,
    launch_figures,
    ncu_command_line,
)
from .read import Launch, NcuTable, parse_number, parse_value, read_ncu_csv, unit_scale

__all__ = [
    "CORE_METRICS",
    "SASS_FLOP_METRICS",
    "TENSOR_METRICS",
    "Launch",
    "LaunchFigures",
    "NcuDevice",
    "NcuKernel",
    "NcuReport",
    "NcuTable",
    "analyze",
    "launch_figures",
    "load_ncu_report",
    "ncu_command_line",
    "parse_number",
    "parse_value",
    "read_ncu_csv",
    "unit_scale",
]
