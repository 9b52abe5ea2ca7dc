"""The fields of a device profile, grouped by what records them, and how each measurement merges in.

A :class:`Section` is one group of :class:`~gpuwhy.profiles.DeviceProfile` fields: the
memory run's (:data:`RUN`, written whole by every `bench --quick`/`--sweep`), and one
per measurement saved on its own (:data:`COMPUTE`, :data:`ROOFLINE`, :data:`CACHES`,
:data:`LATENCY`, :data:`ALLREDUCE`). Each :class:`Field` says how a loaded value is checked;
each measured section says which field dates it, which field says it was measured, and
how a measurement becomes its fields (``gather``). :mod:`gpuwhy.profiles` builds
``DeviceProfile`` from :data:`SECTIONS` (their fields, in this order, are the saved JSON's
keys) and records, merges and carries every section the same way, so a new measurement
adds one section here and nothing to the store.

This module is pure: no I/O, nothing saved; a ``gather`` reads only the attributes named in
its docstring (any object with them will do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

#: The profile format's version (the ``schema`` field).
SCHEMA = 1

#: ``check(key, value)`` raises ValueError naming ``key`` when ``value`` (never None) is not
#: what a profile holds there.
Check = Callable[[str, Any], None]


@dataclass(frozen=True)
class Field:
    """One field of a device profile.

    Attributes:
        name: the JSON key and attribute (SI units in the name).
        type: its annotation, as text (documentation only).
        default: the value when absent (None unless stated; the first three fields have none).
        check: validates a loaded value (see :data:`Check`); None: anything is kept.
        required: a profile without it (or with it empty, or not text) is refused.
        empty_is_none: an empty object recorded or carried here is saved as None.
    """

    name: str
    type: str = "Any"
    default: Any = None
    check: Check | None = None
    required: bool = False
    empty_is_none: bool = False


#: ``gather(profile, measured, date) -> {field: value}``: the fields a measurement sets, given the
#: profile it merges into and the date it is stamped with (ISO 8601 UTC); empty when it measured nothing.
Gather = Callable[[Any, Any, str], dict]


@dataclass(frozen=True)
class Section:
    """One group of profile fields, recorded together and carried together.

    Attributes:
        name: what records it (``run``, ``compute``, ``roofline``, ``caches``, ``latency``, ``allreduce``).
        fields: its fields, in the order they are saved.
        date: the field stamped with the measurement's date when it merges (None for the run).
        key: the field whose value (not None, not an empty object) says the section was measured;
            a later run that lacks it carries the whole section over from the newest profile that
            has it. None for the run, which every profile has.
        gather: how a measurement becomes these fields (see :data:`Gather`); None for the run,
            which is built whole from a bench result (:func:`gpuwhy.profiles.profile_from_result`).
    """

    name: str
    fields: tuple[Field, ...]
    date: str | None = None
    key: str | None = None
    gather: Gather | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


# ------------------------------------------------------------------- checks --


def plausible(key: str, value, lo: float, hi: float, unit: str) -> None:
    """Raise ValueError unless ``value`` is a number (not a bool), finite, within ``lo``..``hi`` ``unit``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} must be a number of {unit}, got {value!r}")
    if not math.isfinite(value) or not (lo <= value <= hi):
        from .units import fmt_num

        raise ValueError(f"{key} = {fmt_num(value)} {unit} is not a plausible figure (expected {fmt_num(lo)} to {fmt_num(hi)} {unit})")


def number(lo: float, hi: float, unit: str) -> Check:
    """A :data:`Check`: a number in ``lo``..``hi`` ``unit`` (a range no real GPU leaves: out of it
    is a sign of the wrong unit or a typo)."""
    return lambda key, value: plausible(key, value, lo, hi, unit)


def text(key: str, value) -> None:
    """A :data:`Check`: text."""
    if not isinstance(value, str):
        raise ValueError(f"{key} must be text, got {value!r}")


