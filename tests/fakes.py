"""The one fake CUDA device of the tests: cuda.core and the driver API over numpy.

:class:`FakeGpu` holds the state: device memory (numpy arrays; addresses inside an
allocation resolve to it), pinned host memory, a clock that kernels and copies advance
(a bandwidth model: pinned copies faster than pageable ones), CUDA events that read that
clock, and injected faults. Its kernels are numpy stand-ins for memory.cu (fill, read,
write, copy, vecadd), launch.cu (empty, spin) and latency.cu (the pointer chase);
subclasses add others. :func:`make_fake_modules` builds the ``cuda.core`` and
``cuda.bindings.driver`` modules over it; :func:`install` puts them in place (no NVML,
a private cache folder). The fake proves the bookkeeping (checks, timing paths, every
allocation freed on every path), never a figure.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import io
import sys
import types

import numpy as np


class CUDAError(Exception):
    pass


class FakeGpu:
    """State of the fake device: memory, pinned host memory, a clock, kernels, injected faults."""

    def __init__(self, l2=256 * 1024, total=8 * 2**30):
        self.l2, self.total = l2, total
        self.oom_sizes: set[int] = set()  # allocation sizes that fail with out-of-memory
        self.mem: dict[int, np.ndarray] = {}
        self.bases: list[int] = []
        self.pinned: dict[int, np.ndarray] = {}
        self.next_ptr = 0x7F0000000000
        self.clock = 0.0
        self.bug: str | None = None  # a kernel name that computes a wrong result
        self.fault: str | None = None  # a kernel name whose launch raises a CUDA error
        self.pinned_gbs, self.pageable_gbs = 50.0, 10.0
        self.pinned_lat, self.pageable_lat = 2e-6, 8e-6
        self.last_upload: dict[int, int] = {}
        self.latency_ns = lambda ws: 30.0  # the fake chase's latency model (ns per step by working set)
        self.sm_mhz = 1980.0
        self.corrupt_copy = False  # flip a byte in every H2D copy
        self.skip_step = False  # the chase kernel skips a load
        self.fault_after_copies: int | None = None
        self.copies = 0
        self.launches: list[str] = []
        self.streams: list = []
        self.events: list = []

    # ------------------------------------------------------------ memory
    def alloc(self, n):
        if n in self.oom_sizes:
            return 2, 0
        ptr = self.next_ptr
        self.next_ptr += (n + 255) // 256 * 256 + 256
        self.mem[ptr] = np.zeros(n, np.uint8)
        bisect.insort(self.bases, ptr)
        return 0, ptr

    def free(self, p):
        self.mem.pop(int(p))
        self.bases.remove(int(p))
        return (0,)

    def find(self, addr):
        """(allocation base, offset) of a device address."""
        i = bisect.bisect_right(self.bases, int(addr)) - 1
        base = self.bases[i]
        off = int(addr) - base
        assert 0 <= off < self.mem[base].size, f"address 0x{int(addr):x} outside every allocation"
        return base, off

    def view(self, addr, dtype, n):
        """``n`` elements of ``dtype`` at a device address."""
        base, off = self.find(addr)
        return self.mem[base][off:].view(dtype)[: int(n)]

    def host_alloc(self, n, flags):
        a = np.zeros(int(n), np.uint8)
        ptr = a.ctypes.data
        self.pinned[ptr] = a
        return 0, ptr

    def host_free(self, p):
        self.pinned.pop(int(p))
        return (0,)

    def is_pinned(self, addr):
        return any(p <= int(addr) < p + a.size for p, a in self.pinned.items())

    def _copy_cost(self, host, n):
        if self.is_pinned(host):
            return self.pinned_lat + n / (self.pinned_gbs * 1e9)
        return self.pageable_lat + n / (self.pageable_gbs * 1e9)

    def _count(self):
        self.copies += 1
        if self.fault_after_copies is not None and self.copies > self.fault_after_copies:
            raise CUDAError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")

    def htod(self, dst, src, n, s):
        self._count()
        base, off = self.find(dst)
        ctypes.memmove(self.mem[base].ctypes.data + off, int(src), int(n))
        if self.corrupt_copy and n:
            self.mem[base][off] ^= 0xFF
        self.last_upload[base] = int(n)
        self.clock += self._copy_cost(src, n)
        return (0,)

    def dtoh(self, dst, src, n, s):
        self._count()
        base, off = self.find(src)
        ctypes.memmove(int(dst), self.mem[base].ctypes.data + off, int(n))
        self.clock += self._copy_cost(dst, n)
        return (0,)

    def memset(self, ptr, v, n, s):
        base, off = self.find(ptr)
        self.mem[base][off : off + n] = v
        return (0,)

    def u64(self, addr):
        base, off = self.find(addr)
        return self.mem[base][off : off + 8].view(np.uint64)

    # ----------------------------------------------------------- kernels
    def run(self, name, grid, args):
        self.launches.append(name)
        if name == self.fault:
            raise CUDAError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
        if name == "empty_kernel":
            self.clock += 2e-6
        elif name == "spin_kernel":
            self.clock += int(args[0]) * 1e-9
        elif name == "touch_nodes":
            self.clock += 3e-6
        elif name in ("chase_ca", "chase_cg"):
            self._chase(args)
        else:
            self._memory_kernel(name, grid, args)

    def _chase(self, args):
        state, warm, steps, rec = int(args[0]), int(args[1]), int(args[2]), int(args[3])
        p = int(self.u64(state)[0])
        base, _ = self.find(p)
        ws = self.last_upload[base]
        total = warm + steps - (1 if self.skip_step else 0)
        for _ in range(total):
            p = int(self.u64(p)[0])
        lat = self.latency_ns(ws)
        self.u64(state)[0] = p
        r = self.mem[self.find(rec)[0]][self.find(rec)[1] :][:24].view(np.uint64)
        r[0] = int(round(steps * lat * self.sm_mhz * 1e-3))
        r[1] = int(round(steps * lat))
        r[2] = p
        self.clock += 3e-6 + total * lat * 1e-9

    def _memory_kernel(self, name, grid, args):
        *op, sfx = name.split("_")
        dt = np.float32 if sfx == "f32" else np.float64
        op = "_".join(op)

        def arr(ptr, n):
            return self.view(ptr, dt, n)

        moved = 0
        if op == "fill_random":
            a = arr(args[0], args[1])
            a[:] = 0.5 + np.random.default_rng(int(args[2])).random(a.size)
            moved = a.nbytes
        elif op.startswith("read"):
            n = int(args[1])
            a, part = arr(args[0], n), arr(args[2], grid)
            part[:] = 0
            part[0] = a.sum(dtype=np.float64)
            moved = a.nbytes
        elif op.startswith("write"):
            n = int(args[1])
            a = arr(args[0], n)
            a[:] = dt(args[2]) + (np.arange(n) & 1023).astype(dt)
            moved = a.nbytes
        elif op.startswith("copy"):
            n = int(args[2])
            arr(args[1], n)[:] = arr(args[0], n)
            moved = 2 * n * np.dtype(dt).itemsize
        elif op.startswith("vecadd"):
            n = int(args[3])
            arr(args[2], n)[:] = arr(args[0], n) + arr(args[1], n)
            moved = 3 * n * np.dtype(dt).itemsize
        else:
            raise AssertionError(f"the fake has no kernel {name}")
        if name == self.bug:  # corrupt the first element of the output
            out_arg = {"read": 2, "write": 0, "copy": 1, "vecadd": 2}[op.split("_")[0]]
            arr(args[out_arg], 1)[0] += 1
        self.clock += 3e-6 + moved / 3.0e12


def make_fake_modules(gpu: FakeGpu):
    """``(cuda.core, cuda.bindings.driver)`` stand-ins over ``gpu``."""
    core = types.ModuleType("cuda.core")
    drv = types.ModuleType("cuda.bindings.driver")

    class CUresult:
        CUDA_SUCCESS = 0
        CUDA_ERROR_OUT_OF_MEMORY = 2

    drv.CUresult = CUresult
    drv.cuInit = lambda flags: (0,)
    drv.cuDeviceGetCount = lambda: (0, 1)
    drv.cuGetErrorName = lambda e: (0, b"CUDA_ERROR_OUT_OF_MEMORY" if e == 2 else b"CUDA_ERROR_UNKNOWN")
    drv.cuDriverGetVersion = lambda: (0, 13000)
    drv.cuMemGetInfo = lambda: (0, gpu.total - sum(a.nbytes for a in gpu.mem.values()), gpu.total)
    drv.cuMemAlloc = gpu.alloc
    drv.cuMemFree = gpu.free
    drv.cuMemHostAlloc = gpu.host_alloc
    drv.cuMemFreeHost = gpu.host_free
    drv.cuMemcpyHtoDAsync, drv.cuMemcpyDtoHAsync, drv.cuMemsetD8Async = gpu.htod, gpu.dtoh, gpu.memset
    drv.CUfunction = lambda h: h
    drv.cuLaunchKernel = lambda *a: (gpu.run("empty_kernel", 1, ()), (0,))[1]

    class Props:
        multiprocessor_count = 132
        l2_cache_size = gpu.l2
        max_threads_per_multiprocessor = 2048
        gpu_pci_device_id = 0x233510DE

    class Event:
        is_done = True

        def __init__(self):
            self.t = 0.0
            self.closed = False

        def sync(self):
            pass

        def close(self):
            self.closed = True

        def __sub__(self, other):
            return (self.t - other.t) * 1e3

    class Stream:
        def __init__(self):
            self.handle = object()
            self.closed = False

        def sync(self):
            pass

        def record(self, event=None, options=None):
            event = event or Event()
            event.t = gpu.clock
            return event

        def wait(self, event_or_stream):
            assert isinstance(event_or_stream, (Event, Stream))

        def close(self):
            self.closed = True

        def create_graph_builder(self):
            return GraphBuilder()

    class Graph:
        def __init__(self, work):
            self.work = work

        def upload(self, s):
            pass

        def launch(self, s):
            for k, grid, args in self.work:
                gpu.run(k.name, grid, args)
            gpu.clock -= len(self.work) * 1.5e-6  # graphs launch cheaper

        def close(self):
            pass

    class GraphBuilder:
        def __init__(self):
            self.work = []

        def begin_building(self, mode="relaxed"):
            return self

        def end_building(self):
            return self

        def complete(self):
            return Graph(self.work)

        def close(self):
            pass

    class Device:
        def __init__(self, index=0):
            self.uuid = "1234abcd-0000-0000-0000-000000000000"
            self.name = "NVIDIA H200"
            self.properties = Props()
            self.compute_capability = (9, 0)

        def set_current(self):
            pass

        def create_stream(self, obj=None, options=None):
            s = Stream()
            gpu.streams.append(s)
            return s

        def create_event(self, options=None):
            e = Event()
            gpu.events.append(e)
            return e

    class Kernel:
        def __init__(self, name):
            self.name, self.handle = name, 42
            self.occupancy = types.SimpleNamespace(max_active_blocks_per_multiprocessor=lambda b, s: 8)

    class ObjectCode:
        @staticmethod
        def from_cubin(data, name=""):
            assert data[:4] == b"\x7fELF"
            return types.SimpleNamespace(get_kernel=Kernel)

    class LaunchConfig:
        def __init__(self, grid=None, block=None, shmem_size=0):
            self.grid, self.block = grid, block

    def launch(target, cfg, kernel, *args):
        if isinstance(target, GraphBuilder):
            target.work.append((kernel, cfg.grid, args))
        else:
            gpu.run(kernel.name, cfg.grid, args)

    core.Device, core.ObjectCode, core.LaunchConfig, core.launch = Device, ObjectCode, LaunchConfig, launch
    core.EventOptions = lambda **kw: kw
    return core, drv


def install(monkeypatch, gpu: FakeGpu, tmp_path) -> FakeGpu:
    """Put the fake modules in place of cuda.core and the driver (the real NVRTC still
    compiles), hide NVML, and use a cache folder under ``tmp_path``; returns ``gpu``."""
    import cuda.bindings
    import cuda.bindings.nvrtc  # noqa: F401  (real NVRTC compiles; load it before the fake driver)

    core, drv = make_fake_modules(gpu)
    monkeypatch.setitem(sys.modules, "cuda.core", core)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", drv)
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML: the run must still work
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return gpu


def capture(fn, *args, **kw) -> tuple[str, str]:
    """(stdout, stderr) of ``fn(*args, **kw)``, with gpuwhy's consoles rebuilt around it."""
    from gpuwhy.render import console

    out, err = io.StringIO(), io.StringIO()
    console.out.cache_clear()
    console.err.cache_clear()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            fn(*args, **kw)
    finally:
        console.out.cache_clear()
        console.err.cache_clear()
    return out.getvalue(), err.getvalue()
