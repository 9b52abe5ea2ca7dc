"""The most a remedy can gain on one verdict: new ceilings from the sheet, the time model redone. Pure maths.

Each gain redoes ``max(t_compute, t_memory) + t_overhead`` with the one term the
remedy changes, so it is capped by the roof that is left ("at most 14.8x from
the compute roof; here 6.2x, then memory-bound"). All figures are upper bounds:
the remedy's ceiling, not what a kernel will reach.

- ``faster_precision`` (compute-bound): the next faster peak the sheet has for
  the maths (fp32 -> tf32, bf16; fp16/bf16 -> fp8, else int8; fp8 -> fp4; fp64 ->
  fp64 tensor, fp32; CUDA-core fp16/bf16 -> tensor cores), the bytes scaled by
  the narrower element (tf32 keeps fp32 data).
- ``narrower_storage`` (memory-bound): the next narrower element the sheet can
  compute in (fp64 -> fp32 -> bf16/fp16 -> fp8/int8 -> fp4), arithmetic unchanged.
- ``halve_bytes``: half the bytes (fusing away a round trip that is half the traffic).
- ``reuse``: bytes down until the compute roof is reached (tiling, caching).
- ``launches``: the launch overhead removed (a CUDA graph, fusion into one kernel).
- ``sol``: a measured time up to its roof (needs the measured time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ...units import fmt_time
from .classify import Verdict

#: Bytes per element of each peak's operands (tf32 is fp32 data).
_WIDTH = {"fp64": 8.0, "fp64_tensor": 8.0, "fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp16_nontensor": 2.0,
          "bf16_nontensor": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5}
_TENSOR = {"tf32", "fp16", "bf16", "fp8", "int8", "fp4", "fp64_tensor"}

#: The faster maths to try next, per ceiling precision; "a|b" is a, else b where the sheet lacks a.
FASTER_MATHS: dict[str, tuple[str, ...]] = {
    "fp64": ("fp64_tensor", "fp32"),
    "fp64_tensor": ("fp32",),
    "fp32": ("tf32", "bf16|fp16"),
    "tf32": ("bf16|fp16",),
    "fp16_nontensor": ("fp16",),
    "bf16_nontensor": ("bf16",),
    "fp16": ("fp8|int8",),
    "bf16": ("fp8|int8",),
    "fp8": ("fp4",),
    "int8": (),
    "fp4": (),
}
#: The narrower element to store next, per ceiling precision.
NARROWER_STORAGE: dict[str, str] = {
    "fp64": "fp32", "fp64_tensor": "fp32", "fp32": "bf16|fp16", "tf32": "bf16|fp16",
    "fp16": "fp8|int8", "bf16": "fp8|int8", "fp16_nontensor": "fp8|int8", "bf16_nontensor": "fp8|int8",
    "fp8": "fp4", "int8": "fp4",
}


@dataclass(frozen=True)
class Gain:
    """What one remedy can gain: ``speedup`` (x, at most, here), the time after
    (``after_s``, seconds), and ``fields`` for the remedy's text (``to``, ``from_tflops``, ...)."""

    speedup: float
    after_s: float
    capped_by: str | None
    how: str
    fields: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"max_speedup_x": self.speedup, "after_s": self.after_s, "capped_by": self.capped_by, "how": self.how}


def _pick(option: str, peaks: dict[str, float]) -> str | None:
    for name in option.split("|"):
        if name in peaks:
            return name
    return None


def _display(prec: str) -> str:
    return prec.replace("_nontensor", " on CUDA cores").replace("fp64_tensor", "fp64 on tensor cores")


def _engine(prec: str) -> str:
    return "tensor cores" if prec in _TENSOR else "CUDA cores"


def _redo(v: Verdict, t_c: float, t_m: float, t_o: float, changed: str) -> tuple[float, float, str | None, str]:
    """``(speedup, after_s, capped_by, how)`` with the new terms; ``capped_by`` names the
    term that dominates afterwards when it is not the ``changed`` one (the roof that is left)."""
    before = v.predicted_time_s
    after = max(t_c, t_m) + t_o
    speedup = before / after if after > 0 else float("inf")
    terms = {"compute": t_c, "memory": t_m, "overhead": t_o}
    top = max(terms, key=lambda k: (terms[k], k == changed))
    capped = None if top == changed else top
    how = f"max(t_compute, t_memory) + t_overhead: {fmt_time(before)} -> max({fmt_time(t_c)}, {fmt_time(t_m)}) + {fmt_time(t_o)} = {fmt_time(after)}"
    return speedup, after, capped, how


