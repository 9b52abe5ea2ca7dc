"""fp32_gemm: an 8192^3 matmul per step in full fp32, TF32 off.

Planted cause ``compute_bound``. Each step multiplies an 8192x8192 fp32 activation (one of
two, alternating) by an 8192x8192 fp32 weight with ``torch.backends.cuda.matmul.allow_tf32 =
False``: 1.1 TFLOP on the FP32 CUDA cores (67 TFLOP/s peak on an H100 SXM), about 20 ms, and
sums the product into an accumulator. The GEMM runs near the FP32 roof: the time is in the
math units, and the tensor cores stand idle.

Fixed twin (remedy ``lower_precision``): the same matmul under ``torch.autocast("cuda",
dtype=torch.bfloat16)`` (bf16 operands on the tensor cores, fp32 accumulation, 989 TFLOP/s
dense peak): the casts of both operands are part of each step. The result differs by bf16
rounding: in-process the last product is compared with the fp32 product, max error within
2e-2 of the largest magnitude, and the runner compares the accumulated sums within 1e-2.
"""

from __future__ import annotations

import diag_common as dc

NAME = "fp32_gemm"


def add(ap):
    ap.add_argument("--n", type=int, default=8192, help="matrix size (default 8192)")


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 in both variants (autocast is the twin's change)
    torch.manual_seed(0)
    dev, n = "cuda", a.n
    xs = [torch.randn(n, n, device=dev) for _ in range(2)]
    w = torch.randn(n, n, device=dev) / n**0.5
    acc = torch.zeros((), device=dev, dtype=torch.float64)

    def product(x):
        if a.fixed:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return x @ w
        return x @ w

    product(xs[0])  # cuBLAS initialisation outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    last = None
    for i in steps:
        last = product(xs[i % 2])
        acc += last.abs().sum(dtype=torch.float64)
    total = a.warmup + a.steps
    with torch.autocast("cuda", enabled=False):
        ref = xs[(total - 1) % 2] @ w
    check = dc.check_tensors(last.float(), ref, 2e-2, "last product against fp32")
    res = steps.result(NAME, a.fixed, check, checksum=float(acc), checksum_rtol=1e-2, n=n,
                       dtype="bf16 autocast" if a.fixed else "fp32, TF32 off")
    dc.emit(res)


if __name__ == "__main__":
    main()
