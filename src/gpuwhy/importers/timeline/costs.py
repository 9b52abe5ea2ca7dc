"""The kernels each costed host call launched, grouped by executable: what a framework's cost model
(XLA's ``cost_analysis`` of a jitted JAX function) says one call does, beside the GPU time its
kernels took.

A kernel belongs to a call through ``gpu_op`` (the call's External id, as the reader linked it) when
that id has figures in ``op_costs``; calls are grouped by their range name (``jax.jit step``: one
executable, or several compiled for other input shapes, the same function). Times in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .activities import KERNEL, Timeline


@dataclass(frozen=True)
class ExecutableCalls:
    """One costed function's calls on one GPU: ``name`` (its range's), ``calls`` that launched kernels
    there, ``flops`` and ``bytes`` summed over those calls (None when a call lacks them), ``kernel_s``
    its kernels' summed GPU durations (s; not a union: XLA runs an executable's kernels on one stream
    in order), ``launches``, ``kernels`` (full name, seconds) largest first, ``dtype`` the floating
    dtype of most argument bytes, ``why`` no figures (the first call's reason; None with figures),
    ``matmul`` the matmul precision the calls asked (None: the framework's default), ``flops_from``
    whose counts the calls' FLOPs are (each source once, first seen first: ``compiled``, ``lowered``,
    ``jaxpr``; () where the calls do not say: the cost model's), ``flops_note`` what to know of
    those counts (the calls' notes, each once, joined by ``; ``; None without any)."""

    name: str
    calls: int
    flops: float | None
    bytes: float | None
    kernel_s: float
    launches: int
    kernels: tuple[tuple[str, float], ...]
    dtype: str | None = None
    why: str | None = None
    matmul: str | None = None
    flops_from: tuple[str, ...] = ()
    flops_note: str | None = None


def executable_calls(t: Timeline, device: str) -> tuple[ExecutableCalls, ...]:
    """The costed calls whose kernels ran on ``device`` (as ``gpu_device`` spells it), by function,
    most kernel time first; () when none."""
    if not t.op_costs:
        return ()
    is_k = (t.gpu_kind == KERNEL) & np.asarray([d == device for d in t.gpu_device], dtype=bool)
    groups: dict[str, dict] = {}
    for i in np.flatnonzero(is_k).tolist():
        x = t.gpu_op[i]
        cost = t.op_costs.get(x) if x is not None else None
        if cost is None:
            continue
        g = groups.setdefault(cost["name"], {"calls": {}, "s": 0.0, "n": 0, "k": {}})
        g["calls"][x] = cost
        d = max(float(t.gpu_dur[i]), 0.0) * 1e-6
        g["s"] += d
        g["n"] += 1
        kn = t.gpu_names[t.gpu_name[i]]
        g["k"][kn] = g["k"].get(kn, 0.0) + d
    out = []
    for name, g in groups.items():
        costs = list(g["calls"].values())
        flops = sum(c["flops"] for c in costs) if all(c.get("flops") for c in costs) else None
        nbytes = sum(c["bytes"] for c in costs) if all(c.get("bytes") for c in costs) else None
        why = next((c["cost"] for c in costs if c.get("cost") not in (None, "cost_analysis")), None)
        if why is None and nbytes is None:
            why = "the cost model gave no bytes"
        dtypes = [c.get("dtype") for c in costs if c.get("dtype")]
        notes = "; ".join(dict.fromkeys(c["flops_note"] for c in costs if c.get("flops_note")))
        out.append(ExecutableCalls(name, len(costs), flops, nbytes, g["s"], g["n"],
                                   tuple(sorted(g["k"].items(), key=lambda kv: -kv[1])),
                                   max(set(dtypes), key=dtypes.count) if dtypes else None, why,
                                   next((c["matmul"] for c in costs if c.get("matmul")), None),
                                   tuple(dict.fromkeys(c["flops_from"] for c in costs if c.get("flops_from"))),
                                   notes or None))
    return tuple(sorted(out, key=lambda e: -e.kernel_s))


__all__ = ["ExecutableCalls", "executable_calls"]
