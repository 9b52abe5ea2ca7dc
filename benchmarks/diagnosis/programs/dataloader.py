"""dataloader: a DataLoader whose Dataset does CPU work per sample, with ``num_workers=0``.

Planted cause ``data_loading``. Each sample is made on the CPU by numpy (a seeded 3x64x64
normal image and ``--passes`` (32) tanh "augmentation" passes, standing in for decoding and
augmenting: about 0.5 ms a sample on one core), 64 samples a batch, so about 30 ms per
batch built on the main process. The training step on the GPU (an MLP 12288 -> 2048 ->
2048 -> 1000 under bf16 autocast, SGD) takes well under a millisecond: the GPU waits for the
next batch most of the step, inside ``_SingleProcessDataLoaderIter.__next__``.

Fixed twin (remedy ``more_loader_workers``): the same Dataset and order with
``num_workers=8, persistent_workers=True, pin_memory=True`` (the GPU machine has 16 cores):
eight processes build batches in parallel while the GPU trains, and pinned batches copy with
``non_blocking=True``. ``shuffle=False``, and each sample is seeded by its index, so both
variants train on the same batches in the same order: how far the weights moved is compared
by the runner with the planted run's, and in-process the last batch is rebuilt on the main
process and compared with the one the loader gave.
"""

from __future__ import annotations

import diag_common as dc

NAME = "dataloader"


def add(ap):
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--passes", type=int, default=32, help="numpy passes per sample (the CPU cost)")
    ap.add_argument("--workers", type=int, default=8, help="the twin's num_workers")


class Samples:
    """A map-style Dataset: sample i is a seeded normal image run through ``passes`` tanh passes."""

    def __init__(self, n: int, passes: int) -> None:
        self.n, self.passes = n, passes

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        import numpy as np
        import torch

        rng = np.random.default_rng(1000 + i)
        img = rng.standard_normal((3, 64, 64), dtype=np.float32)
        for _ in range(self.passes):
            img = np.tanh(img * 1.1 + 0.01)
        return torch.from_numpy(img), int(i % 1000)


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch
    from torch import nn

    torch.manual_seed(0)
    dev = "cuda"
    total = a.warmup + a.steps
    ds = Samples(total * a.batch, a.passes)
    if a.fixed:
        loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=False, num_workers=a.workers,
                                             persistent_workers=True, pin_memory=True)
    else:
        loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=False, num_workers=0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                          nn.Linear(2048, 1000)).to(dev)
    p0 = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, foreach=True)
    lossf = nn.CrossEntropyLoss()
    torch.cuda.synchronize()

    it = iter(loader)
    steps = dc.Steps(a)
    x_last = None
    for i in steps:
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        x_last = x
    want = torch.stack([ds[j][0] for j in range((total - 1) * a.batch, total * a.batch)])
    check = dc.check_tensors(x_last.cpu(), want, 0.0, "last batch against the Dataset")
    moved = float(sum((p.detach() - q).abs().double().sum() for p, q in zip(model.parameters(), p0)))
    del it, loader  # stop the twin's workers before the interpreter exits
    res = steps.result(NAME, a.fixed, check, checksum=moved, checksum_rtol=1e-4, batch=a.batch,
                       passes=a.passes, workers=a.workers if a.fixed else 0)
    dc.emit(res)


if __name__ == "__main__":
    main()
