"""`gpuwhy check`: policy, thresholds, verdicts and report writers. Pure: no CUDA, no NVML.

The measuring side (probe facts and quick benchmarks on a GPU) fills an
:class:`Observations` per device; :func:`evaluate` compares it with a
:class:`Policy` and returns a :class:`DeviceChecks` of checks in DCGM's four
states: ``pass``; ``warn`` (the check missed its threshold and the policy calls
that a warning: reported, exit 0); ``fail`` (missed, and the policy calls it a
failure: exit 1); ``skip`` (its input is not available, with the reason).
Recorded observations (JSON) can stand in for a GPU, which is how this module is
tested without one.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import SpecError, UsageError
from ..resources import bundled_dir
from ..units import fmt_counted, fmt_g, fmt_num

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
STATES = (PASS, WARN, FAIL, SKIP)
HEALTH_CHECKS = ("ecc_uncorrected", "remapped_rows", "clock_events", "power_cap", "pcie_link", "other_processes",
                 "driver_nvrtc")
_FRACTIONS = ("min_dram_bandwidth", "min_fp32", "min_tensor")
_TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8")
#: The names the policy's ``severity`` section takes: each check (``tensor`` for ``tensor_<precision>``,
#: ``baseline`` for every ``baseline_*`` comparison).
SEVERITY_KEYS = ("dram_bandwidth", "fp32_fma", "tensor", "launch_overhead", *HEALTH_CHECKS, "baseline")
#: A missed threshold is a failure, except a software power cap while measuring, which is a warning.
DEFAULT_SEVERITY = {**{k: FAIL for k in SEVERITY_KEYS}, "power_cap": WARN}
#: Largest regression against a baseline that still passes, as a fraction of the baseline's figure:
#: 5 % lower DRAM bandwidth, 5 % lower FLOP/s (any precision), 20 % higher launch overhead.
DEFAULT_TOLERANCES = {"dram_bandwidth": 0.05, "flops": 0.05, "launch_overhead": 0.20}
#: The check levels, as ``dcgmi diag -r 1|2`` has them: 1 reads NVML's health alone (no CUDA
#: context, nothing measured: NVML calls only, for a Slurm prolog or a node health check);
#: 2 adds the quick measurements (seconds to a minute; the default).
HEALTH_LEVEL, MEASURE_LEVEL = 1, 2
LEVELS = {HEALTH_LEVEL: "NVML health only, nothing measured", MEASURE_LEVEL: "health and quick measurements"}
#: The checks that measure (or that judge what was seen while measuring): left out at level 1.
MEASURING_CHECKS = ("dram_bandwidth", "fp32_fma", "tensor", "launch_overhead", "power_cap")


@dataclass(frozen=True)
class Policy:
    """Thresholds, which health checks run, what a miss is, and baseline tolerances.

    Attributes:
        min_dram_bandwidth, min_fp32, min_tensor: fractions (0 < f <= 1) of the
            matched spec sheet's DRAM bandwidth, fp32 peak and dense tensor peak.
        max_launch_overhead_us: upper bound on the event-timed launch overhead (us).
        tensor_precision: the tensor-core precision measured (bf16 by default).
        health: check name -> enabled.
        severity: :data:`SEVERITY_KEYS` -> ``fail`` or ``warn``: what a check that misses reports.
        tolerances: ``dram_bandwidth``, ``flops``, ``launch_overhead`` or one figure key
            (``bf16_tflops``) -> the largest regression against a baseline that passes,
            as a fraction of the baseline's figure.
        source: where the policy came from (for reports).
    """

    min_dram_bandwidth: float = 0.85
    min_fp32: float = 0.90
    min_tensor: float = 0.70
    max_launch_overhead_us: float = 20.0
    tensor_precision: str = "bf16"
    health: dict[str, bool] = field(default_factory=lambda: {k: True for k in HEALTH_CHECKS})
    severity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    tolerances: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    source: str = "bundled default"

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return asdict(self)

    def on_miss(self, check: str) -> str:
        """``fail`` or ``warn``: what ``check`` reports when it misses its threshold."""
        key = "tensor" if check.startswith("tensor_") else "baseline" if check.startswith("baseline_") else check
        return self.severity.get(key, FAIL)

    def tolerance(self, figure_key: str) -> float:
        """The baseline tolerance of a figure (:mod:`gpuwhy.check.figures`): its own key, else its family's.

        Raises:
            KeyError: ``figure_key`` is not a figure.
        """
        from .figures import figure

        if figure_key in self.tolerances:
            return self.tolerances[figure_key]
        return self.tolerances.get(figure(figure_key).family, DEFAULT_TOLERANCES[figure(figure_key).family])


def _check_fraction(name: str, value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not (0 < value <= 1):
        raise UsageError(f"{where}: {name} must be a fraction of the spec sheet's figure, 0 < f <= 1, got {value!r}")
    return float(value)


def _check_tolerance(key: str, value: Any, where: str) -> float:
    from .figures import figure

    rate = key != "launch_overhead" and (key in ("dram_bandwidth", "flops") or figure(key).higher_is_better)
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    if not ok or (rate and value >= 1):
        bound = "0 < f < 1" if rate else "f > 0"
        raise UsageError(f"{where}: baseline.{key} must be the largest regression that passes, a fraction of the "
                         f"baseline's figure ({bound}, e.g. 0.05 for 5%), got {value!r}")
    return float(value)


def _tolerance(key: Any, value: Any, where: str) -> float:
    """A ``baseline`` entry: a known family or figure key, and its tolerance."""
    from .figures import figure

    if key not in DEFAULT_TOLERANCES:
        try:
            figure(str(key))
        except KeyError:
            raise UsageError(f"{where}: unknown baseline figure {key!r}; known: {', '.join(DEFAULT_TOLERANCES)} "
                             f"or a figure key such as bf16_tflops") from None
    return _check_tolerance(str(key), value, where)


def _severity(key: Any, value: Any, where: str) -> str:
    """A ``severity`` entry: a known check, and fail or warn."""
    if key not in SEVERITY_KEYS:
        raise UsageError(f"{where}: unknown check {key!r} in severity; known: {', '.join(SEVERITY_KEYS)}")
    if value not in (FAIL, WARN):
        raise UsageError(f"{where}: severity.{key} must be fail or warn, got {value!r}")
    return value


def _health(key: Any, value: Any, where: str) -> bool:
    """A ``health`` entry: a known health check, and true or false."""
    if key not in HEALTH_CHECKS:
        raise UsageError(f"{where}: unknown health check {key!r}; known: {', '.join(HEALTH_CHECKS)}")
    if not isinstance(value, bool):
        raise UsageError(f"{where}: health.{key} must be true or false, got {value!r}")
    return value


def _section(current: dict, data: Any, where: str, name: str, what: str, entry) -> dict:
    """``current`` updated with the mapping ``data`` of the policy section ``name``, each entry
    checked by ``entry(key, value, where)``; ``what`` says what the mapping holds."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: '{name}' must be a mapping of {what}")
    return {**current, **{str(k): entry(k, v, where) for k, v in data.items()}}


