"""Before a measurement: open the device and take NVML's reading of it while no gpuwhy
context exists yet (so any process NVML lists then is someone else's)."""

from __future__ import annotations

from ..device.sample import HealthSample, sample


def open_and_sample(device) -> tuple[int, str | None, "HealthSample | None"]:
    """Initialise the CUDA driver, resolve ``device`` (index or UUID; None: the first GPU)
    and take the NVML sample before gpuwhy creates a CUDA context on it (so any process
    NVML lists then is someone else). Returns ``(cuda index, UUID or None, sample or None)``.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: ``device`` names no visible GPU.
    """
    from ..engine.context import device_identity, init_driver, resolve_device

    index = resolve_device(device, init_driver())
    uuid = device_identity(index)[0]
    return index, uuid, sample(uuid, index)
