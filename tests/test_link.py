"""`gpuwhy bench --link` without a GPU: PCIe arithmetic, curve summaries, and a fake-device run.

The fake device (also used by tests/test_latency.py) stands in for cuda.core and
the driver API: numpy memory for device and pinned host buffers, copies done
with memmove, a fake clock advanced by a bandwidth model (pinned faster than
pageable), CUDA events that read that clock. It proves the bookkeeping (checks,
timing paths, ratios, every allocation freed on every path), never a figure.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import io
import json
import sys
import types

import numpy as np
import pytest

from gpuwhy.bench import link as L
from gpuwhy.engine.timing import summarize
from gpuwhy.errors import MeasurementError

# ------------------------------------------------------------- PCIe maths ----


@pytest.mark.parametrize(
    "gen,width,want",
    [
        (1, 1, 0.25),          # 2.5 GT/s x 8/10 / 8 bits
        (1, 16, 4.0),
        (2, 16, 8.0),          # 5 GT/s x 8/10 x 16 / 8
        (3, 16, 15.754),       # 8 GT/s x 128/130 x 16 / 8
        (4, 16, 31.508),
        (5, 16, 63.015),       # the H200's link
        (5, 8, 31.508),
        (6, 16, 128.0),        # 64 GT/s, FLIT mode, no line code (FLIT overhead not counted)
    ],
)
def test_pcie_theoretical_rates(gen, width, want):
    assert L.pcie_theoretical_gbs(gen, width) == pytest.approx(want, abs=1e-3)


def test_pcie_rate_table_and_errors():
    assert L.PCIE_GT_PER_S == {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
    assert L.PCIE_ENCODING[2] == (8, 10) and L.PCIE_ENCODING[3] == (128, 130) and L.PCIE_ENCODING[5] == (128, 130)
    assert "pcisig.com" in L.PCIE_SOURCE
    with pytest.raises(ValueError, match="generation 7"):
        L.pcie_theoretical_gbs(7, 16)
    with pytest.raises(ValueError, match="x0"):
        L.pcie_theoretical_gbs(5, 0)


def test_link_info_pcie_c2c_unknown():
    li = L.link_info_from("NVIDIA H200", 5, 16, 1, 16, 5)
    assert li.kind == "pcie" and li.label == "PCIe gen 5 x16" and li.theoretical_gbs == pytest.approx(63.015, abs=1e-3)
    assert "32 GT/s x 128/130 x 16 lanes / 8 = 63.02 GB/s" in li.note and li.source == L.PCIE_SOURCE
    slot = L.link_info_from("NVIDIA H100 PCIe", 4, 16, 4, 16, 5)
    assert slot.theoretical_gbs == pytest.approx(31.508, abs=1e-3) and "supports gen 5" in slot.note
    gh = L.link_info_from("NVIDIA GH200 480GB", 5, 16, machine="aarch64")
    assert gh.kind == "c2c" and gh.theoretical_gbs is None and "NVLink-C2C" in gh.note and gh.label == "NVLink-C2C"
    unk = L.link_info_from("NVIDIA H200", None, None)
    assert unk.kind == "unknown" and unk.theoretical_gbs is None and "not readable" in unk.note
    assert L.link_info_from("x", 9, 16).kind == "unknown"


def test_probe_link_never_raises_without_a_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    li = L.probe_link(None)
    assert isinstance(li, L.LinkInfo)
    if li.kind == "unknown":  # no GPU here: the reason is kept as a note
        assert li.theoretical_gbs is None and li.note


def test_probe_link_reads_the_probe_report(monkeypatch):
    from gpuwhy.device import probe
    from gpuwhy.device.nvml import NA

    def report(gen_max, width_max, name="NVIDIA H200"):
        health = types.SimpleNamespace(pcie_gen_max=gen_max, pcie_width_max=width_max, pcie_gen_current=1,
                                       pcie_width_current=16, pcie_gen_gpu_max=5)
        dev = types.SimpleNamespace(identity=types.SimpleNamespace(name=name), health=health)
        return types.SimpleNamespace(devices=(dev,))

    seen = {}

    def fake_probe(device=None, spec_dirs=(), *, full=True):
        seen["device"] = device
        return report(5, 16)

    monkeypatch.setattr(probe, "probe_devices", fake_probe)
    li = L.probe_link("GPU-1234", ())
    assert seen["device"] == "GPU-1234" and li.kind == "pcie" and li.gen == 5 and li.gen_current == 1
    assert li.theoretical_gbs == pytest.approx(63.015, abs=1e-3)
    monkeypatch.setattr(probe, "probe_devices", lambda *a, **k: report(NA("not supported", "not_supported"), 16))
    assert L.probe_link(None).kind == "unknown"


def test_compare_finds_the_first_wrong_byte_across_pieces():
    want = np.arange(1000, dtype=np.uint8)
    got = np.concatenate([want.copy(), np.full(L.GUARD, L.POISON, np.uint8)])
    L._compare(got, want, 1000, "x", chunk=64)
    got[700] ^= 1
    with pytest.raises(MeasurementError, match="1 wrong bytes \\(first at offset 700"):
        L._compare(got, want, 1000, "x", chunk=64)
    got[700] ^= 1
    got[1001] = 0
    with pytest.raises(MeasurementError, match="wrote past its end"):
        L._compare(got, want, 1000, "x", chunk=64)


# ------------------------------------------------------- curve arithmetic ----


def test_sizes_plateau_half_bandwidth_and_ratio():
    sizes = L.link_sizes()
    assert sizes[0] == 4096 and sizes[-1] == 2**30 and len(sizes) == 19
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    # a link with a 10 us floor and a 50 GB/s plateau: t = 10e-6 + n / 50e9
    gbs = [n / (10e-6 + n / 50e9) / 1e9 for n in sizes]
    plat = L.plateau_gbs(sizes, gbs)
    assert plat == pytest.approx(gbs[-2]) and 49 < plat < 50
    half = L.half_bandwidth_bytes(sizes, gbs, plat)
    # half the plateau where n / 50e9 == 10e-6 (n = 500 kB), to within the x2 grid's interpolation
    assert 0.8 * 500e3 < half < 1.25 * 500e3
    assert L.half_bandwidth_bytes(sizes, gbs, 1e9) is None
    assert L.half_bandwidth_bytes([4096, 8192], [30.0, 40.0], 40.0) == 4096.0
    assert L.pinned_pageable_ratio(50.0, 12.5) == pytest.approx(4.0)
    assert L.pinned_pageable_ratio(None, 12.5) is None and L.pinned_pageable_ratio(50.0, 0) is None
    assert L.bandwidth_gbs(2e9, 0.5) == pytest.approx(4.0)


def _row(direction, memory, n, t, host=None):
    m = summarize([t])
    return L.LinkRow(direction, memory, n, m, summarize([host]) if host else m, L.TIMING[memory])


def test_summaries_and_ratios_from_rows():
    info = L.link_info_from("NVIDIA H200", 5, 16)
    rows = []
    for n in (4096, 1 << 20, 1 << 26, 1 << 28, 1 << 30):
        rows.append(_row("h2d", "pinned", n, 2e-6 + n / 55e9, 8e-6 + n / 55e9))
        rows.append(_row("h2d", "pageable", n, 12e-6 + n / 11e9))
        rows.append(_row("bidir", "pinned", n, 3e-6 + n / 50e9))
    res = L.LinkResult(device=types.SimpleNamespace(name="NVIDIA H200", arch="sm_90"), link=info, rows=tuple(rows),
                       curves=tuple(L.summarize_curves(rows, info)), checks=())
    c = res.curve("h2d", "pinned")
    assert c.floor_bytes == 4096 and c.floor_s == pytest.approx(2e-6 + 4096 / 55e9)
    assert c.plateau_gbs == pytest.approx(2**28 / (2e-6 + 2**28 / 55e9) / 1e9)
    assert c.pct_of_theoretical == pytest.approx(100 * c.plateau_gbs / 63.015, rel=1e-3)
    b = res.curve("bidir", "pinned")
    assert b.plateau_gbs == pytest.approx(2 * 2**28 / (3e-6 + 2**28 / 50e9) / 1e9)
    assert b.pct_of_theoretical == pytest.approx(100 * b.plateau_gbs / (2 * 63.015), rel=1e-3)
    # the ratio compares host-clock times on both sides
    want = (2**28 / (8e-6 + 2**28 / 55e9)) / (2**28 / (12e-6 + 2**28 / 11e9))
    assert res.ratio("h2d") == pytest.approx(want)
    assert res.ratio("h2d", "small") == pytest.approx((12e-6 + 4096 / 11e9) / (8e-6 + 4096 / 55e9))
    assert res.ratio("d2h") is None
    doc = res.to_dict()
    assert doc["pinned_pageable_ratio"]["h2d"]["plateau"] == pytest.approx(want)
    assert "H2D pinned 55.0 GB/s (87%)" in doc["summary"] and f"(pinned {want:.1f}x)" in doc["summary"]


def test_fill_pattern_has_a_prime_period():
    a = np.zeros(3 * L.PATTERN_PERIOD + 5, np.uint8)
    L.fill_pattern(a)
    assert np.all(a != 0)
    assert np.array_equal(a[: L.PATTERN_PERIOD], a[L.PATTERN_PERIOD : 2 * L.PATTERN_PERIOD])
    assert not np.array_equal(a[:4096], a[4096:8192])  # a shift by any power of two shows


# ------------------------------------------------------------ fake device ----


class CUDAError(Exception):
    pass


class FakeDevice:
    """State of the fake GPU: device memory, pinned host memory, a clock, kernels, faults."""

    def __init__(self, l2=256 * 1024, total=8 * 2**30):
        self.l2, self.total = l2, total
        self.mem: dict[int, np.ndarray] = {}
        self.bases: list[int] = []
        self.pinned: dict[int, np.ndarray] = {}
        self.next_ptr = 0x7F0000000000
        self.clock = 0.0
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

    # memory
    def alloc(self, n):
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
        i = bisect.bisect_right(self.bases, int(addr)) - 1
        base = self.bases[i]
        off = int(addr) - base
        assert 0 <= off < self.mem[base].size, f"address 0x{int(addr):x} outside every allocation"
        return base, off

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

    # kernels
    def run(self, name, grid, args):
        self.launches.append(name)
        if name == "empty_kernel":
            self.clock += 2e-6
        elif name == "spin_kernel":
            self.clock += int(args[0]) * 1e-9
        elif name == "touch_nodes":
            self.clock += 3e-6
        elif name in ("chase_ca", "chase_cg"):
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
        else:
            raise AssertionError(f"the fake has no kernel {name}")


def make_modules(gpu: FakeDevice):
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

    class Props:
        multiprocessor_count = 132
        l2_cache_size = gpu.l2
        max_threads_per_multiprocessor = 2048
        gpu_pci_device_id = 0x233510DE

    class Event:
        def __init__(self):
            self.t = 0.0
            self.closed = False

        is_done = True

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

    gpu.streams, gpu.events = [], []

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
        gpu.run(kernel.name, cfg.grid, args)

    core.Device, core.ObjectCode, core.LaunchConfig, core.launch = Device, ObjectCode, LaunchConfig, launch
    core.EventOptions = lambda **kw: kw
    return core, drv


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Install the fake device (no NVML), its clock as the host clock, and a private cache folder."""
    import cuda.bindings
    import cuda.bindings.nvrtc  # noqa: F401  (the real NVRTC compiles the kernels)

    gpu = FakeDevice()
    core, drv = make_modules(gpu)
    monkeypatch.setitem(sys.modules, "cuda.core", core)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", drv)
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(L, "host_clock", lambda: gpu.clock)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return gpu


