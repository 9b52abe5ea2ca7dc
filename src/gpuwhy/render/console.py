"""Shared rich consoles: results on stdout, warnings and notes on stderr."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def out():
    """The rich Console for results (stdout)."""
    import os
    import sys

    from rich.console import Console

    # Piped output keeps wide tables whole instead of rich's 80-column default.
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(highlight=False, width=width)


@lru_cache(maxsize=None)
def err():
    """The rich Console for warnings and progress (stderr)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def warn(message: str) -> None:
    """Print one warning line on stderr."""
    err().print(f"[yellow]warning:[/yellow] {message}", markup=True, highlight=False, soft_wrap=True)


def note(message: str) -> None:
    """Print one informational line on stderr."""
    err().print(f"[dim]{message}[/dim]", markup=True, highlight=False, soft_wrap=True)


def note_left_out(verb: str, left_out: dict[str, int], notes) -> None:
    """Print on stderr what reading a file left out (``<verb> <count> <reason>``), then its ``notes``, one a line."""
    for reason, n in left_out.items():
        note(f"{verb} {n} {reason}")
    for n in notes:
        note(n)
