"""The typer application and the one place errors become exit codes.

Command modules register themselves on :data:`app`; :func:`main` runs it and maps
:class:`~gpuwhy.errors.GpuwhyError` subclasses to one stderr line and their exit
code. A command given ``--json`` that fails before printing its document prints the error
document instead (:func:`gpuwhy.render.output.show_error`, docs/schema/error.schema.json), with
the same stderr line and exit code. Heavy imports (pandas, cuda, NVML) happen inside command
bodies only.
"""

from __future__ import annotations

import errno
import os
import sys

from typing import Optional

import typer

from ..version import __version__
from ..errors import EXIT_OUTPUT, EXIT_USAGE, GpuwhyError
from .completion import completion_request, run_completion

EXIT_INTERNAL = 70  # a bug in gpuwhy (EX_SOFTWARE); `--debug` shows the traceback

app = typer.Typer(
    name="gpuwhy",
    help="Where does the GPU time go? Roofline and bottleneck diagnosis: probe, bench, classify.",
    no_args_is_help=False,
    add_completion=False,  # --install-completion/--show-completion [SHELL]: cli/completion.py
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
    install_completion: Optional[str] = typer.Option(
        None, "--install-completion", metavar="[SHELL]",
        help="Install tab completion for SHELL (bash, zsh, fish, powershell; default: this shell)."),
    show_completion: Optional[str] = typer.Option(
        None, "--show-completion", metavar="[SHELL]", help="Print the completion script for SHELL, to install it yourself."),
) -> None:
    """With no command, run the main job: probe the GPU, or with no GPU a spec-sheet classify example.

    ``--install-completion``/``--show-completion`` are declared here for the help; :func:`main` runs them
    (cli/completion.py) before click parses, so the shell is an optional value."""
    _state["debug"] = _state["debug"] or debug  # main() took --debug out of the arguments already
    if ctx.invoked_subcommand is None:
        from .main_job import run_main_job

        raise typer.Exit(run_main_job(json_out=json_out))


def _notes_at_the_end(show: bool) -> None:
    """Print (``show``) or drop the notes kept for the end with render/console.note_later: the family
    notes of the GPU names the command was given (:func:`gpuwhy.notices.note_later`)."""
    from ..render.console import flush_later

    flush_later(show)


def _fail(message: str, code: int, exc: BaseException | None = None) -> int:
    """The one stderr line of a failure, and its exit ``code``; with ``--json`` (and no document
    printed yet) the error document on stdout first (:func:`_json_failure`)."""
    _json_failure(message, code, exc)
    sys.stderr.write(f"gpuwhy: error: {message}\n")
    sys.stderr.flush()
    return code


def _json_failure(message: str, code: int, exc: BaseException | None) -> None:
    """Print the error document (:func:`gpuwhy.render.output.show_error`) when the command run takes
    ``--json`` and was given it, and printed no document before failing (a failed check after its
    document, a command that printed its own error document: nothing more). Never raises: the
    stderr line must still come."""
    args = _state.get("args")
    if args is None or code == EXIT_OUTPUT or "--json" not in _split_program(args)[0]:
        return
    try:
        from ..render.jsonout import documents_written

        if documents_written() > _state.get("documents", 0):
            return
        command = _json_command(args)
        if command is None:
            return
        from ..render.output import show_error

        show_error(command, message, code, candidates=getattr(exc, "candidates", ()) or ())
    except Exception:  # noqa: BLE001 (a broken stdout, a command tree that cannot be built: the line says it)
        pass


def _json_command(args: list[str]) -> str | None:
    """The name of the command ``args`` run (``"specs list"``; ``""`` for gpuwhy with no command)
    when it takes ``--json``, else None."""
    cmd, _ = _command_of(args)
    if not any("--json" in getattr(p, "opts", ()) for p in cmd.params):
        return None
    names, node, rest = [], _click_command(), list(args)
    while hasattr(node, "commands"):
        i = next((k for k, a in enumerate(rest) if a in node.commands), None)
        if i is None:
            break
        names.append(rest[i])
        node, rest = node.commands[rest[i]], rest[i + 1:]
    return " ".join(names)


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


def _command_names() -> set[str]:
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return names | {g.name for g in app.registered_groups if g.name}


