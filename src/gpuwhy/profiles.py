"""The device-profile store: what `gpuwhy bench` measured on one GPU, saved per GPU UUID.

The one module that saves, loads, finds and merges profiles. Each bench run
writes one JSON file under the user cache folder::

    $XDG_CACHE_HOME/gpuwhy/profiles/GPU-<uuid>/<UTC timestamp>.json   (default ~/.cache/gpuwhy)

and keeps the newest :data:`KEEP` per GPU. ``--measured`` commands ask
:func:`find_profile` for a GPU's newest profile (by UUID, else by its spec
sheet) and judge against its measured ceilings (DRAM bandwidth in B/s,
launch overhead in s, compute peaks) instead of the sheet's
(:func:`gpuwhy.model.roofline.ceilings.ceilings_from_profile`).

Fields (JSON, SI units in the names) are declared by section in
:mod:`gpuwhy.profile_sections`: the memory run's (``schema``, ``uuid``, ``name``, ``arch``,
``driver_version``, ``driver_cuda_version``, ``date`` (ISO 8601 UTC),
``sm_clock_mhz``/``mem_clock_mhz`` (after the run) and their maxima,
``dram_bandwidth_gbs`` (sustained, 1e9 B/s) with ``dram_kernel``,
``spec_bandwidth_gbs`` and ``sheet``, ``launch_overhead_s`` (event-timed),
``launch_submit_s``, ``launch_round_trip_s``, ``launch_graph_per_kernel_s``,
``l2_bytes``, ``sm_count``, ``gpuwhy`` (version)); after `bench --compute`,
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

Every measured section is recorded the same way (:func:`record`: the newest profile, or a
minimal one, with the measurement merged in by :func:`merge`, saved as a new file) and carried
the same way (:func:`carry_sections`: a memory run that did not measure it keeps the newest).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterable

from .device.uuids import GPU_PREFIX, MIG_PREFIX, with_uuid_prefix
from .errors import GpuwhyError, UsageError
from .profile_sections import SCHEMA, SECTIONS, Section, allreduce_entry  # noqa: F401  (allreduce_entry: public here)
from .version import __version__

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


class _ProfileMethods:
    """What every device profile class does besides holding its fields (see :func:`profile_class`)."""

    #: The sections whose fields the class holds (:mod:`gpuwhy.profile_sections`).
    sections: tuple[Section, ...] = ()

    @property
    def dram_bandwidth(self) -> float | None:
        """Measured DRAM bandwidth in B/s (None when the run had no DRAM row)."""
        return None if self.dram_bandwidth_gbs is None else self.dram_bandwidth_gbs * 1e9

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def check_field(cls, key: str, value) -> None:
        """Raise ValueError naming ``key`` when ``value`` is not what a profile holds there
        (None is always fine; a field without a check takes anything)."""
        if value is None:
            return
        check = next((f.check for s in cls.sections for f in s.fields if f.name == key), None)
        if check is not None:
            check(key, value)

    @classmethod
    def from_dict(cls, d: dict):
        """Build from JSON data; unknown keys are ignored (newer gpuwhy), missing optional ones are None.

        Every figure is checked (each field's ``check`` in :mod:`gpuwhy.profile_sections`): a number
        where a number belongs, finite, above zero and in a range no real GPU leaves (a sign of the
        wrong unit or a typo).

        Raises:
            ValueError: not a JSON object, without ``uuid``, ``name`` or ``date``, or a field
                of the wrong type or out of range (the message names it).
        """
        if not isinstance(d, dict):
            raise ValueError(f"a profile is a JSON object, not a {type(d).__name__}")
        for key in (f.name for s in cls.sections for f in s.fields if f.required):
            if not d.get(key) or not isinstance(d[key], str):
                raise ValueError(f"profile lacks {key!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        for key, value in data.items():
            cls.check_field(key, value)
        return cls(**data)


def profile_class(sections: Iterable[Section]) -> type:
    """A frozen dataclass holding the fields of ``sections`` in their order (the saved JSON's key
    order), with :class:`_ProfileMethods`. :data:`DeviceProfile` is the one of :data:`SECTIONS`."""
    sections = tuple(sections)
    specs: list[Any] = []
    for f in (f for s in sections for f in s.fields):
        specs.append((f.name, f.type) if f.required else (f.name, f.type, dataclasses.field(default=f.default)))
    cls = dataclasses.make_dataclass("DeviceProfile", specs, bases=(_ProfileMethods,), frozen=True,
                                     namespace={"sections": sections, "__module__": __name__})
    cls.__doc__ = ("One bench run's measured ceilings for one GPU: the fields of "
                   + ", ".join(s.name for s in sections) + " (see :mod:`gpuwhy.profile_sections`).")
    return cls


#: One bench run's measured ceilings for one GPU (see the module docstring and :data:`SECTIONS`).
DeviceProfile = profile_class(SECTIONS)


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


def _sheet_name_of(profile, spec_dirs: Iterable[str]) -> str | None:
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


def profile_from_result(result):
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


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _settled(section: Section, values: dict) -> dict:
    """``values`` with an empty object saved as None where the section's field says so."""
    empty_none = {f.name for f in section.fields if f.empty_is_none}
    return {k: (None if k in empty_none and v == {} else v) for k, v in values.items()}


def merge(section: Section, profile, measured, date: str | None = None):
    """``profile`` with ``measured`` merged into ``section``'s fields (pure; nothing is saved).

    The measurement is dated by its own ``date`` attribute, else ``date``, else now (ISO 8601
    UTC); that date stamps the section's date field and raises the profile's ``date`` to at least
    it. What the measurement sets is the section's ``gather`` (:mod:`gpuwhy.profile_sections`);
    when it measured nothing, ``profile`` itself is returned.

    Raises:
        ValueError: the section's ``gather`` refuses the measurement (an all-reduce entry a
            profile cannot hold).
    """
    now = getattr(measured, "date", "") or date or _now()
    got = section.gather(profile, measured, now)
    if not got:
        return profile
    values = _settled(section, {section.date: now, **got})
    return dataclasses.replace(profile, date=max(profile.date, now), **values)


def record(section: Section, uuid: str, measured, folder: Path | None = None, name: str = "GPU",
           sheet: str | None = None) -> Path | None:
    """Merge ``measured`` into the GPU ``uuid``'s newest profile (:func:`merge`) and save the result
    as a new file; a minimal profile (``name``, ``sheet``) is started when the GPU has none.

    Returns the path written, or None when the measurement changed nothing or the cache folder
    is not writable (never raises for that).

    Raises:
        ValueError: as :func:`merge`.
    """
    now = _now()
    base = latest_profile(uuid, folder)
    if base is None:
        base = DeviceProfile(uuid=normalize_uuid(uuid), name=name or "GPU", date=now, sheet=sheet, gpuwhy=__version__)
    newer = merge(section, base, measured, date=now)
    if newer is base:
        return None
    try:
        return save_profile(newer, folder)
    except OSError:
        return None


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


def carry_sections(profile, folder: Path | None = None):
    """``profile`` with every measured section it lacks carried over from the GPU's newest
    earlier profile that has it (a memory-only bench run measures none of them, and must not make
    `classify --measured` forget them). A section is lacking when its key field is None or an
    empty object; it is carried whole, so its date field says when it was measured.
    """
    for section in type(profile).sections:
        if section.key is None or getattr(profile, section.key) not in (None, {}):
            continue
        prev = latest_profile(profile.uuid, folder, need=section.key)
        if prev is not None:
            profile = dataclasses.replace(profile, **_settled(section, {f: getattr(prev, f) for f in section.names}))
    return profile
