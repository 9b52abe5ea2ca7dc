"""The device-profile store: what `gpuwhy bench` measured on one GPU, saved per GPU UUID.

The one module that saves, loads, finds and merges profiles. Each bench run
writes one JSON file under the user cache folder::

    $XDG_CACHE_HOME/gpuwhy/profiles/GPU-<uuid>/<UTC timestamp>.json   (default ~/.cache/gpuwhy)

and keeps the newest :data:`KEEP` per GPU. ``--measured`` commands ask
:func:`find_profile` for a GPU's newest profile (by UUID, else by its spec
sheet) and judge against its measured ceilings (DRAM bandwidth in B/s,
launch overhead in s, compute peaks) instead of the sheet's
(:func:`gpuwhy.model.roofline.ceilings.ceilings_from_profile`).

Fields (JSON, SI units in the names): ``schema``, ``uuid``, ``name``, ``arch``,
``driver_version``, ``driver_cuda_version``, ``date`` (ISO 8601 UTC),
``sm_clock_mhz``/``mem_clock_mhz`` (after the run) and their maxima,
``dram_bandwidth_gbs`` (sustained, 1e9 B/s) with ``dram_kernel``,
``spec_bandwidth_gbs`` and ``sheet``, ``launch_overhead_s`` (event-timed),
``launch_submit_s``, ``launch_round_trip_s``, ``launch_graph_per_kernel_s``,
``l2_bytes``, ``sm_count``, ``gpuwhy`` (version); after `bench --compute`,
``peak_tflops_measured`` (precision -> TFLOP/s) and ``compute_date``; after
`bench --roofline`, ``roofline_points`` (sweep dtype -> ``[[FLOP/byte, FLOP/s], ...]``),
``roofline_ridge`` (sweep dtype -> empirical ridge, FLOP/byte) and ``roofline_date``;
after `bench --sweep`, the cache ceilings: ``l2_read_bandwidth_gbs`` and
``l2_read_write_bandwidth_gbs`` (L2-resident working set ``l2_working_set_bytes``),
``shared_bandwidth_gbs`` with its clock-derived ``shared_clock_limit_gbs``,
``l1_bandwidth_gbs``, the SM clock sampled meanwhile ``cache_sm_clock_mhz`` and
``cache_date``; after `bench --latency`, ``latency_s`` (level -> load-to-use latency, s:
``L1``, ``L2``, ``L2 far``, ``DRAM``), ``l2_near_bytes`` (where the far-L2 step falls) and
``latency_date``; after `bench --allreduce` on several GPUs, ``allreduce_by_gpus`` (GPU count
as text -> ``busbw_gbs`` and ``largest_bytes`` of the largest all-reduce, ``latency_s`` and
``latency_bytes`` of the smallest, ``dtype``, ``date``), the same in every GPU of the run, and
``allreduce_date``. All of these are optional: older files without them load with None.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable

from .device.uuids import GPU_PREFIX, MIG_PREFIX, with_uuid_prefix
from .errors import GpuwhyError, UsageError
from .version import __version__

SCHEMA = 1
KEEP = 20


def profiles_dir() -> Path:
    """``$XDG_CACHE_HOME/gpuwhy/profiles`` (default ``~/.cache/gpuwhy/profiles``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuwhy" / "profiles"


def normalize_uuid(uuid: str) -> str:
    """``GPU-xxxxxxxx-...`` in lower case after the prefix (NVML's form), whatever the input
    (:func:`~gpuwhy.device.uuids.with_uuid_prefix`); a MIG device's ``MIG-`` is kept."""
    u = str(uuid).strip()
    mig = u[:4].upper() == MIG_PREFIX
    if u[:4].upper() in (GPU_PREFIX, MIG_PREFIX):
        u = u[4:]
    return with_uuid_prefix(u.lower(), mig=mig)


@dataclass(frozen=True)
class DeviceProfile:
    """One bench run's measured ceilings for one GPU (see the module docstring)."""

    uuid: str
    name: str
    date: str
    arch: str = ""
    driver_version: str | None = None
    driver_cuda_version: str | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    dram_bandwidth_gbs: float | None = None
    dram_kernel: str | None = None
    spec_bandwidth_gbs: float | None = None
    sheet: str | None = None
    launch_overhead_s: float | None = None
    launch_submit_s: float | None = None
    launch_round_trip_s: float | None = None
    launch_graph_per_kernel_s: float | None = None
    l2_bytes: int | None = None
    sm_count: int | None = None
    gpuwhy: str = ""
    schema: int = SCHEMA
    #: Measured compute ceilings (dense TFLOP/s, int8 TOPS) by precision, from
    #: `bench --compute`/`--sweep`; ``compute_date`` is when they were measured.
    peak_tflops_measured: dict | None = None
    compute_date: str | None = None
    #: The mixed-intensity sweep (`bench --roofline`), by sweep dtype (``fp32``,
    #: ``fp16``, ``bf16``): the empirical ridge (FLOP/byte) and the measured points
    #: ``[[FLOP/byte, FLOP/s], ...]``; ``roofline_date`` is when they were measured.
    roofline_ridge: dict | None = None
    roofline_points: dict | None = None
    roofline_date: str | None = None
    #: The cache ceilings (`bench --sweep`, :mod:`gpuwhy.bench.cache_bandwidth`): GB/s (1e9 B/s).
    l2_read_bandwidth_gbs: float | None = None
    l2_read_write_bandwidth_gbs: float | None = None
    l2_working_set_bytes: int | None = None
    shared_bandwidth_gbs: float | None = None
    shared_clock_limit_gbs: float | None = None
    l1_bandwidth_gbs: float | None = None
    cache_sm_clock_mhz: float | None = None
    cache_date: str | None = None
    #: The latency ladder (`bench --latency`): level -> s; the far-L2 step, bytes.
    latency_s: dict | None = None
    l2_near_bytes: int | None = None
    latency_date: str | None = None
    #: NCCL all-reduce across several GPUs of this host (`bench --allreduce`), by GPU count
    #: (text): see :func:`allreduce_entry`; ``allreduce_date`` is when the newest was measured.
    allreduce_by_gpus: dict | None = None
    allreduce_date: str | None = None
    #: The GPU's PCI device id (``"0x2335"``), read with its name to find its sheet
    #: (:func:`gpuwhy.device.sheet.sheet_for`); None in profiles written before it was kept.
    pci_device_id: str | None = None

    @property
    def dram_bandwidth(self) -> float | None:
        """Measured DRAM bandwidth in B/s (None when the run had no DRAM row)."""
        return None if self.dram_bandwidth_gbs is None else self.dram_bandwidth_gbs * 1e9

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DeviceProfile":
        """Build from JSON data; unknown keys are ignored (newer gpuwhy), missing optional ones are None.

        Every figure is checked (:data:`_RANGES`): a number where a number belongs, finite,
        above zero and in a range no real GPU leaves (a sign of the wrong unit or a typo).

        Raises:
            ValueError: not a JSON object, without ``uuid``, ``name`` or ``date``, or a field
                of the wrong type or out of range (the message names it).
        """
        if not isinstance(d, dict):
            raise ValueError(f"a profile is a JSON object, not a {type(d).__name__}")
        for key in ("uuid", "name", "date"):
            if not d.get(key) or not isinstance(d[key], str):
                raise ValueError(f"profile lacks {key!r}")
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        for key, value in data.items():
            _check_field(key, value)
        return cls(**data)


#: Ranges of a profile's figures: (low, high, unit). Outside them the file is refused.
_RANGES = {
    "dram_bandwidth_gbs": (0.1, 1e5, "GB/s"), "spec_bandwidth_gbs": (0.1, 1e5, "GB/s"),
    "launch_overhead_s": (1e-9, 1.0, "s"), "launch_submit_s": (1e-9, 1.0, "s"),
    "launch_round_trip_s": (1e-9, 1.0, "s"), "launch_graph_per_kernel_s": (1e-9, 1.0, "s"),
    "sm_clock_mhz": (1, 1e5, "MHz"), "mem_clock_mhz": (1, 1e5, "MHz"),
    "max_sm_clock_mhz": (1, 1e5, "MHz"), "max_mem_clock_mhz": (1, 1e5, "MHz"),
    "l2_bytes": (1, 1e12, "bytes"), "sm_count": (1, 1e5, "SMs"),
}
_TEXT = ("arch", "driver_version", "driver_cuda_version", "dram_kernel", "sheet", "gpuwhy", "compute_date", "roofline_date",
         "allreduce_date", "pci_device_id")
#: Ranges of an ``allreduce_by_gpus`` entry's figures, as :data:`_RANGES`.
_ALLREDUCE_RANGES = {"busbw_gbs": (1e-6, 1e5, "GB/s"), "latency_s": (1e-8, 10.0, "s"),
                     "largest_bytes": (1, 2**44, "bytes"), "latency_bytes": (1, 2**44, "bytes")}


def _number(key: str, value, lo: float, hi: float, unit: str) -> None:
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} must be a number of {unit}, got {value!r}")
    if not math.isfinite(value) or not (lo <= value <= hi):
        from .units import fmt_num

        raise ValueError(f"{key} = {fmt_num(value)} {unit} is not a plausible figure (expected {fmt_num(lo)} to {fmt_num(hi)} {unit})")


