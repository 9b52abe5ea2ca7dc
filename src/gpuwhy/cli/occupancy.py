"""`gpuwhy occupancy`: blocks and warps per SM for a launch configuration, the binding limit, and how to raise it."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt, noted


def _whole(text: str, what: str, allow_zero: bool) -> int:
    from ..errors import UsageError
    from ..units import parse_quantity

    v = parse_quantity(text, what, allow_zero=allow_zero)
    if v != int(v):
        raise UsageError(f"{what} {text!r} must be a whole number")
    return int(v)


def _device_arch(device: str, specs) -> tuple[str, str | None, int | None]:
    """(arch, gpu name, SM count) of the GPU ``device`` names, through gpuwhy.device.probe."""
    from ..errors import NoDeviceError, UsageError

    try:
        from ..device.probe import probe_devices
    except ImportError:
        raise UsageError("--device needs gpuwhy's device probe, which this version lacks; use --gpu NAME or --arch sm_XX") from None
    try:
        report = probe_devices(device, specs, full=False)
    except NoDeviceError as exc:
        raise NoDeviceError(f"{exc}; without a GPU use --gpu NAME or --arch sm_XX") from None
    if len(report.devices) > 1:
        raise UsageError(f"occupancy takes one GPU and -i {device} names {len(report.devices)}; pick one")
    d = report.devices[0]
    cc = d.identity.compute_capability
    if not isinstance(cc, str):
        raise UsageError(f"the probe could not read device {device}'s compute capability; use --gpu NAME or --arch sm_XX")
    name = d.identity.name if isinstance(d.identity.name, str) else None
    sms = d.shape.sm_count if isinstance(d.shape.sm_count, int) else None
    return cc, name, sms


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
    from ..errors import UsageError
    from ..device.probe import gpu_sheet
    from ..model.kernels.occupancy import arch_key, arch_limits, load_arch_limits, occupancy

    chosen = [n for n, v in (("--gpu", gpu), ("--arch", arch), ("--device", device)) if v is not None]
    if len(chosen) > 1:
        raise UsageError(f"give one of --gpu, --arch or --device, not {' and '.join(chosen)}")
    if block_size is None or registers is None:
        raise UsageError("occupancy needs --block-size T and --registers R (and --shared-mem S if the kernel uses shared memory), e.g. --block-size 256 --registers 64")
    t = _whole(block_size, "--block-size", allow_zero=False)
    r = _whole(registers, "--registers", allow_zero=True)
    s = _whole(shared_mem, "--shared-mem", allow_zero=True)
    c = None
    if carveout is not None and carveout.strip().lower() not in ("default", "none"):
        c = _whole(carveout.strip().lower().removesuffix("kib"), "--carveout", allow_zero=True)

    gpu_name = sm_count = None
    spec_dirs = specs or ()
    if arch is not None:
        key = arch_key(arch)
    elif device is not None:
        cc, gpu_name, sm_count = _device_arch(device, spec_dirs)
        key = arch_key(cc)
    else:
        try:
            sheet = noted(gpu_sheet(gpu, spec_dirs)).sheet
        except UsageError:
            if gpu is not None:
                raise
            raise UsageError("no --gpu, --arch or --device given and no GPU to probe; pass --gpu NAME or --arch sm_XX") from None
        if sheet.arch is None:
            raise UsageError(
                f"the {sheet.name} sheet's architecture {sheet.compute_capability!r} is not an NVIDIA compute capability; occupancy knows sm_70 to sm_120"
            )
        key = arch_key(sheet.compute_capability)
        gpu_name, sm_count = sheet.name, sheet.sm_count
    lim = arch_limits(key, load_arch_limits(spec_dirs))
    result = occupancy(lim, t, r, s, c, gpu=gpu_name, sm_count=sm_count)
    if json_out:
        from ..render.jsonout import emit

        emit("occupancy", result)
    else:
        from ..render.compare_view import render_occupancy

        render_occupancy(result)
    if result.active_blocks == 0:
        from ..errors import CheckFailed

        raise CheckFailed(f"no block fits on an {lim.arch} SM ({', '.join(result.binding)} limit): this launch fails "
                          "with too many resources requested (the output says what makes it fit)")
