"""NVML's UUID prefix, written in one place (:func:`with_uuid_prefix`).

NVML, nvidia-smi and ``CUDA_VISIBLE_DEVICES`` write a GPU's UUID ``GPU-8932f937-d72c-4106-c12f-20bd9faed9f6``
and a MIG device's ``MIG-...``; the CUDA driver and cuda.core report the hex alone. Comparing
UUIDs whatever their form is :func:`gpuwhy.device.derive.uuid_key`.
"""

from __future__ import annotations

#: The prefixes NVML writes: a GPU's, a MIG device's.
GPU_PREFIX, MIG_PREFIX = "GPU-", "MIG-"


def with_uuid_prefix(uuid: str, mig: bool = False) -> str:
    """``uuid`` with NVML's prefix: as given when it starts with ``GPU-`` or ``MIG-`` (in any
    case), else with ``MIG-`` (``mig``: a MIG device's UUID) or ``GPU-`` put before it.

    ``with_uuid_prefix("8932f937-d72c") == "GPU-8932f937-d72c"``;
    ``with_uuid_prefix("5f1c0c2e-1111", mig=True) == "MIG-5f1c0c2e-1111"``.
    """
    u = str(uuid)
    if u[:4].upper() in (GPU_PREFIX, MIG_PREFIX):
        return u
    return (MIG_PREFIX if mig else GPU_PREFIX) + u
