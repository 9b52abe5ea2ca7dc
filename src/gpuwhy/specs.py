"""GPU spec sheets: the dataclass, the YAML loader, the validator and name matching.

A spec sheet is one YAML file per product (``specs/*.yaml``, format in
docs/spec-sheets.md). Sheets are searched in this order, later ones overriding
earlier ones of the same ``name``: the bundled sheets, each folder in the
``GPUWHY_SPECS`` environment variable (``os.pathsep``-separated), then each
``--specs DIR`` given on the command line.

All peaks are dense (never sparse). Units: bandwidth in GB/s (1e9 B/s), peaks in
TFLOP/s (1e12 FLOP/s; int8 in TOPS), sizes in GB (1e9 B) or MiB as named.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

from .archs import Arch, parse_arch
from .errors import SpecError, UsageError
from .resources import bundled_dir
from .units import fmt_g, fmt_num

#: Precisions a sheet may list under ``peak_tflops``. fp16/bf16/tf32/fp8/int8/fp4
#: are tensor-core rates with FP32 accumulate; ``*_nontensor`` are CUDA-core rates.
PRECISIONS = (
    "fp64",
    "fp64_tensor",
    "fp32",
    "tf32",
    "fp16",
    "bf16",
    "fp8",
    "int8",
    "fp4",
    "fp16_nontensor",
    "bf16_nontensor",
)
#: Precisions that run on tensor cores (so ``--no-tensor-cores`` changes their ceiling).
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8", "fp4")

_REQUIRED = {
    "name": str,
    "vendor": str,
    "architecture": str,
    "compute_capability": str,
    "nvml_names": list,
    "sm_count": int,
    "boost_clock_mhz": (int, float),
    "memory_size_gb": (int, float),
    "memory_type": str,
    "memory_bandwidth_gbs": (int, float),
    "l2_cache_mib": (int, float),
    "board_power_w": (int, float),
    "peak_tflops": dict,
    "sources": dict,
}
_OPTIONAL = {
    "aliases": list,
    "pci_device_ids": list,
    "fp32_lanes_per_sm": int,
    "memory_bus_width_bits": int,
    "l2_bandwidth_gbs": (int, float),
    "notes": list,
}
# Plausibility bounds that catch a figure given in the wrong unit
# (B/s instead of GB/s, FLOP/s instead of TFLOP/s, bytes instead of MiB).
_MAGNITUDE = {
    "memory_bandwidth_gbs": (1.0, 1e5, "GB/s (1e9 B/s)"),
    "boost_clock_mhz": (100.0, 1e4, "MHz"),
    "memory_size_gb": (0.1, 1e5, "GB (1e9 B)"),
    "l2_cache_mib": (0.01, 1e4, "MiB"),
    "l2_bandwidth_gbs": (1.0, 1e6, "GB/s (1e9 B/s)"),
    "board_power_w": (1.0, 1e5, "W"),
    "sm_count": (1, 1e4, "multiprocessors"),
}
_PEAK_RANGE = (0.001, 1e5)
_NOISE_WORDS = {"nvidia", "geforce", "tesla", "amd", "instinct", "quadro"}
_PCI_RE = re.compile(r"^0x[0-9a-fA-F]{4}$")


@dataclass(frozen=True)
class Sheet:
    """One product's spec sheet, validated.

    Attributes use the units in their names: ``memory_bandwidth_gbs`` is GB/s
    (1e9 B/s), ``peak_tflops`` maps a precision to dense TFLOP/s (TOPS for int8),
    ``l2_cache_mib`` is MiB (2**20 B), ``memory_size_gb`` is GB (1e9 B).
    ``sources`` maps a field name (or ``datasheet``, the default) to a URL.
    """

    name: str
    vendor: str
    architecture: str
    compute_capability: str
    nvml_names: tuple[str, ...]
    sm_count: int
    boost_clock_mhz: float
    memory_size_gb: float
    memory_type: str
    memory_bandwidth_gbs: float
    l2_cache_mib: float
    board_power_w: float
    peak_tflops: dict[str, float]
    sources: dict[str, str]
    aliases: tuple[str, ...] = ()
    pci_device_ids: tuple[str, ...] = ()
    fp32_lanes_per_sm: int | None = None
    memory_bus_width_bits: int | None = None
    #: Measured L2 read bandwidth, GB/s, only where a public measurement exists (its
    #: URL in ``sources.l2_bandwidth_gbs``; datasheets print none). None: unknown.
    l2_bandwidth_gbs: float | None = None
    notes: tuple[str, ...] = ()
    path: str = ""
    origin: str = "bundled"

    @property
    def origin_words(self) -> str:
        """Where the sheet came from, for a sentence or a ``(...)``: ``bundled spec sheet``, ``spec
        sheet from GPUWHY_SPECS``, ``spec sheet from --specs`` (no parentheses of its own, so
        ``H100 SXM (bundled spec sheet)`` never nests them)."""
        return "bundled spec sheet" if self.origin == "bundled" else f"spec sheet from {self.origin}"

    @cached_property
    def arch(self) -> Arch | None:
        """``compute_capability`` parsed by :func:`gpuwhy.archs.parse_arch` (``"9.0"`` is sm_90);
        None when it names no NVIDIA architecture (AMD's ``"gfx942"``)."""
        try:
            return parse_arch(self.compute_capability)
        except UsageError:
            return None

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """DRAM bandwidth in B/s."""
        return self.memory_bandwidth_gbs * 1e9

    @property
    def l2_bytes(self) -> int:
        """L2 cache size in bytes."""
        return int(round(self.l2_cache_mib * 2**20))

    def peak_flops(self, precision: str) -> float:
        """Dense peak of ``precision`` in FLOP/s.

        Raises:
            UsageError: if the sheet lists no peak for ``precision`` (the message
                names the precisions it has).
        """
        if precision not in self.peak_tflops:
            have = ", ".join(self.peak_tflops)
            raise UsageError(f"the {self.name} sheet has no {precision} peak; it has: {have}")
        return self.peak_tflops[precision] * 1e12

    def ridge_point(self, precision: str) -> float:
        """Ridge point of ``precision`` in FLOP/byte: peak FLOP/s / DRAM B/s."""
        return self.peak_flops(precision) / self.bandwidth_bytes_per_s

    def ridge_points(self) -> dict[str, float]:
        """Ridge point (FLOP/byte) for every precision the sheet lists."""
        return {p: self.ridge_point(p) for p in self.peak_tflops}

    def source_for(self, field_name: str) -> str:
        """URL of the source of ``field_name`` (e.g. ``peak_tflops.fp16``), falling
        back to the field's group (``peak_tflops``) and then to ``datasheet``."""
        key = field_name
        while key:
            if key in self.sources:
                return self.sources[key]
            key = key.rpartition(".")[0]
        return self.sources["datasheet"]

    def all_names(self) -> tuple[str, ...]:
        """The marketing name, the aliases and the NVML names."""
        return (self.name, *self.aliases, *self.nvml_names)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for ``--json``: the sheet's fields plus derived ridge points."""
        return {
            "name": self.name,
            "vendor": self.vendor,
            "architecture": self.architecture,
            "compute_capability": self.compute_capability,
            "aliases": list(self.aliases),
            "nvml_names": list(self.nvml_names),
            "pci_device_ids": list(self.pci_device_ids),
            "sm_count": self.sm_count,
            "fp32_lanes_per_sm": self.fp32_lanes_per_sm,
            "boost_clock_mhz": self.boost_clock_mhz,
            "memory_size_gb": self.memory_size_gb,
            "memory_type": self.memory_type,
            "memory_bus_width_bits": self.memory_bus_width_bits,
            "memory_bandwidth_gbs": self.memory_bandwidth_gbs,
            "l2_cache_mib": self.l2_cache_mib,
            "l2_bandwidth_gbs": self.l2_bandwidth_gbs,
            "board_power_w": self.board_power_w,
            "peak_tflops": dict(self.peak_tflops),
            "ridge_points": self.ridge_points(),
            "sources": dict(self.sources),
            "notes": list(self.notes),
            "path": self.path,
            "origin": self.origin,
        }


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate_sheet(data: Any, path: str, origin: str = "bundled") -> Sheet:
    """Check one parsed YAML document and build a :class:`Sheet`.

    Raises:
        SpecError: naming ``path`` and the offending field, for a document that is
            not a mapping, a missing required field, an unknown field, a value of
            the wrong type, a negative/zero/implausible number (a sign of a wrong
            unit), an unknown precision, or a figure without a source URL.
    """
    where = path
    if not isinstance(data, dict):
        raise SpecError(f"{where}: a spec sheet must be a YAML mapping of fields, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        known = ", ".join(sorted({*_REQUIRED, *_OPTIONAL}))
        raise SpecError(f"{where}: unknown field {unknown[0]!r}; known fields: {known}")
    for key, typ in _REQUIRED.items():
        if key not in data or data[key] is None:
            raise SpecError(f"{where}: missing required field {key!r}")
    for key, typ in {**_REQUIRED, **_OPTIONAL}.items():
        if key not in data or data[key] is None:
            continue
        value = data[key]
        if key == "compute_capability" and _is_number(value):
            raise SpecError(f"{where}: field 'compute_capability' must be a quoted string such as \"9.0\"")
        ok = _is_number(value) if typ in ((int, float),) else isinstance(value, typ) and not isinstance(value, bool)
        if typ is int and isinstance(value, float) and value.is_integer():
            ok = True
        if not ok:
            want = "a number" if typ in ((int, float), int) else typ.__name__
            hint = " (give a plain number in the unit the field name says)" if isinstance(value, str) and want == "a number" else ""
            raise SpecError(f"{where}: field {key!r} must be {want}, got {value!r}{hint}")
        if key in _MAGNITUDE:
            lo, hi, unit = _MAGNITUDE[key]
            if value <= 0:
                raise SpecError(f"{where}: field {key!r} must be greater than zero, got {value!r}")
            if not (lo <= value <= hi):
                raise SpecError(f"{where}: field {key!r} = {value!r} is implausible for {unit}; check the unit")
    for key in ("fp32_lanes_per_sm", "memory_bus_width_bits"):
        if key in data and data[key] is not None and data[key] <= 0:
            raise SpecError(f"{where}: field {key!r} must be greater than zero, got {data[key]!r}")
    for key in ("nvml_names", "aliases", "notes", "pci_device_ids"):
        for item in data.get(key) or []:
            if not isinstance(item, str) or not item.strip():
                raise SpecError(f"{where}: field {key!r} must be a list of non-empty strings, got {item!r}")
    for pci in data.get("pci_device_ids") or []:
        if not _PCI_RE.match(pci):
            raise SpecError(f"{where}: field 'pci_device_ids' entry {pci!r} must look like 0x2335")
    peaks = data["peak_tflops"]
    if not peaks:
        raise SpecError(f"{where}: field 'peak_tflops' lists no precision; fp32 at least is required")
    for prec, value in peaks.items():
        if prec not in PRECISIONS:
            raise SpecError(f"{where}: field 'peak_tflops' has unknown precision {prec!r}; known: {', '.join(PRECISIONS)}")
        if not _is_number(value) or value <= 0 or math.isnan(value):
            raise SpecError(f"{where}: field 'peak_tflops.{prec}' must be a number greater than zero, got {value!r}")
        if not (_PEAK_RANGE[0] <= value <= _PEAK_RANGE[1]):
            raise SpecError(f"{where}: field 'peak_tflops.{prec}' = {value!r} is implausible for TFLOP/s; check the unit")
    if data.get("l2_bandwidth_gbs") is not None and "l2_bandwidth_gbs" not in data["sources"]:
        raise SpecError(f"{where}: field 'l2_bandwidth_gbs' needs its own source URL in 'sources.l2_bandwidth_gbs' "
                        "(datasheets print no L2 bandwidth: name the measurement)")
    if data.get("l2_bandwidth_gbs") is not None and data["l2_bandwidth_gbs"] <= data["memory_bandwidth_gbs"]:
        raise SpecError(f"{where}: field 'l2_bandwidth_gbs' = {data['l2_bandwidth_gbs']!r} is not above the DRAM "
                        f"bandwidth ({data['memory_bandwidth_gbs']!r} GB/s); an L2 figure at or below DRAM is a DRAM figure")
    if "fp32" not in peaks:
        raise SpecError(f"{where}: field 'peak_tflops' must list fp32")
    sources = data["sources"]
    if "datasheet" not in sources:
        raise SpecError(f"{where}: field 'sources' must have a 'datasheet' URL, the default source of every figure")
    valid_source_keys = set(_REQUIRED) | set(_OPTIONAL) | {"datasheet"} | {f"peak_tflops.{p}" for p in peaks}
    for key, url in sources.items():
        if key not in valid_source_keys:
            raise SpecError(f"{where}: field 'sources' has key {key!r}, which names no field of the sheet")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise SpecError(f"{where}: field 'sources.{key}' must be an http(s) URL, got {url!r}")
    # An NVML name may equal the marketing name (old drivers report "GeForce RTX 3090"),
    # but a name may not repeat within name+aliases, nor within nvml_names.
    for group in ([data["name"], *(data.get("aliases") or [])], list(data["nvml_names"])):
        lowered = [" ".join(n.split()).lower() for n in group]
        if len(set(lowered)) != len(lowered):
            dup = next(n for n in lowered if lowered.count(n) > 1)
            raise SpecError(f"{where}: name {dup!r} appears twice in name/aliases or in nvml_names")
    return Sheet(
        name=data["name"].strip(),
        vendor=data["vendor"],
        architecture=data["architecture"],
        compute_capability=data["compute_capability"],
        nvml_names=tuple(data["nvml_names"]),
        sm_count=int(data["sm_count"]),
        boost_clock_mhz=float(data["boost_clock_mhz"]),
        memory_size_gb=float(data["memory_size_gb"]),
        memory_type=data["memory_type"],
        memory_bandwidth_gbs=float(data["memory_bandwidth_gbs"]),
        l2_cache_mib=float(data["l2_cache_mib"]),
        board_power_w=float(data["board_power_w"]),
        peak_tflops={k: float(v) for k, v in peaks.items()},
        sources=dict(sources),
        aliases=tuple(data.get("aliases") or ()),
        pci_device_ids=tuple(p.lower() for p in data.get("pci_device_ids") or ()),
        fp32_lanes_per_sm=int(data["fp32_lanes_per_sm"]) if data.get("fp32_lanes_per_sm") else None,
        memory_bus_width_bits=int(data["memory_bus_width_bits"]) if data.get("memory_bus_width_bits") else None,
        l2_bandwidth_gbs=float(data["l2_bandwidth_gbs"]) if data.get("l2_bandwidth_gbs") is not None else None,
        notes=tuple(data.get("notes") or ()),
        path=path,
        origin=origin,
    )


#: Largest YAML file read (spec sheets, policies, model shapes are a few KiB): 16 MiB.
YAML_MAX_BYTES = 16 * 1024**2


def load_yaml(path: Path) -> Any:
    """Parse one YAML file with the fastest safe loader available.

    Raises:
        SpecError: if the file cannot be read (not a regular file, over
            :data:`YAML_MAX_BYTES`, binary) or is not valid YAML (names the file and the line).
    """
    import yaml

    from .inputs import read_input

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = read_input(path, "a YAML file", max_bytes=YAML_MAX_BYTES, gunzip=False, expect="text").decode("utf-8")
    except UsageError as exc:
        raise SpecError(str(exc)) from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not UTF-8 text") from None
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{path}: malformed YAML{at}: {problem}") from None


def spec_dirs(extra: Iterable[str | os.PathLike] = ()) -> list[tuple[Path, str]]:
    """The folders searched for sheets, lowest priority first, each with its origin label.

    Raises:
        UsageError: if a folder named in ``GPUWHY_SPECS`` or ``extra`` does not exist.
    """
    dirs: list[tuple[Path, str]] = [(bundled_dir("specs"), "bundled")]
    env = os.environ.get("GPUWHY_SPECS", "")
    for part in [p for p in env.split(os.pathsep) if p]:
        dirs.append((Path(part), "GPUWHY_SPECS"))
    for part in extra:
        dirs.append((Path(part), "--specs"))
    from .inputs import check_input_folder

    for d, origin in dirs[1:]:
        check_input_folder(d, f"a folder of spec-sheet *.yaml files ({origin})")
    return dirs


class SpecLibrary:
    """All sheets visible to this run, with name matching.

    Build with :func:`load_library`. Iterating yields the sheets sorted by name.
    """

    def __init__(self, sheets: list[Sheet]):
        self.sheets = sorted(sheets, key=lambda s: s.name.lower())

    def __iter__(self):
        return iter(self.sheets)

    def __len__(self) -> int:
        return len(self.sheets)

    def match(self, query: str) -> Sheet:
        """The sheet a user means by ``query`` (see :meth:`resolve`, which also says when a
        family name picked a variant)."""
        return self.resolve(query)[0]

    def resolve(self, query: str) -> tuple[Sheet, str | None]:
        """Find the sheet a user means by ``query``, and a note when a family name picked one variant.

        Case-insensitive. Forms people type are read as the names they stand for:
        ``rtx4090`` as ``RTX 4090`` (letters and digits glued), ``H200 141GB`` and
        ``H100 80GB`` (a memory size picks among the sheets whose memory it is, and may
        be left out of the name). An exact marketing name, alias or NVML name wins;
        otherwise every word of the query must appear as a whole word in one of a
        sheet's names ("B300" does not match inside "GB300"), and the sheet whose
        name has the fewest extra words wins; when several tie and the query (less
        its memory size) is one sheet's alias, that sheet wins. Whenever the name
        stands for a family of sheets (``H100``: SXM, PCIe, NVL), the note says which
        variant it picked and names the others.

        Raises:
            UsageError: for an empty, unknown or ambiguous name; the message lists
                the closest sheets.
        """
        q = " ".join(query.split()).lower()
        if not q:
            raise UsageError("empty GPU name; pass --gpu with a name from `gpuwhy specs list`")
        exact = [s for s in self.sheets if q in (n.lower() for n in s.all_names())]
        if len(exact) > 1:
            raise UsageError(f"GPU name {query!r} is ambiguous: it names {self._list(exact)}; use the full name")
        qt, mem_gb = _query_tokens(q)
        if exact:
            return exact[0], self._family_note(query, qt, exact[0], mem_gb)
        if not qt:
            raise UsageError(f"unknown GPU {query!r}; {self._closest(query)}")
        best: dict[str, tuple[int, Sheet]] = {}
        for s in self.sheets:
            if mem_gb is not None and not _memory_fits(s, mem_gb):
                continue
            extras = [len(_tokens(n) - _memory_tokens(mem_gb)) - len(qt) for n in s.all_names() if qt <= _tokens(n)]
            if extras:
                best[s.name] = (min(extras), s)
        if not best:
            raise UsageError(f"unknown GPU {query!r}; {self._closest(query)}")
        fewest = min(e for e, _ in best.values())
        winners = [s for e, s in best.values() if e == fewest]
        if len(winners) > 1:
            by_alias = [s for s in winners if any(_tokens(a) == qt for a in s.aliases)]
            if len(by_alias) != 1:
                raise UsageError(f"GPU name {query!r} is ambiguous: it matches {self._list(winners)}; use the full name")
            winners = by_alias
        return winners[0], self._family_note(query, qt, winners[0], mem_gb)

    def _family_note(self, query: str, qt: frozenset, sheet: Sheet, mem_gb: float | None = None) -> str | None:
        """The note for a name that stands for several sheets (``H100`` -> H100 SXM, and H100 PCIe, H100 NVL)."""
        if not qt or _tokens(sheet.name) == qt:
            return None
        others = [s.name for s in self.sheets if s is not sheet and any(qt <= _tokens(n) for n in s.all_names())
                  and (mem_gb is None or _memory_fits(s, mem_gb))]
        if not others:
            return None
        return (f"{query!r} is the {sheet.name} sheet ({fmt_g(sheet.memory_size_gb)} GB); other {query} sheets: "
                f"{', '.join(others)} (name one to use it)")

    def closest(self, query: str, n: int = 3) -> list[str]:
        """Up to ``n`` sheet names closest to ``query`` (for error messages)."""
        by_lower = {}
        for s in self.sheets:
            for nm in s.all_names():
                by_lower.setdefault(nm.lower(), s.name)
        hits = difflib.get_close_matches(query.lower(), list(by_lower), n=n * 3, cutoff=0.5)
        out: list[str] = []
        for h in hits:
            if by_lower[h] not in out:
                out.append(by_lower[h])
        qt = _tokens(query.lower())
        for s in self.sheets:
            if len(out) >= n:
                break
            if s.name not in out and any(qt & _tokens(nm.lower()) for nm in s.all_names()):
                out.append(s.name)
        return out[:n]

    def _closest(self, query: str) -> str:
        near = self.closest(query)
        if near:
            return "closest sheets: " + ", ".join(repr(n) for n in near) + " (see `gpuwhy specs list`)"
        return "see `gpuwhy specs list` for the known GPUs, or add a sheet with --specs DIR"

    @staticmethod
    def _list(sheets: list[Sheet]) -> str:
        return ", ".join(repr(s.name) for s in sheets)


#: Letters glued to a model number (``rtx4090``, ``sxm4``: three letters or more, so ``h100``,
#: ``gh200`` and ``mi300x`` stay one word), and words glued after one (``h100sxm``, ``141gb``).
_GLUED = (re.compile(r"(?<=[a-z]{3})(?=\d)"), re.compile(r"(?<=\d)(?=[a-z]{2,})"))


def _tokens(name: str) -> frozenset[str]:
    text = name.lower()
    for pat in _GLUED:
        text = pat.sub(" ", text)
    return frozenset(t for t in re.split(r"[^0-9a-z.]+", text) if t and t not in _NOISE_WORDS and t != ".")


def _query_tokens(q: str) -> tuple[frozenset[str], float | None]:
    """The words of a GPU name query, with a memory size (``141GB``, ``80 GB``) taken out as a number."""
    text = q.lower()
    for pat in _GLUED:
        text = pat.sub(" ", text)
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*gb\b", text)
    mem = float(m.group(1)) if m else None
    if m:
        text = text[: m.start()] + " " + text[m.end():]
    return _tokens(text), mem


def _memory_tokens(mem_gb: float | None) -> frozenset[str]:
    """The words a memory size adds to a sheet name (``80GB`` -> {"80", "gb"})."""
    return frozenset() if mem_gb is None else frozenset({_plain(mem_gb), "gb"})


def _memory_fits(sheet: Sheet, mem_gb: float) -> bool:
    """True when ``mem_gb`` (as typed) is the sheet's memory: within 3%, or written in one of its names."""
    if abs(sheet.memory_size_gb - mem_gb) <= 0.03 * mem_gb:
        return True
    return any(f"{_plain(mem_gb)}gb" in n.lower().replace(" ", "") for n in sheet.all_names())


def _plain(x: float) -> str:
    """``80`` for 80.0, ``94.5`` for 94.5: a number as it stands in a sheet name (machine text)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def load_library(extra_dirs: Iterable[str | os.PathLike] = ()) -> SpecLibrary:
    """Load and validate every sheet: bundled, then ``GPUWHY_SPECS``, then ``extra_dirs``.

    A later sheet with the same ``name`` (case-insensitive) replaces an earlier one.
    Within one layer, two sheets that share a name, alias or NVML name are an error.

    Raises:
        SpecError: for a malformed sheet or a duplicate name (names the files).
        UsageError: for a spec folder that does not exist.
    """
    by_name: dict[str, Sheet] = {}
    for folder, origin in spec_dirs(extra_dirs):
        layer: dict[str, Sheet] = {}
        for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
            sheet = validate_sheet(load_yaml(path), str(path), origin)
            for other in layer.values():
                clash = _name_clash(sheet, other)
                if clash:
                    raise SpecError(f"{path}: name {clash!r} is already used by {other.path}")
            layer[sheet.name.lower()] = sheet
        # Names claimed by this layer's sheets displace other sheets' aliases/NVML names below.
        for key, sheet in layer.items():
            by_name[key] = sheet
        _check_cross_layer(by_name)
    return SpecLibrary(list(by_name.values()))


def _name_clash(a: Sheet, b: Sheet) -> str | None:
    """The first name two different sheets both claim, or None.

    Marketing names and aliases must be unique. An NVML name may be shared when
    both sheets list PCI device ids and those differ: NVML shortens some names
    (e.g. two form factors reported alike), and the PCI id tells them apart.
    """
    norm = lambda n: " ".join(n.split()).lower()  # noqa: E731
    a_names = {norm(n): n for n in (a.name, *a.aliases)}
    b_names = {norm(n): n for n in (b.name, *b.aliases)}
    a_all = {**a_names, **{norm(n): n for n in a.nvml_names}}
    b_all = {**b_names, **{norm(n): n for n in b.nvml_names}}
    for key in a_names.keys() & b_all.keys() | b_names.keys() & a_all.keys():
        return a_all.get(key) or b_all[key]
    shared = {norm(n) for n in a.nvml_names} & {norm(n) for n in b.nvml_names}
    if shared and not (a.pci_device_ids and b.pci_device_ids and not set(a.pci_device_ids) & set(b.pci_device_ids)):
        return a_all[sorted(shared)[0]]
    return None


#: Sheet origins, lowest priority (searched first) first.
_LAYERS = ("bundled", "GPUWHY_SPECS", "--specs")


def _check_cross_layer(by_name: dict[str, Sheet]) -> None:
    """Raise for two sheets of different layers that claim one name; the message names
    the sheet of the later layer first (the one that took a name already in use)."""
    sheets = list(by_name.values())
    for i, sheet in enumerate(sheets):
        for other in sheets[i + 1 :]:
            nm = _name_clash(sheet, other)
            if nm:
                newer, older = sorted((sheet, other), key=lambda s: _LAYERS.index(s.origin), reverse=True)
                raise SpecError(
                    f"{newer.path}: name {nm!r} is already used by the sheet {older.name!r} ({older.path}); "
                    f"give your sheet the same `name` to override it, or another name"
                )


_CACHE: dict[tuple, SpecLibrary] = {}


def library(extra_dirs: Iterable[str | os.PathLike] = ()) -> SpecLibrary:
    """Cached :func:`load_library` for this process (keyed by the folders and ``GPUWHY_SPECS``).

    ``extra_dirs`` is a list of folders; one folder given as a string or path counts as one.
    """
    if isinstance(extra_dirs, (str, os.PathLike)):
        extra_dirs = (extra_dirs,)
    key = (tuple(str(d) for d in extra_dirs), os.environ.get("GPUWHY_SPECS", ""))
    if key not in _CACHE:
        _CACHE[key] = load_library(extra_dirs)
    return _CACHE[key]
