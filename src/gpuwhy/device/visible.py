"""Which GPUs CUDA sees, in CUDA's order, and which NVML device each one is.

:func:`resolve_cuda_visible_devices` applies ``CUDA_VISIBLE_DEVICES`` the way the
CUDA runtime does (for when no CUDA driver can do it); :func:`enumerate_nvml`
lists NVML's GPUs and MIG devices; :func:`match_driver_devices` pairs each CUDA
device with its NVML device by UUID (else by PCI bus id). Which of them ``-i`` names
is :mod:`gpuwhy.device.select`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import derive
from ..na import NA, is_na
from .nvml import MigDevice
from .uuids import with_uuid_prefix

#: CUDA's documented rules for CUDA_VISIBLE_DEVICES (indices, UUIDs and prefixes, MIG UUIDs).
CVD_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"

# ---------------------------------------------------------------------------------
# CUDA_VISIBLE_DEVICES
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A device CUDA could enumerate: a whole GPU (``GPU-…``) or a MIG device (``MIG-…``)."""

    uuid: str
    parent_uuid: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None

    @property
    def is_mig(self) -> bool:
        """True for a MIG device."""
        return self.uuid.lower().startswith("mig-")


@dataclass(frozen=True)
class VisibleSelection:
    """Result of applying ``CUDA_VISIBLE_DEVICES`` to a candidate list.

    ``indices`` are positions in the candidate list, in CUDA's order;
    ``stopped_at``/``why`` name the entry at which the list stopped, if any.
    """

    indices: tuple[int, ...]
    stopped_at: str | None = None
    why: str = ""


_INDEX_RE = re.compile(r"^\d+$")


def _entry_syntax_ok(entry: str) -> bool:
    e = entry.strip().lower()
    return bool(_INDEX_RE.match(e)) or e.startswith("gpu-") or e.startswith("mig-")


def resolve_cuda_visible_devices(value: str | None, candidates: Sequence[Candidate]) -> VisibleSelection:
    """Apply ``CUDA_VISIBLE_DEVICES`` the way the CUDA runtime does (source: :data:`CVD_SOURCE`).

    ``value`` None: every candidate, in order. Otherwise a comma-separated list of
    indices into ``candidates``, ``GPU-`` UUIDs or unique prefixes of them, ``MIG-``
    UUIDs or prefixes, or legacy ``MIG-GPU-<uuid>/<gi>/<ci>``; devices appear in
    the order listed. The list stops at the first entry that names no device (a
    negative or out-of-range index, an unknown or ambiguous UUID, a repeat, an
    empty entry): ``0,2,-1,1`` makes 0 and 2 visible; ``-1`` or an empty value
    hides everything.
    """
    if value is None:
        return VisibleSelection(tuple(range(len(candidates))))
    chosen: list[int] = []
    for raw in value.split(","):
        e = raw.strip()
        idx, why = _resolve_entry(e, candidates)
        if idx is None:
            return VisibleSelection(tuple(chosen), e, why)
        if idx in chosen:
            return VisibleSelection(tuple(chosen), e, "names a device already listed")
        chosen.append(idx)
    return VisibleSelection(tuple(chosen))


def _resolve_entry(e: str, candidates: Sequence[Candidate]) -> tuple[int | None, str]:
    low = e.lower()
    if not e:
        return None, "is empty"
    if _INDEX_RE.match(e):
        i = int(e)
        if i >= len(candidates):
            last = len(candidates) - 1
            return None, f"is past the last device index ({last})" if last >= 0 else "names a device and there is none"
        return i, ""
    if low.startswith("mig-gpu-"):
        parts = low[len("mig-"):].split("/")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return None, "is not MIG-GPU-<uuid>/<gpu instance>/<compute instance>"
        hits = [
            i
            for i, c in enumerate(candidates)
            if c.is_mig
            and c.parent_uuid
            and c.parent_uuid.lower().startswith(parts[0])
            and c.gpu_instance_id == int(parts[1])
            and c.compute_instance_id == int(parts[2])
        ]
    elif low.startswith("gpu-") or low.startswith("mig-"):
        hits = [i for i, c in enumerate(candidates) if c.uuid.lower().startswith(low)]
    else:
        return None, "is neither a device index nor a GPU-/MIG- UUID"
    if not hits:
        return None, "matches no device's UUID"
    if len(hits) > 1:
        return None, f"matches {len(hits)} devices' UUIDs (give more digits)"
    return hits[0], ""


