"""torch.distributed.all_reduce timed directly, without gpuwhy: the reference for issue 21's check
"busbw of gpuwhy's largest all-reduce is at least 0.95x what all_reduce reaches timed directly".

Run under torchrun (one process per GPU), NVLink multicast off:

    NCCL_NVLS_ENABLE=0 python3 -m torch.distributed.run --standalone --nproc-per-node N \\
        benchmarks/allreduce_direct.py [--size-mib 1024] [--warmup 5] [--iters 20]

Each rank: a bf16 buffer of --size-mib MiB, --warmup untimed all-reduces, then --iters
all-reduces each between two CUDA events on the current stream; its median. The slowest rank's
median (MAX over ranks) is t; algbw = S / t, busbw = algbw x 2(n-1)/n (nccl-tests
doc/PERFORMANCE.md). Rank 0 prints one JSON line: ranks, size_bytes, time_s, algbw_gbs, busbw_gbs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    assert os.environ.get("NCCL_NVLS_ENABLE") == "0", "set NCCL_NVLS_ENABLE=0 (NVLink multicast off)"
    local = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    size = a.size_mib * 2**20
    x = torch.ones(size // 2, dtype=torch.bfloat16, device=device)
    for _ in range(a.warmup):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters)]
    for s, e in zip(starts, ends):
        s.record()
        dist.all_reduce(x)
        e.record()
    torch.cuda.synchronize()
    median = statistics.median(s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends))
    t = torch.tensor([median], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    t_s = float(t.item())
    algbw = size / t_s / 1e9
    if rank == 0:
        print(json.dumps({"ranks": world, "size_bytes": size, "time_s": t_s, "algbw_gbs": algbw,
                          "busbw_gbs": algbw * 2 * (world - 1) / world}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
