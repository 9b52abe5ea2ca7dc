"""The options the command modules share, declared once for typer (kept import-light). What they
mean is parsed in :mod:`gpuwhy.api` (:mod:`gpuwhy.api.options`, :mod:`gpuwhy.api.sheets`)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .completion import complete_gpu

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
    """``--gpu``'s callback: when the command ends, the name's family note ("'H100' is the H100 SXM
    sheet; ...", :attr:`gpuwhy.device.sheet.SheetChoice.family`) is kept for the end, read with
    the command's ``--specs`` (:func:`gpuwhy.api.sheets.note_family`)."""
    if value and not ctx.resilient_parsing:
        def note_family() -> None:
            from ..api.sheets import note_family as note

            note(value, ctx.params.get("specs") or ())

        ctx.call_on_close(note_family)
    return value


GpuOpt = Annotated[
    Optional[str],
    typer.Option("--gpu", metavar="NAME", help="GPU spec sheet by name, e.g. 'H100 SXM', 'rtx 5070' (see `gpuwhy specs list`).",
                 callback=_family_note_at_the_end, autocompletion=complete_gpu),
]
DeviceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--id", "-i", "--device", metavar="ID",
        help="GPU(s) as nvidia-smi -i names them: an index (nvidia-smi's, NVML/PCI order; cuda:N for a CUDA ordinal), "
        "a list 0,2, a UUID or prefix, a PCI bus id, or all. --device is the old name.",
    ),
]
