"""A CNN training loop whose Dataset does CPU work per sample and DataLoader(num_workers=0): data loading first."""

import numpy as np
import torch
from torch import nn
from torch.profiler import record_function


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 100_000

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = rng.standard_normal((3, 96, 96)).astype(np.float32)
        for _ in range(4):
            img = np.tanh(img * 1.1 + 0.01)
        return torch.from_numpy(img), int(i % 100)


model = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
    nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
    nn.Conv2d(128, 256, 3, padding=1, stride=2), nn.BatchNorm2d(256), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loader = torch.utils.data.DataLoader(Slow(), batch_size=128, shuffle=True, num_workers=0)
lossf = nn.CrossEntropyLoss()
for i, (x, y) in enumerate(loader):
    with record_function(f"ProfilerStep#{i}"):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        opt.zero_grad(set_to_none=True)
        lossf(model(x), y).backward()
        opt.step()
    if i == 12:
        break
print("trained", i + 1, "steps")
