"""Which GPUs ``-i/--id`` names, read the way ``nvidia-smi -i`` reads it.

A selection is ``all``, or a comma-separated list (``0,2``) of:

- ``N``: the GPU ``nvidia-smi`` numbers N: NVML's index, which is PCI bus order
  (:data:`NVIDIA_SMI_SOURCE`). It is not always the CUDA ordinal: CUDA numbers the
  fastest GPU first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, and renumbers from 0 the
  GPUs ``CUDA_VISIBLE_DEVICES`` leaves visible (:data:`~gpuwhy.device.visible.CVD_SOURCE`).
  gpuwhy pairs the two by UUID, so ``-i 1`` is the GPU ``nvidia-smi -i 1`` shows,
  whatever CUDA calls it.
- ``cuda:N``: CUDA ordinal N (what PyTorch's ``cuda:N`` means, after ``CUDA_VISIBLE_DEVICES``).
- a UUID, ``GPU-…`` or ``MIG-…``, or a unique prefix of one (``GPU-`` may be left out).
- a PCI bus id: ``00000000:18:00.0`` (nvidia-smi's form), ``0000:18:00.0`` or ``18:00.0``.

:func:`parse_selection` reads the text (pure); :func:`listing` describes every GPU NVML
and CUDA see, hidden ones included; :func:`choose` picks from that listing, with one
line naming what was wrong when nothing fits (a GPU hidden by ``CUDA_VISIBLE_DEVICES``,
an index past the last, a prefix that matches several UUIDs, which it lists).
:func:`resolve` opens NVML and the CUDA driver to do all of it for a command that
measures (bench, check). Without NVML an index cannot be read in nvidia-smi's order:
it is read as the CUDA ordinal, and the selection's note says so.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import NoDeviceError, UsageError
from . import derive
from ..na import is_na
from ..units import fmt_counted
from .uuids import with_uuid_prefix

#: nvidia-smi(1), ``-i, --id=ID``: a 0-based index "in the natural enumeration returned by
#: the driver", a UUID, or a PCI bus id (domain:bus:device.function, hex).
NVIDIA_SMI_SOURCE = "https://manpages.ubuntu.com/manpages/plucky/man1/nvidia-smi.1.html"
#: What the option's help and the errors say an index means.
INDEX_ORDER = "an index is nvidia-smi's (NVML, PCI bus order); cuda:N is a CUDA ordinal"
#: The option's name in messages.
OPTION = "-i"

_INDEX = re.compile(r"^\d+$")
_CUDA = re.compile(r"^cuda:(\d+)$", re.IGNORECASE)
_PCI = re.compile(r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$", re.IGNORECASE)
_HEX = re.compile(r"^[0-9a-f-]+$", re.IGNORECASE)


@dataclass(frozen=True)
class Selector:
    """One entry of a selection: ``kind`` is ``index``, ``cuda``, ``uuid`` or ``pci``.

    ``value`` holds the index (int), the UUID as typed, or the PCI key
    ``(domain, bus, device, function)``; ``text`` is the entry as typed.
    """

    kind: str
    value: Any
    text: str


@dataclass(frozen=True)
class Listed:
    """One device as selection sees it.

    ``nvml_index``: nvidia-smi's index (None without NVML); ``cuda_ordinal``: CUDA's
    (None when ``CUDA_VISIBLE_DEVICES`` hides it); ``uuid`` (``GPU-``/``MIG-``, None when
    unknown); ``pci_bus_id`` as NVML or the driver spells it; ``name``; ``key``: the
    caller's handle on the device (e.g. its position in the caller's own list).
    """

    nvml_index: int | None
    cuda_ordinal: int | None
    uuid: str | None
    pci_bus_id: str | None
    name: str | None
    key: Any = None

    @property
    def visible(self) -> bool:
        """True when CUDA can use the device (``CUDA_VISIBLE_DEVICES`` does not hide it)."""
        return self.cuda_ordinal is not None

    def label(self) -> str:
        """``0 NVIDIA H200 GPU-0a1b… 0000:18:00.0`` (what is known of it), for messages."""
        head = f"{self.nvml_index}" if self.nvml_index is not None else f"cuda:{self.cuda_ordinal}"
        return " ".join(str(p) for p in (head, self.name, self.uuid, self.pci_bus_id) if p)


@dataclass(frozen=True)
class Selection:
    """The devices chosen, in the order asked for, and a note on how an index was read (or '')."""

    devices: tuple[Listed, ...]
    note: str = ""


def pci_key(text: str) -> tuple[int, int, int, int] | None:
    """``(domain, bus, device, function)`` of a PCI bus id (the domain defaults to 0), else None."""
    m = _PCI.match(str(text).strip())
    if not m:
        return None
    dom, bus, dev, fn = m.groups()
    return int(dom or "0", 16), int(bus, 16), int(dev, 16), int(fn, 16)


def parse_selection(text: str | None, option: str = OPTION) -> tuple[Selector, ...] | None:
    """The selectors of ``text``; None for ``all`` (or no text: every device).

    Raises:
        UsageError: an empty entry, ``all`` inside a list, or an entry that is none of
            the forms (the message lists them).
    """
    if text is None:
        return None
    raw = str(text).strip()
    if raw.lower() == "all":
        return None
    if not raw:
        raise UsageError(f"{option} is empty; give an index (0), a list (0,2), a UUID, a PCI bus id or all")
    out: list[Selector] = []
    for part in raw.split(","):
        e = part.strip()
        low = e.lower()
        if not e:
            raise UsageError(f"{option} {raw!r} has an empty entry; separate devices with single commas, e.g. 0,2")
        if low == "all":
            raise UsageError(f"{option} {raw!r}: all stands alone; drop the other entries or drop all")
        if _INDEX.match(e):
            out.append(Selector("index", int(e), e))
        elif _CUDA.match(e):
            out.append(Selector("cuda", int(_CUDA.match(e).group(1)), e))
        elif pci_key(e) is not None:
            out.append(Selector("pci", pci_key(e), e))
        elif low.startswith(("gpu-", "mig-")) or (_HEX.match(e) and len(derive.uuid_key(e)) >= 4):
            out.append(Selector("uuid", e, e))
        else:
            raise UsageError(
                f"{option} {e!r} is not a device: give nvidia-smi's index (0), cuda:N, a UUID or prefix (GPU-0a1b2c3d), "
                f"a PCI bus id (0000:18:00.0) or all"
            )
    return tuple(out)


def _uuid_matches(want: str, uuid: str | None) -> bool:
    if not uuid:
        return False
    w = want.strip().lower()
    if w[:4] in ("gpu-", "mig-") and not uuid.lower().startswith(w[:4]):
        return False
    return derive.uuid_key(uuid).startswith(derive.uuid_key(w))


def _hidden(d: Listed, cvd: str | None, devices: Sequence[Listed], option: str, entry: str) -> UsageError:
    visible = ", ".join(f"{option} {x.nvml_index}" for x in devices if x.visible and x.nvml_index is not None)
    why = f"CUDA_VISIBLE_DEVICES={cvd!r}" if cvd is not None else "CUDA (it is not among the devices the CUDA driver lists)"
    return UsageError(
        f"{option} {entry}: GPU {d.label()} is hidden from CUDA by {why}; "
        f"pick a visible one ({visible or 'none is'}) or change CUDA_VISIBLE_DEVICES"
    )


def _one(sel: Selector, devices: Sequence[Listed], by_nvml: bool, cvd: str | None, option: str) -> list[Listed]:
    """The devices one selector names (several: the MIG devices of a GPU in MIG mode)."""
    if sel.kind == "index" and by_nvml:
        hits = [d for d in devices if d.nvml_index == sel.value]
        if not hits:
            n = len({d.nvml_index for d in devices if d.nvml_index is not None})
            raise UsageError(
                f"{option} {sel.text}: nvidia-smi lists {fmt_counted(n, 'GPU')}, indices 0..{n - 1} "
                f"({INDEX_ORDER}; `gpuwhy probe` lists them)"
            )
    elif sel.kind in ("index", "cuda"):
        hits = [d for d in devices if d.cuda_ordinal == sel.value]
        if not hits:
            n = sum(1 for d in devices if d.visible)
            why = "; without NVML an index is read as the CUDA ordinal" if sel.kind == "index" else ""
            raise UsageError(f"{option} {sel.text}: CUDA sees {fmt_counted(n, 'GPU')}, ordinals 0..{n - 1} (`gpuwhy probe` lists them{why})")
    elif sel.kind == "pci":
        hits = [d for d in devices if d.pci_bus_id and pci_key(d.pci_bus_id) == sel.value]
        if not hits:
            buses = ", ".join(d.pci_bus_id for d in devices if d.pci_bus_id) or "none known"
            raise UsageError(f"{option} {sel.text}: no GPU at that PCI bus id (the GPUs are at {buses})")
    else:
        hits = [d for d in devices if _uuid_matches(sel.value, d.uuid)]
        if not hits:
            uuids = ", ".join(d.uuid for d in devices if d.uuid) or "none known"
            raise UsageError(f"{option} {sel.text!r} matches no GPU's UUID (the UUIDs: {uuids})")
        exact = [d for d in hits if derive.uuid_key(d.uuid or "") == derive.uuid_key(sel.value)]
        if len(hits) > 1 and len(exact) == 1:
            hits = exact
        if len(hits) > 1:
            raise UsageError(
                f"{option} {sel.text!r} is the start of {len(hits)} GPUs' UUIDs ({', '.join(d.uuid for d in hits)}); give more of it"
            )
    shown = [d for d in hits if d.visible]
    if not shown:
        raise _hidden(hits[0], cvd, devices, option, sel.text)
    return shown


def choose(text: str | None, devices: Sequence[Listed], cvd: str | None = None, option: str = OPTION) -> Selection:
    """The visible devices ``text`` names, in the order given (None or ``all``: every visible device).

    ``devices`` is :func:`listing`'s (hidden GPUs included, so a hidden one gets its
    own message); ``cvd`` is ``CUDA_VISIBLE_DEVICES`` for the messages.

    Raises:
        UsageError: a malformed selection, an index past the last, no such UUID or PCI
            bus id, an ambiguous UUID prefix (the matches listed), a device named twice,
            or a GPU that ``CUDA_VISIBLE_DEVICES`` hides.
        NoDeviceError: no visible device at all.
    """
    sels = parse_selection(text, option)
    visible = [d for d in devices if d.visible]
    if not visible:
        raise NoDeviceError(f"CUDA sees no GPU (CUDA_VISIBLE_DEVICES={cvd!r}); unset it or list a device index or UUID")
    by_nvml = any(d.nvml_index is not None for d in devices)
    if sels is None:
        return Selection(tuple(visible))
    chosen: list[Listed] = []
    for s in sels:
        for d in _one(s, devices, by_nvml, cvd, option):
            if any(d is c for c in chosen):
                raise UsageError(f"{option} {text!r} names GPU {d.label()} twice; list each device once")
            chosen.append(d)
    note = ""
    if not by_nvml and any(s.kind == "index" for s in sels):
        note = f"NVML unavailable: {option} N read as the CUDA ordinal (nvidia-smi's order needs NVML)"
    return Selection(tuple(chosen), note)


def only_one(selection: Selection, text: str | None, command: str, option: str = OPTION) -> Listed:
    """The one device of ``selection``, for a command that measures one GPU at a time.

    Raises:
        UsageError: the selection names several devices (the message lists them).
    """
    if len(selection.devices) == 1:
        return selection.devices[0]
    names = "; ".join(d.label() for d in selection.devices)
    raise UsageError(f"{command} runs on one GPU and {option} {text or 'all'} names {len(selection.devices)} ({names}); pick one")


# ---------------------------------------------------------------------------------
# The listing, from the probe's targets (visible.Target) and NVML's GPUs
# ---------------------------------------------------------------------------------


def _s(v: Any) -> str | None:
    return None if v is None or is_na(v) else str(v)


def target_uuid(t) -> str | None:
    """A :class:`~gpuwhy.device.visible.Target`'s UUID (MIG device's, else the GPU's, else the driver's)."""
    if t.mig is not None and not is_na(t.mig.uuid):
        return t.mig.uuid
    if t.gpu is not None and not is_na(t.gpu.uuid):
        return t.gpu.uuid
    if t.drv is not None and not is_na(t.drv.uuid_hex):
        return with_uuid_prefix(t.drv.uuid_hex, mig=t.mig_from_driver)
    return None


def listing(targets: Sequence, gpus: Sequence, nv) -> list[Listed]:
    """Every device for :func:`choose`: each visible target (``key`` = its position in
    ``targets``) and each NVML GPU no target is (hidden from CUDA), in NVML order.

    ``targets`` are :class:`~gpuwhy.device.visible.Target`; ``gpus`` the
    :class:`~gpuwhy.device.visible.NvGpu` list; ``nv`` the open NVML (None without it).
    """
    def bus_of(gpu) -> str | None:
        return _s(nv.pci(gpu.handle).bus_id) if nv is not None and gpu is not None else None

    out: list[Listed] = []
    for k, t in enumerate(targets):
        bus = bus_of(t.gpu) or (_s(t.drv.pci_bus_id) if t.drv is not None else None)
        name = (t.mig.name if t.mig is not None and not is_na(t.mig.name) else None) or (
            _s(nv.name(t.gpu.handle)) if nv is not None and t.gpu is not None else None
        ) or (_s(t.drv.name) if t.drv is not None else None)
        ordinal = None if is_na(t.ordinal) else int(t.ordinal)
        out.append(Listed(t.gpu.index if t.gpu is not None else None, ordinal, target_uuid(t), bus, name, k))
    seen = {t.gpu.index for t in targets if t.gpu is not None}
    for g in gpus:
        if g.index not in seen:
            out.append(Listed(g.index, None, _s(g.uuid), bus_of(g), _s(nv.name(g.handle)) if nv is not None else None))
    return sorted(out, key=lambda d: (d.nvml_index is None, d.nvml_index or 0, d.cuda_ordinal or 0))


# ---------------------------------------------------------------------------------
# What this machine shows: NVML's GPUs, the CUDA driver's devices, paired
# ---------------------------------------------------------------------------------


@dataclass
class Visible:
    """NVML and the CUDA driver opened, and what they show.

    ``nv``/``drv``: the open sessions (None when unavailable, ``nv_na``/``drv_na`` then say
    why); ``gpus``: NVML's GPUs; ``targets``: the devices CUDA sees, each paired with its
    NVML GPU (:func:`~gpuwhy.device.visible.match_driver_devices`); ``listing``: for
    :func:`choose`; ``notes``: how the devices were numbered when not by the driver.
    """

    nv: Any
    nv_na: Any
    drv: Any
    drv_na: Any
    gpus: list
    targets: list
    listing: list[Listed]
    cvd: str | None
    notes: list[str]


def no_device_message(nv_na, drv_na, cvd: str | None, nvml_gpus: int | None, candidates=None) -> str:
    """The one line for "no usable GPU", naming which of the causes it is.

    ``candidates``: the devices NVML shows (:func:`~gpuwhy.device.visible.nvml_candidates`), with
    which a set ``CUDA_VISIBLE_DEVICES`` is explained (:func:`~gpuwhy.device.visible.cvd_no_device_message`).
    """
    from .cuda_version import gpu_packages_missing_here as gpu_packages_missing
    from .visible import cvd_no_device_message

    kinds = {nv_na.kind if nv_na else "ok", drv_na.kind if drv_na else "ok"}
    nvr = nv_na.reason if nv_na else f"NVML sees {fmt_counted(nvml_gpus, 'GPU')}"
    dvr = drv_na.reason if drv_na else "ok"
    if cvd is not None and (nvml_gpus or 0) > 0:
        msg = cvd_no_device_message(cvd, dvr, candidates)
        if msg:
            return msg
    if cvd is not None and drv_na is not None and drv_na.kind == "no_device" and nvml_gpus is None:
        msg = cvd_no_device_message(cvd, dvr, None, nvr)
        if msg:
            return msg
    if nv_na and drv_na and nv_na.kind == "not_installed" and drv_na.kind == "not_installed":
        return str(gpu_packages_missing("nvidia-ml-py and cuda-bindings"))
    if nv_na and drv_na and nv_na.kind == "not_installed" and drv_na.reason == NVML_ONLY:
        return str(gpu_packages_missing("nvidia-ml-py"))  # `check --level 1` reads NVML alone
    if nv_na and drv_na and {nv_na.kind, drv_na.kind} <= {"library_not_found", "not_installed"}:
        return "no NVIDIA driver on this machine: neither libcuda.so (CUDA driver) nor libnvidia-ml.so.1 (NVML) can be loaded; install the NVIDIA driver or run on a GPU machine"
    if "driver_not_loaded" in kinds:
        return f"the NVIDIA kernel driver is not loaded (NVML: {nvr}; CUDA driver: {dvr}); check `nvidia-smi` and `lsmod | grep nvidia`"
    if nvml_gpus == 0 or (drv_na and drv_na.kind == "no_device"):
        return f"no NVIDIA GPU found (NVML: {nvr}; CUDA driver: {dvr})"
    return f"no usable GPU (NVML: {nvr}; CUDA driver: {dvr})"


#: Why the CUDA driver is n/a on an NVML-only read (``visible_targets(cuda=False)``).
NVML_ONLY = "not opened: an NVML-only read (no cuInit, no CUDA context)"


@contextlib.contextmanager
def visible_targets(cuda: bool = True):
    """Open NVML and the CUDA driver, pair their devices and yield a :class:`Visible`;
    NVML is shut down on leaving. ``cuda=False`` leaves the CUDA driver closed (no ``cuInit``:
    the quick health level of `gpuwhy check`, which must not wait on a GPU that hangs), so the
    devices are NVML's with ``CUDA_VISIBLE_DEVICES`` applied here.

    The CUDA driver applies ``CUDA_VISIBLE_DEVICES``; without a working driver the rules
    are applied here (:func:`~gpuwhy.device.visible.resolve_cuda_visible_devices`) to
    NVML's list, and a note says that CUDA numbers them so only with
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``.

    Raises:
        NoDeviceError: ``CUDA_VISIBLE_DEVICES`` hides every GPU (caught before any library
            loads), no driver, the GPU packages missing, the kernel driver not loaded, no GPU.
    """
    from . import nvml as nvml_mod
    from .driver import open_driver
    from .visible import (
        Target, cvd_hides_all_message, enumerate_nvml, match_driver_devices, nvml_candidates,
        resolve_cuda_visible_devices,
    )

    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    msg = cvd_hides_all_message(cvd)
    if msg:
        raise NoDeviceError(msg)
    nv = nvml_mod.open_nvml()
    nv_na = nv if is_na(nv) else None
    nv = None if is_na(nv) else nv
    try:
        from ..na import NA

        drv = open_driver() if cuda else NA(NVML_ONLY, "unavailable")
        drv_na = drv if is_na(drv) else None
        drv = None if is_na(drv) else drv
        gpus: list = []
        if nv is not None:
            e = enumerate_nvml(nv)
            if is_na(e):
                nv_na, nv = e, None
            else:
                gpus = e
        nvml_count = len(gpus) if nv is not None else None
        shown = [c for c, _, _ in nvml_candidates(gpus)] if nv is not None else None
        notes: list[str] = []
        if drv is not None:
            n = drv.count()
            if is_na(n) or n == 0:
                raise NoDeviceError(no_device_message(nv_na, n if is_na(n) else NA("CUDA driver sees 0 devices", "no_device"), cvd, nvml_count, shown))
            targets = match_driver_devices([drv.device(i) for i in range(n)], gpus, nv)
        elif nv is not None and gpus and drv_na.kind != "no_device":
            cands = nvml_candidates(gpus)
            sel = resolve_cuda_visible_devices(cvd, [c for c, _, _ in cands])
            if not sel.indices:
                from .visible import cvd_no_device_message

                raise NoDeviceError(cvd_no_device_message(cvd, drv_na.reason, [c for c, _, _ in cands]))
            targets = [Target(k, None, cands[i][1], cands[i][2]) for k, i in enumerate(sel.indices)]
            if cuda and sel.stopped_at is not None:  # the variable is why CUDA failed: say so first
                from .visible import cvd_no_device_message

                notes.append(cvd_no_device_message(cvd, drv_na.reason, [c for c, _, _ in cands]) or "")
            if cuda:
                notes.append(
                    f"CUDA driver unavailable ({drv_na.reason}): devices numbered by NVML's PCI order with CUDA_VISIBLE_DEVICES applied here, "
                    f"which matches CUDA only with CUDA_DEVICE_ORDER=PCI_BUS_ID"
                )
        else:
            raise NoDeviceError(no_device_message(nv_na, drv_na, cvd, nvml_count, shown))
        if nv is None:
            notes.append(f"NVML unavailable ({nv_na.reason}): health fields are n/a; shape from the CUDA driver")
        yield Visible(nv, nv_na, drv, drv_na, gpus, targets, listing(targets, gpus, nv), cvd, notes)
    finally:
        if nv is not None:
            nv.close()


def resolve(text: str | None) -> Selection:
    """Open NVML and the CUDA driver and resolve ``text`` to devices with their CUDA ordinals
    (None: the first visible GPU in nvidia-smi's order; ``all``: every visible one).

    Raises:
        NoDeviceError: no driver, no GPU, or ``CUDA_VISIBLE_DEVICES`` hiding every GPU
            (one line saying which; the missing packages' pip line when it is that).
        UsageError: as :func:`choose`.
    """
    with visible_targets() as vt:
        sel = choose(text, vt.listing, vt.cvd)
    return sel if text is not None else Selection(sel.devices[:1], sel.note)
