"""A Triton kernel launched in a Python loop for `gpuwhy run --tracer cupti`: a vector add of 4 Mi
floats, launched STEPS times with some Python work between launches (about 0.3 ms of host time
per launch). Prints one line: launches, seconds per launch (median), the result checked."""

import statistics
import sys
import time

import torch
import triton
import triton.language as tl

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 4 * 1024 * 1024
x = torch.rand(n, device="cuda")
y = torch.rand(n, device="cuda")
out = torch.empty_like(x)
grid = (triton.cdiv(n, 1024),)
add_kernel[grid](x, y, out, n, BLOCK=1024)
torch.cuda.synchronize()
times = []
for i in range(STEPS):
    t = time.perf_counter()
    add_kernel[grid](x, y, out, n, BLOCK=1024)
    acc = 0
    while time.perf_counter() - t < 3e-4:  # host work between launches
        acc += 1
    times.append(time.perf_counter() - t)
torch.cuda.synchronize()
assert torch.allclose(out, x + y)
print(f"triton_loop: {STEPS} launches, {statistics.median(times) * 1e3:.3f} ms/launch, result ok")