def cvd_hides_all_message(value: str | None) -> str | None:
    """The one-line reason when ``CUDA_VISIBLE_DEVICES`` hides every GPU by its syntax alone, else None.

    Catches an empty value and a first entry that can name no device (``-1``,
    ``none``, ``,0``), before any library is loaded.
    """
    if value is None:
        return None
    if not value.strip():
        return "CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU from CUDA; unset it or list a device index or UUID"
    first = value.split(",")[0].strip()
    if not _entry_syntax_ok(first):
        return (
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from CUDA (the list stops at its first entry {first!r}, "
            f"which names no device); unset it or list a device index or UUID"
        )
    return None


#: What to do about a CUDA_VISIBLE_DEVICES that leaves CUDA no GPU: the one closing words.
CVD_FIX = "unset it, or list each GPU once by index or UUID (`nvidia-smi -L`)"


def _machine_gpus(candidates: Sequence[Candidate]) -> str:
    """``1 GPU: 0 = GPU-8932f937-…`` : the devices CUDA could number (at most four named)."""
    n = len(candidates)
    named = ", ".join(f"{i} = {c.uuid}" for i, c in enumerate(candidates[:4]))
    more = f", and {n - 4} more" if n > 4 else ""
    return f"{n} {'GPU' if n == 1 else 'GPUs'}: {named}{more}"


def cvd_no_device_message(value: str | None, driver_reason: str, candidates: Sequence[Candidate] | None,
                          nvml_reason: str = "") -> str | None:
    """The one line for "CUDA sees no GPU" when ``CUDA_VISIBLE_DEVICES`` is set, else None.

    The one answer every command that opens the GPU gives (``probe``, ``bench``, ``check``,
    ``measure``, through :func:`explain_no_device` or :mod:`gpuwhy.device.select`): it names the
    variable, its value and what it hides or repeats, read against ``candidates`` (the
    devices NVML shows, in CUDA's default order; None when NVML cannot list them, then
    ``nvml_reason`` says why). ``driver_reason`` is what the CUDA driver said (``cuInit:
    CUDA_ERROR_NO_DEVICE``). None also when NVML lists no GPU at all (the variable is not
    the cause). Rules: :data:`CVD_SOURCE`.
    """
    if value is None:
        return None
    early = cvd_hides_all_message(value)
    if early:
        return early
    if candidates is None:
        why = f" ({nvml_reason})" if nvml_reason else ""
        return (f"the CUDA driver sees no GPU ({driver_reason}) with CUDA_VISIBLE_DEVICES={value!r}, which may hide every GPU "
                f"(NVML cannot list this machine's GPUs to say which{why}); {CVD_FIX}")
    if not candidates:
        return None
    sel = resolve_cuda_visible_devices(value, candidates)
    here = f"this machine has {_machine_gpus(candidates)}"
    if sel.stopped_at is None:
        return (f"the CUDA driver sees no GPU ({driver_reason}) although CUDA_VISIBLE_DEVICES={value!r} names "
                f"{len(sel.indices)} of the GPUs ({here}); unset it to check, and check `nvidia-smi`")
    entry = sel.stopped_at
    if sel.why == "names a device already listed":
        idx, _ = _resolve_entry(entry, candidates)
        what = f"repeats GPU {idx} ({candidates[idx].uuid})" if idx is not None else f"repeats the entry {entry!r}"
        return (f"CUDA_VISIBLE_DEVICES={value!r} {what}, and CUDA refuses a list that names a device twice "
                f"({driver_reason}); {here}; {CVD_FIX}")
    return (f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from CUDA: its entry {entry!r} {sel.why} "
            f"({driver_reason}); {here}; {CVD_FIX}")


def explain_no_device(value: str | None, driver_reason: str) -> str | None:
    """:func:`cvd_no_device_message` with the candidates read from NVML here (for a caller that
    opened only the CUDA driver, such as the measurement engine); never raises."""
    if value is None:
        return None
    early = cvd_hides_all_message(value)
    if early:
        return early
    from . import nvml as nvml_mod

    cands: list[Candidate] | None = None
    reason = ""
    try:
        nv = nvml_mod.open_nvml()
    except Exception as exc:  # NVML is only asked to explain; its failure must not hide the answer
        nv, reason = None, f"{type(exc).__name__}: {exc}"
    if is_na(nv):
        reason, nv = nv.reason, None
    if nv is not None:
        try:
            gpus = enumerate_nvml(nv)
            if is_na(gpus):
                reason = gpus.reason
            else:
                cands = [c for c, _, _ in nvml_candidates(gpus)]
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            try:
                nv.close()
            except Exception:
                pass
    return cvd_no_device_message(value, driver_reason, cands, reason)


# ---------------------------------------------------------------------------------
# Enumeration and matching
# ---------------------------------------------------------------------------------


@dataclass
class NvGpu:
    """An NVML GPU: its NVML index and handle, its UUID and, with MIG on, its MIG devices."""

    index: int
    handle: Any
    uuid: str | NA
    mig_enabled: bool
    migs: list[MigDevice]


@dataclass
class Target:
    """One device to report: its CUDA ordinal, CUDA driver device, NVML GPU and MIG device (each None when unknown)."""

    ordinal: int | NA
    drv: Any  # DriverDevice | None
    gpu: NvGpu | None
    mig: MigDevice | None
    mig_from_driver: bool = False  # a MIG slice CUDA sees whose NVML MIG device was not identified
    notes: list[str] = field(default_factory=list)


def enumerate_nvml(nv) -> list[NvGpu] | NA:
    """NVML's GPUs in NVML index order, with their MIG devices; an NA when NVML cannot count them."""
    n = nv.device_count()
    if is_na(n):
        return n
    gpus: list[NvGpu] = []
    for i in range(n):
        h = nv.handle(i)
        if is_na(h):
            continue
        mode = nv.mig_mode(h)
        enabled = (not is_na(mode)) and mode[0]
        migs = nv.mig_devices(h) if enabled else []
        gpus.append(NvGpu(i, h, nv.uuid(h), enabled, [] if is_na(migs) else migs))
    return gpus


def nvml_candidates(gpus: list[NvGpu]) -> list[tuple[Candidate, NvGpu, MigDevice | None]]:
    """What CUDA would enumerate from NVML's view: each whole GPU, or each MIG device of a GPU in MIG mode."""
    out = []
    for g in gpus:
        guuid = g.uuid if not is_na(g.uuid) else with_uuid_prefix(f"unknown-{g.index}")
        if g.mig_enabled:
            for m in g.migs:
                muuid = m.uuid if not is_na(m.uuid) else with_uuid_prefix(f"unknown-{g.index}", mig=True)
                gi = m.gpu_instance_id if isinstance(m.gpu_instance_id, int) else None
                ci = m.compute_instance_id if isinstance(m.compute_instance_id, int) else None
                out.append((Candidate(muuid, guuid, gi, ci), g, m))
        else:
            out.append((Candidate(guuid), g, None))
    return out


def _bus_key(bus: Any) -> tuple[int, ...] | None:
    if is_na(bus) or not isinstance(bus, str):
        return None
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)$", bus.strip())
    return tuple(int(x, 16) for x in m.groups()) if m else None


