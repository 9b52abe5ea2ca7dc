"""The occupancy use case: `gpuwhy occupancy` and :func:`gpuwhy.occupancy`. Blocks and warps per
SM of a launch configuration, the limit that binds, and what raises it."""

from __future__ import annotations

from dataclasses import dataclass


def _whole(text: str, what: str, allow_zero: bool) -> int:
    from ..errors import UsageError
    from ..units import parse_quantity

    v = parse_quantity(text, what, allow_zero=allow_zero)
    if v != int(v):
        raise UsageError(f"{what} {text!r} must be a whole number")
    return int(v)


@dataclass(frozen=True)
class OccupancyOptions:
    """What `gpuwhy occupancy` was given, as typed: the launch (``block_size`` threads,
    ``registers`` per thread, ``shared_mem`` bytes per block, ``carveout`` KiB or
    ``default``/``none``) and one of ``gpu`` (a sheet), ``arch`` (``sm_90``) or ``device``
    (``-i``); with none, this machine's GPU."""

    block_size: str | None = None
    registers: str | None = None
    shared_mem: str = "0"
    gpu: str | None = None
    arch: str | None = None
    device: str | None = None
    carveout: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def parse(self) -> "OccupancyRequest":
        """The options checked and parsed (whole numbers; ``--carveout`` may end in ``KiB``).

        Raises:
            UsageError: more than one of ``--gpu``, ``--arch``, ``--device``; no ``--block-size``
                or ``--registers``; a count that is not a whole number (or zero where it must not be).
        """
        from ..errors import UsageError

        chosen = [n for n, v in (("--gpu", self.gpu), ("--arch", self.arch), ("--device", self.device)) if v is not None]
        if len(chosen) > 1:
            raise UsageError(f"give one of --gpu, --arch or --device, not {' and '.join(chosen)}")
        if self.block_size is None or self.registers is None:
            raise UsageError("occupancy needs --block-size T and --registers R (and --shared-mem S if the kernel uses "
                             "shared memory), e.g. --block-size 256 --registers 64")
        t = _whole(self.block_size, "--block-size", allow_zero=False)
        r = _whole(self.registers, "--registers", allow_zero=True)
        s = _whole(self.shared_mem, "--shared-mem", allow_zero=True)
        c = None
        if self.carveout is not None and self.carveout.strip().lower() not in ("default", "none"):
            c = _whole(self.carveout.strip().lower().removesuffix("kib"), "--carveout", allow_zero=True)
        return OccupancyRequest(t, r, s, c, self.gpu, self.arch, self.device, self.spec_dirs)


@dataclass(frozen=True)
class OccupancyRequest:
    """A launch to judge: ``block_size`` threads per block, ``registers`` per thread,
    ``shared_mem`` bytes per block, ``carveout`` KiB of shared memory preferred (None: the
    largest); on ``gpu``'s sheet, ``arch``, the GPU ``device`` names, or (none of them) this
    machine's GPU.

    Raises:
        UsageError: (when made) more than one of ``gpu``, ``arch`` and ``device``; a count that is
            not a whole number, or a block size below one.
    """

    block_size: int
    registers: int
    shared_mem: int = 0
    carveout: int | None = None
    gpu: str | None = None
    arch: str | None = None
    device: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def __post_init__(self):
        from ..errors import UsageError

        if sum(v is not None for v in (self.gpu, self.arch, self.device)) > 1:
            raise UsageError("occupancy takes one of gpu, arch or device")
        for name in ("block_size", "registers", "shared_mem", "carveout"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < (1 if name == "block_size" else 0)):
                raise UsageError(f"occupancy's {name} must be a whole number >= {1 if name == 'block_size' else 0}, got {v!r}")


def occupancy(req: OccupancyRequest):
    """The :class:`~gpuwhy.model.kernels.occupancy.Occupancy` of ``req``'s launch.

    Raises:
        UsageError: an unknown architecture or GPU; a sheet whose architecture is no NVIDIA
            compute capability; no GPU named and none to probe; ``-i`` naming several GPUs.
        NoDeviceError: ``device`` given and no GPU.
    """
    from ..model.kernels.occupancy import arch_key, arch_limits, load_arch_limits
    from ..model.kernels.occupancy import occupancy as model_occupancy

    gpu_name = sm_count = None
    if req.arch is not None:
        key = arch_key(req.arch)
    elif req.device is not None:
        cc, gpu_name, sm_count = _device_arch(req.device, req.spec_dirs)
        key = arch_key(cc)
    else:
        key, gpu_name, sm_count = _sheet_arch(req.gpu, req.spec_dirs)
    lim = arch_limits(key, load_arch_limits(req.spec_dirs))
    return model_occupancy(lim, req.block_size, req.registers, req.shared_mem, req.carveout, gpu=gpu_name, sm_count=sm_count)


def launch_failure(result):
    """The :class:`~gpuwhy.errors.CheckFailed` (exit 1, after the output) when no block of ``result``
    fits on an SM, so the launch fails; else None."""
    if result.active_blocks != 0:
        return None
    from ..errors import CheckFailed

    return CheckFailed(f"no block fits on an {result.limits.arch} SM ({', '.join(result.binding)} limit): this launch fails "
                       "with too many resources requested (the output says what makes it fit)")


def _sheet_arch(gpu, spec_dirs) -> tuple[str, str, int]:
    """(architecture key, sheet name, SM count) of ``gpu``'s sheet, else this machine's GPU's."""
    from ..errors import UsageError
    from ..device.probe import gpu_sheet
    from ..model.kernels.occupancy import arch_key
    from .sheets import noted

    try:
        sheet = noted(gpu_sheet(gpu, tuple(spec_dirs or ()))).sheet
    except UsageError:
        if gpu is not None:
            raise
        raise UsageError("no --gpu, --arch or --device given and no GPU to probe; pass --gpu NAME or --arch sm_XX") from None
    if sheet.arch is None:
        raise UsageError(f"the {sheet.name} sheet's architecture {sheet.compute_capability!r} is not an NVIDIA compute "
                         "capability; occupancy knows sm_70 to sm_120")
    return arch_key(sheet.compute_capability), sheet.name, sheet.sm_count


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


def occupancy_values(block_size, registers, shared_mem=0, *, gpu=None, arch=None, carveout=None, spec_dirs=()):
    """:func:`gpuwhy.occupancy`: the launch's numbers on ``gpu``'s sheet or ``arch`` (one of them).

    Raises:
        UsageError: neither or both of gpu and arch, an unknown architecture, impossible inputs.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..model.kernels.occupancy import arch_key, arch_limits, load_arch_limits
    from ..model.kernels.occupancy import occupancy as model_occupancy

    if (gpu is None) == (arch is None):
        raise UsageError("gpuwhy.occupancy needs one of gpu='H200' or arch='sm_90'")
    name = sms = None
    if gpu is not None:
        sheet = sheet_for(gpu, spec_dirs=tuple(spec_dirs)).sheet
        key, name, sms = arch_key(sheet.compute_capability), sheet.name, sheet.sm_count
    else:
        key = arch_key(arch)
    lim = arch_limits(key, load_arch_limits(tuple(spec_dirs)))
    return model_occupancy(lim, int(block_size), int(registers), int(shared_mem), None if carveout is None else int(carveout),
                           gpu=name, sm_count=sms)
