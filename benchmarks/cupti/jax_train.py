"""A JAX training loop (an MLP on random data, SGD) for `gpuwhy run --tracer cupti`: about 3 s of
warm-up (compilation) and then STEPS jitted steps, each fetching its loss to the host (a sync; see
JAX_FETCH_EVERY below for its fixed twin).
Prints one line: steps, seconds per step (median), final loss, and the step's executable as XLA's
cost model counts it (FLOPs and bytes a call: the figures `gpuwhy run --tracer cupti` judges its
kernels by)."""

import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
#: JAX_FETCH_EVERY=N: the loss is fetched to the host (a sync) every N steps (1: the planted per-step sync;
#: N >= STEPS: once, after the loop: its fixed twin); JAX_NVTX=1: each step an NVTX range ProfilerStep#k
#: (through PyTorch's NVTX binding, where PyTorch is there), so `gpuwhy run --steps N` can take the last N
FETCH_EVERY = max(1, int(os.environ.get("JAX_FETCH_EVERY", "1")))
try:
    if os.environ.get("JAX_NVTX") != "1":
        raise ImportError
    from torch.cuda import nvtx

    nvtx.range_push("gpuwhy-nvtx-check")  # a CPU-only PyTorch has no NVTX
    nvtx.range_pop()
except (ImportError, RuntimeError):
    nvtx = None


def init(key, sizes):
    ps = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        ps.append((jax.random.normal(k, (a, b)) / a**0.5, jnp.zeros(b)))
    return ps


def loss(ps, x, y):
    for w, b in ps[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = ps[-1]
    return jnp.mean((x @ w + b - y) ** 2)


@jax.jit
def step(ps, x, y):
    l, g = jax.value_and_grad(loss)(ps, x, y)
    return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(ps, g)], l


key = jax.random.PRNGKey(0)
ps = init(key, [1024, 4096, 4096, 1024])
x = jax.random.normal(key, (512, 1024))
y = jax.random.normal(key, (512, 1024))
ps, l = step(ps, x, y)
l.block_until_ready()
cost = step.lower(ps, x, y).compile().cost_analysis()  # in the warm-up, which the window leaves out
cost = cost[0] if isinstance(cost, (list, tuple)) else cost
print(f"jax_train: cost_analysis {cost.get('flops', 0) / 1e9:.3f} GFLOP, {cost.get('bytes accessed', 0) / 1e6:.1f} MB "
      "a step")
times = []
t_loop = time.perf_counter()
for i in range(STEPS):
    t = time.perf_counter()
    if nvtx is not None:
        nvtx.range_push(f"ProfilerStep#{i}")
    ps, l = step(ps, x, y)
    if (i + 1) % FETCH_EVERY == 0:
        float(l)
    if nvtx is not None:
        nvtx.range_pop()
    times.append(time.perf_counter() - t)
l.block_until_ready()
loop = time.perf_counter() - t_loop
print(f"jax_train: {STEPS} steps, {statistics.median(times) * 1e3:.3f} ms/step (median), loop {loop * 1e3:.1f} ms "
      f"({loop / STEPS * 1e3:.3f} ms/step), loss fetched every {FETCH_EVERY}, loss {float(l):.4f}")
