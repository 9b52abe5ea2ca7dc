"""`gpuwhy specs list|show|validate`: the spec sheets."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import CsvOpt, JsonOpt, SpecsOpt

specs_app = typer.Typer(help="List, show and validate GPU spec sheets.", no_args_is_help=True)
app.add_typer(specs_app, name="specs")


@specs_app.command("list")
def list_cmd(specs: SpecsOpt = None, json_out: JsonOpt = False, csv_out: CsvOpt = False) -> None:
    """Every known sheet: bandwidth, fp32 and bf16 dense peaks, ridge point."""
    from ..specs import library

    lib = library(specs or ())
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("specs.list", {"sheets": [s.to_dict() for s in lib]}, json_out)
    if json_out:
        from ..render.jsonout import emit

        emit("specs.list", {"sheets": [s.to_dict() for s in lib]})
        return
    from ..render.tables import render_sheet_list

    render_sheet_list(lib)


@specs_app.command("show")
def show_cmd(name: str = typer.Argument(..., help="GPU name, e.g. 'H200' or 'rtx 5070'."), specs: SpecsOpt = None, json_out: JsonOpt = False) -> None:
    """One sheet: peaks per precision, ridge points and the source of each figure."""
    from ..device.sheet import sheet_for

    sheet = sheet_for(name, spec_dirs=specs or ()).sheet
    if json_out:
        from ..render.jsonout import emit

        emit("specs.show", sheet.to_dict())
        return
    from ..render.tables import render_sheet

    render_sheet(sheet)


@specs_app.command("validate")
def validate_cmd(
    paths: Optional[List[str]] = typer.Argument(None, help="Sheet files or folders (default: every sheet in use)."),
    json_out: JsonOpt = False,
) -> None:
    """Check sheets against the schema; exit 2 with one line naming the file and field on the first error."""
    from pathlib import Path

    from ..errors import UsageError
    from ..specs import library, load_yaml, validate_sheet

    checked: list[str] = []
    if paths:
        for p in map(Path, paths):
            if not p.exists():
                raise UsageError(f"{p}: no such file or folder")
            files = sorted(p.glob("*.yaml")) if p.is_dir() else [p]
            for f in files:
                validate_sheet(load_yaml(f), str(f), "validate")
                checked.append(str(f))
    else:
        checked = [s.path for s in library()]
    if not checked:
        raise UsageError(f"no *.yaml spec sheets found in {', '.join(paths or ['the spec folders'])}; nothing was validated")
    if json_out:
        from ..render.jsonout import emit

        emit("specs.validate", {"ok": True, "files": checked})
        return
    from ..render.console import out

    out().print(f"{len(checked)} sheet(s) valid")
