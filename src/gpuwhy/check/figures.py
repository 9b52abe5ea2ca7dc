"""The figures gpuwhy compares across runs and GPUs, and reading them from saved documents.

A *figure* is one measured number with its unit in its key:

==========================  =========  ===========================  ================
key                         unit       better                       policy tolerance
==========================  =========  ===========================  ================
``dram_bandwidth_gbs``      GB/s       higher (1e9 B/s)             ``dram_bandwidth``
``<precision>_tflops``      TFLOP/s    higher (fp32, bf16, ...)     ``flops``
``int8_tops``               TOPS       higher (1e12 int op/s)       ``flops``
``launch_overhead_us``      us         lower (event-timed launch)   ``launch_overhead``
==========================  =========  ===========================  ================

``bf16_tflops`` and the other tensor precisions are tensor-core rates (as `bench --compute`
measures them); ``fp16_nontensor_tflops`` is the CUDA-core half2 rate.

:func:`read_records` turns one saved document into :class:`RunRecord` (one per GPU):
a ``gpuwhy check --json`` document (its ``observations``), a ``gpuwhy bench --json``
document of a ``--quick``/``--sweep`` run, or a device profile (what `bench` saves).
Pure: the caller reads the file (:func:`gpuwhy.inputs.read_input`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

DRAM = "dram_bandwidth_gbs"
LAUNCH = "launch_overhead_us"
_PRECISION = re.compile(r"[a-z][a-z0-9_]{0,23}")


@dataclass(frozen=True)
class Figure:
    """What a figure key means: a label, its unit, which way is better and its tolerance's policy key."""

    key: str
    label: str
    unit: str
    higher_is_better: bool
    family: str


def figure(key: str) -> Figure:
    """The :class:`Figure` of ``key`` (see the module table).

    Raises:
        KeyError: not a figure key.
    """
    if key == DRAM:
        return Figure(key, "DRAM bandwidth", "GB/s", True, "dram_bandwidth")
    if key == LAUNCH:
        return Figure(key, "launch overhead", "us", False, "launch_overhead")
    for suffix, unit in (("_tflops", "TFLOP/s"), ("_tops", "TOPS")):
        if key.endswith(suffix) and _PRECISION.fullmatch(key[: -len(suffix)]):
            prec = key[: -len(suffix)]
            return Figure(key, f"{prec} rate", unit, True, "flops")
    raise KeyError(key)


def rate_key(precision: str) -> str:
    """The figure key of a compute rate: ``bf16`` -> ``bf16_tflops``, ``int8`` -> ``int8_tops``."""
    return f"{precision}_tops" if precision == "int8" else f"{precision}_tflops"


#: The key suffix of each unit: a figure's numbers in `--json` carry it (``measured_gbs``).
UNIT_SUFFIX = {"GB/s": "gbs", "TFLOP/s": "tflops", "TOPS": "tops", "us": "us"}


#: The order rates are listed in (that of `bench --compute`); other precisions follow by name.
_RATE_ORDER = ("fp64", "fp32", "fp16_nontensor", "tf32", "fp16", "bf16", "fp8", "int8")


def figure_order(key: str) -> tuple:
    """Sort key: bandwidth, then the rates by precision, then launch overhead."""
    if key in (DRAM, LAUNCH):
        return (0 if key == DRAM else 2, 0, "")
    prec = key.rsplit("_", 1)[0]
    return (1, _RATE_ORDER.index(prec) if prec in _RATE_ORDER else len(_RATE_ORDER), prec)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) and v > 0 else None


