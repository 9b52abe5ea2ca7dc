"""python_work: about 10 ms of pure-Python bookkeeping per step next to about 1 ms of GPU work.

Planted cause ``host_work``. Each step launches four bf16 4096x4096x4096 matmuls, each
followed by a tanh (about 1 ms on an H100), and then builds a status snapshot of the run in
plain Python: ``--rows`` (600) dicts dumped with ``json.dumps``, the host then held until
``--host-ms`` (10 ms) are up (a held time, so the core's speed does not move it; no torch call,
no synchronisation). The GPU finishes its millisecond and waits
about 9 ms for the host to come back with the next step's launches: the idle time is host
code outside any torch operator, not launch cost and not a sync.

Fixed twin (remedy ``move_host_work``): the same snapshot is built every 10th measured step
instead of every step (a status line does not need to be fresh at every step), so the host
spends about 1 ms per step on it on average and the GPU work bounds the step. The GPU work
is the same, launched in the same order, so the numbers are the same: the final activations'
checksum is compared by the runner with the planted run's, and in-process the last step is
recomputed and compared.
"""

from __future__ import annotations

import json
import time

import diag_common as dc

NAME = "python_work"


def add(ap):
    ap.add_argument("--rows", type=int, default=600, help="rows of the per-step status snapshot (default 600)")
    ap.add_argument("--host-ms", type=float, default=10.0, help="the snapshot holds the host this long (ms)")
    ap.add_argument("--every", type=int, default=10, help="the twin builds the snapshot every this many steps")
    ap.add_argument("--n", type=int, default=4096, help="matrix size (default 4096)")


def snapshot(step: int, rows: int, hold_s: float) -> int:
    """The run's status as JSON, built row by row in Python, holding the host ``hold_s`` in all (the
    planted host work: the same wall time on a fast or a slow core)."""
    t0 = time.perf_counter()
    recs = [{"step": step, "i": i, "loss": ((i * 2654435761 + step * 97) % 1000003) / 1000003.0,
             "tag": "m%d" % (i % 17)} for i in range(rows)]
    n = len(json.dumps(recs))
    dc.hold_host(t0, hold_s)
    return n


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    torch.manual_seed(0)
    dev = "cuda"
    n = a.n
    ws = [(torch.randn(n, n, device=dev) / n**0.5).to(torch.bfloat16) for _ in range(4)]
    h = torch.randn(n, n, device=dev).to(torch.bfloat16)

    def gpu_step(x):
        for w in ws:
            x = torch.tanh(x @ w)
        return x

    gpu_step(h)  # cuBLAS initialisation outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    snapshots = 0
    h_prev = h
    for i in steps:
        h_prev = h
        h = gpu_step(h)
        if not a.fixed or i % a.every == 0:
            snapshot(i, a.rows, a.host_ms * 1e-3)
            snapshots += 1
    # in-process check: the last step recomputed from its input
    check = dc.check_tensors(h.float(), gpu_step(h_prev).float(), 1e-2, "last step recomputed")
    res = steps.result(NAME, a.fixed, check, checksum=float(h.double().abs().sum()), checksum_rtol=1e-4,
                       snapshots=snapshots, rows=a.rows)
    dc.emit(res)


if __name__ == "__main__":
    main()
