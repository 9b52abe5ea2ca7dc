"""An MLP training loop that reads loss.item() every step (a host synchronisation) and then
computes its metrics on the host (numpy), as many training scripts' logging does.

The step's GPU work (about 3 ms) is longer than the host's metrics (about 1 ms), so the host
spends most of each step blocked in the sync: the GPU idles after every step while the host
catches up, and that idle time is the sync's (it would have launched the next step that much
sooner without it)."""

import numpy as np
import torch
from torch import nn
from torch.profiler import record_function

torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
opt = torch.optim.AdamW(mlp.parameters(), lr=1e-4)
x = torch.randn(4096, 4096, device="cuda")
hist = []
noise = np.random.default_rng(0).standard_normal(60_000)
for i in range(40):
    with record_function(f"ProfilerStep#{i}"):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = mlp(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        hist.append(loss.item())  # the host waits here for the whole step
        smooth = float(np.mean(hist[-20:]))  # host-side metrics while the GPU has nothing queued
        spread = float(np.percentile(noise * smooth, [5, 50, 95]).sum())
        if i % 10 == 0:
            print(f"step {i} loss {hist[-1]:.4f} smooth {smooth:.4f} {spread:.3f}")
print("done", len(hist))
