"""The roofline use case: `gpuwhy roofline`. Which sheet, which measured profile, which
precisions and which workload points a GPU's roofline is drawn with (the chart itself is
built by :func:`gpuwhy.render.plot.build_chart`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def parse_dtypes(values, sheet) -> list[str]:
    """``--dtype`` values (repeatable, comma lists; ``all``: every precision the sheet lists), default ``fp32``.

    Raises:
        UsageError: an unknown dtype.
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES

    out: list[str] = []
    for v in values or ():
        for d in (x.strip().lower() for x in str(v).split(",")):
            if not d:
                continue
            if d == "all":  # fp32 first: points without a precision are judged against it
                picked = sorted((k for k in DTYPES if k in sheet.peak_tflops), key=lambda k: k != "fp32")
            elif d in DTYPES:
                picked = [d]
            else:
                raise UsageError(f"unknown --dtype {d!r}; use one of: {', '.join(DTYPES)}, or all")
            out.extend(p for p in picked if p not in out)
    return out or ["fp32"]


@dataclass(frozen=True)
class RooflineOptions:
    """What `gpuwhy roofline` was given, as typed: ``gpu`` (None: this machine's, else the profile's),
    ``measured``, ``profile`` (a device-profile file; implies measured), ``dtypes`` (the ``--dtype``
    values), ``no_tensor_cores``, ``points`` (``NAME:FLOPS:BYTES[:TIME][:DTYPE]``),
    ``launch_overhead``, ``out`` (a plot file) and the ``--specs`` folders."""

    gpu: str | None = None
    measured: bool = False
    profile: str | None = None
    dtypes: tuple[str, ...] = ()
    no_tensor_cores: bool = False
    points: tuple[str, ...] = ()
    launch_overhead: str | None = None
    out: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def parse(self) -> "RooflineRequest":
        """The options checked and parsed before any sheet or profile is read.

        Raises:
            UsageError: an ``--out`` that is not ``.png``/``.svg`` or must not be written;
                ``--launch-overhead`` without ``--point``; a bad point or time.
        """
        from ..units import parse_time
        from .options import parse_point, refuse_unused

        if self.out is not None:
            from ..outputs import check_plot_path

            check_plot_path(self.out, "--out")
        if not self.points:
            refuse_unused("without --point (it is the per-launch cost in the points' verdicts)",
                          launch_overhead=self.launch_overhead)
        points = tuple(parse_point(p, allow_dtype=True) for p in self.points)
        lo = None if self.launch_overhead is None else parse_time(self.launch_overhead, "--launch-overhead")
        return RooflineRequest(self.gpu, self.measured or self.profile is not None, self.profile, self.dtypes,
                               not self.no_tensor_cores, points, lo, self.spec_dirs, self.out)


@dataclass(frozen=True)
class RooflineRequest:
    """A roofline to draw: the GPU (None: this machine's, else the profile's), ``measured`` ceilings
    (from ``profile_file``, else the GPU's newest profile), the ``--dtype`` values, ``tensor_cores``,
    the parsed ``points`` ``(name, FLOPs, bytes, seconds or None, dtype or None)``, the per-launch
    overhead in seconds (None: measured, else the default), the folders and the plot file."""

    gpu: str | None = None
    measured: bool = False
    profile_file: str | None = None
    dtypes: tuple[str, ...] = ()
    tensor_cores: bool = True
    points: tuple[tuple, ...] = ()
    launch_overhead_s: float | None = None
    spec_dirs: tuple[str, ...] = ()
    out: str | None = None


@dataclass(frozen=True)
class RooflinePlan:
    """What the roofline is drawn with: the ``sheet``, the ``dtypes`` (the first judges the points),
    ``tensor_cores``, the measured ``profile`` or None, the ``points`` and the launch overhead."""

    sheet: Any
    dtypes: tuple[str, ...]
    tensor_cores: bool
    profile: Any
    points: tuple[tuple, ...]
    launch_overhead_s: float | None


