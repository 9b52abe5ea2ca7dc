"""`gpuwhy bench --link` without a GPU: PCIe arithmetic, curve summaries, and a fake-device run.

The fake device (tests/fakes.py) stands in for cuda.core and the driver API: numpy
memory for device and pinned host buffers, copies done with memmove, a fake clock
advanced by a bandwidth model (pinned faster than pageable), CUDA events that read
that clock. It proves the bookkeeping (checks, timing paths, ratios, every
allocation freed on every path), never a figure.
"""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from fakes import FakeGpu, capture, install
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
    from gpuwhy.na import NA

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


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Install the fake device (tests/fakes.py: no NVML, a private cache folder) and its clock as the host clock."""
    gpu = install(monkeypatch, FakeGpu(), tmp_path)
    monkeypatch.setattr(L, "host_clock", lambda: gpu.clock)
    return gpu


def _clean(gpu):
    assert not gpu.mem, "device memory left allocated"
    assert not gpu.pinned, "pinned host memory left allocated"
    assert all(s.closed for s in gpu.streams[1:]), "a second stream was left open"


SIZES = [4096, 65536, 1 << 20, 4 << 20]


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
    from gpuwhy.cli.app import main

    monkeypatch.setattr(L, "probe_link", lambda device, spec_dirs=(): L.link_info_from("NVIDIA H200", 5, 16, 5, 16, 5))
    monkeypatch.setattr(L, "link_sizes", lambda *a, **k: list(SIZES))
    out, err = capture(main, ["bench", "--link", "--json"])
    doc = json.loads(out)
    assert doc["kind"] == "bench-link" and doc["link"]["label"] == "PCIe gen 5 x16"
    assert doc["link"]["theoretical_gbs"] == pytest.approx(63.015, abs=1e-3)
    assert {c["direction"] for c in doc["curves"]} == {"h2d", "d2h", "bidir"}
    assert doc["pinned_pageable_ratio"]["h2d"]["plateau"] > 1 and doc["summary"].startswith("gpuwhy bench --link:")
    _clean(fake)
    out, err = capture(main, ["bench", "--link"])
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