def _clean(gpu):
    assert not gpu.mem, "device memory left allocated"
    assert not gpu.pinned, "pinned host memory left allocated"
    assert all(s.closed for s in gpu.streams[1:]), "a second stream was left open"


SIZES = [4096, 65536, 1 << 20, 4 << 20]


def _capture(fn, *args, **kw):
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


def test_fake_link_run_checks_times_and_frees(fake, monkeypatch):
    monkeypatch.setattr(L, "probe_link", lambda device, spec_dirs=(): L.link_info_from("NVIDIA H200", 5, 16, 5, 16, 5))
    res = L.measure_link(None, sizes=SIZES)
    _clean(fake)
    assert {(r.direction, r.memory) for r in res.rows} == {("h2d", "pinned"), ("d2h", "pinned"), ("h2d", "pageable"),
                                                           ("d2h", "pageable"), ("bidir", "pinned")}
    assert len(res.rows) == 5 * len(SIZES)
    # pinned rows are event-timed (GPU time of the copy alone: the spin padding is not counted)
    for r in res.rows:
        if r.memory == "pinned" and r.direction != "bidir":
            assert r.time.median_s == pytest.approx(fake.pinned_lat + r.size_bytes / 50e9)
        if r.memory == "pageable":
            assert r.time.median_s == pytest.approx(fake.pageable_lat + r.size_bytes / 10e9)
    bi = [r for r in res.rows if r.direction == "bidir" and r.size_bytes == SIZES[-1]][0]
    assert bi.bytes_moved == 2 * SIZES[-1]
    # the ratio as the fake's bandwidth model says it must be, at the largest sizes
    plat_pin = L.plateau_gbs(SIZES, [n / (2e-6 + n / 50e9) / 1e9 for n in SIZES])
    plat_pag = L.plateau_gbs(SIZES, [n / (8e-6 + n / 10e9) / 1e9 for n in SIZES])
    assert res.ratio("h2d") == pytest.approx(plat_pin / plat_pag)
    assert res.curve("h2d", "pinned").pct_of_theoretical == pytest.approx(100 * plat_pin / 63.015, rel=1e-3)
    assert len(res.checks) == 3 and "byte for byte" in res.checks[0]
    assert any("stages them through its own pinned buffer" in n for n in res.notes)


