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
import enum
import io
import json
import sys
import types
from pathlib import Path

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
    # what device/select reads to number the device (-i): its UUID, name and PCI bus id
    drv.cuDeviceGet = lambda i: (0, i) if i == 0 else (101, None)
    drv.cuDeviceGetUuid = lambda dev: (0, types.SimpleNamespace(bytes=bytes.fromhex("1234abcd" + "0" * 24)))
    drv.cuDeviceGetName = lambda n, dev: (0, b"NVIDIA H200".ljust(n, b"\0"))
    drv.cuDeviceGetPCIBusId = lambda n, dev: (0, b"0000:19:00.0")
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


def install_quick(monkeypatch, tmp_path, gpu: FakeGpu | None = None) -> FakeGpu:
    """:func:`install` a fake GPU (a new :class:`FakeGpu` by default) with `bench --quick`'s memory sizes
    cut to 1 KiB-256 KiB and the CPU stand-in's to 16 Ki elements, so a quick bench runs in a moment
    and its regimes still show (the fake's L2 is 256 KiB)."""
    from gpuwhy.bench import memory

    gpu = install(monkeypatch, gpu if gpu is not None else FakeGpu(), tmp_path)
    monkeypatch.setattr(memory, "QUICK_SIZES", (2**10, 2**14, 2**16, 2**18))
    monkeypatch.setattr(memory, "CPU_ELEMENTS", 2**14)
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


# =================================================================================
# Fake NVML (pynvml), CUDA driver API and NVRTC for the device layer (probe, -i selection)
# =================================================================================

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "probe"

# NVML return codes (nvml.h)
NOT_SUPPORTED, NOT_FOUND, DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, FUNCTION_NOT_FOUND = 3, 6, 9, 12, 13


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


# ---------------------------------------------------------------------------------
# Fake pynvml
# ---------------------------------------------------------------------------------


