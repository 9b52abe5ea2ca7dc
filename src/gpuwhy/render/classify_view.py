"""The terminal view of `gpuwhy classify` (and of a bare `gpuwhy` with no GPU)."""

from __future__ import annotations


def render_classify(c) -> None:
    """A :class:`~gpuwhy.api.classify.Classification`: a named example's words first, then
    :func:`gpuwhy.render.tables.render_classification`."""
    from .console import out
    from .tables import render_classification

    if getattr(c, "example_description", ""):
        out().print(f"example {c.example}: {c.example_description}")
    render_classification(c)
