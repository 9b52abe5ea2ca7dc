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
    from .common import noted

    sheet = noted(sheet_for(name, spec_dirs=specs or ())).sheet
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
    """Check sheets against the schema: every file, each bad one on its own line (file and field), then exit 2."""
    from pathlib import Path

    from ..errors import GpuwhyError, SpecError, UsageError
    from ..specs import library, load_yaml, validate_sheet

    checked: list[str] = []
    bad: list[tuple[str, str]] = []
    if paths:
        for p in map(Path, paths):
            if not p.exists():
                bad.append((str(p), f"{p}: no such file or folder"))
                continue
            files = sorted(p.glob("*.yaml")) if p.is_dir() else [p]
            for f in files:
                try:
                    validate_sheet(load_yaml(f), str(f), "validate")
                except GpuwhyError as exc:
                    bad.append((str(f), str(exc)))
                else:
                    checked.append(str(f))
    else:
        checked = [s.path for s in library()]
    if not checked and not bad:
        raise UsageError(f"no *.yaml spec sheets found in {', '.join(paths or ['the spec folders'])}; nothing was validated")
    if json_out:
        from ..render.jsonout import emit

        emit("specs.validate", {"ok": not bad, "files": checked, "errors": [{"file": f, "error": e} for f, e in bad]})
    else:
        import sys

        from ..render.console import out

        for _, e in bad[:-1]:  # one line each, as the CLI writes errors; the last is the command's own error line
            sys.stderr.write(f"gpuwhy: error: {e}\n")
        if checked:
            out().print(f"{len(checked)} sheet(s) valid" + (f", {len(bad)} invalid" if bad else ""))
    if bad:
        if json_out:
            raise SpecError(f"{len(bad)} of {len(bad) + len(checked)} sheet(s) invalid; the first: {bad[0][1]}")
        raise SpecError(bad[-1][1])