def _check_field(key: str, value) -> None:
    """Raise ValueError naming ``key`` when ``value`` is not what a profile holds there (None is always fine)."""
    if value is None:
        return
    if key in _RANGES:
        _number(key, value, *_RANGES[key])
    elif key in _TEXT and not isinstance(value, str):
        raise ValueError(f"{key} must be text, got {value!r}")
    elif key in ("peak_tflops_measured", "roofline_ridge"):
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be an object of precision -> number, got {value!r}")
        for prec, v in value.items():
            _number(f"{key}.{prec}", v, 1e-3, 1e5, "TFLOP/s" if key == "peak_tflops_measured" else "FLOP/byte")
    elif key == "allreduce_by_gpus":
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be an object of GPU count -> all-reduce figures, got {value!r}")
        for count, entry in value.items():
            if not str(count).isdigit() or int(count) < 2 or not isinstance(entry, dict):
                raise ValueError(f"{key} must map a GPU count of 2 or more to an object, got {count!r}: {entry!r}")
            for k, (lo, hi, unit) in _ALLREDUCE_RANGES.items():
                _number(f"{key}.{count}.{k}", entry.get(k), lo, hi, unit)
            for k in ("dtype", "date"):
                if not isinstance(entry.get(k), str):
                    raise ValueError(f"{key}.{count}.{k} must be text, got {entry.get(k)!r}")
    elif key == "roofline_points":
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be an object of dtype -> [[FLOP/byte, FLOP/s], ...], got {value!r}")
        for dtype, pts in value.items():
            if not isinstance(pts, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pts):
                raise ValueError(f"{key}.{dtype} must be a list of [FLOP/byte, FLOP/s] pairs")
            for x, y in pts:
                _number(f"{key}.{dtype} intensity", x, 1e-6, 1e9, "FLOP/byte")
                _number(f"{key}.{dtype} rate", y, 1.0, 1e20, "FLOP/s")


