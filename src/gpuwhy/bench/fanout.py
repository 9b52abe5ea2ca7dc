"""Run one measurement on several GPUs as :func:`gpuwhy.model.multi_gpu.schedule.plan_runs` plans it.

The GPUs of a stage run at once, each in a worker process of its own (started with
``spawn``: a CUDA context does not survive ``fork``, and one process per GPU keeps each
GPU's context, memory and errors apart); the stages run one after another. A stage of
one GPU runs in this process. Each run is pinned to the CPUs NVML names as close to its
GPU (its NUMA node) where this process may use them, so a host-side timing or a host
copy does not cross the sockets.

``GPUWHY_WORKERS=inline`` runs every GPU in this process, one after another (for
debugging; the figures are the same, the time is the sum).

A worker is a module-level function (the worker process imports it by name) that
returns a picklable value; a :class:`~gpuwhy.errors.GpuwhyError` it raises is kept as
that GPU's error (:class:`Outcome`), so the other GPUs still report. Ctrl-C in this
process ends every worker at once (they ignore SIGINT themselves).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..units import fmt_counted

#: The environment variable that picks how workers run: ``process`` (default) or ``inline``.
WORKERS_ENV = "GPUWHY_WORKERS"
#: Exit code recorded for a worker that raised something other than a gpuwhy error (a bug).
EXIT_BUG = 70


@dataclass(frozen=True)
class Outcome:
    """One GPU's run.

    Attributes:
        position: the GPU's position in the list given.
        value: what the worker returned (None after an error).
        exit_code: 0, or the exit code of the error (1-4, 70 for a bug).
        error: the error's one-line message ('' when none).
        elapsed_s: seconds the worker took.
        cpus: the CPUs it was pinned to (empty: not pinned).
    """

    position: int
    value: Any
    exit_code: int = 0
    error: str = ""
    elapsed_s: float = 0.0
    cpus: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def workers_mode() -> str:
    """``process`` or ``inline`` (:data:`WORKERS_ENV`; anything else is refused).

    Raises:
        UsageError: another value.
    """
    from ..errors import UsageError

    v = os.environ.get(WORKERS_ENV, "").strip().lower() or "process"
    if v not in ("process", "inline"):
        raise UsageError(f"{WORKERS_ENV}={v!r} is not process or inline; unset it or pick one")
    return v


def usable_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (all of ``os.cpu_count()`` where affinity is not supported)."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return tuple(range(os.cpu_count() or 1))


def _pin(cpus: Sequence[int]) -> tuple[int, ...]:
    """Pin this process to ``cpus`` (those it may use); returns the CPUs pinned to, () when not."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        return ()
    want = set(cpus) & set(usable_cpus())
    if not want:
        return ()
    try:
        os.sched_setaffinity(0, want)
    except OSError:
        return ()
    return tuple(sorted(want))


def call(position: int, worker: Callable, args: tuple, cpus: Sequence[int] = (), catch_bugs: bool = False) -> Outcome:
    """Run ``worker(*args)`` here, pinned to ``cpus`` for its duration; a gpuwhy error becomes the
    Outcome's, any other exception too with ``catch_bugs`` (in a worker process), else it propagates
    (in this process, so ``--debug`` shows its traceback)."""
    from ..errors import GpuwhyError

    before = usable_cpus()
    pinned = _pin(cpus)
    t0 = time.perf_counter()
    try:
        value = worker(*args)
        return Outcome(position, value, 0, "", time.perf_counter() - t0, pinned)
    except GpuwhyError as exc:
        return Outcome(position, None, exc.exit_code, str(exc), time.perf_counter() - t0, pinned)
    except Exception as exc:  # a bug: in a worker process keep it, name it, let the other GPUs finish
        if not catch_bugs:
            raise
        return Outcome(position, None, EXIT_BUG, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0, pinned)
    finally:
        if pinned:
            try:
                os.sched_setaffinity(0, before)
            except OSError:
                pass


