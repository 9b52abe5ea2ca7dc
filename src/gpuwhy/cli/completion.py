"""``gpuwhy --install-completion [SHELL]`` and ``--show-completion [SHELL]``, and the value
completers the options name (``autocompletion=``): GPU names, precisions, example workloads.

typer's own ``--install-completion`` is a flag: ``--install-completion fish`` installed the
script of the shell it ran under (bash) and dropped ``fish``; a home it cannot write was an
internal error (exit 70). Here the shell is an optional value, and a file that cannot be
written is one line and exit 74 (:class:`~gpuwhy.errors.OutputError`).
"""

from __future__ import annotations

import sys

from ..errors import UsageError

FLAGS = ("--install-completion", "--show-completion")


def completion_request(args: list[str]) -> tuple[str, str | None] | None:
    """``(flag, shell or None)`` when ``args`` ask for a completion script (the flag among the
    leading options, before any command), else None.

    Raises:
        UsageError: more than one value after the flag.
    """
    for k, a in enumerate(args):
        if not a.startswith("-"):
            return None
        flag, eq, val = a.partition("=")
        if flag not in FLAGS:
            continue
        rest = [v for v in args[k + 1:] if not v.startswith("-")]
        values = ([val] if eq else []) + rest
        if len(values) > 1:
            raise UsageError(f"{flag} takes one shell (bash, zsh, fish or powershell), not {' '.join(values)!r}")
        return flag, (values[0] if values else None)
    return None


def run_completion(flag: str, shell: str | None) -> int:
    """Install the script, or print it; 0.

    Raises:
        UsageError: an unknown shell, or none named and none detected.
        OutputError: the script or the shell's start-up file cannot be written.
    """
    from ..api.completion import completion_script, install_completion

    if flag == "--show-completion":
        sys.stdout.write(completion_script(shell) + "\n")
        return 0
    name, path = install_completion(shell)
    sys.stdout.write(f"{name} completion installed in {path}\nCompletion will take effect once you restart the terminal\n")
    return 0


def complete_gpu(incomplete: str) -> list[str]:
    """``--gpu``: the spec sheets' names."""
    from ..api.completion import gpu_names

    return gpu_names(incomplete)


def complete_dtype(incomplete: str) -> list[str]:
    """``--dtype``: the precisions a sheet may list."""
    from ..api.completion import dtypes

    return dtypes(incomplete)


def complete_example(incomplete: str) -> list[str]:
    """``--example``: the named example workloads."""
    from ..api.completion import example_names

    return example_names(incomplete)