def test_fake_link_cli_json_and_human(fake, monkeypatch):
    from gpuwhy.cli.hierarchy import run_link_cmd

    monkeypatch.setattr(L, "probe_link", lambda device, spec_dirs=(): L.link_info_from("NVIDIA H200", 5, 16, 5, 16, 5))
    monkeypatch.setattr(L, "link_sizes", lambda *a, **k: list(SIZES))
    out, err = _capture(run_link_cmd, None, True, ())
    doc = json.loads(out)
    assert doc["kind"] == "bench-link" and doc["link"]["label"] == "PCIe gen 5 x16"
    assert doc["link"]["theoretical_gbs"] == pytest.approx(63.015, abs=1e-3)
    assert {c["direction"] for c in doc["curves"]} == {"h2d", "d2h", "bidir"}
    assert doc["pinned_pageable_ratio"]["h2d"]["plateau"] > 1 and doc["summary"].startswith("gpuwhy bench --link:")
    _clean(fake)
    out, err = _capture(run_link_cmd, None, False, ())
    for needle in ("PCIe gen 5 x16", "63.02 GB/s per direction", "H2D pinned", "D2H pageable", "both ways",
                   "small-copy floor", "pinned vs pageable, host-to-device", "pin_memory=True", "half bandwidth at"):
        assert needle in out, needle
    assert out.strip().splitlines()[-1].startswith("gpuwhy bench --link: NVIDIA H200")
    _clean(fake)


def test_fake_link_wrong_copy_is_caught_and_everything_freed(fake, monkeypatch):
    monkeypatch.setattr(L, "probe_link", lambda device, spec_dirs=(): L.LinkInfo())
    fake.corrupt_copy = True
    with pytest.raises(MeasurementError, match="wrong bytes"):
        L.measure_link(None, sizes=SIZES)
    _clean(fake)


@pytest.mark.parametrize("after", [0, 9, 40])
def test_fake_link_cuda_error_frees_everything(fake, monkeypatch, after):
    monkeypatch.setattr(L, "probe_link", lambda device, spec_dirs=(): L.LinkInfo())
    fake.fault_after_copies = after
    with pytest.raises(MeasurementError, match="ILLEGAL_ADDRESS"):
        L.measure_link(None, sizes=SIZES)
    _clean(fake)