def numbers_by_name(lo: float, hi: float, unit: str) -> Check:
    """A :data:`Check`: an object of precision (or dtype) -> a number in ``lo``..``hi`` ``unit``."""
    def check(key: str, value) -> None:
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be an object of precision -> number, got {value!r}")
        for name, v in value.items():
            plausible(f"{key}.{name}", v, lo, hi, unit)

    return check


def roofline_points(key: str, value) -> None:
    """A :data:`Check`: dtype -> ``[[FLOP/byte, FLOP/s], ...]``, each pair in a plausible range."""
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be an object of dtype -> [[FLOP/byte, FLOP/s], ...], got {value!r}")
    for dtype, pts in value.items():
        if not isinstance(pts, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pts):
            raise ValueError(f"{key}.{dtype} must be a list of [FLOP/byte, FLOP/s] pairs")
        for x, y in pts:
            plausible(f"{key}.{dtype} intensity", x, 1e-6, 1e9, "FLOP/byte")
            plausible(f"{key}.{dtype} rate", y, 1.0, 1e20, "FLOP/s")


#: Ranges of an ``allreduce_by_gpus`` entry's figures: (low, high, unit).
ALLREDUCE_RANGES = {"busbw_gbs": (1e-6, 1e5, "GB/s"), "latency_s": (1e-8, 10.0, "s"),
                    "largest_bytes": (1, 2**44, "bytes"), "latency_bytes": (1, 2**44, "bytes")}


def allreduce_by_gpus(key: str, value) -> None:
    """A :data:`Check`: GPU count (text, 2 or more) -> an :func:`allreduce_entry`."""
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be an object of GPU count -> all-reduce figures, got {value!r}")
    for count, entry in value.items():
        if not str(count).isdigit() or int(count) < 2 or not isinstance(entry, dict):
            raise ValueError(f"{key} must map a GPU count of 2 or more to an object, got {count!r}: {entry!r}")
        for k, (lo, hi, unit) in ALLREDUCE_RANGES.items():
            plausible(f"{key}.{count}.{k}", entry.get(k), lo, hi, unit)
        for k in ("dtype", "date"):
            if not isinstance(entry.get(k), str):
                raise ValueError(f"{key}.{count}.{k} must be text, got {entry.get(k)!r}")


# ---------------------------------------------------------------- the run --

_GBS, _S, _MHZ = number(0.1, 1e5, "GB/s"), number(1e-9, 1.0, "s"), number(1, 1e5, "MHz")

#: The memory run (`bench --quick`/`--sweep`): who the GPU is, its clocks after the run, the
#: sustained DRAM bandwidth (1e9 B/s) and the launch overhead four ways (s).
RUN = Section("run", (
    Field("uuid", "str", required=True), Field("name", "str", required=True), Field("date", "str", required=True),
    Field("arch", "str", "", text), Field("driver_version", "str | None", check=text),
    Field("driver_cuda_version", "str | None", check=text),
    Field("sm_clock_mhz", "int | None", check=_MHZ), Field("mem_clock_mhz", "int | None", check=_MHZ),
    Field("max_sm_clock_mhz", "int | None", check=_MHZ), Field("max_mem_clock_mhz", "int | None", check=_MHZ),
    Field("dram_bandwidth_gbs", "float | None", check=_GBS), Field("dram_kernel", "str | None", check=text),
    Field("spec_bandwidth_gbs", "float | None", check=_GBS), Field("sheet", "str | None", check=text),
    Field("launch_overhead_s", "float | None", check=_S), Field("launch_submit_s", "float | None", check=_S),
    Field("launch_round_trip_s", "float | None", check=_S), Field("launch_graph_per_kernel_s", "float | None", check=_S),
    Field("l2_bytes", "int | None", check=number(1, 1e12, "bytes")), Field("sm_count", "int | None", check=number(1, 1e5, "SMs")),
    # the PCI device id ("0x2335"), read with the name to find the sheet; None in older profiles
    Field("pci_device_id", "str | None", check=text),
    Field("gpuwhy", "str", "", text), Field("schema", "int", SCHEMA),
))


# ------------------------------------------------------------- measured --