def _stamp(date_iso: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", date_iso)[:20] or "undated"


def save_profile(profile: DeviceProfile, folder: Path | None = None) -> Path:
    """Write ``profile`` atomically; keep the newest :data:`KEEP` for its GPU. Returns the path.

    Raises:
        OSError: the cache folder is not writable (callers note it and go on).
    """
    d = (folder or profiles_dir()) / normalize_uuid(profile.uuid)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{_stamp(profile.date)}.json"
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(profile.to_dict(), fh, indent=2, allow_nan=False)
        fh.write("\n")
    os.replace(tmp, path)
    for old in sorted(d.glob("*.json"))[:-KEEP]:
        try:
            old.unlink()
        except OSError:
            pass
    return path


def _read_all(folder: Path | None = None, uuid: str | None = None) -> list[DeviceProfile]:
    """Every readable profile in the store (of the GPU ``uuid`` only, when given), oldest first.

    Unreadable or foreign files are skipped: the store is a cache, never a reason to fail.
    """
    root = folder or profiles_dir()
    pattern = f"{normalize_uuid(uuid)}/*.json" if uuid else f"{GPU_PREFIX}*/*.json"
    out = []
    for path in sorted(root.glob(pattern)) if root.is_dir() else ():
        try:
            out.append(DeviceProfile.from_dict(json.loads(path.read_text())))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    out.sort(key=lambda pr: pr.date)
    return out


def list_profiles(uuid: str, folder: Path | None = None) -> list[DeviceProfile]:
    """Every readable profile of the GPU ``uuid``, oldest first (unreadable files skipped)."""
    return _read_all(folder, uuid)


def latest_profile(uuid: str, folder: Path | None = None, need: str | None = None) -> DeviceProfile | None:
    """The newest profile (by its ``date``) of the GPU ``uuid``, or None when it has none.

    ``need`` names a field that must be set (``"dram_bandwidth_gbs"`` or
    ``"launch_overhead_s"``): a run limited by ``--kernel`` may lack one.
    """
    return find_profile(uuid=uuid, folder=folder, need=need, by_sheet=False)


def find_profile(sheet=None, uuid: str | None = None, *, need: str | None = None, folder: Path | None = None,
                 by_sheet: bool = True, spec_dirs: Iterable[str] = ()) -> DeviceProfile | None:
    """The newest profile of a GPU, or None.

    Tried in order: the GPU ``uuid``; then (with ``by_sheet``) any GPU whose profile
    was recorded against ``sheet`` (a :class:`~gpuwhy.specs.Sheet` or its name) or
    whose NVML name that sheet matches; with neither ``uuid`` nor ``sheet``, the
    newest profile of any GPU. ``need`` names a field the profile must have set
    (e.g. ``"dram_bandwidth_gbs"``).
    """
    def usable(p: DeviceProfile) -> bool:
        return not need or getattr(p, need, None) is not None

    if uuid:
        hits = [p for p in _read_all(folder, uuid) if usable(p)]
        if hits or not by_sheet:
            return hits[-1] if hits else None
    if not by_sheet:
        return None
    name = getattr(sheet, "name", sheet)
    best = None
    for p in _read_all(folder):
        if not usable(p):
            continue
        if name and p.sheet != name and _sheet_name_of(p, spec_dirs) != name:
            continue
        best = p
    return best


def _sheet_name_of(profile: DeviceProfile, spec_dirs: Iterable[str]) -> str | None:
    """The name of the sheet the profiled GPU's NVML name and PCI id match, or None."""
    from .device.sheet import sheet_for

    try:
        s = sheet_for(nvml_name=profile.name, pci_device_id=profile.pci_device_id, spec_dirs=spec_dirs).sheet
    except GpuwhyError:  # a broken user sheet must not hide the other profiles
        return None
    return s.name if s is not None else None


def load_profile(path: str, what: str = "--profile") -> DeviceProfile:
    """A profile from a JSON file (a saved or recorded one).

    Raises:
        UsageError: the file cannot be read or is not a profile.
    """
    from .inputs import read_json

    try:
        data = read_json(path, "a gpuwhy device profile (JSON)")
    except UsageError as exc:
        raise UsageError(f"{what}: {exc}") from None
    try:
        return DeviceProfile.from_dict(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise UsageError(f"{what} {path!r} is not a gpuwhy device profile ({exc})") from None


def profile_from_result(result) -> DeviceProfile:
    """The profile of a :class:`~gpuwhy.bench.results.BenchResult`."""
    d = result.device
    h = result.health_after or result.health_before
    lo = result.launch
    return DeviceProfile(
        uuid=normalize_uuid(d.uuid),
        name=d.name,
        date=result.date,
        arch=d.arch,
        driver_version=getattr(result.health_before, "driver_version", None) if result.health_before else None,
        driver_cuda_version=d.driver_cuda_version,
        sm_clock_mhz=getattr(h, "sm_clock_mhz", None),
        mem_clock_mhz=getattr(h, "mem_clock_mhz", None),
        max_sm_clock_mhz=getattr(h, "max_sm_clock_mhz", None),
        max_mem_clock_mhz=getattr(h, "max_mem_clock_mhz", None),
        dram_bandwidth_gbs=result.sustained_gbs,
        dram_kernel=f"{result.sustained.kernel} {result.sustained.dtype}" if result.sustained else None,
        spec_bandwidth_gbs=result.sheet_bandwidth_gbs,
        sheet=result.sheet_name,
        launch_overhead_s=lo.event.median_s if lo else None,
        launch_submit_s=lo.submit.median_s if lo else None,
        launch_round_trip_s=lo.round_trip.median_s if lo else None,
        launch_graph_per_kernel_s=lo.graph_per_kernel.median_s if lo else None,
        l2_bytes=d.l2_bytes,
        sm_count=d.sm_count,
        gpuwhy=__version__,
        pci_device_id=getattr(d, "pci_device_id", None),
    )


def record_compute(uuid: str, results, folder: Path | None = None, name: str = "GPU", sheet: str | None = None) -> Path | None:
    """Add measured compute ceilings to the GPU's newest profile (a new file, same date).

    ``results`` are :class:`~gpuwhy.bench.compute.ComputeResult`; only rows with
    status ``measured`` count, and per precision the highest rate is kept.
    When the GPU has no profile yet, a minimal one (``name``, ``sheet``) is
    started. Returns the path written, or None when nothing was measured or the
    cache is not writable (never raises for that).
    """
    if not _measured_peaks(results):
        return None
    now = _now()
    base = latest_profile(uuid, folder)
    if base is None:
        base = DeviceProfile(uuid=normalize_uuid(uuid), name=name or "GPU", date=now, sheet=sheet, gpuwhy=__version__)
    newer = merge_compute_into_profile(base, results, date=now)
    try:
        return save_profile(newer, folder)
    except OSError:
        return None


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _measured_peaks(results) -> dict[str, float]:
    """Highest measured TFLOP/s per precision of :class:`~gpuwhy.bench.compute.ComputeResult` rows."""
    peaks: dict[str, float] = {}
    for r in results:
        if r.status == "measured" and r.tflops:
            peaks[r.precision] = max(peaks.get(r.precision, 0.0), float(r.tflops))
    return peaks


def merge_compute_into_profile(profile: DeviceProfile, compute_results, date: str | None = None) -> DeviceProfile:
    """``profile`` with the measured compute ceilings of ``compute_results`` added (pure; nothing is saved).

    Per precision the highest rate among the rows with status ``measured`` is
    kept and replaces any older figure (TFLOP/s; int8 TOPS); precisions not
    measured keep their older figures. ``compute_date`` becomes ``date``
    (default now, ISO 8601 UTC) and the profile's ``date`` at least that.
    Rows ``not measured``/``unsupported`` change nothing; without any measured
    row ``profile`` is returned unchanged.
    """
    from dataclasses import replace

    peaks = _measured_peaks(compute_results)
    if not peaks:
        return profile
    now = date or _now()
    merged = dict(profile.peak_tflops_measured or {})
    merged.update(peaks)
    return replace(profile, date=max(profile.date, now), peak_tflops_measured=merged, compute_date=now)


def merge_roofline_into_profile(profile: DeviceProfile, sweep, date: str | None = None) -> DeviceProfile:
    """``profile`` with a mixed-intensity sweep added (pure; nothing is saved).

    ``sweep`` is a :class:`~gpuwhy.bench.intensity.RooflineSweep`: per dtype it
    measured, ``roofline_points[dtype]`` becomes ``[[FLOP/byte, FLOP/s], ...]``
    and ``roofline_ridge[dtype]`` the empirical ridge (FLOP/byte; dropped when
    that sweep found none). Other dtypes keep older figures. ``roofline_date``
    becomes the sweep's date (else ``date``, else now).
    """
    from dataclasses import replace

    if not sweep.curves:
        return profile
    now = getattr(sweep, "date", "") or date or _now()
    points = dict(profile.roofline_points or {})
    ridges = dict(profile.roofline_ridge or {})
    for c in sweep.curves:
        points[c.dtype] = [[float(p.intensity), float(p.achieved_flops)] for p in c.points]
        if c.fit.ridge:
            ridges[c.dtype] = float(c.fit.ridge)
        else:
            ridges.pop(c.dtype, None)
    return replace(profile, date=max(profile.date, now), roofline_points=points, roofline_ridge=ridges or None,
                   roofline_date=now)


def record_roofline(uuid: str, sweep, folder: Path | None = None, name: str = "GPU", sheet: str | None = None) -> Path | None:
    """Add a mixed-intensity sweep to the GPU's newest profile (a new file; see
    :func:`merge_roofline_into_profile`); a minimal profile is started when the GPU has
    none. Returns the path written, or None when the sweep measured nothing or the
    cache is not writable (never raises for that).
    """
    if not sweep.curves:
        return None
    now = _now()
    base = latest_profile(uuid, folder)
    if base is None:
        base = DeviceProfile(uuid=normalize_uuid(uuid), name=name or "GPU", date=now, sheet=sheet, gpuwhy=__version__)
    try:
        return save_profile(merge_roofline_into_profile(base, sweep, date=now), folder)
    except OSError:
        return None


#: Fields each measurement family owns (carried together, dated by the last one).
CACHE_FIELDS = ("l2_read_bandwidth_gbs", "l2_read_write_bandwidth_gbs", "l2_working_set_bytes", "shared_bandwidth_gbs",
                "shared_clock_limit_gbs", "l1_bandwidth_gbs", "cache_sm_clock_mhz", "cache_date")
LATENCY_FIELDS = ("latency_s", "l2_near_bytes", "latency_date")
ALLREDUCE_FIELDS = ("allreduce_by_gpus", "allreduce_date")


def merge_caches_into_profile(profile: DeviceProfile, caches, date: str | None = None) -> DeviceProfile:
    """``profile`` with the cache ceilings of ``caches`` added (pure; nothing is saved).

    ``caches`` is a :class:`~gpuwhy.bench.cache_bandwidth.CacheResult`: its best L2 read
    and read+write rows, shared-memory and L1 rows (GB/s) replace older figures; levels it
    did not measure keep theirs. ``cache_date`` becomes its date (else ``date``, else now).
    Without any measured row ``profile`` is returned unchanged.
    """
    from dataclasses import replace

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
        return profile
    now = getattr(caches, "date", "") or date or _now()
    clock = (getattr(caches, "sm_clock", None) or {}).get("sm_clock_mhz")
    return replace(profile, date=max(profile.date, now), cache_date=now, cache_sm_clock_mhz=clock, **got)


def _record_merged(uuid: str, merge, folder: Path | None, name: str, sheet: str | None) -> Path | None:
    """Save ``merge(newest profile)`` as a new file (a minimal profile is started when the GPU has
    none); None when ``merge`` changed nothing or the cache folder is not writable."""
    base = latest_profile(uuid, folder)
    if base is None:
        base = DeviceProfile(uuid=normalize_uuid(uuid), name=name or "GPU", date=_now(), sheet=sheet, gpuwhy=__version__)
    newer = merge(base)
    if newer is base:
        return None
    try:
        return save_profile(newer, folder)
    except OSError:
        return None


def record_caches(uuid: str, caches, folder: Path | None = None, name: str = "GPU", sheet: str | None = None) -> Path | None:
    """Add cache ceilings to the GPU's newest profile (a new file; see
    :func:`merge_caches_into_profile`); a minimal profile is started when the GPU has none.
    Returns the path written, or None when nothing was measured or the cache folder is
    not writable (never raises for that)."""
    return _record_merged(uuid, lambda p: merge_caches_into_profile(p, caches), folder, name, sheet)


def merge_latency_into_profile(profile: DeviceProfile, latency, date: str | None = None) -> DeviceProfile:
    """``profile`` with the levels of a latency ladder added (pure; nothing is saved).

    ``latency`` is a :class:`~gpuwhy.bench.latency.LatencyResult`: ``latency_s`` becomes
    its level -> latency (s); ``l2_near_bytes`` the working set where the near-L2 level
    ends when a far-L2 level follows (else None). No level: ``profile`` unchanged.
    """
    from dataclasses import replace

    levels = {lv.name: float(lv.latency_s) for lv in getattr(latency, "levels", ()) if lv.latency_s}
    if not levels:
        return profile
    near = next((lv for lv in latency.levels if lv.name == "L2"), None)
    near_bytes = int(near.edge_bytes) if near is not None and near.edge_bytes and "L2 far" in levels else None
    now = getattr(latency, "date", "") or date or _now()
    return replace(profile, date=max(profile.date, now), latency_s=levels, l2_near_bytes=near_bytes, latency_date=now)


def record_latency(uuid: str, latency, folder: Path | None = None, name: str = "GPU", sheet: str | None = None) -> Path | None:
    """Add a latency ladder to the GPU's newest profile (a new file; see
    :func:`merge_latency_into_profile`). Returns the path written, or None (nothing
    measured, or the cache folder not writable; never raises for that)."""
    return _record_merged(uuid, lambda p: merge_latency_into_profile(p, latency), folder, name, sheet)


def allreduce_entry(*, busbw_gbs: float, largest_bytes: int, latency_s: float, latency_bytes: int, dtype: str,
                    date: str) -> dict:
    """One ``allreduce_by_gpus`` entry: the largest all-reduce's busbw (GB/s) and size (bytes),
    the smallest one's time (s) and size (bytes), the dtype and the date (ISO 8601 UTC)."""
    return {"busbw_gbs": float(busbw_gbs), "largest_bytes": int(largest_bytes), "latency_s": float(latency_s),
            "latency_bytes": int(latency_bytes), "dtype": str(dtype), "date": str(date)}


def merge_allreduce_into_profile(profile: DeviceProfile, gpus: int, entry: dict) -> DeviceProfile:
    """``profile`` with ``entry`` (:func:`allreduce_entry`) as its all-reduce over ``gpus`` GPUs,
    replacing an older one of that count; other counts keep theirs (pure; nothing is saved).

    Raises:
        ValueError: ``gpus`` below 2 or an entry a profile cannot hold (see :meth:`DeviceProfile.from_dict`).
    """
    from dataclasses import replace

    merged = {**(profile.allreduce_by_gpus or {}), str(int(gpus)): dict(entry)}
    _check_field("allreduce_by_gpus", merged)
    date = entry["date"]
    return replace(profile, date=max(profile.date, date), allreduce_by_gpus=merged,
                   allreduce_date=max(profile.allreduce_date or date, date))


def record_allreduce(uuid: str, gpus: int, entry: dict, folder: Path | None = None, name: str = "GPU",
                     sheet: str | None = None) -> Path | None:
    """Add an all-reduce over ``gpus`` GPUs to the GPU ``uuid``'s newest profile (a new file; see
    :func:`merge_allreduce_into_profile`); a minimal profile is started when the GPU has none.
    Returns the path written, or None when the cache folder is not writable (never raises for that).

    Raises:
        ValueError: as :func:`merge_allreduce_into_profile`.
    """
    return _record_merged(uuid, lambda p: merge_allreduce_into_profile(p, gpus, entry), folder, name, sheet)


def find_allreduce(sheet, gpus: int, *, folder: Path | None = None,
                   spec_dirs: Iterable[str] = ()) -> tuple[float, float | None, str] | None:
    """``(seconds, bus bandwidth in GB/s or None, source)`` of the measured all-reduce of this host
    for ``gpus`` GPUs of the ``sheet``'s model: the small message's time and the largest one's bus
    bandwidth, of the count nearest ``gpus`` when that one was not measured
    (:func:`gpuwhy.model.multi_gpu.allreduce.measured_latency`, ``measured_busbw``), from the newest
    profile that has one; None when no profile has any."""
    from .model.multi_gpu.allreduce import measured_busbw, measured_latency

    p = find_profile(sheet, need="allreduce_by_gpus", folder=folder, spec_dirs=spec_dirs)
    if p is None:
        return None
    found = measured_latency(p.allreduce_by_gpus, gpus, f"profile of {p.name} {p.uuid}")
    if found is None:
        return None
    return found[0], measured_busbw(p.allreduce_by_gpus, gpus), found[1]


def carry_compute(profile: DeviceProfile, folder: Path | None = None) -> DeviceProfile:
    """``profile`` with the measured compute ceilings of the GPU's newest earlier profile
    carried over (a memory-only bench run does not measure them, and must not make
    `classify --measured` forget them). Their ``compute_date`` says when they were measured.
    The mixed-intensity sweep (``roofline_*``, dated by ``roofline_date``), the cache
    ceilings (:data:`CACHE_FIELDS`), the latency ladder (:data:`LATENCY_FIELDS`) and the
    all-reduce figures (:data:`ALLREDUCE_FIELDS`) are carried the same way.
    """
    from dataclasses import replace

    for group, key in ((CACHE_FIELDS, "cache_date"), (LATENCY_FIELDS, "latency_date"), (ALLREDUCE_FIELDS, "allreduce_date")):
        if getattr(profile, key) is None:
            prev = latest_profile(profile.uuid, folder, need=key)
            if prev is not None:
                profile = replace(profile, **{f: getattr(prev, f) for f in group})

    if not profile.peak_tflops_measured:
        prev = latest_profile(profile.uuid, folder, need="peak_tflops_measured")
        if prev is not None:
            profile = replace(profile, peak_tflops_measured=dict(prev.peak_tflops_measured), compute_date=prev.compute_date)
    if not profile.roofline_points:
        prev = latest_profile(profile.uuid, folder, need="roofline_points")
        if prev is not None:
            profile = replace(profile, roofline_points=dict(prev.roofline_points),
                              roofline_ridge=dict(prev.roofline_ridge) if prev.roofline_ridge else None,
                              roofline_date=prev.roofline_date)
    return profile
