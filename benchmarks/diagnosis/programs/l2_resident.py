"""l2_resident: a kernel that sweeps a 16.5 MiB array once per threshold, 128 sweeps, from L2.

Planted cause ``memory_bound`` at level ``L2``. Each step computes 128 hinge statistics
``s_k = sum_i max(x_i - t_k, 0)`` of each of 4 arrays (4.3M floats, 16.5 MiB each: one fits
in the 50 MB L2). The planted Triton kernel makes one pass over the whole array per
threshold (all blocks sweep it, grid-stride), so each array is read 128 times, the first
time from DRAM and the other 127 from L2: 2.1 GB of L2 traffic per array for 3 instructions
per element and threshold. The loads are ``.cg`` (cached in L2, not L1: the same way
``gpuwhy bench`` measures the L2 roof), as a block's next pass reads data other blocks
read. The kernel runs near the L2 bandwidth (about 8 TB/s on an H100): memory-bound at L2,
about 1 ms a step.

Fixed twin (remedy ``fuse``): the 128 passes fused into one: one kernel that loads each
element once and updates all 128 statistics from registers (a [128, 64] accumulator tile
per block), same grid. The L2 traffic falls 128-fold and the kernel is then bound by its
instructions (about 4x faster). The sums differ only by the order of fp32 additions: the
runner compares the checksums within 1e-4; in-process the last step's statistics are
compared with torch (one ``relu(x - t).sum()`` per threshold, fp64) within 1e-4.
"""

from __future__ import annotations

import diag_common as dc

NAME = "l2_resident"
K = 128          # thresholds
PLANTED_BLOCK = 2048
ITERS = 4        # the planted kernel's grid-stride iterations per block and pass (sets the length)
ARRAYS = 4


def add(ap):
    ap.add_argument("--blocks-per-sm", type=int, default=4)


def build_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def hinge_passes(x_ptr, t_ptr, part_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
        # planted: one sweep of the whole array per threshold
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        for k in range(K):
            t = tl.load(t_ptr + k)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for start in range(pid * BLOCK, n, nprog * BLOCK):
                v = tl.load(x_ptr + start + tl.arange(0, BLOCK), cache_modifier=".cg")
                acc += tl.maximum(v - t, 0.0)
            tl.store(part_ptr + k * nprog + pid, tl.sum(acc, axis=0))

    @triton.jit
    def hinge_fused(x_ptr, t_ptr, part_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
        # fixed: one sweep, every threshold updated from the element in registers
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        ks = tl.arange(0, K)
        t = tl.load(t_ptr + ks)
        acc = tl.zeros([K, BLOCK], dtype=tl.float32)
        for start in range(pid * BLOCK, n, nprog * BLOCK):
            v = tl.load(x_ptr + start + tl.arange(0, BLOCK), cache_modifier=".cg")
            acc += tl.maximum(v[None, :] - t[:, None], 0.0)
        tl.store(part_ptr + ks * nprog + pid, tl.sum(acc, axis=1))

    return hinge_passes, hinge_fused


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    passes_k, fused_k = build_kernels()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = a.blocks_per_sm * sms
    block = 64 if a.fixed else PLANTED_BLOCK
    # the length is a whole number of grid-stride iterations for both block sizes: no masks
    n = grid * PLANTED_BLOCK * ITERS
    torch.manual_seed(0)
    xs = [torch.randn(n, device="cuda") for _ in range(ARRAYS)]
    t = torch.linspace(-2.0, 2.0, K, device="cuda")
    part = torch.empty(K, grid, device="cuda")
    stats = torch.zeros(ARRAYS, K, device="cuda", dtype=torch.float64)
    acc = torch.zeros(K, device="cuda", dtype=torch.float64)

    def statistics(j):
        if a.fixed:
            fused_k[(grid,)](xs[j], t, part, n, K=K, BLOCK=block, num_warps=8)
        else:
            passes_k[(grid,)](xs[j], t, part, n, K=K, BLOCK=block, num_warps=8)
        stats[j].copy_(part.sum(dim=1, dtype=torch.float64))

    statistics(0)  # compile outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    for i in steps:
        for j in range(ARRAYS):
            statistics(j)
        acc += stats.sum(0)
    ref = torch.stack([torch.relu(xs[ARRAYS - 1].double() - t[k].double()).sum() for k in range(K)])
    check = dc.check_tensors(stats[ARRAYS - 1], ref, 1e-4, "last statistics against torch in fp64")
    res = steps.result(NAME, a.fixed, check, checksum=float(acc.sum()), checksum_rtol=1e-4, grid=grid,
                       elements=n, mib_per_array=n * 4 / 2**20, thresholds=K)
    dc.emit(res)


if __name__ == "__main__":
    main()
