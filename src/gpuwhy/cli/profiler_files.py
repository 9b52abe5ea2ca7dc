"""What `gpuwhy ncu` and `gpuwhy trace` share: ``--top`` (reading a profiler's file so that a malformed
one is one error line is :func:`gpuwhy.api.readers.readable`)."""

from __future__ import annotations

import typer

TopOpt = typer.Option("10", "--top", metavar="N", help="Kernels to list per GPU, by total time.")
