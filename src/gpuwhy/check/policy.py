"""`gpuwhy check`: policy, thresholds, verdicts and report writers. Pure: no CUDA, no NVML.

The measuring side (probe facts and quick benchmarks on a GPU) fills an
:class:`Observations` per device; :func:`evaluate` compares it with a
:class:`Policy` and returns a :class:`DeviceChecks` of pass/fail/skip checks.
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
from ..units import fmt_num

PASS, FAIL, SKIP = "pass", "fail", "skip"
HEALTH_CHECKS = ("ecc_uncorrected", "remapped_rows", "clock_events", "pcie_link", "other_processes", "driver_nvrtc")
_FRACTIONS = ("min_dram_bandwidth", "min_fp32", "min_tensor")
_TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8")


@dataclass(frozen=True)
class Policy:
    """Thresholds and which health checks run.

    Attributes:
        min_dram_bandwidth, min_fp32, min_tensor: fractions (0 < f <= 1) of the
            matched spec sheet's DRAM bandwidth, fp32 peak and dense tensor peak.
        max_launch_overhead_us: upper bound on the event-timed launch overhead (us).
        tensor_precision: the tensor-core precision measured (bf16 by default).
        health: check name -> enabled.
        source: where the policy came from (for reports).
    """

    min_dram_bandwidth: float = 0.85
    min_fp32: float = 0.90
    min_tensor: float = 0.70
    max_launch_overhead_us: float = 20.0
    tensor_precision: str = "bf16"
    health: dict[str, bool] = field(default_factory=lambda: {k: True for k in HEALTH_CHECKS})
    source: str = "bundled default"

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return asdict(self)


def _check_fraction(name: str, value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not (0 < value <= 1):
        raise UsageError(f"{where}: {name} must be a fraction of the spec sheet's figure, 0 < f <= 1, got {value!r}")
    return float(value)


def _merge(policy: Policy, data: Any, where: str) -> Policy:
    if data is None:
        return policy
    if not isinstance(data, dict):
        raise UsageError(f"{where}: a policy must be a YAML mapping")
    known = {"thresholds", "tensor_precision", "health"}
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
        h = data["health"] or {}
        if not isinstance(h, dict):
            raise UsageError(f"{where}: 'health' must be a mapping of check name to true/false")
        merged = dict(policy.health)
        for key, value in h.items():
            if key not in HEALTH_CHECKS:
                raise UsageError(f"{where}: unknown health check {key!r}; known: {', '.join(HEALTH_CHECKS)}")
            if not isinstance(value, bool):
                raise UsageError(f"{where}: health.{key} must be true or false, got {value!r}")
            merged[key] = value
        changes["health"] = merged
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
    """One check: status pass/fail/skip, the value and threshold (as text with units, for people),
    the same as numbers (``measured``, ``limit`` in ``unit``, compared by ``comparison``), and why."""

    name: str
    status: str
    value: str = ""
    threshold: str = ""
    detail: str = ""
    measured: float | None = None
    limit: float | None = None
    unit: str = ""
    comparison: str = ""

    def to_dict(self) -> dict:
        """Plain data for ``--json``: numbers with their unit in the key (``measured_gbs``,
        ``threshold_gbs``; ``_tflops``, ``_us``, ``_count``), the comparison, and the text forms
        (``value_text``, ``threshold_text``)."""
        out: dict = {"name": self.name, "status": self.status}
        if self.unit:
            key = _UNIT_KEYS.get(self.unit, self.unit)
            out[f"measured_{key}"] = self.measured
            out[f"threshold_{key}"] = self.limit
            out["comparison"] = self.comparison
        out.update(value_text=self.value, threshold_text=self.threshold, detail=self.detail)
        return out


#: The JSON key suffix of each check unit.
_UNIT_KEYS = {"GB/s": "gbs", "TFLOP/s": "tflops", "us": "us", "count": "count"}


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

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "device": self.device,
            "uuid": self.uuid,
            "sheet": self.sheet,
            "passed": not self.failed,
            "nothing_checked": self.nothing_checked,
            "elapsed_s": self.elapsed_s,
            "checks": [c.to_dict() for c in self.checks],
        }


#: The line for a GPU on which every check was skipped.
NOTHING_CHECKED = "nothing was checked: every check was skipped (no measurement and no health reading to judge)"


def _fraction_check(name: str, measured: float | None, sheet: float | None, frac: float, unit: str, obs: Observations) -> CheckResult:
    threshold = f">= {frac:.2f} x sheet"
    nums = {"unit": unit, "comparison": ">=", "measured": measured}
    if sheet is None:
        return CheckResult(name, SKIP, threshold=threshold, detail=obs.reasons.get(name, "no spec sheet figure to compare with"), **nums)
    threshold = f">= {frac:.2f} x {fmt_num(sheet, 6)} {unit} = {fmt_num(frac * sheet, 4)} {unit}"
    nums["limit"] = frac * sheet
    if measured is None:
        return CheckResult(name, SKIP, threshold=threshold, detail=obs.reasons.get(name, "not measured"), **nums)
    ok = measured >= frac * sheet
    return CheckResult(name, PASS if ok else FAIL, f"{fmt_num(measured, 4)} {unit} ({measured / sheet:.1%} of sheet)", threshold,
                       "" if ok else f"below the threshold by {(frac * sheet - measured) / sheet:.1%} of the sheet figure", **nums)


def evaluate(obs: Observations, policy: Policy, elapsed_s: float | None = None) -> DeviceChecks:
    """Compare one GPU's observations with ``policy``.

    Returns a :class:`DeviceChecks`: a check whose input is missing is ``skip``
    with the reason (from ``obs.reasons`` where given), never a pass.
    """
    r = obs.reasons
    checks = [
        _fraction_check("dram_bandwidth", obs.dram_bandwidth_gbs, obs.sheet_bandwidth_gbs, policy.min_dram_bandwidth, "GB/s", obs),
        _fraction_check("fp32_fma", obs.fp32_tflops, obs.sheet_fp32_tflops, policy.min_fp32, "TFLOP/s", obs),
        _fraction_check(f"tensor_{obs.tensor_precision}", obs.tensor_tflops, obs.sheet_tensor_tflops, policy.min_tensor, "TFLOP/s", obs),
    ]
    lim = policy.max_launch_overhead_us
    lo_nums = {"unit": "us", "comparison": "<=", "measured": obs.launch_overhead_us, "limit": lim}
    if obs.launch_overhead_us is None:
        checks.append(CheckResult("launch_overhead", SKIP, threshold=f"<= {fmt_num(lim, 6)} us", detail=r.get("launch_overhead", "not measured"), **lo_nums))
    else:
        ok = obs.launch_overhead_us <= lim
        checks.append(CheckResult("launch_overhead", PASS if ok else FAIL, f"{fmt_num(obs.launch_overhead_us)} us", f"<= {fmt_num(lim, 6)} us", **lo_nums))

    def health(name: str, value_missing: bool, ok: bool, value: str, threshold: str, detail_fail: str = "",
               count: int | None = None) -> None:
        # A check of a count (errors, processes) also gives it as a number: measured_count, threshold_count 0.
        nums = {"unit": "count", "comparison": "==", "measured": count, "limit": 0} if threshold == "== 0" else {}
        if not policy.health.get(name, True):
            checks.append(CheckResult(name, SKIP, threshold=threshold, detail="disabled by the policy", **nums))
        elif value_missing:
            checks.append(CheckResult(name, SKIP, threshold=threshold, detail=r.get(name, "not reported on this GPU"), **nums))
        else:
            checks.append(CheckResult(name, PASS if ok else FAIL, value, threshold, r.get(name, "") if ok else detail_fail, **nums))

    health("ecc_uncorrected", obs.ecc_uncorrected is None, (obs.ecc_uncorrected or 0) == 0,
           f"{obs.ecc_uncorrected} volatile uncorrected errors", "== 0", "uncorrected ECC errors since the last driver load: drain the node and have it checked",
           count=obs.ecc_uncorrected)
    rows_missing = obs.remapped_rows_pending is None and obs.retired_pages_pending is None
    pending = bool(obs.remapped_rows_pending) or bool(obs.retired_pages_pending)
    health("remapped_rows", rows_missing, not pending,
           f"remap pending: {obs.remapped_rows_pending}, retired pages pending: {obs.retired_pages_pending}", "none pending",
           "a row remap or page retirement is pending: reset the GPU (or reboot) before using it")
    ce = obs.clock_events
    health("clock_events", ce is None, not ce, ", ".join(ce) if ce else "none", "no slowdown while measuring",
           "the GPU slowed its clocks while measuring (thermal, power or hardware slowdown)")
    link_missing = obs.pcie_gen is None or obs.pcie_width is None
    link_ok = not link_missing and obs.pcie_gen[0] >= obs.pcie_gen[1] and obs.pcie_width[0] >= obs.pcie_width[1]
    link_val = "" if link_missing else f"gen {obs.pcie_gen[0]} x{obs.pcie_width[0]} (max gen {obs.pcie_gen[1]} x{obs.pcie_width[1]})"
    health("pcie_link", link_missing, link_ok, link_val, "at max generation and width",
           "the PCIe link trained below its maximum (reseat the card or check the slot/riser)")
    health("other_processes", obs.other_processes is None, (obs.other_processes or 0) == 0,
           f"{obs.other_processes} other compute process(es)", "== 0", "other processes use the GPU: measurements are noise",
           count=obs.other_processes)
    drv_missing = obs.driver_cuda_version is None or obs.nvrtc_version is None
    drv_ok = not drv_missing and obs.driver_cuda_version >= obs.nvrtc_version[0] * 1000
    drv_val = "" if drv_missing else f"driver CUDA {obs.driver_cuda_version // 1000}.{obs.driver_cuda_version % 1000 // 10}, NVRTC {obs.nvrtc_version[0]}.{obs.nvrtc_version[1]}"
    health("driver_nvrtc", drv_missing, drv_ok, drv_val, "driver major >= NVRTC major",
           "the driver is older than NVRTC's CUDA major version: upgrade the driver or install a matching nvidia-cuda-nvrtc")
    return DeviceChecks(obs.device, obs.uuid, obs.sheet, tuple(checks), elapsed_s)


def junit_xml(reports: list[DeviceChecks]) -> str:
    """JUnit XML (one testsuite per GPU, one testcase per check) for CI test-result viewers.

    A GPU on which every check was skipped gets one more testcase, ``nothing_checked``,
    that fails: CI must not go green when nothing was measured.
    """
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="gpuwhy check")
    total = fails = skips = 0
    for rep in reports:
        n_fail = sum(c.status == FAIL for c in rep.checks) + rep.nothing_checked
        suite = ET.SubElement(root, "testsuite", name=f"gpuwhy check {rep.device} {rep.uuid}".strip(),
                              tests=str(len(rep.checks) + rep.nothing_checked),
                              failures=str(n_fail),
                              skipped=str(sum(c.status == SKIP for c in rep.checks)),
                              time=f"{rep.elapsed_s or 0:.3f}")
        for c in rep.checks:
            case = ET.SubElement(suite, "testcase", classname=f"gpuwhy.check.{rep.uuid or rep.device}", name=c.name)
            text = f"value: {c.value or 'n/a'}; threshold: {c.threshold or 'n/a'}"
            if c.status == FAIL:
                el = ET.SubElement(case, "failure", message=f"{c.name}: {c.value} (threshold {c.threshold})")
                el.text = f"{text}\n{c.detail}"
            elif c.status == SKIP:
                ET.SubElement(case, "skipped", message=c.detail or "skipped")
            else:
                out = ET.SubElement(case, "system-out")
                out.text = text
        if rep.nothing_checked:
            case = ET.SubElement(suite, "testcase", classname=f"gpuwhy.check.{rep.uuid or rep.device}", name="nothing_checked")
            el = ET.SubElement(case, "failure", message=NOTHING_CHECKED)
            el.text = "every check was skipped; the reasons are on the skipped testcases"
        total += len(rep.checks) + rep.nothing_checked
        fails += n_fail
        skips += sum(c.status == SKIP for c in rep.checks)
    root.set("tests", str(total))
    root.set("failures", str(fails))
    root.set("skipped", str(skips))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(reports: list[DeviceChecks], path: str | os.PathLike) -> None:
    """Write :func:`junit_xml` to ``path``.

    An existing file is replaced only when it is an earlier gpuwhy check report;
    anything else the user owns is left alone.

    Raises:
        UsageError: if the folder does not exist, the path holds a file gpuwhy did
            not write, or the file cannot be written.
    """
    from ..outputs import writable_output

    p = writable_output(str(path), "--junit", marker=b'<testsuites name="gpuwhy check"', end=b"</testsuites>")
    try:
        p.write_text(junit_xml(reports), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--junit {str(p)!r}: cannot write ({exc.strerror or exc})") from None
