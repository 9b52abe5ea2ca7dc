"""What `gpuwhy ncu` and `gpuwhy trace` share: ``--top``, ``--example`` (the sample inputs; `check` too) (reading a profiler's file so that a malformed
one is one error line is :func:`gpuwhy.api.readers.readable`)."""

from __future__ import annotations

import typer

TopOpt = typer.Option("10", "--top", metavar="N", help="Kernels to list per GPU, by total time.")

ExampleOpt = typer.Option(None, "--example", metavar="NAME",
                          help="Read one of the sample inputs shipped with gpuwhy instead of a file of yours; "
                               "`--example list` lists them.")


def example_file(command: str, given: str | None, example: str | None, *, json_out: bool = False,
                 csv_out: bool = False, given_name: str = "a file") -> str | None:
    """The file ``command`` reads: ``given``, or the sample input ``example``
    (:func:`gpuwhy.api.examples.sample_input`); None when ``--example list`` printed the list instead.

    Raises:
        UsageError: both or neither given (``neither`` is left to the command: ``given`` is returned),
            an unknown sample, or ``--example list`` with ``--json``/``--csv`` (it prints a list only).
    """
    if example is None:
        return given
    from ..errors import UsageError

    if given is not None:
        raise UsageError(f"give either {given_name} ({given}) or --example {example}, not both")
    from ..api.examples import LIST, sample_input, sample_inputs

    if example != LIST:
        return sample_input(command, example)
    if json_out or csv_out:
        raise UsageError(f"--example {LIST} prints the sample inputs for people; drop {'--json' if json_out else '--csv'}")
    from ..render.examples_view import render_sample_inputs

    render_sample_inputs(command, sample_inputs(command))
    return None
