"""A fake way to start the ranks of ``gpuwhy bench --allreduce`` (``engine.ranks.Start``): it
records each rank's argv and environment and writes what the worker would, with times from a
made-up link (``latency_s + S x 2(n-1)/n / busbw``), so the run is checked without PyTorch or a GPU."""

from __future__ import annotations

import json
from pathlib import Path


class Done:
    """A process that has already exited with ``code``."""

    def __init__(self, code: int = 0, pid: int = 0):
        self.code, self.pid = code, pid

    def poll(self):
        return self.code

    def wait(self, timeout=None):
        return self.code

    def terminate(self):
        raise AssertionError("a finished rank must not be signalled")

    kill = terminate


class FakeRanks:
    """``start(argv, env, log)``: rank r's iteration i takes ``t(S) x (1 + slow x r) x (1 + 0.01 x (i mod 3))``
    with ``t(S) = latency_s + S x 2(n-1)/n / (busbw_gbs x 1e9)`` (rank ``n-1`` the slowest).

    ``error`` = ``(rank, kind, message)`` makes that rank write an error file and exit 3 (the
    ``no_*`` kinds) or 1; ``wrong`` = ``(rank, size_bytes)`` makes that rank's check fail there.
    """

    def __init__(self, busbw_gbs: float = 400.0, latency_s: float = 20e-6, slow: float = 0.02, error=None, wrong=None):
        self.busbw_gbs, self.latency_s, self.slow, self.error, self.wrong = busbw_gbs, latency_s, slow, error, wrong
        self.argvs: list[list[str]] = []
        self.envs: list[dict] = []

    def time(self, size: int, world: int, rank: int, i: int) -> float:
        factor = 2 * (world - 1) / world
        t = self.latency_s + size * factor / (self.busbw_gbs * 1e9)
        return t * (1 + self.slow * rank) * (1 + 0.01 * (i % 3))

    def __call__(self, argv, env, log: Path):
        self.argvs.append(list(argv))
        self.envs.append(dict(env))
        cfg = json.loads(Path(argv[-1]).read_text())
        out = Path(cfg["out_dir"])
        rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
        Path(log).write_text(f"rank {rank} of {world}\n")
        if self.error is not None and self.error[0] == rank:
            (out / f"error-{rank}.json").write_text(json.dumps({"rank": rank, "kind": self.error[1], "message": self.error[2]}))
            return Done(3 if self.error[1].startswith("no_") else 1)
        if rank == world - 1:
            self._result(cfg, world, out)
        return Done(0)

    def _result(self, cfg: dict, world: int, out: Path) -> None:
        esize = {"bf16": 2, "fp32": 4}[cfg["dtype"]]
        ranks = []
        for r in range(world):
            checked, samples = [], []
            for size in cfg["sizes_bytes"]:
                bad = self.wrong is not None and self.wrong == (r, size)
                entry = {"size_bytes": size, "elements": size // esize, "ok": not bad, "all_ok": self.wrong is None or self.wrong[1] != size}
                if bad:
                    entry.update(index=5, got=7.0, expected=6.0)
                checked.append(entry)
                if self.wrong is not None and self.wrong[1] == size:
                    break
                samples.append([self.time(size, world, r, i) for i in range(cfg["iters"])])
            ranks.append({"rank": r, "checked": checked, "samples_s": samples})
        (out / "progress").write_text("".join(f"{s}\n" for s in cfg["sizes_bytes"]))
        (out / "result.json").write_text(json.dumps({"world": world, "dtype": cfg["dtype"], "torch_version": "2.11.0+fake",
                                                     "nccl_version": "2.27.3", "sizes": ranks[0]["checked"], "ranks": ranks}))
