"""`gpuwhy probe`: what each visible GPU is, from NVML and the CUDA driver."""

from __future__ import annotations

import typer

from .app import app
from .common import DeviceOpt, JsonOpt, SpecsOpt


@app.command("probe")
def probe_cmd(
    device: DeviceOpt = None,
    list_only: bool = typer.Option(False, "--list", "-L", help="One line per GPU (nvidia-smi -L): index, CUDA ordinal, name, UUID, PCI bus id, sheet."),
    topo: bool = typer.Option(False, "--topo", help="How the GPUs are connected (as nvidia-smi topo -m): NVLink (links, version, rate) or the PCIe path of each pair, each GPU's NUMA node and CPU affinity; -i all by default."),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Identity, shape, derived peaks vs the spec sheet, health and software of every visible GPU
    (or those -i names), in nvidia-smi's order.

    Exit code 3 with one line when there is no driver, no NVML, no GPU, or
    CUDA_VISIBLE_DEVICES hides every GPU.
    """
    if topo:
        from .common import refuse_unused

        refuse_unused("with --topo (it reads links, not the spec sheets)", list_=list_only, specs=specs)
        from ..device.topology import read_topology

        topology = read_topology("all" if device is None else device)
        if json_out:
            from ..render.jsonout import emit

            emit("probe-topo", topology)
        else:
            from ..render.topo_view import render_topology

            render_topology(topology)
        return
    from ..device.probe import probe_devices

    report = probe_devices(device=device, spec_dirs=specs or (), full=not list_only)
    if json_out:
        from ..render.jsonout import emit

        emit("probe", report)
        return
    from ..render.probe_view import render_probe, render_probe_list

    if list_only:
        render_probe_list(report)
    else:
        render_probe(report)