def _json_after_command(args: list[str]) -> list[str]:
    """``gpuwhy --json COMMAND ...`` as ``gpuwhy COMMAND ... --json``: every command takes --json,
    so the flag given before the command is honoured, not silently dropped. It goes before a
    ``--`` (what follows is a program's own command line: `gpuwhy run -- python x.py`)."""
    mine, program = _split_program(args)
    names = _command_names()
    first = next((i for i, a in enumerate(mine) if a in names), None)
    if first is None or "--json" not in mine[:first]:
        return args
    rest = [a for a in mine[:first] if a != "--json"] + mine[first:]
    return (rest if "--json" in mine[first:] else rest + ["--json"]) + program


def _split_program(args: list[str]) -> tuple[list[str], list[str]]:
    """``(gpuwhy's arguments, "--" and the program's)``: nothing after ``--`` is gpuwhy's."""
    if "--" in args:
        i = args.index("--")
        return args[:i], args[i:]
    return args, []


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush cannot fail
    (a reader that closed the pipe, `gpuwhy ... | head -1`)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _output_failed(exc: OSError) -> int:
    """One line and :data:`EXIT_OUTPUT` for standard output that cannot be written."""
    _quiet_stdout()
    return _fail(f"cannot write the output ({exc.strerror or exc}); free space or redirect it elsewhere", EXIT_OUTPUT)


def _flush_error() -> OSError | None:
    """Flush standard output; the error that stopped it, or None."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        return exc
    return None


def _finish(code: int) -> int:
    """``code`` once standard output is flushed: 0 when its reader went away (a closed pipe
    is the reader's choice, not an error), :data:`EXIT_OUTPUT` with one line when it
    cannot be written."""
    exc = _flush_error()
    if exc is None:
        return code
    if isinstance(exc, BrokenPipeError):
        _quiet_stdout()
        return 0
    return _output_failed(exc)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (see errors.py for the codes)."""
    from . import register  # noqa: F401  (attaches the commands to `app`)
    from ..notices import listening
    from ..render.console import note, note_later, sanitize_columns, warn

    args = list(argv if argv is not None else sys.argv[1:])
    # --debug is global but users put it anywhere (`gpuwhy classify ... --debug`): take it out here.
    mine, program = _split_program(args)
    _state["debug"] = "--debug" in mine
    args = _json_after_command([a for a in mine if a != "--debug"] + program)
    from ..render.jsonout import documents_written

    _state["args"], _state["documents"] = args, documents_written()
    sanitize_columns()
    previous = _note_ctrl_c()
    try:
        with listening(note, warn, note_later):  # what the use cases tell the reader, on stderr as it comes (or at the end)
            code = _run(args)
        return _finish(code)
    except KeyboardInterrupt:  # Ctrl-C while the output was flushed
        return _interrupted()
    finally:
        if previous is not None and not _state.get("own_process"):
            import signal

            signal.signal(signal.SIGINT, previous)


def _note_ctrl_c():
    """Make Ctrl-C raise KeyboardInterrupt as usual and note that it came (typer hides it behind an
    exit code); returns the handler replaced, or None where none was (not the main thread)."""
    import signal
    import threading

    _state["interrupted"] = False
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_ctrl_c(signum, frame):
        _state["interrupted"] = True
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGINT, on_ctrl_c)
    except (ValueError, OSError):
        return None


def _interrupted() -> int:
    """One line and exit 130 for Ctrl-C; a second Ctrl-C while gpuwhy exits ends it at once, quietly."""
    import signal

    if _state.get("own_process"):  # not when called in-process (tests, notebooks)
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except (ValueError, OSError):  # not the main thread
            pass
    return _fail("interrupted (Ctrl-C)", 130)


_CLICK: list = []


def _click_command():
    """``app`` as a click command, built once per process: typer builds the whole command tree (about
    25 ms) each time it is asked, and a process that runs several commands (tests, a notebook) asks
    at each. Call after ``register`` has attached the commands (``main`` does)."""
    if not _CLICK:
        import typer.completion
        import typer.main

        typer.completion.completion_init()  # the shells' completion classes (add_completion=False skips it)
        _CLICK.append(typer.main.get_command(app))
    return _CLICK[0]


def _command_of(args: list[str]):
    """(the click command ``args`` run, the arguments after its name)."""
    cmd, rest = _click_command(), list(args)
    while hasattr(cmd, "commands"):
        i = next((k for k, a in enumerate(rest) if a in cmd.commands), None)
        if i is None:
            break
        cmd, rest = cmd.commands[rest[i]], rest[i + 1:]
    return cmd, rest


def value_options(cmd) -> set[str]:
    """The spellings of ``cmd``'s options that take a value (not flags)."""
    return {o for p in cmd.params if p.param_type_name == "option" and not getattr(p, "is_flag", False)
            and not getattr(p, "count", False) for o in (*p.opts, *getattr(p, "secondary_opts", ()))}