def match_driver_devices(devs: list, gpus: list[NvGpu], nv) -> list[Target]:
    """Pair each CUDA driver device with its NVML GPU (and MIG device) by UUID, else by a unique PCI bus id.

    ``nv`` is the open NVML (None without it); the notes of each target say how
    it was matched when it was not by UUID.
    """
    by_key: dict[str, tuple[NvGpu, MigDevice | None]] = {}
    for g in gpus:
        if not is_na(g.uuid):
            by_key[derive.uuid_key(g.uuid)] = (g, None)
        for m in g.migs:
            if not is_na(m.uuid):
                by_key[derive.uuid_key(m.uuid)] = (g, m)
    targets: list[Target] = []
    for d in devs:
        t = Target(d.ordinal, d, None, None)
        hit = by_key.get(derive.uuid_key(d.uuid_hex)) if not is_na(d.uuid_hex) else None
        if hit is None and nv is not None:
            bk = _bus_key(d.pci_bus_id)
            same_bus = [g for g in gpus if bk is not None and _bus_key(nv.pci(g.handle).bus_id) == bk]
            if len(same_bus) == 1:
                hit = (same_bus[0], None)
                t.notes.append("matched to NVML by PCI bus id (the CUDA UUID matched none)")
        if hit is not None:
            t.gpu, t.mig = hit
            if t.mig is None and t.gpu.mig_enabled:
                t.mig = _guess_mig(d, t.gpu)
                t.mig_from_driver = t.mig is None
        elif nv is not None:
            t.notes.append("no NVML device has this CUDA device's UUID: NVML fields are n/a")
        if t.mig is None and not t.mig_from_driver and derive.is_mig_name(d.name):
            t.mig_from_driver = True  # NVML cannot say; the driver's name does
        targets.append(t)
    return targets


def _guess_mig(d, g: NvGpu) -> MigDevice | None:
    """CUDA reported the parent's UUID for a MIG slice: pick the MIG device of the same size, if unique."""
    if not isinstance(d.sm_count, int):
        return None
    same = [m for m in g.migs if isinstance(m.sm_count, int) and m.sm_count == d.sm_count]
    if len(same) > 1 and not is_na(d.total_memory_bytes):
        same = [m for m in same if isinstance(m.memory_bytes, int) and abs(m.memory_bytes - d.total_memory_bytes) <= 0.02 * m.memory_bytes]
    return same[0] if len(same) == 1 else None
