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
    from ..api.probe import ProbeRequest, probe, topology
    from ..render.output import Format, show

    req = ProbeRequest(device=device, spec_dirs=tuple(specs or ()), list_only=list_only, topo=topo)
    if topo:
        from ..render.topo_view import render_topology

        show("probe-topo", topology(req), Format(json_out), render_topology)
        return
    from ..render.probe_view import render_probe, render_probe_list

    show("probe", probe(req), Format(json_out), render_probe_list if list_only else render_probe)
