"""Options and helpers shared by the command modules (kept import-light)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout and nothing else there.")]
SpecsOpt = Annotated[
    Optional[List[str]],
    typer.Option("--specs", metavar="DIR", help="Extra folder of spec-sheet YAML files (overrides bundled sheets of the same name). Repeatable; also GPUWHY_SPECS."),
]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", metavar="NAME", help="GPU spec sheet by name, e.g. 'H100 SXM', 'rtx 5070' (see `gpuwhy specs list`).")]
DeviceOpt = Annotated[Optional[str], typer.Option("--device", metavar="N|UUID", help="GPU index (CUDA order) or UUID.")]


def chosen_sheet(gpu, specs=None):
    """The spec sheet for ``--gpu NAME``, else for the GPU in this machine
    (:func:`gpuwhy.device.probe.gpu_sheet`); a name/PCI-id conflict is noted on stderr.

    Raises:
        UsageError: an unknown name, or no --gpu and no GPU (the message says to pass --gpu).
    """
    from ..device.probe import gpu_sheet

    choice = gpu_sheet(gpu, tuple(specs or ()))
    return noted(choice).sheet


def noted(choice):
    """``choice`` (a :class:`~gpuwhy.device.sheet.SheetChoice`) with its conflict note printed on
    stderr (its family note, "'H100' is the H100 SXM sheet; ...", is printed by the CLI at the
    end of a command that succeeds, wherever the name was resolved)."""
    from ..render.console import note

    if choice.conflict:
        note(choice.conflict)
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


def parse_point(text: str):
    """``NAME:FLOPS:BYTES[:TIME]`` -> ``(name, FLOPs, bytes, seconds or None)``.

    FLOPS and BYTES take gpuwhy's quantities (``2.5T``, ``12GB``); TIME a duration (``850us``).

    Raises:
        UsageError: wrong field count, an empty name, or a bad number (one line naming it).
    """
    from ..errors import UsageError
    from ..units import parse_quantity, parse_time

    parts = str(text).split(":")
    if len(parts) not in (3, 4) or not parts[0].strip():
        raise UsageError(f"--point {text!r} must be NAME:FLOPS:BYTES or NAME:FLOPS:BYTES:TIME, e.g. gemm:2.2T:400MB:3.1ms")
    name = parts[0].strip()
    f = parse_quantity(parts[1], f"--point {name} FLOPS", unit="FLOP")
    b = parse_quantity(parts[2], f"--point {name} BYTES", unit="B")
    t = parse_time(parts[3], f"--point {name} TIME") if len(parts) == 4 else None
    return name, f, b, t
