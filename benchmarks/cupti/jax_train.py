"""A JAX training loop (an MLP on random data, SGD) for `gpuwhy run --tracer cupti`: about 3 s of
warm-up (compilation) and then STEPS jitted steps, each fetching its loss to the host (a sync).
Prints one line: steps, seconds per step (median), final loss, and the step's executable as XLA's
cost model counts it (FLOPs and bytes a call: the figures `gpuwhy run --tracer cupti` judges its
kernels by)."""

import statistics
import sys
import time

import jax
import jax.numpy as jnp

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 200


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
for _ in range(STEPS):
    t = time.perf_counter()
    ps, l = step(ps, x, y)
    float(l)
    times.append(time.perf_counter() - t)
print(f"jax_train: {STEPS} steps, {statistics.median(times) * 1e3:.3f} ms/step, loss {float(l):.4f}")
