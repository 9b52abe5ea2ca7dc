"""The options the command modules share, declared once for typer (kept import-light). What they
mean is parsed in :mod:`gpuwhy.api` (:mod:`gpuwhy.api.options`, :mod:`gpuwhy.api.sheets`)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout and nothing else there.")]
CsvOpt = Annotated[
    bool,
    typer.Option("--csv", help="Print the table as CSV on stdout (a header row; SI units in the column names) and nothing else there."),
]
SpecsOpt = Annotated[
    Optional[List[str]],
    typer.Option("--specs", metavar="DIR", help="Extra folder of spec-sheet YAML files (overrides bundled sheets of the same name). Repeatable; also GPUWHY_SPECS."),
]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", metavar="NAME", help="GPU spec sheet by name, e.g. 'H100 SXM', 'rtx 5070' (see `gpuwhy specs list`).")]
DeviceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--id", "-i", "--device", metavar="ID",
        help="GPU(s) as nvidia-smi -i names them: an index (nvidia-smi's, NVML/PCI order; cuda:N for a CUDA ordinal), "
        "a list 0,2, a UUID or prefix, a PCI bus id, or all. --device is the old name.",
    ),
]
