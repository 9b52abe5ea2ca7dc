"""The command-line interface: a thin typer layer that parses, calls and renders."""

from .app import app, entry, main

__all__ = ["app", "entry", "main"]
