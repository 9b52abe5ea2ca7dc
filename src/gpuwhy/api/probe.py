"""The probe use cases: what each visible GPU is (`gpuwhy probe`, :func:`gpuwhy.probe`) and how
the GPUs are connected (`gpuwhy probe --topo`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeRequest:
    """What to probe: ``device`` as ``-i`` takes it (None: every GPU; with ``topo``, all),
    ``spec_dirs`` for the sheets (folders; one folder may be given as a string), ``list_only``
    one line per GPU (no derived peaks, health or software), ``topo`` the links between the
    GPUs instead.

    Raises:
        UsageError: (when made) ``topo`` with ``list_only`` or ``spec_dirs``, which it does not use.
    """

    device: str | None = None
    spec_dirs: tuple[str, ...] = ()
    list_only: bool = False
    topo: bool = False

    def __post_init__(self):
        if self.topo:
            from .options import refuse_unused

            refuse_unused("with --topo (it reads links, not the spec sheets)", list_=self.list_only, specs=self.spec_dirs)


def probe(req: ProbeRequest):
    """The :class:`~gpuwhy.device.probe.ProbeReport` of the GPUs ``req.device`` names
    (:func:`gpuwhy.device.probe.probe_devices`).

    Raises:
        NoDeviceError: no driver, NVML or GPU, or CUDA_VISIBLE_DEVICES hides every GPU.
        UsageError: ``-i`` names no visible GPU.
    """
    from ..device.probe import probe_devices

    return probe_devices(device=req.device, spec_dirs=req.spec_dirs, full=not req.list_only)


def topology(req: ProbeRequest):
    """How the GPUs ``req.device`` names (default: all) are connected
    (:func:`gpuwhy.device.topology.read_topology`).

    Raises:
        NoDeviceError: no driver, NVML or GPU. UsageError: ``-i`` names no visible GPU.
    """
    from ..device.topology import read_topology

    return read_topology("all" if req.device is None else req.device)
