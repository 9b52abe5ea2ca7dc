"""The ``gpuwhy check --json`` document, and reading recorded observations back (``--recorded``).

The document (``kind: check``) holds: ``host`` and ``date`` (ISO 8601 UTC) of the run, and in
``sources`` where each came from (this run; the ``--recorded`` document; or, where that names
none, this host and the time it was judged);
``status`` (``pass``/``warn``/``fail``) and ``passed`` (false only for ``fail``);
``counts`` of checks per state; the ``policy``; per GPU in ``devices`` its checks (each a
``name``, a ``status``, its numbers with units in the keys, and the texts people read);
the raw ``observations`` (numbers with units in the keys: what ``--recorded``,
``--baseline`` and ``gpuwhy fleet summarize`` read back); ``baseline``, what each GPU
was compared with (None without ``--baseline``); with several GPUs ``slowest``, the GPU
furthest below the others' median (:data:`SLOWEST_FIGURES`), ``schedule``, how they were
measured (at once or one after another, the wall time and the GPUs' own times added), and
``failed_devices``, the GPUs whose measurement raised an error; the ``level`` checked (1: NVML
health alone, 2: health and quick measurements) and the ``drain_reason``, one line to drain the
node with when a check failed (:mod:`gpuwhy.check.drain`; None otherwise). It is also what
``--save-baseline`` writes.
"""

from __future__ import annotations


from ..errors import UsageError
from .policy import STATES, DeviceChecks, Observations, Policy

#: The figures that name the slowest GPU: more is better, except launch overhead.
SLOWEST_FIGURES = {"dram_bandwidth_gbs": True, "fp32_tflops": True, "tensor_tflops": True, "launch_overhead_us": False}


def slowest_device(observations: list[Observations]) -> dict | None:
    """The GPU furthest below the others (:func:`gpuwhy.model.multi_gpu.schedule.slowest_gpu` over
    :data:`SLOWEST_FIGURES`) as the document holds it, or None (one GPU, or no figure on two)."""
    from ..model.multi_gpu.schedule import slowest_gpu

    s = slowest_gpu([{k: getattr(o, k) for k in SLOWEST_FIGURES} for o in observations], SLOWEST_FIGURES)
    if s is None:
        return None
    o = observations[s.position]
    return {"device_index": s.position, "device": o.device, "uuid": o.uuid, "figure": s.figure, "value": s.value,
            "median": s.median, "ratio": s.ratio}


#: Where a check document's ``host`` and ``date`` came from (its ``sources``).
SOURCES = {"this": "this run (measured here)", "recorded": "the recorded document",
           "judged": "this host and time (the recorded document names none)"}


def check_document(reports: list[DeviceChecks], observations: list[Observations], policy: Policy, *,
                   host: str = "", date: str = "", sources: dict | None = None, comparisons: list | None = None,
                   schedule: dict | None = None, failed: list | None = None, level: int = 2) -> dict:
    """The ``--json`` document body (see the module docstring); ``comparisons`` holds one
    :class:`~gpuwhy.check.baseline.Comparison` (or None) per report; ``schedule`` how the GPUs were
    measured; ``sources``: where ``host`` and ``date`` came from (:data:`SOURCES`); ``failed``
    ``(label, Outcome)`` pairs of :mod:`gpuwhy.bench.fanout` for GPUs that raised; ``level`` the level
    checked."""
    from .drain import drain_items, drain_reason

    failed_any = any(r.failed for r in reports) or bool(failed)
    warned = any(r.status == "warn" for r in reports)
    base = None
    if comparisons and any(c is not None for c in comparisons):
        base = {"file": next(c.source for c in comparisons if c is not None),
                "devices": [None if c is None else {"uuid": r.uuid, "against": c.against, "note": c.note}
                            for r, c in zip(reports, comparisons)]}
    return {
        "host": host,
        "date": date,
        **({"sources": dict(sources)} if sources else {}),
        "status": "fail" if failed_any else "warn" if warned else "pass",
        "passed": not failed_any,
        "counts": {s: sum(r.count(s) for r in reports) for s in STATES},
        "policy": policy.to_dict(),
        "devices": [r.to_dict() for r in reports],
        "observations": [o.to_dict() for o in observations],
        "baseline": base,
        "slowest": slowest_device(observations),
        "schedule": schedule,
        "failed_devices": [{"device": label, "exit_code": o.exit_code, "error": o.error} for label, o in failed or ()],
        "level": level,
        "drain_reason": drain_reason(drain_items(reports, observations, failed or ()), level),
    }


#: The recorded figures held against their sheet's: (observation field, sheet field, unit, what it is).
_AGAINST_SHEET = (("dram_bandwidth_gbs", "sheet_bandwidth_gbs", "GB/s", "DRAM bandwidth"),
                  ("fp32_tflops", "sheet_fp32_tflops", "TFLOP/s", "fp32 rate"),
                  ("tensor_tflops", "sheet_tensor_tflops", "TFLOP/s", "tensor-core rate"))


def _refuse_impossible(obs: Observations, where: str) -> None:
    """Refuse a recorded figure more than :data:`~gpuwhy.model.roofline.limits.IMPOSSIBLE_FACTOR` x its
    sheet's figure (a DRAM bandwidth of 1e12 GB/s): no clock reaches it, so the file is wrong, and a
    check that passed it would pass anything. A figure or sheet figure that is no number is left to
    :func:`~gpuwhy.check.policy.evaluate` (a bad value).

    Raises:
        UsageError: an impossible figure (names the entry, the figure, its sheet figure and the factor).
    """
    from ..model.roofline.limits import impossible_error, over_roof
    from ..units import fmt_num

    for key, sheet_key, unit, what in _AGAINST_SHEET:
        value, sheet = getattr(obs, key), getattr(obs, sheet_key)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, sheet)):
            continue
        if over_roof(value, sheet):
            raise impossible_error(f"{where}: {key}", f"{fmt_num(value)} {unit}", value / sheet,
                                   f"its sheet's {what} ({fmt_num(sheet)} {unit}, {sheet_key})",
                                   "check the figure and its unit (GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s)")


def read_recorded(path: str) -> tuple[list[Observations], str, str]:
    """The observations of a recorded run (a JSON list of them, or a ``check --json`` document),
    with the document's ``host`` and ``date`` ("" when it has none).

    Raises:
        UsageError: the file cannot be read, is not JSON, holds no observations, or an entry
            is not an object, has an unknown key or a bad value, or holds an impossible figure
            (:func:`_refuse_impossible`).
    """
    from ..inputs import read_json

    try:
        data = read_json(path, "recorded observations (a `gpuwhy check --json` file or a JSON list)")
    except UsageError as exc:
        raise UsageError(f"--recorded: {exc}") from None
    items = data.get("observations", data) if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise UsageError(f"--recorded {path!r}: expected a non-empty list of observations (one per GPU)")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError(f"--recorded {path!r}: entry {i} is not an object of observations")
        try:
            obs = Observations.from_dict(item)
        except UsageError as exc:
            raise UsageError(f"--recorded {path!r}: entry {i}: {exc}") from None
        _refuse_impossible(obs, f"--recorded {path!r}: entry {i} ({obs.device})")
        out.append(obs)
    host = data.get("host") if isinstance(data, dict) and isinstance(data.get("host"), str) else ""
    date = data.get("date") if isinstance(data, dict) and isinstance(data.get("date"), str) else ""
    return out, host, date