@dataclass(frozen=True)
class RunRecord:
    """One GPU's figures from one saved run.

    Attributes:
        host: the host it ran on (the document's ``host``, else ``default_host``).
        uuid: NVML UUID (``GPU-...``), "" when not recorded.
        model: the GPU model, its NVML name (``NVIDIA H200``): what "the same GPU" means here.
        sheet: the spec sheet it was judged against, or None.
        figures: figure key -> value in the key's unit (only figures measured).
        status: ``pass``/``warn``/``fail`` for a check run, None for a bench run or a profile.
        failed, warned: names of the checks that failed / warned.
        date: ISO 8601 time of the run ("" when not recorded).
        kind: ``check``, ``bench`` or ``profile``.
        source: where it was read from (a path).
    """

    host: str
    uuid: str
    model: str
    sheet: str | None
    figures: dict[str, float]
    status: str | None = None
    failed: tuple[str, ...] = ()
    warned: tuple[str, ...] = ()
    date: str = ""
    kind: str = "check"
    source: str = ""


def model_key(name: str) -> str:
    """``name`` compared as a model: case and runs of spaces do not matter."""
    return " ".join(str(name).split()).lower()


def same_model(a: str, b: str) -> bool:
    """Whether two GPU model names (NVML names, or sheet names) are one model (:func:`model_key`)."""
    return model_key(a) == model_key(b)


def other_model_error(what: str, theirs: str, ours: str, fix: str):
    """The one refusal of figures measured on another GPU model than the one judged (a ``--baseline``
    for ``check``/``bench``, a ``--profile`` for ``roofline``): another model's figures say nothing
    about this one, so using them is an input error, not a warning. Returns the
    :class:`~gpuwhy.errors.UsageError` to raise: ``"<what> is a run of <theirs>, not <ours>: compare
    runs of the same GPU model (<fix>)"``."""
    from ..errors import UsageError

    return UsageError(f"{what} is a run of {theirs}, not {ours}: compare runs of the same GPU model ({fix})")


def figures_from_observations(obs: dict) -> dict[str, float]:
    """Figures of one entry of a check document's ``observations`` (GB/s, TFLOP/s, us)."""
    out: dict[str, float] = {}
    for key, name in ((DRAM, "dram_bandwidth_gbs"), ("fp32_tflops", "fp32_tflops"), (LAUNCH, "launch_overhead_us")):
        v = _number(obs.get(name))
        if v is not None:
            out[key] = v
    tp = obs.get("tensor_precision")
    v = _number(obs.get("tensor_tflops"))
    if v is not None and isinstance(tp, str) and _PRECISION.fullmatch(tp):
        out[rate_key(tp)] = v
    return out


def figures_from_compute_rows(rows: Any) -> dict[str, float]:
    """The fastest measured rate per precision of `bench` compute rows (``status == "measured"``)."""
    out: dict[str, float] = {}
    for r in rows if isinstance(rows, list) else ():
        if not isinstance(r, dict) or r.get("status") != "measured":
            continue
        p, v = r.get("precision"), _number(r.get("tflops"))
        if isinstance(p, str) and _PRECISION.fullmatch(p) and v is not None:
            k = rate_key(p)
            out[k] = max(out.get(k, 0.0), v)
    return out


def figures_from_bench(doc: dict) -> dict[str, float]:
    """Figures of a `bench --json` document (``--quick``/``--sweep``): sustained DRAM bandwidth,
    event-timed launch overhead (s -> us), and with ``--sweep`` the compute rates."""
    out: dict[str, float] = {}
    v = _number(doc.get("sustained_dram_gbs"))
    if v is not None:
        out[DRAM] = v
    lo = doc.get("launch_overhead")
    v = _number(lo.get("event_s")) if isinstance(lo, dict) else None
    if v is not None:
        out[LAUNCH] = v * 1e6
    out.update(figures_from_compute_rows(doc.get("compute")))
    return out


def figures_from_profile(doc: dict) -> dict[str, float]:
    """Figures of a device profile: ``dram_bandwidth_gbs``, ``launch_overhead_s`` (-> us),
    ``peak_tflops_measured`` (precision -> TFLOP/s)."""
    out: dict[str, float] = {}
    v = _number(doc.get("dram_bandwidth_gbs"))
    if v is not None:
        out[DRAM] = v
    v = _number(doc.get("launch_overhead_s"))
    if v is not None:
        out[LAUNCH] = v * 1e6
    peaks = doc.get("peak_tflops_measured")
    for p, val in (peaks.items() if isinstance(peaks, dict) else ()):
        v = _number(val)
        if isinstance(p, str) and _PRECISION.fullmatch(p) and v is not None:
            out[rate_key(p)] = v
    return out


