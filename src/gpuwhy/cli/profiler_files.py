"""What `gpuwhy ncu` and `gpuwhy trace` share: ``--top``, and reading a profiler's file
so that a malformed one is one error line, not a traceback."""

from __future__ import annotations

import typer

TopOpt = typer.Option("10", "--top", metavar="N", help="Kernels to list per GPU, by total time.")


def readable(path, what: str, fn, *args, **kwargs):
    """Run an importer; input it cannot make sense of becomes one UsageError line naming the file.

    The importers raise UsageError for every quirk they know; anything else they
    trip over is a malformed file, not a bug worth a traceback.

    Raises:
        UsageError: ``fn`` raised one, or failed on the file (``path: not a readable <what> (...)``).
        GpuwhyError: any other error of gpuwhy's ``fn`` raised, as it is.
    """
    import csv

    from ..errors import GpuwhyError, UsageError

    try:
        return fn(*args, **kwargs)
    except GpuwhyError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, csv.Error, RecursionError) as exc:
        raise UsageError(f"{path}: not a readable {what} ({type(exc).__name__}: {str(exc)[:120]})") from None
