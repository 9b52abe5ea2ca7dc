"""One process per GPU, started the way ``torchrun`` starts them, for work that runs through
``torch.distributed`` (the NCCL all-reduce of ``gpuwhy bench --allreduce``).

Each rank is a fresh interpreter (``subprocess``; no fork of a process that may hold a CUDA
context) whose environment carries what ``torch.distributed``'s ``env://`` rendezvous reads
(``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``) and :data:`NVLS_OFF`: NVLink multicast (NVLS) stays off in every process
gpuwhy starts, whatever the caller's environment says (on shared machines NVLS can put the
host's GPUs out of service). ``OMP_NUM_THREADS`` is 1 unless set (as torchrun does).

:func:`run_ranks` starts them, waits, and stops the ones still running when one fails, the
time runs out or the user presses Ctrl-C; only processes it started are signalled, by pid.
The start is a hook (:data:`Start`) so tests can check the environments without a GPU.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

#: Set in every rank's environment: NCCL's NVLink SHARP / multicast off, PyTorch's symmetric
#: memory without multicast, NVSHMEM without NVLS (NCCL env docs: NCCL_NVLS_ENABLE;
#: PyTorch: TORCH_SYMM_MEM_DISABLE_MULTICAST; NVSHMEM: NVSHMEM_DISABLE_NVLS).
NVLS_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
#: The rendezvous address: all ranks run on this host.
MASTER_ADDR = "127.0.0.1"


class Proc(Protocol):
    """What :func:`run_ranks` needs of a started process (``subprocess.Popen`` has it)."""

    pid: int

    def poll(self) -> int | None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


#: ``start(argv, env, log_path) -> Proc``: start one rank, its stdout and stderr to ``log_path``.
Start = Callable[[Sequence[str], Mapping[str, str], Path], Proc]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS picks it; like torchrun,
    it may be taken again before the ranks bind it, which then fails their rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((MASTER_ADDR, 0))
        return int(s.getsockname()[1])


def package_root() -> str:
    """The folder holding the ``gpuwhy`` package, so ``python -m gpuwhy....`` finds this copy."""
    return str(Path(__file__).resolve().parents[2])


def rank_env(base: Mapping[str, str], rank: int, world: int, port: int) -> dict[str, str]:
    """The environment of rank ``rank`` of ``world``: ``base`` plus the rendezvous variables,
    :data:`NVLS_OFF` (overriding ``base``), ``OMP_NUM_THREADS=1`` unless ``base`` sets it, and
    this gpuwhy's folder first on ``PYTHONPATH``.

    Raises:
        ValueError: ``rank`` outside 0..world-1.
    """
    if not 0 <= rank < world:
        raise ValueError(f"rank {rank} is outside 0..{world - 1}")
    env = dict(base)
    env.update(MASTER_ADDR=MASTER_ADDR, MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world))
    env.update(NVLS_OFF)
    env.setdefault("OMP_NUM_THREADS", "1")
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = package_root() + (os.pathsep + path if path else "")
    return env


def popen(argv: Sequence[str], env: Mapping[str, str], log_path: Path) -> subprocess.Popen:
    """The default :data:`Start`: ``subprocess.Popen`` with stdin closed and output to ``log_path``."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(list(argv), env=dict(env), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


@dataclass(frozen=True)
class RankExit:
    """How one rank ended: ``code`` (None: stopped by gpuwhy after another failed or the time ran
    out) and its log file."""

    rank: int
    code: int | None
    log: Path

    def last_line(self) -> str:
        """The last non-empty line of the rank's output ('' when none), for one-line errors."""
        try:
            lines = [x.strip() for x in self.log.read_text(errors="replace").splitlines() if x.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""


@dataclass(frozen=True)
class RanksRun:
    """Every rank's :class:`RankExit`, in rank order; ``timed_out`` when gpuwhy stopped them at the deadline."""

    exits: tuple[RankExit, ...]
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return not self.timed_out and all(e.code == 0 for e in self.exits)

    def first_failure(self) -> RankExit | None:
        """The first rank (in rank order) that exited with a non-zero code, else None."""
        return next((e for e in self.exits if e.code not in (0, None)), None)


def run_ranks(argv: Sequence[str], world: int, folder: Path, *, timeout_s: float, start: Start = popen,
              base_env: Mapping[str, str] | None = None, poll: Callable[[], None] | None = None,
              interval_s: float = 0.05) -> RanksRun:
    """Start ``world`` copies of ``argv`` (rank 0 first), each with :func:`rank_env` and its log
    ``folder/rank-<r>.log``; wait until all exit, one fails (the others are then stopped) or
    ``timeout_s`` passes (all are stopped). ``poll()`` is called while waiting (progress).

    Ctrl-C (KeyboardInterrupt) stops every rank still running, then goes on up.

    Raises:
        ValueError: ``world`` below 1.
    """
    if world < 1:
        raise ValueError(f"at least one rank is needed, got {world}")
    env0 = dict(os.environ if base_env is None else base_env)
    port = free_port()
    procs: list[Proc] = []
    logs = [folder / f"rank-{r}.log" for r in range(world)]
    codes: list[int | None] = [None] * world
    timed_out = False
    try:
        for r in range(world):
            procs.append(start(argv, rank_env(env0, r, world, port), logs[r]))
        deadline = time.monotonic() + timeout_s
        while True:
            for r, p in enumerate(procs):
                if codes[r] is None:
                    codes[r] = p.poll()
            if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
            if poll is not None:
                poll()
            time.sleep(interval_s)
    finally:
        _stop([p for r, p in enumerate(procs) if codes[r] is None])
    return RanksRun(tuple(RankExit(r, codes[r], logs[r]) for r in range(world)), timed_out)


def _stop(procs: Sequence[Proc], grace_s: float = 5.0) -> None:
    """Terminate the processes gpuwhy started that still run; kill those that outlive ``grace_s``."""
    for p in procs:
        try:
            p.terminate()
        except OSError:
            pass
    end = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(timeout=max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                p.kill()
                p.wait(timeout=grace_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        except OSError:
            pass


def python_module(module: str, *args: str) -> list[str]:
    """``[this python, -m, module, args...]``."""
    return [sys.executable, "-m", module, *args]
