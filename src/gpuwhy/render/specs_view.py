"""The terminal view of `gpuwhy specs validate` (the sheet list and one sheet: :mod:`gpuwhy.render.tables`)."""

from __future__ import annotations


def render_validation(v) -> None:
    """A :class:`~gpuwhy.api.specs.SheetValidation`: each bad sheet but the last on stderr, one line
    each as the CLI writes errors (the last is the command's own error line), then how many passed."""
    import sys

    from ..units import fmt_counted
    from .console import out

    for _, e in v.bad[:-1]:
        sys.stderr.write(f"gpuwhy: error: {e}\n")
    if v.checked:
        out().print(f"{fmt_counted(len(v.checked), 'sheet')} valid" + (f", {len(v.bad)} invalid" if v.bad else ""))
