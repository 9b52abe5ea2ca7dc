"""`gpuwhy probe`: not yet built (see the project's issues)."""

from __future__ import annotations

import typer

from .app import app


@app.command("probe", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def probe_cmd(ctx: typer.Context) -> None:
    """Not yet available in this version."""
    from ..errors import UsageError

    raise UsageError("`gpuwhy probe` is not built yet in this version; see README.md for what works today")
