"""Several GPUs in one process: their contexts, peer access between them, copies from one to another.

Peer access is a property of a pair of contexts in one process, so GPU-to-GPU measurements
open every GPU here (:func:`open_devices`), each a :class:`~gpuwhy.engine.context.GpuContext`
on its own primary context; with several open, each context makes itself current before
the calls that act on the current one (allocations, module loads, launches), and
:meth:`~gpuwhy.engine.context.GpuContext.activate` does it explicitly before a timed loop.

- :func:`can_access_peer`: ``cuDeviceCanAccessPeer``: can one GPU map another's memory.
- :func:`enable_peer_access`: ``cuCtxEnablePeerAccess``: from now on the reader's kernels
  load and store the other GPU's memory directly (over NVLink or PCIe) by its address.
- :func:`peer_copier`: ``cuMemcpyPeerAsync``: a copy by the copy engines between two GPUs'
  memories, on a stream of the caller's choice.
- :func:`wait_for`: ``cuStreamWaitEvent`` across GPUs: one GPU's stream waits for an event
  recorded on another's (work on two GPUs at once, joined).

A pair without peer access is reported as such by the caller, never measured another way.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

from ..errors import MeasurementError
from .context import GpuContext, check, open_device


@contextlib.contextmanager
def open_devices(specs: Sequence[str | int]) -> Iterator[list[GpuContext]]:
    """Open each GPU of ``specs`` (``-i`` forms or CUDA ordinals), in order; every one is closed on
    every path (peer access goes with the contexts).

    Raises:
        NoDeviceError, UsageError, MeasurementError: as :func:`~gpuwhy.engine.context.open_device`.
    """
    opened: list[GpuContext] = []
    try:
        for spec in specs:
            opened.append(open_device(spec))
        yield opened
    finally:
        for ctx in reversed(opened):
            with contextlib.suppress(Exception):
                ctx.__exit__(None, None, None)


def _device(ordinal: int):
    from cuda.bindings import driver

    return check(driver.cuDeviceGet(int(ordinal)), f"cuDeviceGet({ordinal})")


def can_access_peer(reader: GpuContext, owner: GpuContext) -> bool:
    """True when ``reader`` can map ``owner``'s memory (``cuDeviceCanAccessPeer``); a GPU and itself: True."""
    from cuda.bindings import driver

    if reader.info.index == owner.info.index:
        return True
    got = check(driver.cuDeviceCanAccessPeer(_device(reader.info.index), _device(owner.info.index)),
                f"cuDeviceCanAccessPeer({reader.info.index}, {owner.info.index})")
    return bool(got)


def enable_peer_access(reader: GpuContext, owner: GpuContext) -> None:
    """Let ``reader``'s kernels and copies reach ``owner``'s memory (``cuCtxEnablePeerAccess``;
    already enabled is fine). Leaves ``reader`` current.

    Raises:
        MeasurementError: the driver refused (the message names both GPUs).
    """
    from cuda.bindings import driver

    if reader.info.index == owner.info.index:
        return
    reader.activate()
    err = driver.cuCtxEnablePeerAccess(owner.cu_context, 0)
    err = err[0] if isinstance(err, tuple) else err
    if err in (driver.CUresult.CUDA_SUCCESS, getattr(driver.CUresult, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", None)):
        return
    check((err,), f"enabling peer access from GPU cuda:{reader.info.index} to cuda:{owner.info.index}")


def peer_copier(stream_ctx: GpuContext, stream=None):
    """``copy(dst, dst_ctx, src, src_ctx, nbytes, what)``: one ``cuMemcpyPeerAsync`` on ``stream``
    (default ``stream_ctx``'s), bound once for timed loops; ``dst``/``src`` are device addresses
    of the two contexts' memories. A failed copy raises MeasurementError naming ``what``."""
    from cuda.bindings import driver

    fn = driver.cuMemcpyPeerAsync
    handle = (stream if stream is not None else stream_ctx.stream).handle

    def copy(dst: int, dst_ctx: GpuContext, src: int, src_ctx: GpuContext, nbytes: int, what: str) -> None:
        check(fn(dst, dst_ctx.cu_context, src, src_ctx.cu_context, nbytes, handle), what)

    return copy


def wait_for(stream, event, what: str) -> None:
    """Make ``stream`` wait for ``event``'s last record (``cuStreamWaitEvent``), which may be another
    GPU's: how one GPU's stream waits for work queued on another's.

    Raises:
        MeasurementError: the driver refused (names ``what``).
    """
    from cuda.bindings import driver

    check(driver.cuStreamWaitEvent(stream.handle, event.handle, 0), what)


def require_context(ctx: GpuContext) -> None:
    """Peer calls name contexts: raise when this driver's context could not be read.

    Raises:
        MeasurementError: ``cuCtxGetCurrent`` gave nothing when ``ctx`` was opened.
    """
    if ctx.cu_context is None:
        raise MeasurementError(f"the CUDA context of GPU cuda:{ctx.info.index} could not be read (cuCtxGetCurrent); "
                               "GPU-to-GPU copies need it")
