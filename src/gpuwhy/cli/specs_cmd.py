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
    from ..api.specs import list_sheets
    from ..render.output import Format, show
    from ..render.tables import render_sheet_list

    show("specs.list", list_sheets(specs or ()), Format(json_out, csv_out), render_sheet_list)


@specs_app.command("show")
def show_cmd(name: str = typer.Argument(..., help="GPU name, e.g. 'H200' or 'rtx 5070'."), specs: SpecsOpt = None, json_out: JsonOpt = False) -> None:
    """One sheet: peaks per precision, ridge points and the source of each figure."""
    from ..api.specs import show_sheet
    from ..render.output import Format, show
    from ..render.tables import render_sheet

    show("specs.show", show_sheet(name, specs or ()), Format(json_out), render_sheet)


@specs_app.command("validate")
def validate_cmd(
    paths: Optional[List[str]] = typer.Argument(None, help="Sheet files or folders (default: every sheet in use)."),
    json_out: JsonOpt = False,
) -> None:
    """Check sheets against the schema: every file, each bad one on its own line (file and field), then exit 2."""
    from ..api.specs import validate_sheets
    from ..render.output import Format, show
    from ..render.specs_view import render_validation

    checked = validate_sheets(paths)
    show("specs.validate", checked, Format(json_out), render_validation)
    error = checked.error(summary=json_out)
    if error is not None:
        raise error
