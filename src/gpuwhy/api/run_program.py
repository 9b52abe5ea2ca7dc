"""Run a user's Python program in this process under a profiler, as ``python -m cProfile`` does.

``sys.argv`` is the program's, it runs as ``__main__`` (a script by path, or a
module with ``-m``), its directory is first on ``sys.path``, and its exit
code is passed back: ``sys.exit(n)`` gives ``n``, an uncaught exception gives
1 with the traceback printed to stderr as Python prints it, Ctrl-C gives 130
and the partial window is still exported. Everything the call changed in
``sys`` is put back afterwards, and the working folder. ``os._exit(n)`` in the
program ends gpuwhy's process too (nothing is judged): it is not Python's exit.

The profiler is a small protocol (:class:`Profiler`) so tests can run a
script with a fake one; :func:`torch_profiler` (CPU and CUDA activities; shapes
and FLOPs off, as they slow the host side being judged) and :func:`cupti_profiler`
(CUPTI through cupti-python, any CUDA program; the same Chrome trace) are the real ones.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from ..errors import NoDeviceError, UsageError

#: Exit code of a program stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


class NoPyTorch(NoDeviceError):
    """PyTorch is not importable, so no timeline can be recorded (exit 3, as :class:`NoDeviceError`);
    `gpuwhy run` then profiles the program's kernels with ncu alone where it can."""