def roofline(req: RooflineRequest) -> RooflinePlan:
    """Pick the sheet and the measured profile of ``req`` and check the precisions against the sheet.

    The sheet is ``--gpu``'s (refused when ``--profile`` measured another GPU model), else the profile's,
    else this machine's GPU's; with ``measured``, no GPU here and no ``--gpu``, the one GPU that has
    bench profiles (noted).

    Raises:
        UsageError: an unreadable profile; an unknown GPU; a ``--profile`` of another GPU model than
            ``--gpu``'s; a point faster than any roof of the GPU allows
            (:func:`~gpuwhy.model.roofline.limits.refuse_impossible_workload`); no GPU and no ``--gpu``; ``measured``
            without a profile of that GPU; an unknown dtype; ``--no-tensor-cores`` with fp32/fp64 only.
    """
    from ..errors import UsageError
    from ..profiles import find_profile, load_profile
    from ..device.probe import gpu_sheet
    from .options import refuse_unused
    from .sheets import noted

    spec_dirs = req.spec_dirs
    prof = load_profile(req.profile_file) if req.profile_file is not None else None
    if req.gpu is not None:
        sheet = noted(gpu_sheet(req.gpu, tuple(spec_dirs or ()))).sheet
        if prof is not None:
            _refuse_other_gpu(prof, sheet, req.profile_file, spec_dirs)
    elif prof is not None:
        sheet = _sheet_of_profile(prof, spec_dirs)
    else:
        try:
            sheet = noted(gpu_sheet(None, tuple(spec_dirs or ()))).sheet
        except UsageError:
            if not req.measured:
                raise
            sheet, prof = _only_profiled_gpu(spec_dirs)
    if req.measured and prof is None:
        prof = find_profile(sheet, spec_dirs=spec_dirs)
        if prof is None:
            raise UsageError(f"no bench profile for the {sheet.name}; run `gpuwhy bench --sweep` on that GPU first, "
                             "or drop --measured")
    from ..model.roofline.limits import refuse_impossible_workload

    for name, flops, bytes_, time_s, *_ in req.points:
        refuse_impossible_workload(flops, bytes_, time_s, sheet, prof, what=f"--point {name}'s time")
    dtypes = parse_dtypes(req.dtypes, sheet)
    if all(d in ("fp32", "fp64") for d in dtypes):
        refuse_unused(f"with --dtype {','.join(dtypes)} (it picks CUDA-core ceilings for tf32, fp16 and bf16)",
                      no_tensor_cores=not req.tensor_cores)
    return RooflinePlan(sheet, tuple(dtypes), req.tensor_cores, prof, req.points, req.launch_overhead_s)


def _sheet_of_profile(p, spec_dirs):
    """The sheet a profile was recorded against, else the one its GPU's NVML name and PCI id match.

    Raises:
        UsageError: none matches, or the recorded sheet is no longer known; SpecError: a malformed sheet.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError

    s = sheet_for(p.sheet or None, nvml_name=p.name, pci_device_id=p.pci_device_id, spec_dirs=spec_dirs).sheet
    if s is None:
        raise UsageError(f"the profile of {p.name!r} names no spec sheet; pass --gpu NAME")
    return s


def _refuse_other_gpu(prof, sheet, path, spec_dirs) -> None:
    """Refuse a --profile file that measured another GPU model than the --gpu sheet, as ``check
    --baseline`` refuses another model's baseline (:func:`gpuwhy.check.figures.other_model_error`):
    its measured roofs drawn on this GPU's chart would be another GPU's. The model is the sheet the
    profile matches (:func:`_sheet_of_profile`); a profile no sheet matches is this GPU only when its
    NVML name is one the sheet lists.

    Raises:
        UsageError: another model (names both and what to do).
    """
    from ..check.figures import other_model_error, same_model
    from ..errors import GpuwhyError

    try:
        theirs = _sheet_of_profile(prof, spec_dirs)
    except GpuwhyError:
        theirs = None
    if theirs is not None and same_model(theirs.name, sheet.name):
        return
    if theirs is None and any(same_model(prof.name, n) for n in sheet.nvml_names):
        return
    what = f"the {theirs.name}" if theirs is not None else f"a {prof.name!r} (no sheet matches it)"
    raise other_model_error(f"--profile {path!r}", what, f"the {sheet.name}",
                            f"drop --gpu to draw the profile's own GPU, or pass a profile of the {sheet.name}")


def _only_profiled_gpu(spec_dirs):
    """(sheet, newest profile) for --measured with no --gpu and no GPU here: the one GPU that has
    bench profiles, said in a note; refused when several GPUs have them or none does.

    Raises:
        UsageError: no profile at all, or profiles of several GPUs (the message lists them).
    """
    from ..errors import GpuwhyError, UsageError
    from ..notices import note
    from ..profiles import _read_all

    newest: dict[str, object] = {}
    for p in _read_all():
        try:
            s = _sheet_of_profile(p, spec_dirs)
        except GpuwhyError:
            continue
        newest[s.name] = (s, p)
    if not newest:
        raise UsageError("--measured needs a bench profile: there is no GPU here and no saved profile; "
                         "pass --gpu NAME with --profile FILE, or run `gpuwhy bench` on the GPU")
    if len(newest) > 1:
        raise UsageError(f"--measured with no GPU here: profiles exist for {', '.join(sorted(newest))}; "
                         "pass --gpu NAME to pick one")
    (sheet, prof), = newest.values()
    note(f"no GPU here and no --gpu: the measured figures are the {sheet.name}'s newest profile ({prof.date})")
    return sheet, prof