def _empty_value(args: list[str]) -> str | None:
    """The first option of the command given an empty value (``--dtype ''``, ``--gpu=``), or None.

    An empty value is never meant: every command would otherwise fall back to its default
    silently (``--dtype ''`` classified as fp32)."""
    if not any(not a.strip() or (a.startswith("-") and "=" in a and not a.partition("=")[2].strip()) for a in args):
        return None  # no blank argument and no blank --opt=: nothing to find (and no command tree to build, ~30 ms)
    cmd, rest = _command_of(args)
    takes = value_options(cmd)
    for k, a in enumerate(rest):
        if a == "--":
            break
        name, eq, val = a.partition("=")
        if eq and name in takes and not val.strip():
            return name
        if a in takes and k + 1 < len(rest) and not rest[k + 1].strip():
            return a
    return None


def _run(args: list[str]) -> int:
    _notes_at_the_end(False)  # nothing kept from an earlier run in this process
    try:
        completion = completion_request(args)
        if completion is not None:
            return run_completion(*completion)
        empty = _empty_value(args)
        if empty is not None:
            raise GpuwhyError(f"{empty} is empty; give it a value or leave {empty} out")
        rv = _click_command().main(args=args, prog_name="gpuwhy", standalone_mode=False)
        if _state.get("interrupted"):  # typer turns Ctrl-C into a silent exit code 130
            return _interrupted()
        _notes_at_the_end(True)
        return int(rv or 0)
    except GpuwhyError as exc:
        _notes_at_the_end(exc.exit_code == 1)  # a failed check still shows what it used
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        return _fail(str(exc), exc.exit_code, exc)
    except KeyboardInterrupt:
        return _interrupted()
    except RecursionError:
        return _fail("an input file is nested too deeply to read (is it the right file?)", EXIT_USAGE)
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit as exc:
        if _from_broken_pipe(exc):  # rich, typer's help and click's own EPIPE handling exit 1 when the reader went away
            _quiet_stdout()
            return 0
        raise
    except Exception as exc:
        kind = _click_kind(exc)
        if kind == "exit":
            if _state.get("interrupted"):
                return _interrupted()
            return int(getattr(exc, "exit_code", 0) or 0)
        if kind == "abort":
            return _fail("aborted", 130)
        if kind == "usage":
            if not exc.format_message().strip():  # a group run with no subcommand: help was printed
                return EXIT_USAGE
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            return _fail(exc.format_message().replace("\n", " ") + hint, EXIT_USAGE)
        from ..api.libraries import unusable_library

        lib = unusable_library(exc)  # a CUDA library that cannot be used, wherever it was first called
        if lib is not None:
            return _fail(str(lib), lib.exit_code)
        if isinstance(exc, OSError) and (exc.errno in _WRITE_ERRNOS or _flush_error() is not None):
            # gpuwhy's own files report their write errors as usage errors; what is left is the output
            return _output_failed(exc)
        # A bug: one line, the traceback only with --debug.
        if _state["debug"]:
            import traceback

            traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc} (re-run with --debug and report it)", EXIT_INTERNAL)


def _from_broken_pipe(exc: BaseException) -> bool:
    """Whether the ``SystemExit`` ``exc`` is how a library answered a closed standard output: rich's
    ``on_broken_pipe`` raised it, or click/typer turned a ``BrokenPipeError`` of a write (every
    ``--json`` and ``--csv`` document) into ``sys.exit(1)``; either way the reader went away and
    gpuwhy exits 0, as it does for its own writes."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "on_broken_pipe":
            return True
        tb = tb.tb_next
    seen: set[int] = set()
    cause = exc.__context__
    while cause is not None and id(cause) not in seen:  # the error being handled when it exited
        if isinstance(cause, BrokenPipeError) or (isinstance(cause, OSError) and cause.errno == errno.EPIPE):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


#: Errors of writing, not of a bug: a full disk or quota, a file too large, a failing device.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def entry() -> None:
    """Console-script entry point.

    After Ctrl-C (exit 130) the streams are flushed and the process ends at once, without the
    interpreter's shutdown: native work the interrupt abandoned (an NVRTC compile cannot be
    stopped, only left to finish; its program is never freed) made that shutdown crash with
    SIGSEGV or a glibc/LLVM abort about 1 run in 8. The files a command writes are closed before
    it returns, so only atexit handlers and finalizers are skipped."""
    _state["own_process"] = True
    code = main()
    if code == 130:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)
