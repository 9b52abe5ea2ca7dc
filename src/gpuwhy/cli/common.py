"""Options and helpers shared by the command modules (kept import-light)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout and nothing else there.")]
CsvOpt = Annotated[
    bool,
    typer.Option("--csv", help="Print the table as CSV on stdout (a header row; SI units in the column names) and nothing else there."),
]
SpecsOpt = Annotated[
    Optional[List[str]],
    typer.Option("--specs", metavar="DIR", help="Extra folder of spec-sheet YAML files (overrides bundled sheets of the same name). Repeatable; also GPUWHY_SPECS."),
]


def _family_note_at_the_end(ctx: typer.Context, value: Optional[str]) -> Optional[str]:
    """``--gpu``'s callback: when the command ends, the name's :class:`~gpuwhy.device.sheet.SheetChoice`
    (with the command's ``--specs``) has its family note ("'H100' is the H100 SXM sheet; ...") kept
    for the end (:func:`noted`), wherever in the command the name was used. A name that matches no
    sheet notes nothing here: the command itself says so."""
    if value and not ctx.resilient_parsing:
        def note_family() -> None:
            from ..device.sheet import sheet_for
            from ..errors import GpuwhyError

            try:
                choice = sheet_for(value, spec_dirs=tuple(ctx.params.get("specs") or ()))
            except GpuwhyError:
                return
            noted(choice)  # a name given is never in conflict: its family note only

        ctx.call_on_close(note_family)
    return value


GpuOpt = Annotated[
    Optional[str],
    typer.Option("--gpu", metavar="NAME", help="GPU spec sheet by name, e.g. 'H100 SXM', 'rtx 5070' (see `gpuwhy specs list`).",
                 callback=_family_note_at_the_end),
]
DeviceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--id", "-i", "--device", metavar="ID",
        help="GPU(s) as nvidia-smi -i names them: an index (nvidia-smi's, NVML/PCI order; cuda:N for a CUDA ordinal), "
        "a list 0,2, a UUID or prefix, a PCI bus id, or all. --device is the old name.",
    ),
]


def noted(choice):
    """``choice`` (a :class:`~gpuwhy.device.sheet.SheetChoice`, e.g. of
    :func:`gpuwhy.device.probe.gpu_sheet`: ``--gpu NAME``, else this machine's GPU) with its
    name/PCI-id conflict note printed on stderr now and its family note ("'H100' is the H100 SXM sheet; ...") kept for the end of a
    command that succeeds (:func:`gpuwhy.render.console.note_later`)."""
    from ..render.console import note, note_later

    if choice.conflict:
        note(choice.conflict)
    if choice.family:
        note_later(choice.family)
    return choice


def refuse_unused(context: str, **given) -> None:
    """Refuse options that would be silently ignored: ``given`` maps each flag (as a keyword,
    ``--no-tensor-cores`` spelled ``no_tensor_cores``) to whether it was given; ``context`` says
    why it means nothing here (``"with --ncu"``).

    Raises:
        UsageError: naming the first such flag ("--measured has no effect with --ncu; drop it").
    """
    from ..errors import UsageError

    for key, value in given.items():
        if value not in (None, False, (), []):
            flag = "--" + key.rstrip("_").replace("_", "-")
            raise UsageError(f"{flag} has no effect {context}; drop it")


def parse_point(text: str, allow_dtype: bool = False):
    """``NAME:FLOPS:BYTES[:TIME]`` -> ``(name, FLOPs, bytes, seconds or None)``; with
    ``allow_dtype`` also ``NAME:FLOPS:BYTES[:TIME][:DTYPE]`` -> ``(..., dtype or None)``
    (the precision the point is judged against).

    FLOPS and BYTES take gpuwhy's quantities (``2.5T``, ``12GB``); TIME a duration (``850us``).

    Raises:
        UsageError: wrong field count, an empty name, or a bad number (one line naming it).
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES
    from ..units import parse_quantity, parse_time

    parts = str(text).split(":")
    dtype = None
    if allow_dtype and len(parts) in (4, 5) and parts[-1].strip().lower() in DTYPES:
        dtype = parts.pop().strip().lower()
    elif allow_dtype and len(parts) == 5:
        raise UsageError(f"--point {parts[0].strip() or text!r} DTYPE {parts[-1]!r} is not one of: {', '.join(DTYPES)}")
    if len(parts) not in (3, 4) or not parts[0].strip():
        more = " or NAME:FLOPS:BYTES:TIME:DTYPE" if allow_dtype else ""
        raise UsageError(f"--point {text!r} must be NAME:FLOPS:BYTES or NAME:FLOPS:BYTES:TIME{more}, e.g. gemm:2.2T:400MB:3.1ms")
    name = parts[0].strip()
    f = parse_quantity(parts[1], f"--point {name} FLOPS", unit="FLOP")
    b = parse_quantity(parts[2], f"--point {name} BYTES", unit="B")
    t = parse_time(parts[3], f"--point {name} TIME") if len(parts) == 4 else None
    return (name, f, b, t, dtype) if allow_dtype else (name, f, b, t)