def _merge(policy: Policy, data: Any, where: str) -> Policy:
    if data is None:
        return policy
    if not isinstance(data, dict):
        raise UsageError(f"{where}: a policy must be a YAML mapping")
    known = {"thresholds", "tensor_precision", "health", "severity", "baseline"}
    bad = sorted(set(data) - known)
    if bad:
        raise UsageError(f"{where}: unknown key {bad[0]!r}; known keys: {', '.join(sorted(known))}")
    changes: dict[str, Any] = {}
    th = data.get("thresholds") or {}
    if not isinstance(th, dict):
        raise UsageError(f"{where}: 'thresholds' must be a mapping")
    for key, value in th.items():
        if key in _FRACTIONS:
            changes[key] = _check_fraction(f"thresholds.{key}", value, where)
        elif key == "max_launch_overhead_us":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0) or math.isinf(value):
                raise UsageError(f"{where}: thresholds.max_launch_overhead_us must be a number of microseconds > 0, got {value!r}")
            changes[key] = float(value)
        else:
            raise UsageError(f"{where}: unknown threshold {key!r}; known: {', '.join((*_FRACTIONS, 'max_launch_overhead_us'))}")
    if "tensor_precision" in data:
        tp = data["tensor_precision"]
        if tp not in _TENSOR_PRECISIONS:
            raise UsageError(f"{where}: tensor_precision must be one of {', '.join(_TENSOR_PRECISIONS)}, got {tp!r}")
        changes["tensor_precision"] = tp
    if "health" in data:
        changes["health"] = _section(policy.health, data["health"] or {}, where, "health", "check name to true/false", _health)
    if data.get("severity") is not None:
        changes["severity"] = _section(policy.severity, data["severity"], where, "severity", "check name to fail or warn", _severity)
    if data.get("baseline") is not None:
        changes["tolerances"] = _section(policy.tolerances, data["baseline"], where, "baseline",
                                         "figure to tolerance, e.g. dram_bandwidth: 0.05", _tolerance)
    return replace(policy, **changes)


