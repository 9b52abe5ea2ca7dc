"""few_blocks: a sum-of-squares reduction over 256 MiB launched with 4 blocks on a 132-SM GPU.

Planted cause ``latency_bound``. A Triton kernel computes partial sums of x*x over a 64M-float
tensor with a grid-stride loop; the planted launch uses a grid of 4 blocks, so 4 SMs of 132
do the work and each keeps only a few kilobytes of loads in flight: the kernel moves a few
percent of the DRAM bandwidth, bound by memory latency (Little's law), not by bandwidth or
math. The partials are then summed by torch. About 2-5 ms a step.

Fixed twin (remedy ``more_parallelism``): the same kernel, the same code, launched with 4
blocks per SM (528 on an H100), so every SM keeps loads in flight and the reduction runs
near the DRAM roof (about 0.1 ms). The sums differ only by the order of fp32 additions: the
runner compares the checksums within 1e-4, and in-process the last sum is compared with
torch's ``(x * x).sum()`` in fp64 within 1e-4.
"""

from __future__ import annotations

import diag_common as dc

NAME = "few_blocks"
BLOCK = 4096


def add(ap):
    ap.add_argument("--elements", type=int, default=64 * 2**20, help="tensor length (default 64M)")
    ap.add_argument("--blocks", type=int, default=4, help="the planted grid (default 4)")
    ap.add_argument("--blocks-per-sm", type=int, default=4, help="the twin's grid, per SM (default 4)")


def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def sumsq_partials(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        step = tl.num_programs(0) * BLOCK
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(pid * BLOCK, n, step):
            offs = start + tl.arange(0, BLOCK)
            v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            acc += v * v
        tl.store(part_ptr + pid, tl.sum(acc, axis=0))

    return sumsq_partials


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    kernel = build_kernel()
    torch.manual_seed(0)
    x = torch.randn(a.elements, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = a.blocks_per_sm * sms if a.fixed else a.blocks
    part = torch.empty(grid, device="cuda")
    sums = torch.zeros(a.warmup + a.steps, device="cuda", dtype=torch.float64)

    def reduce_into(out):
        kernel[(grid,)](x, part, x.numel(), BLOCK=BLOCK, num_warps=8)
        out.copy_(part.sum(dtype=torch.float64))

    reduce_into(sums[0])  # compile outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    for i in steps:
        reduce_into(sums[i])
    last = float(sums[-1])
    check = dc.check_close(last, float(x.double().pow(2).sum()), 1e-4, "last sum against torch in fp64")
    res = steps.result(NAME, a.fixed, check, checksum=float(sums.sum()), checksum_rtol=1e-4, grid=grid,
                       sms=sms, elements=a.elements)
    dc.emit(res)


if __name__ == "__main__":
    main()
