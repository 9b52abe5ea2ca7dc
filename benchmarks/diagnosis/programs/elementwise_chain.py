"""elementwise_chain: ten memory-bound elementwise ops in a row on a 64M-float tensor, eager.

Planted cause ``memory_bound`` (DRAM). Each step computes
``min(0.5 * sqrt(|sigmoid(1.7 x + 0.3) * x - 0.05| + 1), 1.5)`` as ten eager ops on a
256 MiB fp32 tensor: each op reads its input from DRAM and writes its output back (one also
reads x again), about 5.4 GB of traffic a step for 0.5 GB of necessary traffic. Each kernel
runs near the DRAM roof, doing a few flops per 8 bytes: memory-bound, about 1.8 ms a step.

Fixed twin (remedy ``fuse``): the same expression in one hand-written Triton kernel that
reads x once and writes the result once (the chain's intermediates stay in registers). The
math is the same up to rounding (the kernel may contract a multiply and an add into an FMA):
in-process the last result is compared with the eager chain within 1e-5 of the largest
value, and the runner compares the checksums within 1e-5.
"""

from __future__ import annotations

import diag_common as dc

NAME = "elementwise_chain"


def add(ap):
    ap.add_argument("--elements", type=int, default=64 * 2**20, help="tensor length (default 64M)")


def eager_chain(x):
    import torch

    t = x * 1.7
    t = t + 0.3
    t = torch.sigmoid(t)
    t = t * x
    t = t - 0.05
    t = torch.abs(t)
    t = t + 1.0
    t = torch.sqrt(t)
    t = t * 0.5
    return torch.clamp(t, max=1.5)


def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def fused_chain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        t = x * 1.7 + 0.3
        t = tl.sigmoid(t)
        t = t * x - 0.05
        t = tl.abs(t) + 1.0
        t = tl.sqrt_rn(t) * 0.5
        t = tl.minimum(t, 1.5)
        tl.store(out_ptr + offs, t, mask=mask)

    def run(x, out):
        block = 2048
        fused_chain[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block, num_warps=8)
        return out

    return run


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    torch.manual_seed(0)
    x = torch.randn(a.elements, device="cuda")
    if a.fixed:
        fused = build_kernel()
        out = torch.empty_like(x)
        chain = lambda: fused(x, out)  # noqa: E731
    else:
        chain = lambda: eager_chain(x)  # noqa: E731
    chain()  # compile the twin's kernel outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    y = None
    for i in steps:
        y = chain()
    check = dc.check_tensors(y, eager_chain(x), 1e-5, "last result against the eager chain")
    res = steps.result(NAME, a.fixed, check, checksum=float(y.double().sum()), checksum_rtol=1e-5,
                       elements=a.elements)
    dc.emit(res)


if __name__ == "__main__":
    main()