def load_policy(path: str | os.PathLike | None = None, overrides: dict[str, float | None] | None = None,
                labels: dict[str, str] | None = None) -> Policy:
    """The bundled default policy, then the user's file, then single-flag overrides.

    ``overrides`` maps threshold names (``min_dram_bandwidth``, ``min_fp32``,
    ``min_tensor``, ``max_launch_overhead_us``) to values; ``None`` values are ignored.
    ``labels`` names each threshold as the user gave it in messages (the CLI's flags:
    ``{"min_dram_bandwidth": "--min-bandwidth"}``); default the threshold's own name.

    Raises:
        UsageError: an unreadable or malformed policy file, an unknown key, or a
            fraction outside 0 < f <= 1 (one line naming the file and the key).
    """
    from ..specs import load_yaml

    default_path = bundled_dir("specs") / "policy" / "default.yaml"
    try:
        policy = _merge(Policy(), load_yaml(default_path), str(default_path))
        if path is not None:
            p = Path(path)
            if not p.is_file():
                raise UsageError(f"policy file {str(p)!r} does not exist; pass a YAML file like specs/policy/default.yaml")
            policy = replace(_merge(policy, load_yaml(p), str(p)), source=str(p))
    except SpecError as exc:  # malformed YAML: still a usage error, one line
        raise UsageError(str(exc)) from None
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        label = (labels or {}).get(key, key)
        if key in _FRACTIONS:
            value = _check_fraction(label, value, "command line")
        elif key == "max_launch_overhead_us":
            if not (value > 0):
                raise UsageError(f"{label} must be a time > 0, got {value!r} us")
        else:
            raise UsageError(f"unknown threshold {key!r}")
        policy = replace(policy, **{key: float(value)})
    return policy


@dataclass(frozen=True)
class Observations:
    """What was read and measured on one GPU. ``None`` means not available; ``reasons`` says why.

    Units as named: GB/s (1e9 B/s), TFLOP/s, microseconds.
    """

    device: str
    uuid: str = ""
    #: nvidia-smi's index of the GPU (NVML's, PCI bus order; dcgm-exporter's ``gpu`` label); None when unknown.
    nvml_index: int | None = None
    sheet: str | None = None
    sheet_bandwidth_gbs: float | None = None
    sheet_fp32_tflops: float | None = None
    sheet_tensor_tflops: float | None = None
    tensor_precision: str = "bf16"
    dram_bandwidth_gbs: float | None = None
    fp32_tflops: float | None = None
    tensor_tflops: float | None = None
    launch_overhead_us: float | None = None
    ecc_uncorrected: int | None = None
    remapped_rows_pending: bool | None = None
    retired_pages_pending: bool | None = None
    clock_events: tuple[str, ...] | None = None
    pcie_gen: tuple[int, int] | None = None  # (current, max)
    pcie_width: tuple[int, int] | None = None  # (current, max)
    other_processes: int | None = None
    driver_cuda_version: int | None = None  # e.g. 13000
    nvrtc_version: tuple[int, int] | None = None  # e.g. (13, 0)
    #: Measurements during which NVML reported ``sw_power_cap`` (check names: ``dram_bandwidth``,
    #: ``fp32_fma``, ``tensor_bf16``); () none; None when the clock-event reasons were not readable.
    power_capped: tuple[str, ...] | None = None
    #: While capped (the capped measurement with the lowest SM clock): its median SM clock and
    #: board power, and the GPU's maximum SM clock (MHz) and enforced power limit (W).
    capped_sm_clock_mhz: float | None = None
    max_sm_clock_mhz: float | None = None
    capped_power_w: float | None = None
    power_limit_w: float | None = None
    reasons: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict) -> "Observations":
        """Build from recorded JSON (lists become tuples).

        Raises:
            UsageError: for an unknown key or a missing ``device``.
        """
        names = {f.name for f in fields(cls)}
        bad = sorted(set(data) - names)
        if bad:
            raise UsageError(f"recorded observations: unknown key {bad[0]!r}")
        if "device" not in data:
            raise UsageError("recorded observations: missing 'device'")
        conv = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**conv)

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return asdict(self)


