"""Theoretical occupancy: how many blocks and warps of a kernel fit on one SM, and what limits them.

Pure arithmetic on a per-architecture limits table (``specs/arch/limits.yaml``);
only :func:`load_arch_limits` reads files. The rules are those of the CUDA
Occupancy Calculator and of the header that implements it, ``cuda_occupancy.h``
(https://docs.nvidia.com/nsight-compute/NsightCompute/index.html#occupancy-calculator,
https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__OCCUPANCY.html); the
limits are the CUDA C++ Programming Guide's "Technical Specifications per Compute
Capability" (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability).

For a block of ``T`` threads, ``R`` registers per thread and ``S`` bytes of shared
memory per block (static plus dynamic), on an SM of architecture ``A``:

- **warps per block** ``W = ceil(T / 32)``; a block always takes whole warps.
- **threads (warp slots)**: ``floor(max_warps_per_sm / W)`` blocks.
- **blocks**: at most ``max_blocks_per_sm`` blocks, however small.
- **registers** are allocated per warp in units of 256: a warp takes
  ``ceil(R x 32 / 256) x 256`` registers. The register file is split into 4
  sub-partitions (one per warp scheduler), each holding
  ``floor((registers_per_sm / 4) / registers_per_warp)`` warps, so the SM holds
  4 times that many warps, i.e. ``floor(that / W)`` blocks. A block whose warps
  need more than ``max_registers_per_block`` (the hardware check rounds ``W`` up
  to a multiple of 4) cannot launch at all.
- **shared memory**: each block takes ``S`` plus the driver's per-block reserve
  (1 KiB from sm_80 on, 0 before), rounded up to the allocation unit (256 B on
  sm_7x, 128 B from sm_80); the SM holds ``floor(carveout / that)`` blocks. The
  carveout is the shared-memory part of the unified L1/shared memory: with no
  preference it is the largest size; a preference smaller than one block is
  raised to the next configurable size (``cudaOccAlignUpShmemSizeVoltaPlus``).
  Above 48 KiB per block a kernel must opt in
  (``cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)``).

Active blocks = the smallest of the four; occupancy = active warps /
max warps per SM. It is the *theoretical* occupancy: the achieved one (Nsight
Compute's ``sm__warps_active``) can be lower when blocks finish unevenly or the
grid is small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ...archs import parse_arch
from ...errors import SpecError, UsageError
from ...units import fmt_num

#: Integer fields of an architecture entry (after merging ``defaults``).
INT_FIELDS = (
    "warp_size",
    "max_threads_per_block",
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "max_registers_per_block",
    "max_registers_per_thread",
    "register_allocation_unit",
    "register_sub_partitions",
    "shared_mem_per_sm_bytes",
    "shared_mem_per_block_bytes",
    "shared_mem_per_block_optin_bytes",
    "shared_mem_allocation_unit_bytes",
    "reserved_shared_mem_per_block_bytes",
)
_ZERO_OK = ("reserved_shared_mem_per_block_bytes",)


def _is_arch_key(key: str) -> bool:
    """True for a limits-table key written exactly ``sm_XX`` (no suffix, no other form)."""
    try:
        return parse_arch(key).base == key
    except UsageError:
        return False


def _names_arch(compute_capability: str, key: str) -> bool:
    """True when ``compute_capability`` (``"9.0"``) is the architecture of the key ``sm_90``."""
    try:
        return parse_arch(compute_capability).base == key
    except UsageError:
        return False


@dataclass(frozen=True)
class ArchLimits:
    """One architecture's occupancy limits (see ``specs/arch/limits.yaml``).

    Counts per SM or per block as named; ``*_bytes`` in bytes; ``carveouts_kib``
    are the configurable shared-memory sizes per SM in KiB (the largest equals
    ``shared_mem_per_sm_bytes``); ``register_allocation_unit`` is registers per
    warp allocation; ``register_sub_partitions`` the register-file partitions
    (warp schedulers) per SM; ``source`` a URL.
    """

    arch: str
    name: str
    compute_capability: str
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_sub_partitions: int
    shared_mem_per_sm_bytes: int
    shared_mem_per_block_bytes: int
    shared_mem_per_block_optin_bytes: int
    shared_mem_allocation_unit_bytes: int
    reserved_shared_mem_per_block_bytes: int
    carveouts_kib: tuple[int, ...]
    source: str
    sources: tuple[tuple[str, str], ...] = ()
    origin: str = "bundled"

    @property
    def max_warps_per_sm(self) -> int:
        """Resident warps per SM: max_threads_per_sm / warp_size."""
        return self.max_threads_per_sm // self.warp_size

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        out = {k: getattr(self, k) for k in ("arch", "name", "compute_capability", *INT_FIELDS)}
        out["max_warps_per_sm"] = self.max_warps_per_sm
        out["carveouts_kib"] = list(self.carveouts_kib)
        out["source"] = self.source
        out["sources"] = dict(self.sources)
        out["origin"] = self.origin
        return out


# ---------------------------------------------------------------------------
# The table: validation (pure) and loading (the one function that reads files)
# ---------------------------------------------------------------------------


def limits_from_data(data: Any, path: str, origin: str = "bundled", base: Mapping[str, ArchLimits] | None = None) -> dict[str, ArchLimits]:
    """Validate one parsed limits file and return its architectures by key (``"sm_90"``).

    ``base`` (already loaded entries) lets a user file change a few fields of a
    bundled architecture: its entry is merged over the bundled one.

    Raises:
        SpecError: naming ``path`` and the field, for a document that is not a
            mapping, an architecture key not of the form ``sm_XX``, a missing or
            non-integer field, a value not above zero, a carveout list that is not
            increasing whole KiB ending at shared_mem_per_sm_bytes, an opt-in
            maximum above the per-SM size, or a source that is not an http(s) URL.
    """
    if not isinstance(data, dict):
        raise SpecError(f"{path}: an architecture-limits file must be a YAML mapping, got {type(data).__name__}")
    unknown = sorted(set(map(str, data)) - {"sources", "defaults", "architectures"})
    if unknown:
        raise SpecError(f"{path}: unknown top-level field {unknown[0]!r}; known: sources, defaults, architectures")
    sources = data.get("sources") or {}
    if not isinstance(sources, dict):
        raise SpecError(f"{path}: field 'sources' must be a mapping of name to URL")
    for k, url in sources.items():
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise SpecError(f"{path}: field 'sources.{k}' must be an http(s) URL, got {url!r}")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise SpecError(f"{path}: field 'defaults' must be a mapping of field to value")
    archs = data.get("architectures")
    if not isinstance(archs, dict) or not archs:
        raise SpecError(f"{path}: field 'architectures' must map sm_XX to its limits")
    out: dict[str, ArchLimits] = {}
    for key, entry in archs.items():
        key = str(key)
        if not _is_arch_key(key):
            raise SpecError(f"{path}: architecture {key!r} must be written sm_XX, e.g. sm_90")
        if not isinstance(entry, dict):
            raise SpecError(f"{path}: architecture {key!r} must be a mapping of its limits")
        merged: dict[str, Any] = {}
        if base and key in base:
            merged.update(base[key].to_dict())
        merged.update(defaults)
        merged.update(entry)
        where = f"{path}: architectures.{key}"
        known = {*INT_FIELDS, "name", "compute_capability", "carveouts_kib", "source"}
        extra = sorted(set(entry) - known)
        if extra:
            raise SpecError(f"{where}: unknown field {extra[0]!r}; known: {', '.join(sorted(known))}")
        for f in (*INT_FIELDS, "name", "compute_capability", "carveouts_kib", "source"):
            if merged.get(f) is None:
                raise SpecError(f"{where}: missing field {f!r}")
        for f in INT_FIELDS:
            v = merged[f]
            if isinstance(v, bool) or not isinstance(v, int):
                raise SpecError(f"{where}: field {f!r} must be a whole number, got {v!r}")
            if v < 0 or (v == 0 and f not in _ZERO_OK):
                raise SpecError(f"{where}: field {f!r} must be greater than zero, got {v!r}")
        cc = merged["compute_capability"]
        if not isinstance(cc, str) or not re.fullmatch(r"\d+\.\d", cc):
            raise SpecError(f"{where}: field 'compute_capability' must be a quoted string such as \"9.0\", got {cc!r}")
        if not _names_arch(cc, key):
            raise SpecError(f"{where}: compute_capability {cc!r} does not match the key {key!r}")
        cos = merged["carveouts_kib"]
        if not isinstance(cos, (list, tuple)) or not cos or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in cos):
            raise SpecError(f"{where}: field 'carveouts_kib' must be a list of whole KiB, got {cos!r}")
        if list(cos) != sorted(set(cos)):
            raise SpecError(f"{where}: field 'carveouts_kib' must be increasing, got {cos!r}")
        if cos[-1] * 1024 != merged["shared_mem_per_sm_bytes"]:
            raise SpecError(
                f"{where}: the largest carveout ({cos[-1]} KiB) must equal shared_mem_per_sm_bytes ({merged['shared_mem_per_sm_bytes']} B)"
            )
        if merged["shared_mem_per_block_optin_bytes"] > merged["shared_mem_per_sm_bytes"]:
            raise SpecError(f"{where}: shared_mem_per_block_optin_bytes is larger than shared_mem_per_sm_bytes")
        if merged["max_threads_per_sm"] % merged["warp_size"]:
            raise SpecError(f"{where}: max_threads_per_sm must be a multiple of warp_size")
        src = merged["source"]
        if not isinstance(src, str) or not src.startswith(("http://", "https://")):
            raise SpecError(f"{where}: field 'source' must be an http(s) URL, got {src!r}")
        name = merged["name"]
        if not isinstance(name, str) or not name.strip():
            raise SpecError(f"{where}: field 'name' must be a non-empty string")
        out[key] = ArchLimits(
            arch=key,
            name=name.strip(),
            compute_capability=cc,
            carveouts_kib=tuple(int(c) for c in cos),
            source=src,
            sources=tuple((str(k), str(v)) for k, v in sources.items()) or (base[key].sources if base and key in base else ()),
            origin=origin,
            **{f: int(merged[f]) for f in INT_FIELDS},
        )
    return out


def load_arch_limits(extra_dirs: Iterable[str] = ()) -> dict[str, ArchLimits]:
    """The architecture table: the bundled ``specs/arch/limits.yaml``, then
    ``arch/limits.yaml`` in each ``GPUWHY_SPECS`` folder and each ``--specs DIR``
    (where present), later entries replacing earlier ones field by field.

    Raises:
        SpecError: a malformed file (names the file and the field).
        UsageError: a spec folder that does not exist.
    """
    from ...specs import load_yaml, spec_dirs

    table: dict[str, ArchLimits] = {}
    for folder, origin in spec_dirs(extra_dirs):
        path = folder / "arch" / "limits.yaml"
        if path.is_file():
            table.update(limits_from_data(load_yaml(path), str(path), origin, base=table))
    if not table:
        raise SpecError("the bundled specs/arch/limits.yaml is missing; reinstall gpuwhy")
    return table


def arch_key(text: str) -> str:
    """The limits-table key ``"sm_90"`` of any form :func:`gpuwhy.archs.parse_arch` reads
    (``sm_90a``, ``90``, ``9.0``, ``compute_90``).

    Raises:
        UsageError: for text that names no SM architecture.
    """
    return parse_arch(text, what="--arch", allow_ptx=True).base


def arch_limits(arch: str, table: Mapping[str, ArchLimits]) -> ArchLimits:
    """The limits of ``arch`` (any form :func:`arch_key` accepts).

    Raises:
        UsageError: an architecture the table lacks (the message lists those it has).
    """
    key = arch_key(arch)
    if key not in table:
        have = ", ".join(sorted(table, key=lambda k: parse_arch(k).cc))
        raise UsageError(f"no occupancy limits for {key}; known: {have} (add it to arch/limits.yaml in a --specs DIR)")
    return table[key]


# ---------------------------------------------------------------------------
# The arithmetic
# ---------------------------------------------------------------------------


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Limit:
    """One resource's cap on resident blocks per SM.

    ``blocks`` is None when the resource sets no limit (no registers or no shared
    memory at all); ``detail`` spells out the arithmetic with the numbers used.
    """

    resource: str
    blocks: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"resource": self.resource, "blocks": self.blocks, "detail": self.detail}


@dataclass(frozen=True)
class Suggestion:
    """A change that raises occupancy: ``kind`` is ``registers``, ``block_size``,
    ``shared_memory`` or ``carveout``; ``value`` the new registers per thread,
    threads per block, bytes per block or KiB; ``blocks``/``occupancy_pct`` what it gives."""

    kind: str
    value: int
    blocks: int
    occupancy_pct: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"kind": self.kind, "value": self.value, "blocks": self.blocks, "occupancy_pct": self.occupancy_pct, "text": self.text}


@dataclass(frozen=True)
class Occupancy:
    """The theoretical occupancy of one launch configuration on one architecture.

    Attributes:
        limits: the architecture's limits.
        block_size: threads per block; registers: per thread; shared_mem_bytes:
            per block as given (static + dynamic, without the reserve).
        carveout_kib: the asked shared-memory carveout (None: no preference).
        warps_per_block: ceil(block_size / warp_size).
        registers_per_warp: allocated per warp (rounded up to the allocation unit).
        registers_per_block: allocated per block (per warp x warps).
        shared_mem_per_block_allocated: S + reserve, rounded up to the allocation unit.
        shared_mem_per_sm: the carveout the shared-memory limit used, bytes.
        by_resource: the four :class:`Limit` s (threads, blocks, registers, shared memory).
        active_blocks, active_warps, active_threads: per SM.
        occupancy_pct: active warps / max warps per SM x 100.
        binding: the resources whose limit equals ``active_blocks``.
        smallest_carveout_kib: the smallest configurable carveout that still
            holds ``active_blocks`` (None when no shared memory is used).
        suggestions: changes that raise occupancy (empty at 100%).
        notes, warnings: sentences for the reader.
        gpu, sm_count: the GPU named (if any) and its SMs, for the wave size.
    """

    limits: ArchLimits
    block_size: int
    registers: int
    shared_mem_bytes: int
    carveout_kib: int | None
    warps_per_block: int
    registers_per_warp: int
    registers_per_block: int
    shared_mem_per_block_allocated: int
    shared_mem_per_sm: int
    by_resource: tuple[Limit, ...]
    active_blocks: int
    active_warps: int
    active_threads: int
    occupancy_pct: float
    binding: tuple[str, ...]
    smallest_carveout_kib: int | None
    suggestions: tuple[Suggestion, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    gpu: str | None = None
    sm_count: int | None = None

    @property
    def blocks_per_wave(self) -> int | None:
        """Blocks the whole GPU holds at once (active blocks x SMs), when the SM count is known."""
        return None if self.sm_count is None else self.active_blocks * self.sm_count

    def to_dict(self) -> dict[str, Any]:
        """One JSON document (bytes, counts and percentages as named)."""
        return {
            "arch": self.limits.arch,
            "gpu": self.gpu,
            "sm_count": self.sm_count,
            "block_size": self.block_size,
            "registers_per_thread": self.registers,
            "shared_mem_bytes": self.shared_mem_bytes,
            "carveout_kib": self.carveout_kib,
            "warps_per_block": self.warps_per_block,
            "registers_per_warp": self.registers_per_warp,
            "registers_per_block": self.registers_per_block,
            "shared_mem_per_block_allocated_bytes": self.shared_mem_per_block_allocated,
            "shared_mem_per_sm_bytes": self.shared_mem_per_sm,
            "limits": [lim.to_dict() for lim in self.by_resource],
            "active_blocks_per_sm": self.active_blocks,
            "active_warps_per_sm": self.active_warps,
            "active_threads_per_sm": self.active_threads,
            "max_warps_per_sm": self.limits.max_warps_per_sm,
            "occupancy_pct": self.occupancy_pct,
            "binding": list(self.binding),
            "smallest_carveout_kib": self.smallest_carveout_kib,
            "blocks_per_wave": self.blocks_per_wave,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "arch_limits": self.limits.to_dict(),
        }


def check_inputs(lim: ArchLimits, block_size: int, registers: int, shared_mem_bytes: int, carveout_kib: int | None = None) -> None:
    """Refuse configurations that no kernel on ``lim`` can have.

    Raises:
        UsageError: a block size below 1 or above the architecture's threads per
            block; registers below 0 or above its registers per thread; shared
            memory below 0 or above its opt-in maximum per block; a carveout that
            is not one of its configurable sizes.
    """
    for name, v in (("--block-size", block_size), ("--registers", registers), ("--shared-mem", shared_mem_bytes)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{name} must be a whole number, got {v!r}")
    if block_size < 1:
        raise UsageError(f"--block-size {block_size} must be at least 1 thread")
    if block_size > lim.max_threads_per_block:
        raise UsageError(
            f"--block-size {block_size} is above {lim.arch}'s limit of {lim.max_threads_per_block} threads per block; use at most {lim.max_threads_per_block}"
        )
    if registers < 0 or registers > lim.max_registers_per_thread:
        raise UsageError(
            f"--registers {registers} is outside 0..{lim.max_registers_per_thread}, the registers per thread {lim.arch} allows"
        )
    if shared_mem_bytes < 0:
        raise UsageError(f"--shared-mem {shared_mem_bytes} must be zero or more bytes")
    if shared_mem_bytes > lim.shared_mem_per_block_optin_bytes:
        raise UsageError(
            f"--shared-mem {shared_mem_bytes} B is above {lim.arch}'s maximum of {lim.shared_mem_per_block_optin_bytes} B "
            f"({lim.shared_mem_per_block_optin_bytes // 1024} KiB) per block, even with opt-in"
        )
    if carveout_kib is not None and carveout_kib not in lim.carveouts_kib:
        raise UsageError(
            f"--carveout {carveout_kib} KiB is not a shared-memory size {lim.arch} offers; use one of {', '.join(map(str, lim.carveouts_kib))} KiB"
        )


def _align_up_carveout(lim: ArchLimits, nbytes: int) -> int:
    """The smallest configurable carveout (bytes) of at least ``nbytes``."""
    for c in lim.carveouts_kib:
        if c * 1024 >= nbytes:
            return c * 1024
    return lim.carveouts_kib[-1] * 1024


def _resource_limits(lim: ArchLimits, block_size: int, registers: int, shared_mem_bytes: int, carveout_kib: int | None):
    """The four per-resource limits and the intermediate allocations (no input checks)."""
    ws = lim.warp_size
    wpb = -(-block_size // ws)
    # Threads: warp slots.
    max_w = lim.max_warps_per_sm
    threads = Limit("threads", max_w // wpb, f"{max_w} warps per SM / {wpb} warp{'s' if wpb != 1 else ''} per block = {max_w // wpb}")
    blocks = Limit("blocks", lim.max_blocks_per_sm, f"at most {lim.max_blocks_per_sm} blocks per SM on {lim.arch}")
    # Registers: per-warp allocation in units, four sub-partitions.
    unit, parts = lim.register_allocation_unit, lim.register_sub_partitions
    raw = registers * ws
    per_warp = _round_up(raw, unit)
    per_block = per_warp * wpb
    assumed = per_warp * _round_up(wpb, parts)
    if per_warp == 0:
        regs = Limit("registers", None, "no registers: no register limit")
    elif per_block > lim.max_registers_per_block or assumed > lim.max_registers_per_block:
        regs = Limit(
            "registers",
            0,
            f"{registers} x {ws} = {raw} registers per warp" + (f" -> {per_warp} (units of {unit})" if per_warp != raw else f" (a multiple of {unit})") + "; "
            f"x {_round_up(wpb, parts) if assumed > per_block else wpb} warps = {max(assumed, per_block)} > {lim.max_registers_per_block} per block: the launch fails",
        )
    else:
        per_part = lim.registers_per_sm // parts
        warps_part = per_part // per_warp
        warps_sm = warps_part * parts
        n = warps_sm // wpb
        rounded = f" -> {per_warp} (units of {unit})" if per_warp != raw else f" (a multiple of {unit})"
        regs = Limit(
            "registers",
            n,
            f"{registers} x {ws} = {raw} registers per warp{rounded}; {per_part} per sub-partition / {per_warp} = {warps_part} warps "
            f"x {parts} sub-partitions = {warps_sm} warps / {wpb} per block = {n}",
        )
    # Shared memory: per-block reserve, allocation unit, carveout.
    res, sunit = lim.reserved_shared_mem_per_block_bytes, lim.shared_mem_allocation_unit_bytes
    need = shared_mem_bytes + res
    alloc = _round_up(need, sunit)
    pref = lim.shared_mem_per_sm_bytes if carveout_kib is None else carveout_kib * 1024
    smem_sm = pref if pref >= alloc else _align_up_carveout(lim, alloc)
    if alloc == 0:
        smem = Limit("shared memory", None, "no shared memory and no reserve: no shared-memory limit")
    else:
        parts_txt = f"{shared_mem_bytes} B" + (f" + {res} B reserved" if res else "")
        rnd = f" -> {alloc} B (units of {sunit} B)" if alloc != need else ""
        which = "" if carveout_kib is None else (" (the --carveout)" if smem_sm == pref else f" (the --carveout raised to fit one block)")
        smem = Limit(
            "shared memory",
            smem_sm // alloc,
            f"{parts_txt} = {need} B per block{rnd}; {smem_sm} B per SM{which} / {alloc} B = {smem_sm // alloc}",
        )
    return (threads, blocks, regs, smem), wpb, per_warp, per_block, alloc, smem_sm


def _active(limits: tuple[Limit, ...]) -> int:
    vals = [lim.blocks for lim in limits if lim.blocks is not None]
    return min(vals)


def active_blocks(lim: ArchLimits, block_size: int, registers: int, shared_mem_bytes: int, carveout_kib: int | None = None) -> int:
    """Resident blocks per SM (the smallest per-resource limit); no input checks."""
    limits, *_ = _resource_limits(lim, block_size, registers, shared_mem_bytes, carveout_kib)
    return _active(limits)


def _blocks(n: int) -> str:
    return f"{n} block{'s' if n != 1 else ''}"


def _pct(lim: ArchLimits, blocks: int, wpb: int) -> float:
    return 100.0 * blocks * wpb / lim.max_warps_per_sm


def occupancy(
    lim: ArchLimits,
    block_size: int,
    registers: int,
    shared_mem_bytes: int = 0,
    carveout_kib: int | None = None,
    gpu: str | None = None,
    sm_count: int | None = None,
) -> Occupancy:
    """Theoretical occupancy of blocks of ``block_size`` threads using ``registers``
    registers per thread and ``shared_mem_bytes`` bytes of shared memory per block
    (static + dynamic) on ``lim``, with suggestions that raise it.

    ``carveout_kib`` is a shared-memory carveout preference (one of
    ``lim.carveouts_kib``; None: no preference, the largest). ``gpu`` and
    ``sm_count`` only label the result and give the blocks per wave.

    Raises:
        UsageError: see :func:`check_inputs`.
    """
    check_inputs(lim, block_size, registers, shared_mem_bytes, carveout_kib)
    limits, wpb, per_warp, per_block, alloc, smem_sm = _resource_limits(lim, block_size, registers, shared_mem_bytes, carveout_kib)
    n = _active(limits)
    binding = tuple(x.resource for x in limits if x.blocks == n)
    pct = _pct(lim, n, wpb)
    notes: list[str] = []
    warnings: list[str] = []
    if block_size % lim.warp_size:
        idle = wpb * lim.warp_size - block_size
        notes.append(
            f"{block_size} threads is not a multiple of {lim.warp_size}: each block takes {wpb} whole warps and leaves {idle} thread slot{'s' if idle != 1 else ''} idle"
        )
    if shared_mem_bytes > lim.shared_mem_per_block_bytes:
        notes.append(
            f"{shared_mem_bytes} B per block is above the {lim.shared_mem_per_block_bytes // 1024} KiB default: the kernel must opt in with "
            "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) (dynamic shared memory)"
        )
    if n == 0:
        warnings.append(
            f"no block of this kernel fits on an {lim.arch} SM ({', '.join(binding)}): the launch fails with too many resources requested"
        )
    smallest = None
    if shared_mem_bytes > 0 and n > 0:
        need = n * alloc
        smallest = next((c for c in lim.carveouts_kib if c * 1024 >= need), lim.carveouts_kib[-1])
        if carveout_kib is None:
            notes.append(
                f"{n} block{'s' if n != 1 else ''} x {alloc} B = {need} B of shared memory per SM: the smallest carveout that holds "
                f"{'them' if n != 1 else 'it'} is {smallest} KiB of {lim.carveouts_kib[-1]} KiB (the rest stays L1 cache)"
            )
    sugg = _suggestions(lim, block_size, registers, shared_mem_bytes, carveout_kib, n, wpb, pct, limits)
    if n == 0:
        pass
    elif pct >= 100.0:
        notes.append("full occupancy: more resident warps are impossible on this SM; if the kernel is slow, look at its roofline (gpuwhy classify)")
    else:
        notes.append(
            "this is theoretical occupancy; more warps hide latency only until the memory or compute roof is reached, "
            "so a kernel at 50% can already be at its roofline (check with gpuwhy classify)"
        )
    return Occupancy(
        limits=lim,
        block_size=block_size,
        registers=registers,
        shared_mem_bytes=shared_mem_bytes,
        carveout_kib=carveout_kib,
        warps_per_block=wpb,
        registers_per_warp=per_warp,
        registers_per_block=per_block,
        shared_mem_per_block_allocated=alloc,
        shared_mem_per_sm=smem_sm,
        by_resource=limits,
        active_blocks=n,
        active_warps=n * wpb,
        active_threads=n * block_size,
        occupancy_pct=pct,
        binding=binding,
        smallest_carveout_kib=smallest,
        suggestions=sugg,
        notes=tuple(notes),
        warnings=tuple(warnings),
        gpu=gpu,
        sm_count=sm_count,
    )


def register_thresholds(lim: ArchLimits, block_size: int, registers: int, shared_mem_bytes: int, carveout_kib: int | None = None) -> list[tuple[int, int, float]]:
    """``(registers per thread, blocks, occupancy %)`` for each register count below
    ``registers`` that raises occupancy: the largest count reaching each new level."""
    wpb = -(-block_size // lim.warp_size)
    best = active_blocks(lim, block_size, registers, shared_mem_bytes, carveout_kib)
    out = []
    for r in range(registers - 1, 0, -1):
        b = active_blocks(lim, block_size, r, shared_mem_bytes, carveout_kib)
        if b > best:
            best = b
            out.append((r, b, _pct(lim, b, wpb)))
    return out


def block_size_options(lim: ArchLimits, registers: int, shared_mem_bytes: int, carveout_kib: int | None = None) -> list[tuple[int, int, float]]:
    """``(threads per block, blocks, occupancy %)`` for every multiple of the warp
    size up to the architecture's limit, registers and shared memory per block unchanged."""
    out = []
    for t in range(lim.warp_size, lim.max_threads_per_block + 1, lim.warp_size):
        b = active_blocks(lim, t, registers, shared_mem_bytes, carveout_kib)
        out.append((t, b, _pct(lim, b, t // lim.warp_size)))
    return out


def _pick_sizes(sizes: list[int], n: int = 5) -> list[int]:
    """Up to ``n`` block sizes to show: powers of two first, then the rest in order."""
    pow2 = [s for s in sizes if s & (s - 1) == 0]
    rest = [s for s in sizes if s not in pow2]
    return sorted((pow2 + rest)[:n])


def _suggestions(lim, block_size, registers, smem, carveout_kib, n, wpb, pct, limits) -> tuple[Suggestion, ...]:
    if pct >= 100.0:
        return ()
    out: list[Suggestion] = []
    # Fewer registers per thread.
    steps = register_thresholds(lim, block_size, registers, smem, carveout_kib)
    if steps:
        shown = [steps[0]] + ([steps[-1]] if len(steps) > 1 else [])
        for r, b, p in shown:
            out.append(
                Suggestion(
                    "registers",
                    r,
                    b,
                    p,
                    f"at most {r} registers per thread: {_blocks(b)}, {p:.1f}% (__launch_bounds__({block_size}, {b}) or -maxrregcount={r}; watch for spills)",
                )
            )
    # Another block size, same registers per thread and shared memory per block.
    opts = [o for o in block_size_options(lim, registers, smem, carveout_kib) if o[2] > pct + 1e-9]
    if opts:
        top = max(p for _, _, p in opts)
        sizes = [t for t, _, p in opts if abs(p - top) < 1e-9]
        pick = _pick_sizes(sizes)
        more = f" (and {len(sizes) - len(pick)} other sizes)" if len(sizes) > len(pick) else ""
        b = next(b for t, b, _ in opts if t == pick[0])
        out.append(
            Suggestion(
                "block_size",
                pick[0],
                b,
                top,
                f"blocks of {', '.join(map(str, pick))} threads{more}: {top:.1f}% (same registers per thread and shared memory per block)",
            )
        )
    # Less shared memory per block.
    by = {x.resource: x.blocks for x in limits}
    if "shared memory" in [x.resource for x in limits if x.blocks == n] and smem > 0:
        others = [v for k, v in by.items() if k != "shared memory" and v is not None]
        cap = min(others) if others else n + 1
        res, unit = lim.reserved_shared_mem_per_block_bytes, lim.shared_mem_allocation_unit_bytes
        smem_sm = lim.shared_mem_per_sm_bytes if carveout_kib is None else carveout_kib * 1024
        for target in sorted({n + 1, cap}):
            if target <= n:
                continue
            allowed = (smem_sm // target) // unit * unit - res
            if allowed < 0:
                continue
            b = active_blocks(lim, block_size, registers, allowed, carveout_kib)
            p = _pct(lim, b, wpb)
            if p > pct + 1e-9 and allowed < smem:
                out.append(
                    Suggestion(
                        "shared_memory",
                        allowed,
                        b,
                        p,
                        f"at most {allowed} B ({fmt_num(allowed / 1024, 4)} KiB) of shared memory per block: {_blocks(b)}, {p:.1f}%",
                    )
                )
    # A larger carveout than the one asked for.
    if carveout_kib is not None and carveout_kib < lim.carveouts_kib[-1]:
        b = active_blocks(lim, block_size, registers, smem, None)
        p = _pct(lim, b, wpb)
        if p > pct + 1e-9:
            out.append(
                Suggestion(
                    "carveout",
                    lim.carveouts_kib[-1],
                    b,
                    p,
                    f"no carveout preference (or {lim.carveouts_kib[-1]} KiB): {_blocks(b)}, {p:.1f}%",
                )
            )
    return tuple(out)


__all__ = [
    "ArchLimits",
    "Limit",
    "Occupancy",
    "Suggestion",
    "active_blocks",
    "arch_limits",
    "block_size_options",
    "check_inputs",
    "limits_from_data",
    "load_arch_limits",
    "occupancy",
    "arch_key",
    "register_thresholds",
]
