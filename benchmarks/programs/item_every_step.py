"""An MLP training loop that reads loss.item() every step (a host synchronisation) and logs it."""

import torch
from torch import nn
from torch.profiler import record_function

torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048)).cuda()
opt = torch.optim.AdamW(mlp.parameters(), lr=1e-3)
x = torch.randn(512, 2048, device="cuda")
hist = []
for i in range(60):
    with record_function(f"ProfilerStep#{i}"):
        opt.zero_grad(set_to_none=True)
        loss = mlp(x).pow(2).mean()
        loss.backward()
        opt.step()
        hist.append(loss.item())
        if i % 10 == 0:
            print(f"step {i} loss {hist[-1]:.4f}")
print("done", len(hist))
