"""One rank of ``gpuwhy bench --allreduce``: NCCL's all-reduce through ``torch.distributed``,
checked and timed. Started by :mod:`gpuwhy.bench.allreduce` (through
:func:`gpuwhy.engine.ranks.run_ranks`), one process per GPU::

    RANK=r WORLD_SIZE=n LOCAL_RANK=r MASTER_ADDR=127.0.0.1 MASTER_PORT=p \\
        python3 -m gpuwhy.engine.allreduce_worker CONFIG.json

``CONFIG.json`` (written by the parent): ``devices`` (CUDA ordinal of each rank), ``dtype``
(``bf16``/``fp32``), ``sizes_bytes``, ``warmup``, ``iters``, ``timeout_s`` (the process group's),
``out_dir``.

Per size, in order: fill the buffer with the rank's pattern (:mod:`gpuwhy.model.multi_gpu.allreduce`),
all-reduce it (sum, in place), compare every element with the expected sum, agree across ranks
that all were right (an all-reduce of the flags with MIN, so every rank stops together on a
wrong result), then time it with :func:`gpuwhy.engine.timing.time_gpu` on PyTorch's current
stream: ``warmup`` untimed calls, then ``iters`` calls each between two CUDA events (no
estimate pass: every rank must run the same number of collectives). ``all_reduce`` makes the
current stream wait for NCCL's, so the events close when the collective has finished here.

At the end every rank's per-iteration times are gathered to rank 0, which writes
``out_dir/result.json``: ``world``, ``dtype``, ``torch_version``, ``nccl_version``,
``sizes`` (``size_bytes``, ``elements``, ``ok``, and on a wrong result ``index``, ``got``,
``expected``) and ``samples_s`` (rank -> size -> iteration, seconds). Rank 0 also appends one
line per size to ``out_dir/progress``. A rank that cannot run writes
``out_dir/error-<rank>.json`` (``kind``: ``no_torch``, ``no_cuda``, ``no_nccl`` or ``error``;
``message``) and exits 3 (the first three) or 1.

PyTorch is imported only here, in the child.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

#: Exit codes of a rank: nothing to run on (PyTorch, CUDA or NCCL missing), or a failure.
EXIT_MISSING = 3
EXIT_FAILED = 1


def _write(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _fail(out: Path, rank: int, kind: str, message: str) -> int:
    _write(out / f"error-{rank}.json", {"rank": rank, "kind": kind, "message": message})
    return EXIT_MISSING if kind != "error" else EXIT_FAILED


def _pattern(torch, elements: int, dtype, device):
    """``c_i`` for i < elements: (1, 2, 4) repeated (the correctness pattern's per-element factor)."""
    from ..model.multi_gpu.allreduce import PATTERN

    base = torch.tensor(PATTERN, dtype=dtype, device=device)
    return base.repeat(math.ceil(elements / len(PATTERN)))[:elements]


def _check(torch, work, pattern, total: int) -> dict:
    """``{"ok": bool}``, with the first wrong element's ``index``, ``got`` and ``expected`` when not."""
    expected = pattern * total
    if torch.equal(work, expected):
        return {"ok": True}
    bad = int((work != expected).nonzero()[0].item())
    return {"ok": False, "index": bad, "got": float(work[bad].item()), "expected": float(expected[bad].item())}


def run(cfg: dict, rank: int, world: int) -> int:
    """The rank's work (see the module docstring); returns its exit code."""
    out = Path(cfg["out_dir"])
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        return _fail(out, rank, "no_torch", f"PyTorch cannot be imported ({exc})")
    if not torch.cuda.is_available():
        return _fail(out, rank, "no_cuda", f"PyTorch {torch.__version__} sees no CUDA GPU (a CPU-only build, or no driver)")
    if not dist.is_available() or not dist.is_nccl_available():
        return _fail(out, rank, "no_nccl", f"PyTorch {torch.__version__} has no torch.distributed NCCL backend")
    try:
        return _measure(cfg, rank, world, out, torch, dist)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as one line
        return _fail(out, rank, "error", f"rank {rank}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")


def _measure(cfg: dict, rank: int, world: int, out: Path, torch, dist) -> int:
    import datetime

    from ..model.multi_gpu.allreduce import DTYPE_BYTES, expected_sum, rank_value
    from .timing import TorchEvents, TorchStream, time_gpu

    device = torch.device("cuda", int(cfg["devices"][rank]))
    torch.cuda.set_device(device)
    timeout = datetime.timedelta(seconds=float(cfg["timeout_s"]))
    try:
        dist.init_process_group("nccl", rank=rank, world_size=world, timeout=timeout, device_id=device)
    except TypeError:  # PyTorch before 2.3 has no device_id
        dist.init_process_group("nccl", rank=rank, world_size=world, timeout=timeout)
    try:
        dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[cfg["dtype"]]
        esize = DTYPE_BYTES[cfg["dtype"]]
        sizes = [int(s) for s in cfg["sizes_bytes"]]
        most = max(sizes) // esize
        pattern = _pattern(torch, most, dtype, device)
        work = torch.empty_like(pattern)
        value, total = rank_value(rank), expected_sum(world)
        stream, events = TorchStream(torch.cuda.current_stream(device)), TorchEvents()
        checked, samples = [], []
        for size in sizes:
            n = size // esize
            buf = work[:n]
            buf.copy_(pattern[:n]).mul_(value)
            dist.all_reduce(buf)
            verdict = _check(torch, buf, pattern[:n], total)
            flag = torch.tensor([1 if verdict["ok"] else 0], dtype=torch.int32, device=device)
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            checked.append({"size_bytes": size, "elements": n, **verdict, "all_ok": bool(flag.item())})
            if not flag.item():
                break
            m = time_gpu(stream, events, lambda _i, b=buf: dist.all_reduce(b), warmup=int(cfg["warmup"]),
                         reps=int(cfg["iters"]), estimate=False)
            samples.append(list(m.samples_s))
            if rank == 0:
                with open(out / "progress", "a") as fh:
                    fh.write(f"{size}\n")
        gathered = [None] * world
        dist.all_gather_object(gathered, {"rank": rank, "checked": checked, "samples_s": samples})
        if rank == 0:
            nccl = torch.cuda.nccl.version()
            _write(out / "result.json", {
                "world": world, "dtype": cfg["dtype"], "torch_version": torch.__version__,
                "nccl_version": ".".join(str(x) for x in nccl) if isinstance(nccl, tuple) else str(nccl),
                "sizes": gathered[0]["checked"], "ranks": gathered,
            })
    finally:
        dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Read the config named on the command line and the rank from the environment; run."""
    args = sys.argv[1:] if argv is None else argv
    with open(args[0]) as fh:
        cfg = json.load(fh)
    return run(cfg, int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))


if __name__ == "__main__":
    sys.exit(main())
