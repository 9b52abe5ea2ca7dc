"""The `gpuwhy ncu` use case: read and judge an Nsight Compute export (also `gpuwhy classify
--ncu`), find the sheet its first GPU is drawn on, and run a program under ncu first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from ..units import parse_count
from .readers import readable


def read_ncu_export(path: str, *, gpu: str | None = None, top: str = "10", dtype: str | None = None,
                    device: str | None = None, measured: bool = False, spec_dirs: Sequence[str] = ()):
    """The :class:`~gpuwhy.importers.ncu.NcuReport` of an ``ncu --csv`` export (raw or details page)
    or a ``.ncu-rep``: ``top`` (text, from the command line) kernels per GPU by total time.

    Raises:
        UsageError: a bad ``--top``, an unreadable or non-ncu file, a permission-error export,
            an unknown ``--gpu`` or ``--dtype``, a GPU the export does not identify, or
            ``measured`` without a bench profile of that GPU.
        NoDeviceError: a ``.ncu-rep`` and nothing installed to read it.
    """
    from ..importers.ncu import load_ncu_report

    n = parse_count(top, "--top")
    return readable(path, "Nsight Compute export", load_ncu_report, path, gpu=gpu, dtype=dtype, top=n,
                    spec_dirs=tuple(spec_dirs), device=device, measured=measured)


@dataclass(frozen=True)
class NcuPlot:
    """What `gpuwhy ncu --plot` draws: the export's first GPU (an
    :class:`~gpuwhy.importers.ncu.NcuDevice`) on its sheet, and the note said after drawing it."""

    device: Any
    sheet: Any
    said: str


def plot_of(report, path: str, spec_dirs: Sequence[str] = ()) -> NcuPlot:
    """The first GPU of ``report`` and its sheet, to be drawn to ``path``.

    Raises:
        UsageError: the export has no GPU; the GPU's sheet is no longer known.
    """
    from ..device.sheet import sheet_for

    if not report.devices:
        raise UsageError("the export has no GPU to draw; drop --plot")
    d = report.devices[0]
    more = f" (GPU {d.device} of {len(report.devices)}: --device picks another)" if len(report.devices) > 1 else ""
    return NcuPlot(d, sheet_for(d.sheet, spec_dirs=tuple(spec_dirs)).sheet, f"roofline of GPU {d.device} drawn to {path}{more}")


def profile_program(cmd: list[str], *, ncu: str | None = None, launch_count: str | None = None,
                    kernel_name: str | None = None, launch_skip: str | None = None,
                    profile_from_start: str = "on", export: str | None = None):
    """Run ``cmd`` under ncu (:func:`~gpuwhy.importers.ncu.runner.profile_command`) with the
    command line's options as given (text): ``launch_count`` kernel launches (default 200),
    ``profile_from_start`` ``on`` or ``off``. Returns the :class:`~gpuwhy.importers.ncu.runner.NcuRun`.

    Raises:
        UsageError: a bad count, ``profile_from_start`` neither on nor off; what
            ``profile_command`` raises (NoDeviceError, UsageError, MeasurementError).
    """
    from ..importers.ncu.runner import profile_command

    if profile_from_start not in ("on", "off"):
        raise UsageError(f"--profile-from-start {profile_from_start!r} must be on or off")
    return profile_command(
        cmd, ncu=ncu,
        launch_count=parse_count(launch_count, "-c") if launch_count is not None else 200,
        kernel_name=kernel_name,
        launch_skip=parse_count(launch_skip, "--launch-skip") if launch_skip is not None else None,
        profile_from_start=profile_from_start == "on", export=export,
    )