@dataclass(frozen=True)
class CheckResult:
    """One check.

    Attributes:
        name: the check (``dram_bandwidth``, ``tensor_bf16``, ``power_cap``, ``baseline_fp32``, ...).
        status: one of :data:`STATES`.
        value_text, threshold_text: the value and the threshold for people, units included.
        detail: why it missed, was skipped or warned.
        figures: the numbers behind the texts, units in the keys (``measured_gbs``,
            ``threshold_gbs``, ``sheet_gbs``, ``fraction_of_sheet``, ``measured_us``,
            ``baseline_tflops``, ``change_fraction``, ``sm_clock_mhz``, ...); in ``--json`` they
            sit beside ``name`` and ``status``.
    """

    name: str
    status: str
    value_text: str = ""
    threshold_text: str = ""
    detail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain data for ``--json``: name, status, the figures (numbers), the texts."""
        return {"name": self.name, "status": self.status, **self.figures,
                "value_text": self.value_text, "threshold_text": self.threshold_text, "detail": self.detail}


@dataclass(frozen=True)
class DeviceChecks:
    """All checks for one GPU."""

    device: str
    uuid: str
    sheet: str | None
    checks: tuple[CheckResult, ...]
    elapsed_s: float | None = None

    @property
    def nothing_checked(self) -> bool:
        """True when every check was skipped: a green result would say nothing."""
        return all(c.status == SKIP for c in self.checks)

    @property
    def failed(self) -> bool:
        """True when any check failed, or nothing was checked at all."""
        return self.nothing_checked or any(c.status == FAIL for c in self.checks)

    @property
    def warned(self) -> bool:
        """True when a check warned (and none failed)."""
        return not self.failed and any(c.status == WARN for c in self.checks)

    @property
    def status(self) -> str:
        """``fail``, ``warn`` or ``pass`` for the GPU as a whole."""
        return FAIL if self.failed else WARN if self.warned else PASS

    def count(self, state: str) -> int:
        """How many checks are in ``state``."""
        return sum(c.status == state for c in self.checks)

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "device": self.device,
            "uuid": self.uuid,
            "sheet": self.sheet,
            "status": self.status,
            "passed": not self.failed,
            "nothing_checked": self.nothing_checked,
            "elapsed_s": self.elapsed_s,
            "checks": [c.to_dict() for c in self.checks],
        }


#: The line for a GPU on which every check was skipped.
NOTHING_CHECKED = "nothing was checked: every check was skipped (no measurement and no health reading to judge)"


def _fraction_check(name: str, measured: float | None, sheet: float | None, frac: float, unit: str,
                    obs: Observations, policy: Policy) -> CheckResult:
    from .figures import UNIT_SUFFIX

    u = UNIT_SUFFIX[unit]
    threshold = f">= {frac:.2f} x sheet"
    if sheet is None:
        return CheckResult(name, SKIP, threshold_text=threshold, detail=obs.reasons.get(name, "no spec sheet figure to compare with"),
                           figures={"min_fraction_of_sheet": frac})
    limit = frac * sheet
    threshold = f">= {frac:.2f} x {fmt_g(sheet)} {unit} = {fmt_num(limit, 4)} {unit}"
    nums = {f"threshold_{u}": limit, f"sheet_{u}": sheet, "min_fraction_of_sheet": frac}
    if measured is None:
        return CheckResult(name, SKIP, threshold_text=threshold, detail=obs.reasons.get(name, "not measured"), figures=nums)
    ok = measured >= limit
    nums = {f"measured_{u}": measured, **nums, "fraction_of_sheet": measured / sheet}
    return CheckResult(name, PASS if ok else policy.on_miss(name), f"{fmt_num(measured, 4)} {unit} ({measured / sheet:.1%} of sheet)", threshold,
                       "" if ok else f"below the threshold by {(limit - measured) / sheet:.1%} of the sheet figure", nums)


def _power_cap_check(obs: Observations, policy: Policy) -> CheckResult:
    """``power_cap``: was the board holding its software power limit while gpuwhy measured?"""
    name, threshold = "power_cap", "no software power cap while measuring"
    if not policy.health.get(name, True):
        return CheckResult(name, SKIP, threshold_text=threshold, detail="disabled by the policy")
    capped = obs.power_capped
    if capped is None:
        return CheckResult(name, SKIP, threshold_text=threshold, detail=obs.reasons.get(name, "NVML clock-event reasons not recorded"))
    if not capped:
        return CheckResult(name, PASS, "none", threshold, figures={"capped_measurements": []})
    clk, top, pw, lim = obs.capped_sm_clock_mhz, obs.max_sm_clock_mhz, obs.capped_power_w, obs.power_limit_w
    nums: dict[str, Any] = {"capped_measurements": list(capped)}
    nums.update({k: v for k, v in (("sm_clock_mhz", clk), ("max_sm_clock_mhz", top), ("power_w", pw),
                                   ("power_limit_w", lim)) if v is not None})
    parts = []
    if clk is not None:
        parts.append(f"SM clock {clk:.0f}" + (f" of {top:.0f} MHz ({clk / top:.0%})" if top else " MHz"))
    if pw is not None:
        parts.append(f"{pw:.0f}" + (f" of {lim:.0f} W limit" if lim else " W"))
    value = f"sw_power_cap during {', '.join(capped)}" + (f": {', '.join(parts)}" if parts else "")
    return CheckResult(name, policy.on_miss(name), value, threshold,
                       "the board held its power limit: the rates measured then are what this power limit allows, "
                       "not the chip's clock-limited peak", nums)


def level_of(value) -> int:
    """A check level (:data:`LEVELS`) from what ``--level`` was given.

    Raises:
        UsageError: not 1 or 2 (one line saying what each is).
    """
    if isinstance(value, bool) or value not in LEVELS:
        raise UsageError(f"--level must be 1 ({LEVELS[HEALTH_LEVEL]}: for a prolog) or 2 "
                         f"({LEVELS[MEASURE_LEVEL]}), got {value!r}")
    return int(value)


def evaluate(obs: Observations, policy: Policy, elapsed_s: float | None = None, level: int = MEASURE_LEVEL) -> DeviceChecks:
    """Compare one GPU's observations with ``policy``.

    Returns a :class:`DeviceChecks`: a check whose input is missing is ``skip``
    with the reason (from ``obs.reasons`` where given), never a pass; a check that
    misses its threshold is ``fail`` or ``warn`` as ``policy.severity`` says. At
    ``level`` 1 (:data:`HEALTH_LEVEL`) the checks that measure (:data:`MEASURING_CHECKS`)
    are left out and ``clock_events`` judges the reasons NVML gives now.
    """
    checks = _all_checks(obs, policy, level)
    if level == HEALTH_LEVEL:
        checks = [c for c in checks if not any(c.name == m or c.name.startswith(m + "_") for m in MEASURING_CHECKS)]
    return DeviceChecks(obs.device, obs.uuid, obs.sheet, tuple(checks), elapsed_s)


def _all_checks(obs: Observations, policy: Policy, level: int) -> list[CheckResult]:
    """Every check of :func:`evaluate`, in its order."""
    r = obs.reasons
    tensor_unit = "TOPS" if obs.tensor_precision == "int8" else "TFLOP/s"
    checks = [
        _fraction_check("dram_bandwidth", obs.dram_bandwidth_gbs, obs.sheet_bandwidth_gbs, policy.min_dram_bandwidth, "GB/s", obs, policy),
        _fraction_check("fp32_fma", obs.fp32_tflops, obs.sheet_fp32_tflops, policy.min_fp32, "TFLOP/s", obs, policy),
        _fraction_check(f"tensor_{obs.tensor_precision}", obs.tensor_tflops, obs.sheet_tensor_tflops, policy.min_tensor,
                        tensor_unit, obs, policy),
    ]
    lim = policy.max_launch_overhead_us
    if obs.launch_overhead_us is None:
        checks.append(CheckResult("launch_overhead", SKIP, threshold_text=f"<= {fmt_g(lim)} us", detail=r.get("launch_overhead", "not measured"),
                                  figures={"threshold_us": lim}))
    else:
        ok = obs.launch_overhead_us <= lim
        checks.append(CheckResult("launch_overhead", PASS if ok else policy.on_miss("launch_overhead"), f"{fmt_num(obs.launch_overhead_us)} us",
                                  f"<= {fmt_g(lim)} us", "" if ok else "launching an empty kernel took longer than the policy allows",
                                  {"measured_us": obs.launch_overhead_us, "threshold_us": lim}))

    def health(name: str, value_missing: bool, ok: bool, value: str, threshold: str, detail_fail: str = "",
               nums: dict | None = None) -> None:
        if not policy.health.get(name, True):
            checks.append(CheckResult(name, SKIP, threshold_text=threshold, detail="disabled by the policy"))
        elif value_missing:
            checks.append(CheckResult(name, SKIP, threshold_text=threshold, detail=r.get(name, "not reported on this GPU")))
        else:
            checks.append(CheckResult(name, PASS if ok else policy.on_miss(name), value, threshold,
                                      r.get(name, "") if ok else detail_fail, nums or {}))

    health("ecc_uncorrected", obs.ecc_uncorrected is None, (obs.ecc_uncorrected or 0) == 0,
           f"{obs.ecc_uncorrected} volatile uncorrected errors", "== 0", "uncorrected ECC errors since the last driver load: drain the node and have it checked",
           {"measured_errors": obs.ecc_uncorrected, "threshold_errors": 0})
    rows_missing = obs.remapped_rows_pending is None and obs.retired_pages_pending is None
    pending = bool(obs.remapped_rows_pending) or bool(obs.retired_pages_pending)
    health("remapped_rows", rows_missing, not pending,
           f"remap pending: {obs.remapped_rows_pending}, retired pages pending: {obs.retired_pages_pending}", "none pending",
           "a row remap or page retirement is pending: reset the GPU (or reboot) before using it",
           {"remapped_rows_pending": obs.remapped_rows_pending, "retired_pages_pending": obs.retired_pages_pending})
    ce = obs.clock_events
    when = "now" if level == HEALTH_LEVEL else "while measuring"
    health("clock_events", ce is None, not ce, ", ".join(ce) if ce else "none", f"no slowdown {when}",
           f"the GPU slowed its clocks {when} (thermal, power or hardware slowdown)", {"clock_events": list(ce or ())})
    checks.append(_power_cap_check(obs, policy))
    link_missing = obs.pcie_gen is None or obs.pcie_width is None
    link_ok = not link_missing and obs.pcie_gen[0] >= obs.pcie_gen[1] and obs.pcie_width[0] >= obs.pcie_width[1]
    link_val = "" if link_missing else f"gen {obs.pcie_gen[0]} x{obs.pcie_width[0]} (max gen {obs.pcie_gen[1]} x{obs.pcie_width[1]})"
    link_nums = {} if link_missing else {"pcie_gen": obs.pcie_gen[0], "pcie_max_gen": obs.pcie_gen[1],
                                         "pcie_width_lanes": obs.pcie_width[0], "pcie_max_width_lanes": obs.pcie_width[1]}
    health("pcie_link", link_missing, link_ok, link_val, "at max generation and width",
           "the PCIe link trained below its maximum (reseat the card or check the slot/riser)", link_nums)
    health("other_processes", obs.other_processes is None, (obs.other_processes or 0) == 0,
           "" if obs.other_processes is None else fmt_counted(obs.other_processes, "other compute process",
                                                              "other compute processes"),
           "== 0", "other processes use the GPU: measurements are noise",
           {"measured_processes": obs.other_processes, "threshold_processes": 0})
    drv_missing = obs.driver_cuda_version is None or obs.nvrtc_version is None
    drv_ok = not drv_missing and obs.driver_cuda_version >= obs.nvrtc_version[0] * 1000
    drv_val = "" if drv_missing else f"driver CUDA {obs.driver_cuda_version // 1000}.{obs.driver_cuda_version % 1000 // 10}, NVRTC {obs.nvrtc_version[0]}.{obs.nvrtc_version[1]}"
    drv_nums = {} if drv_missing else {"driver_cuda_version": obs.driver_cuda_version, "nvrtc_major": obs.nvrtc_version[0],
                                       "nvrtc_minor": obs.nvrtc_version[1]}
    health("driver_nvrtc", drv_missing, drv_ok, drv_val, "driver major >= NVRTC major",
           "the driver is older than NVRTC's CUDA major version: upgrade the driver or install a matching nvidia-cuda-nvrtc", drv_nums)
    return checks


def junit_xml(reports: list[DeviceChecks], host: str = "", timestamp: str = "") -> str:
    """JUnit XML (one testsuite per GPU, one testcase per check) for CI test-result viewers.

    It fits the JUnit schema pytest's ``junit_family=xunit2`` output is checked against
    (``tests/fixtures/junit/junit-10.xsd``). Each testsuite carries ``hostname`` (``host``, the
    machine that measured) and ``timestamp`` (``timestamp``, ISO 8601 with its offset, when the
    run started), each left out when empty, and ``errors="0"`` (a GPU error is the exit code).
    The four states map as CI viewers read them: ``pass`` is a passed testcase with the
    value in ``system-out``; ``warn`` is a passed testcase too (a warning does not fail the
    build) whose ``system-out`` starts with ``WARNING:``; its suite names the checks that warned
    in the property ``gpuwhy.warned`` and counts them in ``gpuwhy.warnings``; ``skip`` is
    ``<skipped>`` with the reason; ``fail`` is ``<failure>``.
    A GPU on which every check was skipped gets one more testcase, ``nothing_checked``,
    that fails: CI must not go green when nothing was measured.
    """
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="gpuwhy check")
    total = fails = 0
    for rep in reports:
        n_fail = rep.count(FAIL) + rep.nothing_checked
        suite = ET.SubElement(root, "testsuite", name=f"gpuwhy check {rep.device} {rep.uuid}".strip(),
                              tests=str(len(rep.checks) + rep.nothing_checked),
                              failures=str(n_fail),
                              errors="0",
                              skipped=str(rep.count(SKIP)),
                              time=f"{rep.elapsed_s or 0:.3f}")
        if timestamp:
            suite.set("timestamp", timestamp)
        if host:
            suite.set("hostname", host)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="gpuwhy.status", value=rep.status)
        ET.SubElement(props, "property", name="gpuwhy.warnings", value=str(rep.count(WARN)))
        ET.SubElement(props, "property", name="gpuwhy.warned", value=",".join(c.name for c in rep.checks if c.status == WARN))
        for c in rep.checks:
            case = ET.SubElement(suite, "testcase", classname=f"gpuwhy.check.{rep.uuid or rep.device}", name=c.name)
            text = f"value: {c.value_text or 'n/a'}; threshold: {c.threshold_text or 'n/a'}"
            if c.status == FAIL:
                el = ET.SubElement(case, "failure", message=f"{c.name}: {c.value_text} (threshold {c.threshold_text})")
                el.text = f"{text}\n{c.detail}"
            elif c.status == SKIP:
                ET.SubElement(case, "skipped", message=c.detail or "skipped")
            elif c.status == WARN:
                out = ET.SubElement(case, "system-out")
                out.text = f"WARNING: {text}\n{c.detail}".rstrip()
            else:
                out = ET.SubElement(case, "system-out")
                out.text = text
        if rep.nothing_checked:
            case = ET.SubElement(suite, "testcase", classname=f"gpuwhy.check.{rep.uuid or rep.device}", name="nothing_checked")
            el = ET.SubElement(case, "failure", message=NOTHING_CHECKED)
            el.text = "every check was skipped; the reasons are on the skipped testcases"
        total += len(rep.checks) + rep.nothing_checked
        fails += n_fail
    root.set("tests", str(total))
    root.set("failures", str(fails))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(reports: list[DeviceChecks], path: str | os.PathLike, host: str = "", timestamp: str = "") -> None:
    """Write :func:`junit_xml` (with ``host`` and ``timestamp``) to ``path``.

    An existing file is replaced only when it is an earlier gpuwhy check report;
    anything else the user owns is left alone.

    Raises:
        UsageError: if the folder does not exist, the path holds a file gpuwhy did
            not write, or the file cannot be written.
    """
    from ..outputs import writable_output

    p = writable_output(str(path), "--junit", marker=b'<testsuites name="gpuwhy check"', end=b"</testsuites>")
    try:
        p.write_text(junit_xml(reports, host, timestamp), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--junit {str(p)!r}: cannot write ({exc.strerror or exc})") from None
