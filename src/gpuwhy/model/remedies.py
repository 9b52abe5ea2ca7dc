"""Remedies per regime and number-dependent hints, loaded from YAML.

The bundled file is ``specs/remedies/remedies.yaml``; ``GPUWHY_REMEDIES`` may name
a replacement file of the same shape (documented at the top of that file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import SpecError
from ..resources import bundled_dir
from ..specs import load_yaml
from .roofline import Verdict

REGIMES = ("compute", "memory", "overhead")
#: Regimes a replacement file may leave out (the bundled file's blocks are used then):
#: ``latency`` (memory latency-bound) and ``issue`` (issue/latency-bound on the math pipe).
OPTIONAL_REGIMES = ("latency", "issue")
_WHEN_KEYS = {"regime", "dtype", "sheet_has", "ratio_min", "ratio_max", "time_below_s", "sol_below_pct"}


@dataclass(frozen=True)
class Remedies:
    """What helps and what does not for one verdict, plus hints that fit its numbers."""

    regime: str
    helps: tuple[str, ...]
    does_not_help: tuple[str, ...]
    hints: tuple[str, ...]

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {"regime": self.regime, "helps": list(self.helps), "does_not_help": list(self.does_not_help), "hints": list(self.hints)}


def remedies_path() -> Path:
    """The remedies file in use: ``GPUWHY_REMEDIES`` if set, else the bundled one."""
    env = os.environ.get("GPUWHY_REMEDIES")
    return Path(env) if env else bundled_dir("specs") / "remedies" / "remedies.yaml"


def load_remedies(path: Path | None = None) -> dict:
    """Parse and check a remedies file.

    Raises:
        SpecError: naming the file and the field, when a regime is missing, a
            list is not a list of strings, or a hint has an unknown `when` key.
    """
    path = path or remedies_path()
    data = load_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("regimes"), dict):
        raise SpecError(f"{path}: a remedies file needs a 'regimes' mapping")
    for regime in REGIMES + OPTIONAL_REGIMES:
        block = data["regimes"].get(regime)
        if block is None and regime in OPTIONAL_REGIMES:
            continue
        if not isinstance(block, dict):
            raise SpecError(f"{path}: field 'regimes.{regime}' is missing")
        for key in ("helps", "does_not_help"):
            items = block.get(key)
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise SpecError(f"{path}: field 'regimes.{regime}.{key}' must be a list of strings")
    for i, hint in enumerate(data.get("hints") or []):
        if not isinstance(hint, dict) or not isinstance(hint.get("text"), str):
            raise SpecError(f"{path}: field 'hints[{i}]' needs a 'text' string")
        bad = set(hint.get("when") or {}) - _WHEN_KEYS
        if bad:
            raise SpecError(f"{path}: field 'hints[{i}].when' has unknown key {sorted(bad)[0]!r}; known: {', '.join(sorted(_WHEN_KEYS))}")
    return data


def _holds(when: dict, ctx: dict) -> bool:
    if "regime" in when and ctx["regime"] not in when["regime"]:
        return False
    if "dtype" in when and ctx["dtype"] not in when["dtype"]:
        return False
    if "sheet_has" in when and when["sheet_has"] not in ctx["sheet_precisions"]:
        return False
    if "ratio_min" in when and not ctx["ratio"] >= when["ratio_min"]:
        return False
    if "ratio_max" in when and not ctx["ratio"] < when["ratio_max"]:
        return False
    if "time_below_s" in when and not ctx["time_s"] < when["time_below_s"]:
        return False
    if "sol_below_pct" in when and (ctx["sol_pct"] is None or not ctx["sol_pct"] < when["sol_below_pct"]):
        return False
    return True


def remedies_for(verdict: Verdict, dtype: str, sheet_peaks: dict[str, float], data: dict | None = None) -> Remedies:
    """The remedies of ``verdict.regime`` and the hints whose conditions hold.

    ``dtype`` is the precision the user asked for; ``sheet_peaks`` the sheet's
    ``peak_tflops`` map (TFLOP/s), used for the tensor-core speed-up hint.

    Raises:
        SpecError: if the remedies file is malformed (see :func:`load_remedies`).
    """
    data = data or load_remedies()
    block = data["regimes"].get(verdict.regime)
    if block is None and verdict.regime in OPTIONAL_REGIMES:
        block = load_remedies(bundled_dir("specs") / "remedies" / "remedies.yaml")["regimes"][verdict.regime]
    t = verdict.workload.time_s if verdict.workload.time_s is not None else verdict.predicted_time_s
    fp32 = sheet_peaks.get("fp32")
    ctx = {
        "regime": verdict.regime,
        "dtype": dtype,
        "sheet_precisions": set(sheet_peaks),
        "ratio": verdict.arithmetic_intensity / verdict.ridge_point,
        "intensity": verdict.arithmetic_intensity,
        "ridge": verdict.ridge_point,
        "time_s": t,
        "time_us": t * 1e6,
        "sol_pct": verdict.sol_pct,
        "tensor_speedup": (sheet_peaks["tf32"] / fp32) if fp32 and "tf32" in sheet_peaks else float("nan"),
        "gpu": verdict.ceilings.gpu,
    }
    hints = []
    for hint in data.get("hints") or []:
        if _holds(hint.get("when") or {}, ctx):
            try:
                hints.append(hint["text"].format(**ctx))
            except (KeyError, ValueError, IndexError) as exc:
                raise SpecError(f"hint {hint.get('id', '?')!r}: bad placeholder in text ({exc})") from None
    return Remedies(verdict.regime, tuple(block["helps"]), tuple(block["does_not_help"]), tuple(hints))
