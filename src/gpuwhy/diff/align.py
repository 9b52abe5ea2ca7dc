"""Pairing the kernels and operators of two runs, and what appeared and disappeared.

Kernels are paired by name, grid and block where both runs give the launch shape, else by name
(a trace gives shapes; a `gpuwhy run` document and an ncu export give names): a kernel whose
shape changed is one that disappeared and one that appeared. Times are per unit of the budget
(one step, or the window), so runs of different lengths compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .side import KernelStat

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class KernelMove:
    """One kernel (``name``, ``grid``, ``block``) before and after: seconds per unit
    (``before_s``/``after_s``, 0 where absent), launches per unit, ``delta_s``; ``status``:
    ``both``, ``appeared`` (only after) or ``disappeared`` (only before); and its ``kind``,
    regime, % of roof (0-100) and deciding level on each side where measured."""

    name: str
    grid: Dim3 | None
    block: Dim3 | None
    status: str
    before_s: float
    after_s: float
    before_launches: float
    after_launches: float
    kind: str
    before: KernelStat | None
    after: KernelStat | None

    @property
    def delta_s(self) -> float:
        return self.after_s - self.before_s

    def to_dict(self) -> dict:
        def side(k: KernelStat | None, prefix: str) -> dict:
            return {f"{prefix}_regime": k.regime if k else None, f"{prefix}_roof_pct": k.roof_pct if k else None,
                    f"{prefix}_level": k.level if k else None}

        return {"name": self.name, "grid": list(self.grid) if self.grid else None,
                "block": list(self.block) if self.block else None, "status": self.status, "kind": self.kind,
                "before_s": self.before_s, "after_s": self.after_s, "delta_s": self.delta_s,
                "before_launches": self.before_launches, "after_launches": self.after_launches,
                **side(self.before, "before"), **side(self.after, "after")}


@dataclass(frozen=True)
class OperatorMove:
    """One operator (or NVTX range) before and after, seconds per unit, and its ``status``."""

    name: str
    status: str
    before_s: float
    after_s: float

    @property
    def delta_s(self) -> float:
        return self.after_s - self.before_s

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "before_s": self.before_s, "after_s": self.after_s,
                "delta_s": self.delta_s}


def _status(before: bool, after: bool) -> str:
    return "both" if before and after else "appeared" if after else "disappeared"


def _merge(ks: Sequence[KernelStat], shaped: bool) -> dict[tuple, KernelStat]:
    """``ks`` keyed by (name, grid, block) (``shaped``) or name, kernels of one key summed."""
    out: dict[tuple, KernelStat] = {}
    for k in ks:
        key = (k.name, k.grid, k.block) if shaped else (k.name, None, None)
        old = out.get(key)
        if old is None:
            out[key] = KernelStat(k.name, k.total_s, k.launches, key[1], key[2], k.kind, k.regime, k.roof_pct, k.level)
        else:
            out[key] = KernelStat(k.name, old.total_s + k.total_s, old.launches + k.launches, key[1], key[2], old.kind,
                                  old.regime or k.regime, old.roof_pct if old.roof_pct is not None else k.roof_pct,
                                  old.level or k.level)
    return out


def align_kernels(before: Sequence[KernelStat], after: Sequence[KernelStat], by_shape: bool = True
                  ) -> tuple[KernelMove, ...]:
    """Every kernel of either run, paired (see the module docstring), largest move first (then by name).

    Launch shapes are used only when every kernel of both runs has them and ``by_shape`` (off for
    runs on two different GPUs, whose libraries pick launch shapes by the GPU)."""
    shaped = by_shape and all(k.grid is not None and k.block is not None for k in (*before, *after)) and \
        bool(before or after)
    b, a = _merge(before, shaped), _merge(after, shaped)
    out = []
    for key in dict.fromkeys([*b, *a]):
        kb, ka = b.get(key), a.get(key)
        out.append(KernelMove(key[0], key[1], key[2], _status(kb is not None, ka is not None),
                              kb.total_s if kb else 0.0, ka.total_s if ka else 0.0,
                              kb.launches if kb else 0, ka.launches if ka else 0,
                              (kb or ka).kind, kb, ka))
    out.sort(key=lambda m: (-abs(m.delta_s), m.name))
    return tuple(out)


def align_operators(before: Mapping[str, float], after: Mapping[str, float]) -> tuple[OperatorMove, ...]:
    """Every operator of either run (seconds per unit), largest move first (then by name)."""
    out = [OperatorMove(n, _status(n in before, n in after), before.get(n, 0.0), after.get(n, 0.0))
           for n in dict.fromkeys([*before, *after])]
    out.sort(key=lambda m: (-abs(m.delta_s), m.name))
    return tuple(out)


def overlap(before: Mapping[str, float], after: Mapping[str, float]) -> float | None:
    """The share (0-1) of time held by names both runs have, the lesser of the two runs' shares
    (None when either run has no time): how much of one program the other shares."""
    tb, ta = sum(before.values()), sum(after.values())
    if tb <= 0 or ta <= 0:
        return None
    common = set(before) & set(after)
    return min(sum(before[n] for n in common) / tb, sum(after[n] for n in common) / ta)


__all__ = ["KernelMove", "OperatorMove", "align_kernels", "align_operators", "overlap"]
