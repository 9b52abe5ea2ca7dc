"""`check --baseline FILE` / `bench --baseline FILE`: this run's figures against a saved earlier run.

A baseline is any saved run of the same GPU model that :func:`gpuwhy.check.figures.read_records`
reads: a ``gpuwhy check --json`` document (what ``check --save-baseline`` writes), a
``gpuwhy bench --json`` document of a ``--quick``/``--sweep`` run (what ``bench --save-baseline``
writes) or a device profile. Each figure both runs have becomes one check,
``baseline_<figure>`` (``baseline_dram_bandwidth``, ``baseline_bf16``,
``baseline_launch_overhead``): it passes unless the figure is worse than the baseline's by
more than the policy's tolerance (:meth:`gpuwhy.check.policy.Policy.tolerance`; by default
5 % lower bandwidth, 5 % lower FLOP/s, 20 % higher launch overhead), and then it fails (or
warns, as the policy's ``severity.baseline`` says). :func:`compare` is pure;
:func:`load_baseline` and :func:`write_baseline` read and write the files.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..errors import UsageError
from ..model.multi_gpu.spread import median, relative_change, worse_by
from .figures import (
    UNIT_SUFFIX,
    RunRecord,
    figure,
    figure_order,
    other_model_error,
    read_records,
    same_model,
)
from .policy import PASS, SKIP, CheckResult, Policy
from ..units import fmt_num

WHAT = "a baseline: a `gpuwhy check --json` or `gpuwhy bench --json` file, or a device profile"


@dataclass(frozen=True)
class Baseline:
    """The runs of one baseline file (one :class:`~gpuwhy.check.figures.RunRecord` per GPU)."""

    source: str
    records: tuple[RunRecord, ...]

    @property
    def kind(self) -> str:
        """``check``, ``bench`` or ``profile``."""
        return self.records[0].kind


@dataclass(frozen=True)
class Comparison:
    """One GPU's figures against the baseline: the ``baseline_*`` checks, which baseline run
    they were compared with (``against``), and a note when the two runs measured differently."""

    checks: tuple[CheckResult, ...]
    against: str
    source: str
    note: str = ""

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {"file": self.source, "against": self.against, "note": self.note,
                "checks": [c.to_dict() for c in self.checks]}


def check_name(key: str) -> str:
    """``dram_bandwidth_gbs`` -> ``baseline_dram_bandwidth``, ``bf16_tflops`` -> ``baseline_bf16``."""
    f = figure(key)
    return "baseline_" + key[: -len(UNIT_SUFFIX[f.unit]) - 1]


def compare(current: dict[str, float], base: dict[str, float], policy: Policy,
            expected: Iterable[str] = ()) -> tuple[CheckResult, ...]:
    """One ``baseline_*`` check per figure of ``current``, of ``expected`` (figures this kind of
    run measures, so that one it failed to measure is a skip, not silence) and of ``base``
    that this run also has. Figures are in their keys' units (:mod:`gpuwhy.check.figures`).

    A figure worse than the baseline's by more than ``policy.tolerance(key)`` (a fraction of
    the baseline figure) misses: ``fail`` or ``warn`` as ``policy.on_miss`` says. A figure
    missing on either side is ``skip`` with the reason.
    """
    keys = sorted(set(current) | set(expected), key=figure_order)
    out = []
    for key in keys:
        f = figure(key)
        name, u, tol = check_name(key), UNIT_SUFFIX[f.unit], policy.tolerance(key)
        cur, ref = current.get(key), base.get(key)
        sign = "-" if f.higher_is_better else "+"
        if ref is None or cur is None:
            why = "the baseline has no such figure" if ref is None else "not measured in this run"
            out.append(CheckResult(name, SKIP, "" if cur is None else f"{fmt_num(cur, 4)} {f.unit}",
                                   f"baseline {sign}{tol:.0%}", why, {"tolerance_fraction": tol}))
            continue
        limit = ref * (1 - tol) if f.higher_is_better else ref * (1 + tol)
        change = relative_change(cur, ref)
        worse = worse_by(cur, ref, f.higher_is_better) / ref
        ok = worse <= tol
        nums = {f"measured_{u}": cur, f"baseline_{u}": ref, f"threshold_{u}": limit, "change_fraction": change,
                "tolerance_fraction": tol}
        op = ">=" if f.higher_is_better else "<="
        detail = ""
        if not ok:
            detail = (f"{f.label} regressed {worse:.1%} against the baseline ({fmt_num(ref, 4)} {f.unit}); "
                      f"{tol:.0%} is allowed")
        elif -worse > tol:
            detail = f"better than the baseline by {-worse:.1%}: save a new baseline if this is the new normal"
        out.append(CheckResult(name, PASS if ok else policy.on_miss(name), f"{fmt_num(cur, 4)} {f.unit} ({change:+.1%} vs {fmt_num(ref, 4)})",
                               f"{op} {fmt_num(limit, 4)} {f.unit} (baseline {sign}{tol:.0%})", detail, nums))
    return tuple(out)


def _norm_uuid(u: str) -> str:
    """NVML's form of a UUID (:func:`gpuwhy.profiles.normalize_uuid`), "" for none."""
    from ..profiles import normalize_uuid

    return normalize_uuid(u) if (u or "").strip() else ""


