"""The typer application and the one place errors become exit codes.

Command modules register themselves on :data:`app`; :func:`main` runs it and maps
:class:`~gpuwhy.errors.GpuwhyError` subclasses to one stderr line and their exit
code. Heavy imports (pandas, cuda, NVML) happen inside command bodies only.
"""

from __future__ import annotations

import sys

import typer

from ..version import __version__
from ..errors import EXIT_USAGE, GpuwhyError

EXIT_INTERNAL = 70  # a bug in gpuwhy (EX_SOFTWARE); `--debug` shows the traceback

app = typer.Typer(
    name="gpuwhy",
    help="Where does the GPU time go? Roofline and bottleneck diagnosis: probe, bench, classify.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuwhy {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on errors (may also follow the command)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    json_out: bool = typer.Option(False, "--json", help="With no command: print the main job's result as JSON."),
) -> None:
    """With no command, run the main job: probe the GPU, or with no GPU a spec-sheet classify example."""
    _state["debug"] = debug
    if ctx.invoked_subcommand is None:
        from .main_job import run_main_job

        raise typer.Exit(run_main_job(json_out=json_out))


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"gpuwhy: error: {message}\n")
    sys.stderr.flush()
    return code


def _click_kind(exc: BaseException) -> str | None:
    """'exit', 'abort' or 'usage' for click's (or typer's vendored click's) exceptions, else None.

    Matched by class name so it works whether typer uses click or its own copy.
    """
    names = {c.__name__ for c in type(exc).__mro__}
    if "Exit" in names:
        return "exit"
    if "Abort" in names:
        return "abort"
    if "ClickException" in names:
        return "usage"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (see errors.py for the codes)."""
    from . import register  # noqa: F401  (attaches the commands to `app`)

    args = list(argv if argv is not None else sys.argv[1:])
    # --debug is global but users put it anywhere (`gpuwhy classify ... --debug`): take it out here.
    _state["debug"] = "--debug" in args
    args = [a for a in args if a != "--debug"]
    try:
        rv = app(args=args, prog_name="gpuwhy", standalone_mode=False)
        return int(rv or 0)
    except GpuwhyError as exc:
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        return _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except RecursionError:
        return _fail("an input file is nested too deeply to read (is it the right file?)", EXIT_USAGE)
    except BrokenPipeError:
        return 0
    except Exception as exc:
        kind = _click_kind(exc)
        if kind == "exit":
            return int(getattr(exc, "exit_code", 0) or 0)
        if kind == "abort":
            return _fail("aborted", 130)
        if kind == "usage":
            if not exc.format_message().strip():  # a group run with no subcommand: help was printed
                return EXIT_USAGE
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            return _fail(exc.format_message().replace("\n", " ") + hint, EXIT_USAGE)
        # A bug: one line, the traceback only with --debug.
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc} (re-run with --debug and report it)", EXIT_INTERNAL)


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
