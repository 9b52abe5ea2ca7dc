"""Nsight Compute exports (``ncu --csv``, raw or details page, or a ``.ncu-rep`` report) into
per-kernel verdicts, and `gpuwhy ncu -- CMD` (running a program under ncu).

- :mod:`.read`: the CSV into launches and their metrics (units, column names,
  profiler noise, old ``nv-nsight-cu-cli`` spellings): :func:`read_ncu_csv`.
- :mod:`.rep`: any user file (CSV or ``.ncu-rep``, gzipped or not): :func:`read_export`.
- :mod:`.figures`: one launch's time, DRAM/L2/L1 bytes, FLOPs and utilisations, each
  with how it was derived: :func:`launch_figures`.
- :mod:`.identify`: which GPU (and so which spec sheet) the export was made on.
- :mod:`.sol`: ncu's own Speed-of-Light verdict and gpuwhy's agreement with it.
- :mod:`.analyse`: launches grouped by GPU and kernel and given a regime:
  :func:`analyze`, :func:`load_ncu_report`.
- :mod:`.counters`: the metrics gpuwhy asks for, chosen per GPU: :func:`choose_metrics`.
- :mod:`.runner`: ``ncu`` run on a program: :func:`profile_command`.
"""

from __future__ import annotations

from .analyse import NcuDevice, NcuKernel, NcuReport, analyze, load_ncu_report
from .counters import (
    CORE_METRICS,
    RUN_METRICS,
    SASS_FLOP_METRICS,
    TENSOR_METRICS,
    choose_metrics,
    ncu_command_line,
    parse_query_metrics,
)
from .figures import LaunchFigures, launch_figures
from .identify import ExportGpu, GpuNotIdentified, export_gpu
from .read import Launch, NcuTable, parse_number, parse_value, read_ncu_csv, unit_scale
from .rep import read_export

__all__ = [
    "CORE_METRICS",
    "RUN_METRICS",
    "SASS_FLOP_METRICS",
    "TENSOR_METRICS",
    "ExportGpu",
    "GpuNotIdentified",
    "Launch",
    "LaunchFigures",
    "NcuDevice",
    "NcuKernel",
    "NcuReport",
    "NcuTable",
    "analyze",
    "choose_metrics",
    "export_gpu",
    "launch_figures",
    "load_ncu_report",
    "ncu_command_line",
    "parse_number",
    "parse_query_metrics",
    "parse_value",
    "read_export",
    "read_ncu_csv",
    "unit_scale",
]
