"""A fake host of several GPUs for the engine: tests/fakes.py's FakeGpu with one address
space shared by N devices (unified addressing), each allocation owned by the device current
when it was made, per-device contexts (cuCtxGetCurrent/SetCurrent), peer access
(cuDeviceCanAccessPeer, cuCtxEnablePeerAccess), cuMemcpyPeerAsync, and numpy stand-ins for
microbench/p2p.cu. NVML and the driver's device list are h200_node's (tests/fakes.py).

It checks the bookkeeping a real driver enforces and a slip would break: a kernel that
touches another GPU's memory without peer access enabled fails as CUDA does (illegal
address), and a peer copy must name each pointer's own context. Its clock is one
timeline (copies never overlap), so it proves the bookkeeping, never a figure.
"""

from __future__ import annotations

import sys

import numpy as np

from fakes import CUDAError, FakeGpu, Machine, h200_node, make_fake_modules

PEER_UNSUPPORTED, PEER_ALREADY = 217, 704


class Ctx:
    """A fake CUcontext: the device it belongs to."""

    def __init__(self, dev: int):
        self.dev = dev

    def __repr__(self) -> str:
        return f"<CUcontext of device {self.dev}>"


class FakeNode(FakeGpu):
    """``n`` GPUs in one address space.

    ``can_peer(reader, owner)`` says whether ``reader`` may map ``owner``'s memory;
    ``link_gbs(owner, reader)`` is the fake rate of a copy between them (GB/s), ``local_gbs``
    within one GPU. ``corrupt_peer`` flips a byte of every SM peer copy's output; ``slow``
    maps a device to a factor on its kernels' time (a slow GPU).
    """

    def __init__(self, n: int, can_peer=lambda r, o: True, link_gbs=lambda o, r: 100.0, local_gbs=2000.0):
        super().__init__()
        self.n, self.current = n, 0
        self.can_peer, self.link_gbs, self.local_gbs = can_peer, link_gbs, local_gbs
        self.owner: dict[int, int] = {}
        self.enabled: set[tuple[int, int]] = set()  # (reader, owner)
        self.ctxs = [Ctx(i) for i in range(n)]
        self.corrupt_peer = False
        self.peer_copies: list[tuple[int, int, int]] = []  # (owner, reader, bytes)
        self.alloc_log: list[tuple[int, int]] = []  # (device current when allocated, bytes)
        self.slow: dict[int, float] = {}  # device -> factor on its kernels' time
        self.waits: list = []  # events streams were made to wait for (cuStreamWaitEvent)

    def alloc(self, n):
        err, ptr = super().alloc(n)
        if not err:
            self.owner[ptr] = self.current
            self.alloc_log.append((self.current, int(n)))
        return err, ptr

    def free(self, p):
        self.owner.pop(int(p), None)
        return super().free(p)

    def owner_of(self, addr) -> int:
        return self.owner[self.find(addr)[0]]

    def reach(self, addr) -> int:
        """The owner of ``addr``, after checking the current device may touch it (as CUDA would)."""
        o = self.owner_of(addr)
        if o != self.current and (self.current, o) not in self.enabled:
            raise CUDAError(f"CUDA_ERROR_ILLEGAL_ADDRESS: device {self.current} read device {o}'s memory without peer access")
        return o

    def rate(self, owner: int, reader: int) -> float:
        return self.local_gbs if owner == reader else self.link_gbs(owner, reader)

    def run(self, name, grid, args):
        t0 = self.clock
        try:
            self._run(name, grid, args)
        finally:
            self.clock = t0 + (self.clock - t0) * self.slow.get(self.current, 1.0)

    def _run(self, name, grid, args):
        if name in ("chase_ca", "chase_cg"):
            self.reach(int(args[0]))
            self.reach(int(self.u64(int(args[0]))[0]))  # the chain's owner
            return super().run(name, grid, args)
        if not name.startswith("p2p_"):
            return super().run(name, grid, args)
        from gpuwhy.model.multi_gpu.p2p import pattern_words

        self.launches.append(name)
        if name == self.fault:
            raise CUDAError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
        if name == "p2p_fill":
            self.reach(args[0])
            self.view(args[0], np.uint32, int(args[1]))[:] = pattern_words(int(args[1]), int(args[2]))
            self.clock += int(args[1]) * 4 / (self.local_gbs * 1e9)
        elif name == "p2p_check":
            self.reach(args[0])
            bad = int(np.count_nonzero(self.view(args[0], np.uint32, int(args[1])) != pattern_words(int(args[1]), int(args[2]))))
            self.u64(args[3])[0] += bad
            self.clock += int(args[1]) * 4 / (self.local_gbs * 1e9)
        elif name == "p2p_copy":
            src_owner, dst_owner = self.reach(args[0]), self.reach(args[1])
            nbytes = int(args[2]) * 16
            out = self.view(args[1], np.uint8, nbytes)
            out[:] = self.view(args[0], np.uint8, nbytes)
            if self.corrupt_peer and src_owner != dst_owner:
                out[nbytes // 2] ^= 0xFF
            self.clock += 3e-6 + nbytes / (self.rate(src_owner, dst_owner) * 1e9)
        else:
            raise AssertionError(f"the fake has no kernel {name}")

    def peer_copy(self, dst, dctx, src, sctx, n, stream):
        assert dctx.dev == self.owner_of(dst), f"destination context {dctx} does not own 0x{int(dst):x}"
        assert sctx.dev == self.owner_of(src), f"source context {sctx} does not own 0x{int(src):x}"
        self._count()
        self.view(dst, np.uint8, n)[:] = self.view(src, np.uint8, n)
        self.peer_copies.append((sctx.dev, dctx.dev, int(n)))
        self.clock += 2e-6 + int(n) / (self.rate(sctx.dev, dctx.dev) * 1e9)
        return (0,)


def install_node(monkeypatch, tmp_path, n: int, node: FakeNode | None = None, nvml_extra=None, system_extra=None,
                 l2: int = 16384, **node_kw) -> FakeNode:
    """``n`` fake H200s: NVML and the driver's device list from h200_node (``nvml_extra`` and
    ``system_extra`` as it takes them: NVLinks, topology), the engine's calls from a
    :class:`FakeNode` (the real NVRTC compiles) with an L2 of ``l2`` bytes; a private cache folder.
    Returns the node."""
    import cuda.bindings
    import cuda.bindings.nvrtc as real_nvrtc

    machine = Machine(monkeypatch, tmp_path)
    h200_node(machine, n, nvml_extra=nvml_extra, system_extra=system_extra)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", real_nvrtc)
    node = node or FakeNode(n, **node_kw)
    node.l2 = l2
    core, fdrv = make_fake_modules(node)
    drv = sys.modules["cuda.bindings.driver"]
    listing = {"cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetUuid", "cuDeviceGetName", "cuDeviceGetPCIBusId",
               "cuDeviceGetAttribute", "cuDeviceTotalMem", "cuDriverGetVersion", "CUresult"}
    for name in dir(fdrv):
        if (name.startswith("cu") or name == "CUfunction") and name not in listing:
            monkeypatch.setattr(drv, name, getattr(fdrv, name), raising=False)
    import enum

    members = {m.name: int(m.value) for m in drv.CUresult}
    members.update(CUDA_ERROR_OUT_OF_MEMORY=2, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED=PEER_UNSUPPORTED,
                   CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED=PEER_ALREADY)
    monkeypatch.setattr(drv, "CUresult", enum.IntEnum("CUresult", members))
    uuids = [drv.cuDeviceGetUuid(i)[1].bytes.hex() for i in range(n)]

    def set_current(i):
        node.current = i

    def can_access(dev, peer):
        return 0, int(bool(node.can_peer(int(dev), int(peer))))

    def enable(peer_ctx, flags):
        key = (node.current, peer_ctx.dev)
        if not node.can_peer(*key):
            return (PEER_UNSUPPORTED,)
        if key in node.enabled:
            return (PEER_ALREADY,)
        node.enabled.add(key)
        return (0,)

    extra = {
        "cuCtxGetCurrent": lambda: (0, node.ctxs[node.current]),
        "cuCtxSetCurrent": lambda ctx: (set_current(ctx.dev), (0,))[1],
        "cuDeviceCanAccessPeer": can_access,
        "cuCtxEnablePeerAccess": enable,
        "cuMemcpyPeerAsync": node.peer_copy,
        "cuStreamWaitEvent": lambda stream, event, flags: (node.waits.append(event), (0,))[1],
    }
    for name, f in extra.items():
        monkeypatch.setattr(drv, name, f, raising=False)
    base_device = core.Device

    class Device(base_device):
        def __init__(self, index=0):
            super().__init__(index)
            self.index = int(index)
            h = uuids[self.index]
            self.uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

        def set_current(self):
            node.current = self.index

    core.Device = Device
    event_class = type(Device(0).create_event())
    node.events.clear()
    monkeypatch.setattr(event_class, "handle", property(lambda ev: ev), raising=False)
    monkeypatch.setitem(sys.modules, "cuda.core", core)
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return node


__all__ = ["FakeNode", "install_node"]
