"""Remedies per regime and number-dependent hints, loaded from YAML, each remedy
with the most it can gain here (:mod:`gpuwhy.model.roofline.remedy_gains`).

The bundled file is ``specs/remedies/remedies.yaml``; ``GPUWHY_REMEDIES`` may name
a replacement file of the same shape (documented at the top of that file).
Remedies are ordered by stage, as optimisation work goes: algorithm, precision,
fusion, memory layout, more hardware (:data:`STAGES`).
"""

from __future__ import annotations

import os
from math import nan
from dataclasses import dataclass
from pathlib import Path

from ...errors import SpecError
from ...resources import bundled_dir
from ...specs import load_yaml
from .remedy_gains import GAINS, Gain
from .classify import Verdict

REGIMES = ("compute", "memory", "overhead")
#: The order remedies are printed in (the order of optimisation work); "other" is a plain sentence's.
STAGES = ("algorithm", "precision", "fusion", "layout", "kernel", "hardware", "other")
#: Each stage in words, for tables.
STAGE_WORDS = {"algorithm": "algorithm", "precision": "precision", "fusion": "fusion", "layout": "memory layout",
               "kernel": "kernel tuning", "hardware": "more hardware", "other": ""}
#: Regimes a replacement file may leave out (the bundled file's blocks are used then):
#: ``latency`` (memory latency-bound), ``issue`` (issue/latency-bound on the math pipe) and
#: ``issue_sm``, the ``issue`` variant for CUDA-core work: the SM's instruction issue and
#: pipes are the limit (:mod:`gpuwhy.model.roofline.issue_bound`).
OPTIONAL_REGIMES = ("latency", "issue", "issue_sm")
_WHEN_KEYS = {"regime", "dtype", "sheet_has", "ratio_min", "ratio_max", "time_below_s", "sol_below_pct", "bytes_minimal"}
_ITEM_KEYS = {"stage", "text", "gain", "optional_gain", "when"}


@dataclass(frozen=True)
class Remedy:
    """One remedy: its ``stage`` (see :data:`STAGES`), its sentence, and ``gain`` (the most
    it can gain here; None when it changes no ceiling or the gain needs a measured time)."""

    stage: str
    text: str
    gain: Gain | None = None

    def to_dict(self) -> dict:
        """Plain data for ``--json``: ``stage``, ``text``, ``max_speedup_x`` (None without a number), ``capped_by``, ``how``."""
        g = self.gain.to_dict() if self.gain is not None else {"max_speedup_x": None, "after_s": None, "capped_by": None, "how": None}
        return {"stage": self.stage, "text": self.text, **g}


@dataclass(frozen=True)
class Remedies:
    """What helps (in stage order, each :class:`Remedy` with its gain) and what does not
    for one verdict, plus hints that fit its numbers. ``helps`` holds the sentences of ``steps``."""

    regime: str
    helps: tuple[str, ...]
    does_not_help: tuple[str, ...]
    hints: tuple[str, ...]
    steps: tuple[Remedy, ...] = ()

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {"regime": self.regime, "helps": list(self.helps), "steps": [r.to_dict() for r in self.steps],
                "stages": list(STAGES[:-1]), "does_not_help": list(self.does_not_help), "hints": list(self.hints)}


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
        items = block.get("does_not_help")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise SpecError(f"{path}: field 'regimes.{regime}.does_not_help' must be a list of strings")
        helps = block.get("helps")
        if not isinstance(helps, list):
            raise SpecError(f"{path}: field 'regimes.{regime}.helps' must be a list of sentences or mappings")
        for j, item in enumerate(helps):
            _check_item(path, f"regimes.{regime}.helps[{j}]", item)
    for i, hint in enumerate(data.get("hints") or []):
        if not isinstance(hint, dict) or not isinstance(hint.get("text"), str):
            raise SpecError(f"{path}: field 'hints[{i}]' needs a 'text' string")
        bad = set(hint.get("when") or {}) - _WHEN_KEYS
        if bad:
            raise SpecError(f"{path}: field 'hints[{i}].when' has unknown key {sorted(bad)[0]!r}; known: {', '.join(sorted(_WHEN_KEYS))}")
    return data


def _check_item(path: Path, where: str, item) -> None:
    """Raise :class:`SpecError` unless ``item`` is a sentence or a well-formed helps mapping."""
    if isinstance(item, str):
        return
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise SpecError(f"{path}: field '{where}' must be a sentence or a mapping with a 'text' sentence")
    bad = set(item) - _ITEM_KEYS
    if bad:
        raise SpecError(f"{path}: field '{where}' has unknown key {sorted(bad)[0]!r}; known: {', '.join(sorted(_ITEM_KEYS))}")
    if item.get("stage", "other") not in STAGES:
        raise SpecError(f"{path}: field '{where}.stage' must be one of {', '.join(STAGES[:-1])}")
    if "gain" in item and item["gain"] not in GAINS:
        raise SpecError(f"{path}: field '{where}.gain' must be one of {', '.join(GAINS)}")
    bad = set(item.get("when") or {}) - _WHEN_KEYS
    if bad:
        raise SpecError(f"{path}: field '{where}.when' has unknown key {sorted(bad)[0]!r}; known: {', '.join(sorted(_WHEN_KEYS))}")