def _gather_compute(profile, results, date: str) -> dict:
    """``results``: :class:`~gpuwhy.bench.compute.ComputeResult` rows (``status``, ``tflops``,
    ``precision``). Per precision the highest rate among the ``measured`` rows replaces any older
    figure (TFLOP/s; int8 TOPS); precisions not measured keep theirs."""
    peaks: dict[str, float] = {}
    for r in results:
        if r.status == "measured" and r.tflops:
            peaks[r.precision] = max(peaks.get(r.precision, 0.0), float(r.tflops))
    if not peaks:
        return {}
    return {"peak_tflops_measured": {**(profile.peak_tflops_measured or {}), **peaks}}


#: `bench --compute` (and `--sweep`): dense TFLOP/s (int8 TOPS) by precision.
COMPUTE = Section("compute", (
    Field("peak_tflops_measured", "dict | None", check=numbers_by_name(1e-3, 1e5, "TFLOP/s")),
    Field("compute_date", "str | None", check=text),
), date="compute_date", key="peak_tflops_measured", gather=_gather_compute)


def _gather_roofline(profile, sweep, date: str) -> dict:
    """``sweep``: a :class:`~gpuwhy.bench.intensity.RooflineSweep` (``curves``: ``dtype``, ``points``
    with ``intensity`` and ``achieved_flops``, ``fit.ridge``). Per dtype it measured, its points and
    its empirical ridge (dropped when that sweep found none) replace older ones; other dtypes keep theirs."""
    if not sweep.curves:
        return {}
    points = dict(profile.roofline_points or {})
    ridges = dict(profile.roofline_ridge or {})
    for c in sweep.curves:
        points[c.dtype] = [[float(p.intensity), float(p.achieved_flops)] for p in c.points]
        if c.fit.ridge:
            ridges[c.dtype] = float(c.fit.ridge)
        else:
            ridges.pop(c.dtype, None)
    return {"roofline_points": points, "roofline_ridge": ridges}


#: `bench --roofline`: the mixed-intensity sweep by dtype (``fp32``, ``fp16``, ``bf16``): the
#: empirical ridge (FLOP/byte) and the points ``[[FLOP/byte, FLOP/s], ...]``.
ROOFLINE = Section("roofline", (
    Field("roofline_ridge", "dict | None", check=numbers_by_name(1e-3, 1e5, "FLOP/byte"), empty_is_none=True),
    Field("roofline_points", "dict | None", check=roofline_points),
    Field("roofline_date", "str | None", check=text),
), date="roofline_date", key="roofline_points", gather=_gather_roofline)


def _gather_caches(profile, caches, date: str) -> dict:
    """``caches``: a :class:`~gpuwhy.bench.cache_bandwidth.CacheResult` (``best(level, op)`` rows with
    ``gbs``, ``working_set_bytes``, ``clock_limit_gbs``; ``sm_clock``). Its best L2 read and
    read+write, shared-memory and L1 rows (GB/s) replace older figures; levels it did not measure
    keep theirs; the SM clock sampled meanwhile replaces the old one."""
    got = {}
    rd, rw, sh, l1 = caches.best("L2", "read"), caches.best("L2", "read+write"), caches.best("shared"), caches.best("L1")
    if rd is not None:
        got.update(l2_read_bandwidth_gbs=float(rd.gbs), l2_working_set_bytes=int(rd.working_set_bytes))
    if rw is not None:
        got["l2_read_write_bandwidth_gbs"] = float(rw.gbs)
    if sh is not None:
        got["shared_bandwidth_gbs"] = float(sh.gbs)
        if sh.clock_limit_gbs:
            got["shared_clock_limit_gbs"] = float(sh.clock_limit_gbs)
    if l1 is not None:
        got["l1_bandwidth_gbs"] = float(l1.gbs)
    if not got:
        return {}
    return {**got, "cache_sm_clock_mhz": (getattr(caches, "sm_clock", None) or {}).get("sm_clock_mhz")}