def faster_precision(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """The faster maths the sheet has (see :data:`FASTER_MATHS`), one :class:`Gain` each."""
    cur = v.ceilings.precision
    out = []
    for option in FASTER_MATHS.get(cur, ()):
        to = _pick(option, peaks_tflops)
        if to is None:
            continue
        peak = peaks_tflops[to] * 1e12
        if not peak > v.ceilings.peak_flops * 1.0001:
            continue
        roof_x = peak / v.ceilings.peak_flops
        scale = _WIDTH[to] / _WIDTH.get(cur, _WIDTH[to])
        speedup, after, capped, how = _redo(v, v.t_compute_s / roof_x, v.t_memory_s * scale, v.t_overhead_s, "compute")
        fields = {"to": _display(to), "engine": _engine(to), "from": _display(cur), "from_tflops": v.ceilings.peak_flops / 1e12,
                  "to_tflops": peak / 1e12, "roof_x": roof_x, "bytes_x": scale}
        out.append(Gain(speedup, after, capped, how, fields))
    return out


def narrower_storage(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """The next narrower element the sheet computes in (see :data:`NARROWER_STORAGE`), arithmetic unchanged."""
    cur = v.ceilings.precision
    option = NARROWER_STORAGE.get(cur)
    to = _pick(option, peaks_tflops) if option else None
    if to is None:
        return []
    scale = _WIDTH[to] / _WIDTH[cur]
    speedup, after, capped, how = _redo(v, v.t_compute_s, v.t_memory_s * scale, v.t_overhead_s, "memory")
    return [Gain(speedup, after, capped, how, {"to": _display(to), "from": _display(cur), "bytes_x": 1 / scale})]


def halve_bytes(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """Half the bytes: at most 2x, less where the compute roof or the overhead is reached first."""
    speedup, after, capped, how = _redo(v, v.t_compute_s, v.t_memory_s / 2, v.t_overhead_s, "memory")
    return [Gain(speedup, after, capped, how, {})]


def reuse(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """Bytes down until the compute roof: at most predicted / (t_compute + t_overhead); none when the
    FLOPs were not counted (no compute roof to reach)."""
    if v.arithmetic_intensity is None:
        return []
    speedup, after, _, how = _redo(v, v.t_compute_s, v.t_compute_s, v.t_overhead_s, "memory")
    return [Gain(speedup, after, "compute", how, {"ridge": v.ridge_point, "intensity": v.arithmetic_intensity})]


def launches(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """The launch overhead removed: at most predicted / max(t_compute, t_memory)."""
    n, lo = v.workload.launches, v.ceilings.launch_overhead_s
    speedup, after, capped, how = _redo(v, v.t_compute_s, v.t_memory_s, 0.0, "overhead")
    return [Gain(speedup, after, capped, how, {"launches": n, "overhead_us": lo * 1e6, "t_overhead_us": v.t_overhead_s * 1e6})]


def sol(v: Verdict, peaks_tflops: dict[str, float]) -> list[Gain]:
    """A measured time brought up to its roof: 100 / speed-of-light %; none without a
    measured time or at 100% and above."""
    if v.sol_pct is None or v.sol_pct >= 100 or v.sol_pct <= 0:
        return []
    t = v.workload.time_s
    roof = max(v.t_compute_s, v.t_memory_s)
    return [Gain(100.0 / v.sol_pct, roof, None, f"measured {fmt_time(t)} -> the roof's {fmt_time(roof)}", {"sol_pct": v.sol_pct})]


#: The gains a remedy may name in its ``gain`` field.
GAINS: dict[str, Callable[[Verdict, dict[str, float]], list[Gain]]] = {
    "faster_precision": faster_precision,
    "narrower_storage": narrower_storage,
    "halve_bytes": halve_bytes,
    "reuse": reuse,
    "launches": launches,
    "sol": sol,
}

__all__ = ["FASTER_MATHS", "GAINS", "Gain", "NARROWER_STORAGE"]