def baseline_figures(baseline: Baseline, model: str, uuid: str) -> tuple[dict[str, float], str]:
    """The baseline figures to compare a GPU (NVML ``model`` name, ``uuid``) with, and which they are.

    The same GPU's run (by UUID) when the baseline has it; else the one run of the same model;
    else, over several runs of that model, the median of each figure.

    Raises:
        UsageError: the baseline holds no GPU of that model (a baseline of another GPU
            model says nothing about this one).
    """
    same = [r for r in baseline.records if _norm_uuid(r.uuid) and _norm_uuid(r.uuid) == _norm_uuid(uuid)]
    if same:
        return dict(same[-1].figures), f"this GPU's run ({same[-1].uuid})"
    peers = [r for r in baseline.records if same_model(r.model, model)]
    if not peers:
        models = ", ".join(sorted({r.model for r in baseline.records}))
        raise other_model_error(f"--baseline {baseline.source!r}", models, model,
                                f"save a baseline on a {model} with --save-baseline")
    if len(peers) == 1:
        p = peers[0]
        on = f" on {p.host}" if p.host else ""
        return dict(p.figures), f"the {p.model} run{on} in the baseline ({p.uuid or 'no UUID'})"
    keys = {k for p in peers for k in p.figures}
    figs = {k: median([p.figures[k] for p in peers if k in p.figures]) for k in keys}
    return figs, f"the median of {len(peers)} {model} GPUs in the baseline"


def compare_with(baseline: Baseline, model: str, uuid: str, current: dict[str, float], policy: Policy,
                 expected: Iterable[str] = (), kind: str = "check") -> Comparison:
    """:func:`compare` one GPU's figures with its :func:`baseline_figures`.

    ``kind`` is what this run is (``check`` or ``bench``): a baseline of another kind measured
    its figures another way, which the :class:`Comparison`'s note says.

    Raises:
        UsageError: as :func:`baseline_figures`.
    """
    base, against = baseline_figures(baseline, model, uuid)
    note = ""
    if baseline.kind != kind:
        note = (f"the baseline is a {baseline.kind} run and this is a {kind} run: they measure bandwidth and launch "
                f"overhead with different kernels and sizes, so compare like with like where you can")
    return Comparison(compare(current, base, policy, expected), against, baseline.source, note)


def judge_against(baseline: Baseline, reports: list, observations: list, policy: Policy) -> tuple[list, list[Comparison]]:
    """Each check run's :class:`~gpuwhy.check.policy.DeviceChecks` with its ``baseline_*`` checks
    added (the figures of its :class:`~gpuwhy.check.policy.Observations`), and the comparisons.

    Raises:
        UsageError: as :func:`baseline_figures`.
    """
    from dataclasses import replace

    from .figures import DRAM, LAUNCH, figures_from_observations, rate_key

    out, comps = [], []
    for rep, obs in zip(reports, observations):
        expected = (DRAM, "fp32_tflops", rate_key(obs.tensor_precision), LAUNCH)
        comp = compare_with(baseline, obs.device, obs.uuid, figures_from_observations(obs.to_dict()), policy, expected, "check")
        out.append(replace(rep, checks=rep.checks + comp.checks))
        comps.append(comp)
    return out, comps


def judge_bench(baseline: Baseline, bench_doc: dict, policy: Policy, expected: Iterable[str] = ()):
    """A `bench --quick`/`--sweep` run (its ``--json`` document, plain data) against the baseline:
    ``(DeviceChecks of the baseline_* checks, Comparison)``.

    Raises:
        UsageError: as :func:`baseline_figures`.
    """
    from .policy import DeviceChecks

    rec = read_records({**bench_doc, "kind": "bench"})[0]
    comp = compare_with(baseline, rec.model, rec.uuid, rec.figures, policy, expected, "bench")
    return DeviceChecks(rec.model, rec.uuid, rec.sheet, comp.checks), comp


def load_baseline(path: str) -> Baseline:
    """Read a baseline file (see the module docstring).

    Raises:
        UsageError: the file is missing, not a regular file, too large, not JSON, or
            not one of the documents a baseline may be, or it holds no GPU.
    """
    from ..inputs import loads_json, read_input_text

    text = read_input_text(path, WHAT)
    try:
        doc = loads_json(text)
    except ValueError as exc:
        raise UsageError(f"--baseline {path!r} is not JSON ({exc}); pass {WHAT}") from None
    try:
        records = read_records(doc, source=str(path))
    except ValueError as exc:
        raise UsageError(f"--baseline {path!r} is {exc}") from None
    if not records:
        raise UsageError(f"--baseline {path!r} holds no GPU; pass {WHAT}")
    return Baseline(str(path), tuple(records))


def check_writable(path: str, overwrite: bool) -> Path:
    """Refuse, before anything is measured, a ``--save-baseline`` path that cannot be written
    or that holds a file (any file: a baseline is replaced only with ``--overwrite``).

    Raises:
        UsageError: ``path`` is a folder, its folder is missing, or it exists without ``overwrite``.
    """
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"--save-baseline {path!r} is a folder; give a file name such as {str(p / 'baseline.json')!r}")
    if not p.parent.is_dir():
        raise UsageError(f"--save-baseline {path!r}: folder {str(p.parent)!r} does not exist")
    if p.exists() and not overwrite:
        raise UsageError(f"--save-baseline {path!r} already exists; pass --overwrite to replace it, or choose another path")
    return p


def write_baseline(path: str, document: dict, overwrite: bool) -> Path:
    """Write ``document`` (a ``check``/``bench`` ``--json`` document) to ``path`` atomically.

    Raises:
        UsageError: as :func:`check_writable`, or the file cannot be written.
    """
    p = check_writable(path, overwrite)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".gpuwhy-baseline-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(document, fh, indent=2, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, p)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"--save-baseline {path!r}: cannot write ({exc.strerror or exc})") from None
    return p