#: `bench --caches` (and `--sweep`): GB/s (1e9 B/s) of the L2 (read; read+write; over the
#: L2-resident working set ``l2_working_set_bytes``), shared memory (with its clock-derived limit)
#: and L1, and the SM clock (MHz) sampled meanwhile.
CACHES = Section("caches", (
    Field("l2_read_bandwidth_gbs", "float | None"), Field("l2_read_write_bandwidth_gbs", "float | None"),
    Field("l2_working_set_bytes", "int | None"), Field("shared_bandwidth_gbs", "float | None"),
    Field("shared_clock_limit_gbs", "float | None"), Field("l1_bandwidth_gbs", "float | None"),
    Field("cache_sm_clock_mhz", "float | None"), Field("cache_date", "str | None"),
), date="cache_date", key="cache_date", gather=_gather_caches)


def _gather_latency(profile, latency, date: str) -> dict:
    """``latency``: a :class:`~gpuwhy.bench.latency.LatencyResult` (``levels``: ``name``,
    ``latency_s``, ``edge_bytes``). ``latency_s`` becomes its level -> latency (s); ``l2_near_bytes``
    the working set where the near-L2 level ends when a far-L2 level follows (else None)."""
    levels = {lv.name: float(lv.latency_s) for lv in getattr(latency, "levels", ()) if lv.latency_s}
    if not levels:
        return {}
    near = next((lv for lv in latency.levels if lv.name == "L2"), None)
    near_bytes = int(near.edge_bytes) if near is not None and near.edge_bytes and "L2 far" in levels else None
    return {"latency_s": levels, "l2_near_bytes": near_bytes}


#: `bench --latency`: load-to-use latency (s) by level (``L1``, ``L2``, ``L2 far``, ``DRAM``) and
#: where the far-L2 step falls (bytes).
LATENCY = Section("latency", (
    Field("latency_s", "dict | None"), Field("l2_near_bytes", "int | None"), Field("latency_date", "str | None"),
), date="latency_date", key="latency_date", gather=_gather_latency)


def allreduce_entry(*, busbw_gbs: float, largest_bytes: int, latency_s: float, latency_bytes: int, dtype: str,
                    date: str) -> dict:
    """One ``allreduce_by_gpus`` entry: the largest all-reduce's busbw (GB/s) and size (bytes),
    the smallest one's time (s) and size (bytes), the dtype and the date (ISO 8601 UTC)."""
    return {"busbw_gbs": float(busbw_gbs), "largest_bytes": int(largest_bytes), "latency_s": float(latency_s),
            "latency_bytes": int(latency_bytes), "dtype": str(dtype), "date": str(date)}


@dataclass(frozen=True)
class AllreduceRun:
    """What one `bench --allreduce` records in each GPU's profile: the GPU count and its
    :func:`allreduce_entry` (dated by the entry)."""

    gpus: int
    entry: dict

    @property
    def date(self) -> str:
        return self.entry["date"]


def _gather_allreduce(profile, run: AllreduceRun, date: str) -> dict:
    """``run``: an :class:`AllreduceRun`. Its entry replaces an older one of that GPU count; other
    counts keep theirs; ``allreduce_date`` is the newest entry's date.

    Raises:
        ValueError: a count below 2 or an entry a profile cannot hold (:func:`allreduce_by_gpus`).
    """
    merged = {**(profile.allreduce_by_gpus or {}), str(int(run.gpus)): dict(run.entry)}
    allreduce_by_gpus("allreduce_by_gpus", merged)
    return {"allreduce_by_gpus": merged, "allreduce_date": max(profile.allreduce_date or date, date)}


#: `bench --allreduce` on several GPUs, by GPU count (text): see :func:`allreduce_entry`; the same
#: in every GPU of the run.
ALLREDUCE = Section("allreduce", (
    Field("allreduce_by_gpus", "dict | None", check=allreduce_by_gpus), Field("allreduce_date", "str | None", check=text),
), date="allreduce_date", key="allreduce_date", gather=_gather_allreduce)


#: Every section, in the order their fields are saved.
SECTIONS: tuple[Section, ...] = (RUN, COMPUTE, ROOFLINE, CACHES, LATENCY, ALLREDUCE)