class FakeNVMLError(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value

    def __str__(self):
        return f"fake NVML error {self.value}"


class _Handle:
    def __init__(self, data: dict, parent: "_Handle | None" = None):
        self.data = data
        self.parent = parent


def _need(d: dict, key: str):
    if key not in d:
        raise FakeNVMLError(NOT_SUPPORTED)
    v = d[key]
    if isinstance(v, FakeNVMLError):
        raise v
    return v


def make_pynvml(gpus: list[dict], system: dict | None = None, init_error: int | None = None, absent: tuple[str, ...] = ()):
    """A pynvml look-alike over ``gpus`` (dicts in the fixture's "nvml" layout)."""
    system = system or {}
    m = types.ModuleType("pynvml")
    m.NVMLError = FakeNVMLError
    m.NVML_CLOCK_GRAPHICS, m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM = 0, 1, 2
    m.NVML_TEMPERATURE_GPU = 0
    m.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, m.NVML_VOLATILE_ECC = 1, 0
    m.calls = []
    handles = [_Handle(g) for g in gpus]
    clock_key = {0: "graphics", 1: "sm", 2: "mem"}

    def fn(name):
        def deco(f):
            def wrapper(*a):
                m.calls.append(name)
                return f(*a)

            setattr(m, name, wrapper)
            return wrapper

        return deco

    @fn("nvmlInit")
    def _init():
        if init_error is not None:
            raise FakeNVMLError(init_error)

    @fn("nvmlShutdown")
    def _shutdown():
        return None

    @fn("nvmlSystemGetDriverVersion")
    def _drv():
        return _need(system, "driver_version")

    @fn("nvmlSystemGetCudaDriverVersion_v2")
    def _cuda():
        return _need(system, "cuda_driver_version")

    @fn("nvmlSystemGetProcessName")
    def _pname(pid):
        return _need(system.get("process_names", {}), str(pid))

    @fn("nvmlDeviceGetCount")
    def _count():
        return len(handles)

    @fn("nvmlDeviceGetHandleByIndex")
    def _by_index(i):
        if i >= len(handles):
            raise FakeNVMLError(2)
        return handles[i]

    @fn("nvmlDeviceGetHandleByUUID")
    def _by_uuid(u):
        u = u.decode() if isinstance(u, bytes) else u
        for h in handles:
            if h.data.get("uuid") == u:
                return h
        raise FakeNVMLError(NOT_FOUND)

    @fn("nvmlDeviceGetName")
    def _name(h):
        return _need(h.data, "name")

    @fn("nvmlDeviceGetUUID")
    def _uuid(h):
        return _need(h.data, "uuid")

    @fn("nvmlDeviceGetPciInfo_v3")
    def _pci(h):
        bus = _need(h.data, "pci_bus_id")
        dev = h.data.get("pci_device_id")
        return types.SimpleNamespace(
            busId=bus.encode() if isinstance(bus, str) else bus,
            pciDeviceId=int(dev, 16) if isinstance(dev, str) else (dev or 0),
        )

    @fn("nvmlDeviceGetBrand")
    def _brand(h):
        return _need(h.data, "brand")

    @fn("nvmlDeviceGetCudaComputeCapability")
    def _cc(h):
        return tuple(_need(h.data, "cuda_cc"))

    @fn("nvmlDeviceGetNumGpuCores")
    def _cores(h):
        return _need(h.data, "num_cores")

    @fn("nvmlDeviceGetMemoryInfo")
    def _mem(h):
        total = _need(h.data, "memory_total")
        free = h.data.get("memory_free", total)
        return types.SimpleNamespace(total=total, free=free, used=total - free)

    @fn("nvmlDeviceGetMemoryBusWidth")
    def _bus(h):
        return _need(h.data, "bus_width")

    @fn("nvmlDeviceGetMaxClockInfo")
    def _maxclk(h, kind):
        return _need(h.data, f"max_clock_{clock_key[kind]}")

    @fn("nvmlDeviceGetClockInfo")
    def _clk(h, kind):
        return _need(h.data, f"clock_{clock_key[kind]}")

    @fn("nvmlDeviceGetMaxCustomerBoostClock")
    def _boost(h, kind):
        return _need(h.data, "customer_boost_sm")

    @fn("nvmlDeviceGetTemperature")
    def _temp(h, sensor):
        return _need(h.data, "temperature_c")

    @fn("nvmlDeviceGetPowerUsage")
    def _power(h):
        return _need(h.data, "power_mw")

    @fn("nvmlDeviceGetEnforcedPowerLimit")
    def _limit(h):
        return _need(h.data, "power_limit_mw")

    @fn("nvmlDeviceGetCurrentClocksEventReasons")
    def _reasons(h):
        return _need(h.data, "clock_event_reasons")

    @fn("nvmlDeviceGetEccMode")
    def _ecc(h):
        return list(_need(h.data, "ecc_mode"))

    @fn("nvmlDeviceGetTotalEccErrors")
    def _eccerr(h, etype, ctype):
        assert (etype, ctype) == (1, 0), "uncorrected, volatile"
        return _need(h.data, "ecc_volatile_uncorrected")

    @fn("nvmlDeviceGetRetiredPagesPendingStatus")
    def _retired(h):
        return _need(h.data, "retired_pages_pending")

    @fn("nvmlDeviceGetRemappedRows")
    def _remap(h):
        return tuple(_need(h.data, "remapped_rows"))

    @fn("nvmlDeviceGetPersistenceMode")
    def _persist(h):
        return _need(h.data, "persistence_mode")

    @fn("nvmlDeviceGetComputeMode")
    def _cmode(h):
        return _need(h.data, "compute_mode")

    for key, name in (
        ("pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
        ("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
        ("pcie_gen_gpu_max", "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
        ("pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
        ("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
    ):
        fn(name)(lambda h, _k=key: _need(h.data, _k))

    @fn("nvmlDeviceGetUtilizationRates")
    def _util(h):
        return types.SimpleNamespace(gpu=_need(h.data, "utilization_gpu"), memory=0)

    @fn("nvmlDeviceGetComputeRunningProcesses")
    def _procs(h):
        return [types.SimpleNamespace(pid=p["pid"], usedGpuMemory=p.get("used")) for p in _need(h.data, "processes")]

    @fn("nvmlDeviceGetMigMode")
    def _mig(h):
        return list(_need(h.data, "mig_mode"))

    @fn("nvmlDeviceGetMaxMigDeviceCount")
    def _migmax(h):
        _need(h.data, "mig_mode")
        return 7

    @fn("nvmlDeviceGetMigDeviceHandleByIndex")
    def _mighandle(h, i):
        migs = h.data.get("mig_devices", [])
        if i >= len(migs):
            raise FakeNVMLError(NOT_FOUND)
        return _Handle(migs[i], parent=h)

    @fn("nvmlDeviceGetAttributes")
    def _attrs(h):
        if h.parent is None:
            raise FakeNVMLError(NOT_SUPPORTED)  # only MIG device handles, as documented
        return types.SimpleNamespace(multiprocessorCount=h.data["sm_count"], memorySizeMB=h.data["memory_mb"])

    @fn("nvmlDeviceGetGpuInstanceId")
    def _gi(h):
        return _need(h.data, "gi")

    @fn("nvmlDeviceGetComputeInstanceId")
    def _ci(h):
        return _need(h.data, "ci")

    # -- several GPUs: NVLinks, PCIe tree, NUMA (absent keys read as NOT_SUPPORTED) --
    m.NVML_NVLINK_MAX_LINKS = 18
    for k, h in enumerate(handles):
        h.index = k

    def _link(h, link):
        links = _need(h.data, "nvlinks")
        if link >= h.data.get("nvlink_count", 18):
            raise FakeNVMLError(2)  # INVALID_ARGUMENT: no such link
        return next((x for x in links if x["link"] == link), None)

    @fn("nvmlDeviceGetNvLinkState")
    def _nvl_state(h, link):
        return 1 if _link(h, link) is not None else 0

    @fn("nvmlDeviceGetNvLinkVersion")
    def _nvl_version(h, link):
        x = _link(h, link)
        if x is None:
            raise FakeNVMLError(NOT_SUPPORTED)
        return x["version"]

    @fn("nvmlDeviceGetNvLinkRemotePciInfo")
    def _nvl_remote(h, link):
        return types.SimpleNamespace(busId=_link(h, link)["remote_bus"].encode())

    @fn("nvmlDeviceGetNvLinkRemoteDeviceType")
    def _nvl_type(h, link):
        return _link(h, link)["remote_type"]

    @fn("nvmlDeviceGetTopologyCommonAncestor")
    def _ancestor(h1, h2):
        a, b = sorted((h1.index, h2.index))
        return _need(system.get("topology", {}), f"{a},{b}")

    @fn("nvmlDeviceGetNumaNodeId")
    def _numa(h):
        return _need(h.data, "numa_node")

    @fn("nvmlDeviceGetCpuAffinity")
    def _affinity(h, words):
        mask = _need(h.data, "cpu_affinity")
        return (list(mask) + [0] * words)[:words]

    for name in absent:
        delattr(m, name)
    return m


# ---------------------------------------------------------------------------------
# Fake cuda.bindings.driver and nvrtc
# ---------------------------------------------------------------------------------


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_DEVICE = 101


_ATTR_KEYS = {
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": lambda d: d["cc"][0],
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": lambda d: d["cc"][1],
    "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": lambda d: d["sm_count"],
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR": lambda d: d["max_threads_per_sm"],
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": lambda d: d["shared_mem_per_sm_bytes"],
    "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE": lambda d: d["l2_bytes"],
    "CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH": lambda d: d["bus_width_bits"],
    "CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE": lambda d: d["memory_clock_khz"],
    "CU_DEVICE_ATTRIBUTE_CLOCK_RATE": lambda d: d["clock_khz"],
    "CU_DEVICE_ATTRIBUTE_INTEGRATED": lambda d: d.get("integrated", 0),
}
CUdevice_attribute = enum.IntEnum("CUdevice_attribute", list(_ATTR_KEYS))


class DynamicLibNotFoundError(RuntimeError):
    """Stands in for cuda.pathfinder's error when libcuda.so is missing."""


def make_driver(devices: list[dict], version: int = 13000, init: object = CUresult.CUDA_SUCCESS):
    """A cuda.bindings.driver look-alike exposing ``devices`` (fixture "cuda" dicts) as CUDA ordinals."""
    m = types.ModuleType("cuda.bindings.driver")
    m.CUresult = CUresult
    m.CUdevice_attribute = CUdevice_attribute

    def cuInit(flags):
        if isinstance(init, BaseException):
            raise init
        return (init,)

    def cuDriverGetVersion():
        return (CUresult.CUDA_SUCCESS, version)

    def cuDeviceGetCount():
        return (CUresult.CUDA_SUCCESS, len(devices))

    def cuDeviceGet(i):
        if i >= len(devices):
            return (CUresult.CUDA_ERROR_INVALID_DEVICE, None)
        return (CUresult.CUDA_SUCCESS, i)

    def cuDeviceGetAttribute(attr, dev):
        try:
            return (CUresult.CUDA_SUCCESS, _ATTR_KEYS[attr.name](devices[dev]))
        except KeyError:
            return (CUresult.CUDA_ERROR_INVALID_VALUE, 0)

    def cuDeviceGetName(n, dev):
        return (CUresult.CUDA_SUCCESS, devices[dev]["name"].encode().ljust(n, b"\0"))

    def cuDeviceGetUuid(dev):
        return (CUresult.CUDA_SUCCESS, types.SimpleNamespace(bytes=bytes.fromhex(devices[dev]["uuid"].replace("-", ""))))

    def cuDeviceGetPCIBusId(n, dev):
        return (CUresult.CUDA_SUCCESS, devices[dev]["pci_bus_id"].encode())

    def cuDeviceTotalMem(dev):
        return (CUresult.CUDA_SUCCESS, devices[dev]["total_memory_bytes"])

    for f in (cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetAttribute, cuDeviceGetName, cuDeviceGetUuid, cuDeviceGetPCIBusId, cuDeviceTotalMem):
        setattr(m, f.__name__, f)
    return m


def make_nvrtc(major: int = 13, minor: int = 0):
    m = types.ModuleType("cuda.bindings.nvrtc")
    m.nvrtcVersion = lambda: (0, major, minor)
    return m


class Machine:
    """Installs fake modules and a fake /proc for one test."""

    def __init__(self, monkeypatch, tmp_path):
        self.mp = monkeypatch
        self.proc = tmp_path / "proc"
        (self.proc / "driver" / "nvidia").mkdir(parents=True)
        (self.proc / "version").write_text("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) #45-Ubuntu SMP\n")
        from gpuwhy.device import procfs

        monkeypatch.setattr(procfs, "PROC", self.proc)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        self.nvrtc(13, 0)

    def nvml(self, module):
        self.mp.setitem(sys.modules, "pynvml", module)
        return module

    def driver(self, module):
        self.mp.setitem(sys.modules, "cuda.bindings.driver", module)
        return module

    def nvrtc(self, major, minor):
        self.mp.setitem(sys.modules, "cuda.bindings.nvrtc", make_nvrtc(major, minor))

    def no_nvml_library(self):
        return self.nvml(make_pynvml([], init_error=LIBRARY_NOT_FOUND))

    def no_driver_library(self):
        return self.driver(make_driver([], init=DynamicLibNotFoundError('"cuda" is an NVIDIA driver library')))

    def fixture(self, name: str, nvml_extra: dict | None = None, cuda_extra: dict | None = None):
        """Install one recorded GPU (NVML and driver sides) and return the fixture."""
        fx = load_fixture(name)
        nv = {**fx["nvml"], **(nvml_extra or {})}
        cu = {**fx["cuda"], **(cuda_extra or {})}
        self.nvml(make_pynvml([nv], fx["nvml_system"]))
        self.driver(make_driver([cu], fx["cuda_system"]["cuda_driver_version"]))
        return fx




def h200_node(machine: Machine, n: int, cuda_order: list[int] | None = None, cvd: str | None = None,
              nvml_extra: list[dict] | None = None, system_extra: dict | None = None) -> list[dict]:
    """Install ``n`` recorded H200s (NVML indices 0..n-1, PCI buses 0x18, 0x2a, ...; UUIDs ending
    in the index) as NVML and the CUDA driver show them; returns the NVML dicts.

    ``cuda_order`` lists NVML indices in CUDA's order (default: the same order); ``cvd`` is set
    as ``CUDA_VISIBLE_DEVICES`` and applied to that order, as the CUDA driver does.
    ``nvml_extra`` adds keys to each GPU's NVML dict (NVLinks, NUMA node, CPU affinity) and
    ``system_extra`` to the system's (``topology``: "i,j" -> NVML's common-ancestor level).
    """
    fx = load_fixture("h200")
    nv, cu = [], []
    for i in range(n):
        tail = f"{0x200 + i:012x}"
        bus = 0x18 + 0x12 * i
        nv.append({**fx["nvml"], "uuid": f"GPU-0a1b2c3d-0000-4000-8000-{tail}", "pci_bus_id": f"00000000:{bus:02X}:00.0",
                   **(nvml_extra[i] if nvml_extra else {})})
        cu.append({**fx["cuda"], "uuid": f"0a1b2c3d-0000-4000-8000-{tail}", "pci_bus_id": f"0000:{bus:02X}:00.0"})
    order = list(cuda_order if cuda_order is not None else range(n))
    if cvd is not None:
        from gpuwhy.device.visible import Candidate, resolve_cuda_visible_devices

        machine.mp.setenv("CUDA_VISIBLE_DEVICES", cvd)
        sel = resolve_cuda_visible_devices(cvd, [Candidate(nv[i]["uuid"]) for i in order])
        order = [order[k] for k in sel.indices]
    machine.nvml(make_pynvml(nv, {**fx["nvml_system"], **(system_extra or {})}))
    machine.driver(make_driver([cu[i] for i in order], fx["cuda_system"]["cuda_driver_version"]))
    return nv
