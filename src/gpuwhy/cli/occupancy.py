"""`gpuwhy occupancy`: blocks and warps per SM for a launch configuration, the binding limit, and how to raise it."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt


@app.command("occupancy")
def occupancy_cmd(
    block_size: Optional[str] = typer.Option(None, "--block-size", metavar="THREADS", help="Threads per block (1 to 1024)."),
    registers: Optional[str] = typer.Option(None, "--registers", metavar="R", help="Registers per thread (ptxas -v, or Nsight Compute's 'Registers Per Thread')."),
    shared_mem: str = typer.Option(
        "0", "--shared-mem", metavar="S", help="Shared memory per block, static + dynamic, in bytes: 49152, 48KiB (KiB = 1024 B; K = 1000)."
    ),
    gpu: GpuOpt = None,
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XX", help="Architecture instead of a GPU: sm_70, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_120."),
    device: DeviceOpt = None,
    carveout: Optional[str] = typer.Option(
        None, "--carveout", metavar="KIB", help="Shared-memory carveout preference in KiB (e.g. 64 or 100; the sizes depend on the architecture). Default: none, the largest."
    ),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Theoretical occupancy: active blocks and warps per SM, the limit that binds, and the block sizes or register counts that raise it.

    Exit 1 (after the output) when no block fits on an SM: that launch fails."""
    from ..api.occupancy import OccupancyOptions, launch_failure, occupancy
    from ..render.compare_view import render_occupancy
    from ..render.output import Format, show

    req = OccupancyOptions(block_size, registers, shared_mem, gpu, arch, device, carveout, tuple(specs or ())).parse()
    result = occupancy(req)
    show("occupancy", result, Format(json_out), render_occupancy)
    failure = launch_failure(result)
    if failure is not None:
        raise failure