def _child(conn, position: int, worker: Callable, args: tuple, cpus: Sequence[int]) -> None:
    """The worker process: ignore Ctrl-C (the parent ends it), run, send the Outcome back."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        conn.send(call(position, worker, args, cpus, catch_bugs=True))
    finally:
        conn.close()


def _in_processes(jobs: Sequence[tuple[int, Callable, tuple, Sequence[int]]]) -> list[Outcome]:
    """Run each job in a worker process of its own, all at once; the Outcomes in job order."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    started = []
    try:
        for position, worker, args, cpus in jobs:
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, args=(send, position, worker, args, tuple(cpus)), daemon=True,
                            name=f"gpuwhy-worker-{position}")
            p.start()
            send.close()
            started.append((position, p, recv))
        out = []
        for position, p, recv in started:
            try:
                got = recv.recv()
            except EOFError:
                p.join()
                got = Outcome(position, None, EXIT_BUG, f"the worker process ended without a result (exit code {p.exitcode})")
            out.append(got)
        return out
    finally:
        for _, p, recv in started:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)
            recv.close()


def run_plan(plan, worker: Callable, args: Sequence[tuple], cpus: Sequence[Sequence[int]] | None = None,
             mode: str | None = None) -> list[Outcome]:
    """Run ``worker(*args[i])`` for every GPU position i of ``plan`` (a
    :class:`~gpuwhy.model.multi_gpu.schedule.Plan`), stage by stage; ``cpus[i]`` are GPU i's close CPUs
    (empty: no pinning). ``mode``: ``process`` or ``inline`` (default :func:`workers_mode`).
    Returns the Outcomes in position order.

    Raises:
        UsageError: a bad :data:`WORKERS_ENV`.
        ValueError: ``args`` does not hold one entry per GPU of the plan.
    """
    n = sum(len(s) for s in plan.stages)
    if len(args) != n:
        raise ValueError(f"{len(args)} argument tuples for a plan of {n} GPUs")
    mode = mode or workers_mode()
    cpus = list(cpus) if cpus is not None else [()] * n
    done: dict[int, Outcome] = {}
    for stage in plan.stages:
        if mode == "inline" or len(stage) == 1:
            for i in stage:
                done[i] = call(i, worker, tuple(args[i]), cpus[i])
        else:
            for o in _in_processes([(i, worker, tuple(args[i]), cpus[i]) for i in stage]):
                done[o.position] = o
    return [done[i] for i in range(n)]


def error_of(failed: Sequence[tuple[str, Outcome]], prefix: bool = True) -> Exception:
    """The one error to raise for the GPUs whose runs failed (``(label, Outcome)`` pairs): the
    class of the first one's exit code (4 MeasurementError, 3 NoDeviceError, 2 UsageError, 1
    CheckFailed; a bug's 70 stays a bug), its message naming each GPU (``prefix``: with the labels)."""
    from ..errors import CheckFailed, MeasurementError, NoDeviceError, UsageError

    classes = {1: CheckFailed, 2: UsageError, 3: NoDeviceError, 4: MeasurementError}
    parts = [f"{label}: {o.error}" if prefix else o.error for label, o in failed]
    msg = "; ".join(parts)
    if prefix:
        msg = f"{fmt_counted(len(failed), 'GPU')} failed: {msg}"
    cls = classes.get(failed[0][1].exit_code)
    return cls(msg) if cls is not None else RuntimeError(msg)


def schedule_record(plan, outcomes: Sequence[Outcome], wall_s: float, mode: str | None = None) -> dict:
    """What a ``--json`` document says of how the GPUs were run: the plan, where they ran
    (``worker processes``, or ``this process`` one after another with ``GPUWHY_WORKERS=inline`` or
    one GPU per stage), the wall time, the GPUs' own times added, and whether every run was
    pinned to its GPU's CPUs."""
    mode = mode or workers_mode()
    procs = mode == "process" and any(len(s) > 1 for s in plan.stages)
    return {**plan.to_dict(), "ran_in": "worker processes" if procs else "this process", "wall_s": wall_s,
            "sum_of_gpus_s": sum(o.elapsed_s for o in outcomes), "pinned_to_close_cpus": all(o.cpus for o in outcomes)}
