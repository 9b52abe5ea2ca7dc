"""The host link of a GPU as NVML reports it: PCIe generation and width, and their theoretical rate."""

from __future__ import annotations

from ..na import is_na


def host_link(index: int = 0) -> tuple[float, str] | None:
    """``(GB/s one way, how it was read)`` of GPU ``index``'s PCIe link at its maximum generation and
    width (1e9 B/s, :func:`gpuwhy.model.multi_gpu.links.pcie_theoretical_gbs`); None where NVML or the
    figures are missing. Never raises."""
    from ..model.multi_gpu.links import pcie_theoretical_gbs
    from .nvml import open_nvml

    nv = open_nvml()
    if is_na(nv):
        return None
    try:
        h = nv.handle(index)
        if is_na(h):
            return None
        p = nv.pcie(h)
        gen, width = p["gen_max"], p["width_max"]
        if is_na(gen) or is_na(width):
            return None
        return pcie_theoretical_gbs(int(gen), int(width)), f"PCIe {int(gen)}.0 x{int(width)} of GPU {index} (NVML), one way"
    except Exception:  # noqa: BLE001 - a figure that cannot be read is left out
        return None
    finally:
        nv.close()


__all__ = ["host_link"]