class Profiler(Protocol):
    """What :func:`run_python` needs of a profiler: start, stop, write a Chrome trace to a path."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def export(self, path: Path) -> None: ...


@dataclass(frozen=True)
class ProgramRun:
    """One run of the program: its exit code, wall time (s) of the profiled run, the trace written (or None).

    ``error`` is the last line of an uncaught exception (``None`` when it
    exited normally or by ``sys.exit``); ``interrupted`` is True after Ctrl-C; ``notes``: what the
    tracer saw that the reader should know (the program started JAX's own profiler); ``other_trace``:
    the log folder of a profiler the program started itself, which took CUPTI over (None: none).
    """

    argv: tuple[str, ...]
    exit_code: int
    wall_s: float
    trace: Path | None
    error: str | None = None
    interrupted: bool = False
    notes: tuple[str, ...] = ()
    other_trace: Path | None = None


class _TorchProfiler:
    def __init__(self) -> None:
        import torch
        from torch.profiler import ProfilerActivity, profile

        if not torch.cuda.is_available():
            raise NoDeviceError("PyTorch sees no CUDA GPU (torch.cuda.is_available() is False): gpuwhy run needs a GPU")
        # Shapes and FLOPs are off: they add host time per op, which would inflate the launch gaps judged.
        # acc_events keeps every event (torch otherwise warns that it clears them per cycle).
        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        try:
            self._prof = profile(activities=acts, acc_events=True)
        except TypeError:  # PyTorch before 2.4 has no acc_events
            self._prof = profile(activities=acts)
        self._make = lambda: profile(activities=acts)
        self.cost: dict | None = None

    def start(self) -> None:
        import json

        from ..engine.tracer_cost import measure
        from ..importers.kineto import host_events
        from ..importers.timeline.activities import TRACER_KEY

        self.cost = measure(self._make, host_events)  # before the program: its own cost, written into its trace
        self._prof.start()
        if self.cost is not None:
            try:
                self._prof.add_metadata_json(TRACER_KEY, json.dumps(self.cost))
            except Exception:  # noqa: BLE001 - an old PyTorch without it: the trace goes without the figure
                self.cost = None

    def stop(self) -> None:
        import torch

        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a failed program may leave the GPU in an error state; still export
            pass
        self._prof.stop()

    def export(self, path: Path) -> None:
        self._prof.export_chrome_trace(str(path))


def torch_profiler() -> Profiler:
    """A torch.profiler with CPU and CUDA activities (no shapes or FLOPs: they add host time per op).

    Raises:
        NoPyTorch: PyTorch is not importable (the message says what to install).
        NoDeviceError: PyTorch sees no CUDA GPU.
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        raise NoPyTorch("PyTorch is not importable here: install it (pip install torch) to profile a Python "
                        "program's timeline, or Nsight Compute (ncu) to profile its kernels") from None
    return _TorchProfiler()


#: Set to a file path, `--tracer cupti` also writes the raw CUPTI records there (JSON), for tests that replay them.
RECORDS_ENV = "GPUWHY_CUPTI_RECORDS"


class _CuptiProfiler:
    """The CUPTI tracer, its capture written as a Chrome trace in torch.profiler's spelling."""

    def __init__(self) -> None:
        from ..engine.cupti_tracer import CuptiTracer

        self._tracer = CuptiTracer()
        self.notes: tuple[str, ...] = ()  # what the capture showed that the reader should know
        self.other_trace: Path | None = None  # JAX's own profiler's log folder, where the program started it

    def start(self) -> None:
        self._tracer.start()

    def stop(self) -> None:
        self._tracer.stop()

    def export(self, path: Path) -> None:
        import json

        from ..engine.jax_profiler_watch import first_start, log_dir, note
        from ..importers.cupti.records import chrome_trace

        cap = self._tracer.capture()
        started = first_start(cap["records"])  # one pass over the records; note and folder from its result
        said = note([started], cap["start_ns"]) if started is not None else None
        self.notes = (said,) if said else ()
        folder = log_dir([started]) if started is not None else None
        self.other_trace = Path(folder) if folder else None
        doc = chrome_trace(cap["records"], start_ns=cap["start_ns"], stop_ns=cap["stop_ns"], pid=cap["pid"],
                           devices=cap["devices"], lost=cap["lost"], buffers=cap.get("buffers", ()))
        with open(path, "x", encoding="utf-8") as f:  # a fresh name (run's --out): never a user's file
            json.dump(doc, f, separators=(",", ":"))
        keep = os.environ.get(RECORDS_ENV)
        if keep:
            with open(keep, "x", encoding="utf-8") as f:
                json.dump(dict(cap, devices={str(k): v for k, v in cap["devices"].items()}), f, separators=(",", ":"))


def cupti_profiler() -> Profiler:
    """The CUPTI activity tracer (:class:`gpuwhy.engine.cupti_tracer.CuptiTracer`): any CUDA program in Python.

    Raises:
        NoCupti: cupti-python is not importable here, or CUPTI cannot start (the message says what to install).
    """
    return _CuptiProfiler()


#: The tracers of `gpuwhy run --tracer`: the name of the factory in this module (looked up when called).
TRACERS = {"torch": "torch_profiler", "cupti": "cupti_profiler"}


def parse_program(cmd: list[str]) -> tuple[bool, str, list[str]]:
    """``(is_module, target, args)`` from a command line: ``python[3] [-m] X ARGS`` or ``X.py ARGS``.

    Raises:
        UsageError: no command; ``-m`` with no module; a Python interpreter
            flag gpuwhy does not run in-process (e.g. ``-c``); not a Python program.
    """
    if not cmd:
        raise UsageError("no program given: write it after `--`, e.g. gpuwhy run -- python train.py --epochs 1")
    rest = list(cmd)
    exe = Path(rest[0]).name
    if exe.startswith("python") or rest[0] == sys.executable:
        rest.pop(0)
        if not rest:
            raise UsageError("`python` with no script: give the script or -m module, e.g. gpuwhy run -- python train.py")
        if rest[0] == "-m":
            if len(rest) < 2:
                raise UsageError("`-m` with no module name: e.g. gpuwhy run -- python -m mypkg.train")
            return True, rest[1], rest[2:]
        if rest[0].startswith("-"):
            raise UsageError(f"python option {rest[0]!r} is not run in-process: give a script path or -m module")
        return False, rest[0], rest[1:]
    if rest[0] == "-m":
        if len(rest) < 2:
            raise UsageError("`-m` with no module name: e.g. gpuwhy run -- -m mypkg.train")
        return True, rest[1], rest[2:]
    if rest[0].endswith(".py"):
        return False, rest[0], rest[1:]
    raise UsageError(f"{rest[0]!r} is not a Python program: gpuwhy run profiles `python script.py`, `python -m module` "
                     "or `script.py` under torch.profiler; profile other programs' kernels with --kernels (ncu)")


class _StdoutToStderr:
    """The program's standard output sent to standard error, at the file-descriptor level too
    (so ``--json`` keeps stdout for gpuwhy's one document); restored on exit."""

    def __enter__(self):
        sys.stdout.flush()
        self._saved_obj = sys.stdout
        try:
            self._saved_fd = os.dup(1)
            os.dup2(2, 1)
        except OSError:  # no real descriptors (an in-process test runner): the Python level only
            self._saved_fd = None
        sys.stdout = sys.stderr
        return self

    def __exit__(self, *exc):
        try:
            sys.stderr.flush()
        finally:
            sys.stdout = self._saved_obj
            if self._saved_fd is not None:
                os.dup2(self._saved_fd, 1)
                os.close(self._saved_fd)
        return False


def run_python(
    cmd: list[str],
    trace_path: Path,
    *,
    profiler_factory: Callable[[], Profiler] | None = None,
    stdout_to_stderr: bool = False,
) -> ProgramRun:
    """Run ``cmd`` (see :func:`parse_program`) in this process under a profiler; write the trace to ``trace_path``.

    ``profiler_factory`` defaults to :func:`torch_profiler`. The program's own output goes where this
    process's goes; with ``stdout_to_stderr`` (``--json``) its standard output goes to stderr. The trace is
    written even when the program fails or is interrupted (the window so far).

    Raises:
        UsageError: see :func:`parse_program`; the script does not exist.
        NoDeviceError: from ``profiler_factory`` (no PyTorch, no GPU).
    """
    is_module, target, args = parse_program(cmd)
    if not is_module:
        script = Path(target)
        if not script.is_file():
            raise UsageError(f"{target!r} is not a file: give the path of the Python script to run")
    prof = (profiler_factory or torch_profiler)()
    saved_argv, saved_path, saved_main = sys.argv[:], sys.path[:], sys.modules.get("__main__")
    saved_cwd = os.getcwd()  # a program may chdir; gpuwhy's own paths (the report) are the caller's
    code, error, interrupted = 0, None, False
    if is_module:
        sys.argv = [target, *args]
        sys.path.insert(0, os.getcwd())
    else:
        sys.argv = [target, *args]
        sys.path.insert(0, str(Path(target).resolve().parent))
    redirect = _StdoutToStderr() if stdout_to_stderr else None
    if redirect is not None:
        redirect.__enter__()
    t0 = time.perf_counter()
    prof.start()
    try:
        if is_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        c = exc.code
        code = 0 if c is None else (c if isinstance(c, int) else 1)
        if c is not None and not isinstance(c, int):
            print(c, file=sys.stderr)
    except KeyboardInterrupt:
        code, interrupted = EXIT_INTERRUPTED, True
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported as Python would
        traceback.print_exc()
        code, error = 1, (traceback.format_exception_only(type(exc), exc)[-1].strip())
    finally:
        wall = time.perf_counter() - t0
        try:
            prof.stop()
        finally:
            if redirect is not None:
                redirect.__exit__(None, None, None)
            sys.argv, sys.path = saved_argv, saved_path
            try:
                os.chdir(saved_cwd)
            except OSError:
                pass  # the folder is gone: stay where the program left us
            if saved_main is not None:
                sys.modules["__main__"] = saved_main
    written: Path | None = None
    try:
        prof.export(trace_path)
        written = trace_path if trace_path.exists() else None
    except Exception as exc:  # noqa: BLE001
        raise UsageError(f"the profiler could not write the trace to {str(trace_path)!r} ({exc})") from None
    return ProgramRun(tuple(cmd), int(code), wall, written, error, interrupted, tuple(getattr(prof, "notes", ())),
                      getattr(prof, "other_trace", None))
