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

    return readable(path, "Nsight Compute export", load_ncu_report, path, gpu=gpu, dtype=dtype, top=int(top),
                    spec_dirs=tuple(spec_dirs), device=device)


def read_trace(path, *, top=10, steps_from=None):
    """The :class:`~gpuwhy.importers.timeline.results.TraceReport` of a torch.profiler Chrome trace
    (``.json`` or ``.json.gz``), an Nsight Systems report (``nsys export --type sqlite`` ``.sqlite``,
    also gzipped, or ``.nsys-rep`` through ``nsys``) or a JAX profiler trace (the file, or JAX's log
    folder), told apart by the file's first bytes and name:
    per GPU, each with the verdict engine's diagnosis. ``steps_from``: the name of the host range
    (NVTX range, ``record_function`` label) that marks one step.

    Raises:
        UsageError: an unreadable or non-trace file (one line naming it); ``top`` < 1; no range named
            ``steps_from``.
        NoDeviceError: a ``.nsys-rep`` and no ``nsys`` on PATH to export it.
    """
    from pathlib import Path

    from ..importers.nsys import is_nsys_report, load_nsys
    from ..importers.xprof import load_xprof, looks_like_xprof

    if Path(path).is_dir() or str(path).endswith(".xplane.pb"):  # JAX's profiler writes LOGDIR/plugins/profile/RUN/
        return readable(path, "JAX profiler trace", load_xprof, path, top=int(top), steps_from=steps_from)
    if is_nsys_report(path):
        return readable(path, "Nsight Systems report", load_nsys, path, top=int(top), steps_from=steps_from)
    if looks_like_xprof(path):
        return readable(path, "JAX profiler trace", load_xprof, path, top=int(top), steps_from=steps_from)
    if steps_from is None:
        from ..importers.kineto import load_trace

        return readable(path, "torch.profiler trace", load_trace, path, top=int(top))
    return readable(path, "torch.profiler trace", _torch_steps_from, path, int(top), steps_from)


def _torch_steps_from(path, top: int, steps_from: str):
    """A torch.profiler trace analysed with the ranges named ``steps_from`` as its steps."""
    from ..errors import UsageError
    from ..importers.kineto import read_timeline
    from ..importers.timeline.analyze import analyze
    from ..importers.timeline.steps import steps_from as mark_steps

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    return analyze(mark_steps(read_timeline(path), steps_from), str(path), top)


def readable(path, what: str, fn, *args, **kwargs):
    """Run an importer; input it cannot make sense of becomes one UsageError line naming the file.

    The importers raise UsageError for every quirk they know; anything else they
    trip over is a malformed file, not a bug worth a traceback.

    Raises:
        UsageError: ``fn`` raised one, or failed on the file (``path: not a readable <what> (...)``).
        GpuwhyError: any other error of gpuwhy's ``fn`` raised, as it is.
    """
    import csv

    from ..errors import GpuwhyError, UsageError

    try:
        return fn(*args, **kwargs)
    except GpuwhyError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, csv.Error, RecursionError) as exc:
        raise UsageError(f"{path}: not a readable {what} ({type(exc).__name__}: {str(exc)[:120]})") from None