def regime_block(name: str, data: dict) -> dict:
    """The remedies block ``name`` of ``data``; an optional one the file leaves out comes from the bundled file."""
    block = data["regimes"].get(name)
    if block is None and name in OPTIONAL_REGIMES:
        block = load_remedies(bundled_dir("specs") / "remedies" / "remedies.yaml")["regimes"][name]
    return block


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
    if "bytes_minimal" in when and bool(when["bytes_minimal"]) != ctx["bytes_minimal"]:
        return False
    return True


def _format(text: str, fields: dict, what: str) -> str:
    try:
        return text.format(**fields)
    except (KeyError, ValueError, IndexError) as exc:
        raise SpecError(f"{what}: bad placeholder in text ({exc})") from None


def _steps(items: list, verdict: Verdict, sheet_peaks: dict[str, float], ctx: dict) -> tuple[Remedy, ...]:
    """The helps items that hold, expanded by their gains, in stage order."""
    steps: list[Remedy] = []
    for j, item in enumerate(items):
        if isinstance(item, str):
            steps.append(Remedy("other", item))  # a plain sentence, printed as written
            continue
        if not _holds(item.get("when") or {}, ctx):
            continue
        stage = item.get("stage", "other")
        gains = GAINS[item["gain"]](verdict, sheet_peaks) if "gain" in item else []
        if "gain" in item and not gains:
            if item.get("optional_gain"):
                steps.append(Remedy(stage, _format(item["text"], ctx, f"remedy {j}")))
            continue
        for g in gains or [None]:
            fields = dict(ctx, **(g.fields if g is not None else {}))
            steps.append(Remedy(stage, _format(item["text"], fields, f"remedy {j} ({stage})"), g))
    return tuple(sorted(steps, key=lambda r: STAGES.index(r.stage)))


def remedies_for(verdict: Verdict, dtype: str, sheet_peaks: dict[str, float], data: dict | None = None,
                 bytes_minimal: bool = False, block: str | None = None, level: str | None = None) -> Remedies:
    """The remedies of ``verdict.regime`` (each with the most it can gain here, in
    stage order) and the hints whose conditions hold.

    ``block`` names the remedies block when it is a variant of the regime's own
    (``issue_sm`` for an ``issue`` verdict on CUDA-core work); default the regime's.

    ``dtype`` is the precision the user asked for; ``sheet_peaks`` the sheet's
    ``peak_tflops`` map (TFLOP/s), for the gains of a faster or narrower precision;
    ``bytes_minimal`` says the bytes are a shape's minimum (no reuse can cut them); ``level`` the
    memory level the verdict was judged against (``DRAM``, ``L2``; default the ceilings' level), the
    ``{level}`` of the texts.

    Raises:
        SpecError: if the remedies file is malformed (see :func:`load_remedies`).
    """
    data = data or load_remedies()
    block = regime_block(verdict.regime if block is None else block, data)
    t = verdict.workload.time_s if verdict.workload.time_s is not None else verdict.predicted_time_s
    fp32 = sheet_peaks.get("fp32")
    ctx = {
        "regime": verdict.regime,
        "dtype": dtype,
        "sheet_precisions": set(sheet_peaks),
        # FLOPs not counted: no intensity, so no condition on it holds (NaN compares false)
        "ratio": nan if verdict.arithmetic_intensity is None else verdict.arithmetic_intensity / verdict.ridge_point,
        "intensity": nan if verdict.arithmetic_intensity is None else verdict.arithmetic_intensity,
        "ridge": verdict.ridge_point,
        "time_s": t,
        "time_us": t * 1e6,
        "sol_pct": verdict.sol_pct,
        "tensor_speedup": (sheet_peaks["tf32"] / fp32) if fp32 and "tf32" in sheet_peaks else float("nan"),
        "gpu": verdict.ceilings.gpu,
        "precision": verdict.ceilings.precision,
        "bytes_minimal": bool(bytes_minimal),
        "level": level or getattr(verdict.ceilings, "level", "DRAM"),
    }
    hints = []
    for hint in data.get("hints") or []:
        if _holds(hint.get("when") or {}, ctx):
            try:
                hints.append(hint["text"].format(**ctx))
            except (KeyError, ValueError, IndexError) as exc:
                raise SpecError(f"hint {hint.get('id', '?')!r}: bad placeholder in text ({exc})") from None
    steps = _steps(block["helps"], verdict, sheet_peaks, ctx)
    return Remedies(verdict.regime, tuple(r.text for r in steps), tuple(block["does_not_help"]), tuple(hints), steps)
