"""What the shell completes (`gpuwhy --install-completion`): the values of ``--gpu`` (the sheets'
names), ``--dtype`` (the precisions a sheet lists) and ``--example`` (the named workloads), and
the one place the completion script is installed.

Completion runs on every Tab: a value source that fails (a malformed sheet, an unreadable
``GPUWHY_SPECS`` folder) completes nothing rather than printing a traceback into the shell.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import GpuwhyError, OutputError, UsageError

#: The shells typer writes a completion script for (``pwsh`` is PowerShell's other name).
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _starting(names, incomplete: str) -> list[str]:
    low = incomplete.lower()
    return [n for n in names if n.lower().startswith(low)]


def gpu_names(incomplete: str = "") -> list[str]:
    """The sheet names (bundled and ``GPUWHY_SPECS``) that start with ``incomplete`` (case ignored)."""
    from ..specs import library

    try:
        return _starting((s.name for s in library()), incomplete)
    except (GpuwhyError, OSError):
        return []


def dtypes(incomplete: str = "") -> list[str]:
    """The precisions a sheet may list (:data:`gpuwhy.specs.PRECISIONS`) that start with ``incomplete``."""
    from ..specs import PRECISIONS

    return _starting(PRECISIONS, incomplete)


def example_names(incomplete: str = "") -> list[str]:
    """The named example workloads of ``classify --example`` that start with ``incomplete``."""
    from .examples import load_examples

    try:
        return _starting(load_examples(), incomplete)
    except (GpuwhyError, OSError):
        return []


def _shell(shell: str | None, flag: str) -> str:
    """``shell`` checked (lower case), or the shell this runs under when None.

    Raises:
        UsageError: not one of :data:`SHELLS`, or none named and none can be told.
    """
    from typer import _completion_shared as typer_completion

    if shell is None:
        shell = typer_completion._get_shell_name()
        if shell not in SHELLS:
            raise UsageError(f"cannot tell which shell this is; name it: gpuwhy {flag} bash|zsh|fish|powershell")
    if shell.lower() not in SHELLS:
        raise UsageError(f"{flag} {shell!r}: not a shell gpuwhy can complete in; give bash, zsh, fish or powershell")
    return shell.lower()


def install_completion(shell: str | None) -> tuple[str, Path]:
    """Write the completion script of ``shell`` (None: the shell this runs under, as typer detects it)
    where that shell reads it (typer's places: ``~/.bash_completions/``, ``~/.zfunc/``,
    ``~/.config/fish/completions/``, the PowerShell profile); ``(shell, path written)``.

    Raises:
        UsageError: see :func:`_shell`.
        OutputError: the file, its folder or the shell's start-up file cannot be written (a
            read-only home, a full disk): one line naming it and what to do instead.
    """
    from typer import _completion_shared as typer_completion

    shell = _shell(shell, "--install-completion")
    try:
        return typer_completion.install(shell=shell, prog_name="gpuwhy")
    except OSError as exc:
        where = f" {str(exc.filename)!r}" if exc.filename else ""
        raise OutputError(
            f"cannot install the {shell} completion: cannot write{where} ({exc.strerror or exc}); make it writable, "
            f"or save the output of `gpuwhy --show-completion {shell}` where {shell} reads completions") from None


def completion_script(shell: str | None) -> str:
    """The completion script of ``shell`` (None: the shell this runs under) as text.

    Raises:
        UsageError: see :func:`_shell`.
    """
    from typer import _completion_shared as typer_completion

    shell = _shell(shell, "--show-completion")
    return typer_completion.get_completion_script(prog_name="gpuwhy", complete_var="_GPUWHY_COMPLETE",
                                                  shell="powershell" if shell == "pwsh" else shell)
