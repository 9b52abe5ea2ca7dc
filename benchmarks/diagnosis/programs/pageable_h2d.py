"""pageable_h2d: each step copies a 128 MiB tensor from pageable host memory to the GPU.

Planted cause ``pageable_copy``. The step uploads an 8192x4096 fp32 host tensor (128 MiB,
allocated by torch on the CPU: pageable) with ``.to("cuda")`` and then multiplies it by a
4096x2048 fp32 weight (about 2.5 ms on an H100, TF32 off as by default). A copy from
pageable memory is staged by the driver through a small pinned buffer, at about 8 GB/s
(docs/results: 7.7 GB/s host-to-device on the H200): about 17 ms a step, against about
2.4 ms at the 55 GB/s of a pinned copy. The host is blocked in the copy, the GPU's SMs wait.

Fixed twin (remedy ``pin_memory``): the same tensor pinned once (``.pin_memory()``) and
uploaded with ``.to("cuda", non_blocking=True)``. Nothing else changes: the copy is on the
same stream as the matmul, so it does not overlap with compute (no trick beyond pinning).
The data and the math are the same: the accumulated products' checksum is compared by the
runner with the planted run's, and in-process the last step is recomputed from a fresh
upload and compared.
"""

from __future__ import annotations

import diag_common as dc

NAME = "pageable_h2d"


def add(ap):
    ap.add_argument("--mib", type=int, default=128, help="MiB copied per step (default 128)")
    ap.add_argument("--out-features", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=4096)


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    gen = torch.Generator().manual_seed(0)
    cols = a.cols
    rows = a.mib * 2**20 // (4 * cols)
    host = torch.randn(rows, cols, generator=gen)  # pageable: an ordinary CPU tensor
    if a.fixed:
        host = host.pin_memory()
    torch.manual_seed(1)
    w = torch.randn(cols, a.out_features, device="cuda") / cols**0.5
    acc = torch.zeros(a.out_features, device="cuda", dtype=torch.float64)

    def compute(x):
        return (x @ w).sum(0, dtype=torch.float64)

    compute(torch.randn(rows, cols, device="cuda"))  # cuBLAS initialisation outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    last = None
    for i in steps:
        if a.fixed:
            x = host.to("cuda", non_blocking=True)
        else:
            x = host.to("cuda")
        last = compute(x)
        acc += last
    check = dc.check_tensors(last, compute(host.to("cuda")), 1e-6, "last step against a fresh upload")
    res = steps.result(NAME, a.fixed, check, checksum=float(acc.abs().sum()), checksum_rtol=1e-6,
                       bytes_per_step=rows * cols * 4, pinned=bool(host.is_pinned()))
    dc.emit(res)


if __name__ == "__main__":
    main()