def document_kind(doc: Any) -> str | None:
    """``check``, ``bench``, ``profile``, ``observations`` (a bare list, as `check --recorded`
    takes) or None when ``doc`` is none of them."""
    if isinstance(doc, list):
        return "observations" if doc and all(isinstance(o, dict) and "device" in o for o in doc) else None
    if not isinstance(doc, dict):
        return None
    kind = doc.get("kind")
    if kind == "check" and isinstance(doc.get("observations", doc.get("devices")), list):
        return "check"
    if kind == "bench" and isinstance(doc.get("device"), dict):
        return "bench"
    if kind is None and all(isinstance(doc.get(k), str) and doc.get(k) for k in ("uuid", "name", "date")):
        return "profile"
    return None


def _text(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _check_status(dev: dict) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    checks = [c for c in dev.get("checks") or [] if isinstance(c, dict)]
    failed = tuple(str(c.get("name")) for c in checks if c.get("status") == "fail")
    warned = tuple(str(c.get("name")) for c in checks if c.get("status") == "warn")
    status = dev.get("status")
    if status not in ("pass", "warn", "fail"):
        passed = dev.get("passed")
        status = None if passed is None else ("fail" if passed is False else "warn" if warned else "pass")
    if status == "fail" and not failed and dev.get("nothing_checked"):
        failed = ("nothing_checked",)
    return status, failed, warned


def read_records(doc: Any, source: str = "", default_host: str = "") -> list[RunRecord]:
    """One :class:`RunRecord` per GPU in a saved document (see the module docstring).

    ``default_host`` names the host when the document does not (e.g. the file's name).

    Raises:
        ValueError: ``doc`` is not a check, bench or profile document (the message says which kinds are).
    """
    kind = document_kind(doc)
    if kind is None:
        raise ValueError("not a `gpuwhy check --json` document, a `gpuwhy bench --json` document (--quick/--sweep) "
                         "or a device profile")
    if kind == "observations":
        doc = {"kind": "check", "observations": doc}
        kind = "check"
    host = _text(doc.get("host"), default_host) or default_host
    date = _text(doc.get("date"))
    if kind == "profile":
        return [RunRecord(host, _text(doc.get("uuid")), _text(doc.get("name"), "GPU"), doc.get("sheet") if isinstance(doc.get("sheet"), str) else None,
                          figures_from_profile(doc), None, (), (), date, "profile", source)]
    if kind == "bench":
        dev = doc["device"]
        sheet = doc.get("sheet") if isinstance(doc.get("sheet"), dict) else {}
        return [RunRecord(host, _text(dev.get("uuid")), _text(dev.get("name"), "GPU"), sheet.get("name") if isinstance(sheet.get("name"), str) else None,
                          figures_from_bench(doc), None, (), (), date, "bench", source)]
    observations = [o for o in doc.get("observations") or [] if isinstance(o, dict)]
    devices = [d for d in doc.get("devices") or [] if isinstance(d, dict)]
    by_uuid = {d.get("uuid"): d for d in devices if d.get("uuid")}
    out = []
    for i, obs in enumerate(observations or devices):
        dev = by_uuid.get(obs.get("uuid")) or (devices[i] if i < len(devices) else {})
        status, failed, warned = _check_status(dev) if dev else (None, (), ())
        sheet = obs.get("sheet", dev.get("sheet"))
        out.append(RunRecord(host, _text(obs.get("uuid"), _text(dev.get("uuid"))), _text(obs.get("device"), _text(dev.get("device"), "GPU")),
                             sheet if isinstance(sheet, str) else None,
                             figures_from_observations(obs) if observations else {}, status, failed, warned, date, "check", source))
    return out
