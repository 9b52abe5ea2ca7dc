"""The profiler readers of the Python API: :func:`gpuwhy.read_ncu` (an Nsight Compute export judged
per kernel) and :func:`gpuwhy.read_trace` (a torch.profiler trace: busy, idle and why), as
`gpuwhy ncu` and `gpuwhy trace` read them."""

from __future__ import annotations


def read_ncu(path, gpu=None, *, dtype=None, top=10, device=None, spec_dirs=()):
    """The :class:`~gpuwhy.importers.ncu.NcuReport` of an ``ncu --csv`` export (raw or details page):
    ``gpu`` the sheet (default: from the export's device name), ``device`` only that export
    device, ``top`` kernels per GPU by total time.

    Raises:
        UsageError: an unreadable or non-ncu file (one line naming it), an unknown GPU.
    """
    from ..importers.ncu import load_ncu_report

    return load_ncu_report(path, gpu=gpu, dtype=dtype, top=int(top), spec_dirs=tuple(spec_dirs), device=device)


def read_trace(path, *, top=10):
    """The :class:`~gpuwhy.importers.torch_trace.TraceReport` of a torch.profiler Chrome trace
    (``.json`` or ``.json.gz``), per GPU.

    Raises:
        UsageError: an unreadable or non-trace file.
    """
    from ..importers.torch_trace import load_trace

    return load_trace(path, top=int(top))
