"""`gpuwhy bench --latency` / `--link` on a real GPU: small runs (skipped without one).

These check what a GPU must show whatever its model: the chase is followed
(the kernels' final addresses are checked inside the runs), latency rises from
a few-KiB working set to one far past the L2, clock64 agrees with the sampled
clock, copies arrive byte for byte and stay under the link's theoretical rate.
The full runs recorded under docs/results/ are done with the CLI.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

pytestmark = pytest.mark.gpu

KIB, MIB = 1024, 2**20


def test_latency_small_run_orders_the_levels():
    from gpuwhy.bench.latency import measure_latency

    # three L1-sized sets, three of a few MiB (L2 on every GPU gpuwhy targets), three far beyond any L2
    sizes = [4 * KIB, 8 * KIB, 16 * KIB, 2 * MIB, 3 * MIB, 4 * MIB, 512 * MIB, 640 * MIB, 768 * MIB]
    res = measure_latency(None, sizes=sizes)
    lat = {p.working_set_bytes: p.latency_s for p in res.points}
    assert len(lat) == len(sizes)
    assert lat[8 * KIB] < lat[3 * MIB] < lat[640 * MIB]
    # an L1 hit: tens of ns (the H200: 16 ns); DRAM: hundreds (the H200: 347 ns at 4 x L2,
    # docs/results/2026-11-29-h200.md). A chase 3x slower than those is a broken measurement.
    assert 3e-9 < lat[8 * KIB] < 50e-9
    assert 150e-9 < lat[640 * MIB] < 1e-6
    for p in res.points:
        assert p.cycles and p.cycles > 1
        if p.sm_clock_mhz:  # clock64 cycles / ns agrees with the NVML clock (boost changes allowed)
            assert 0.7 * p.sm_clock_mhz < p.implied_clock_mhz < 1.3 * p.sm_clock_mhz
    names = [lv.name for lv in res.levels]
    assert names[0] == "L1" and "DRAM" in names and names[-1].startswith("DRAM"), names
    assert res.level("DRAM").latency_s > 3 * res.level("L1").latency_s


def test_latency_cg_bypasses_l1():
    from gpuwhy.bench.latency import measure_latency

    sizes = [4 * KIB, 8 * KIB, 16 * KIB, 512 * MIB, 640 * MIB, 768 * MIB]
    ca = {p.working_set_bytes: p.latency_s for p in measure_latency(None, sizes=sizes).points}
    cg = {p.working_set_bytes: p.latency_s for p in measure_latency(None, sizes=sizes, l1_bypass=True).points}
    assert cg[8 * KIB] > 2 * ca[8 * KIB]  # .cg goes to L2 even for a set that fits in L1


def test_link_small_run():
    from gpuwhy.bench.link import measure_link

    res = measure_link(None, sizes=[4 * KIB, 1 * MIB, 64 * MIB])
    assert len(res.rows) == 15 and len(res.checks) == 3
    for c in res.curves:
        assert c.floor_s < 1e-3 and c.plateau_gbs > 0.5
        if c.pct_of_theoretical is not None:
            assert c.pct_of_theoretical < 105
    pin, pag = res.curve("h2d", "pinned"), res.curve("h2d", "pageable")
    assert pin.plateau_gbs > 0 and pag.plateau_gbs > 0 and res.ratio("h2d") is not None
    # pinned host-to-device at half the link's theoretical rate or more (the H200's PCIe gen 5 x16:
    # 55.3 of 63.0 GB/s, 88%, docs/results/2026-11-29-h200.md); pinned beats pageable
    # (55.3 GB/s device-to-host too). A PCIe link's rate is known from its generation and width; only
    # NVLink-C2C (Grace) has none to compare with.
    if res.link.kind != "c2c":
        assert res.link.theoretical_gbs, f"the link's theoretical rate is unknown: {res.link}"
        assert pin.pct_of_theoretical >= 50.0, (pin.plateau_gbs, res.link.theoretical_gbs)
        d2h = res.curve("d2h", "pinned")
        assert d2h.pct_of_theoretical >= 50.0, (d2h.plateau_gbs, res.link.theoretical_gbs)
    assert res.ratio("h2d") > 1.0


def test_cli_functions_emit_one_json_document(capsys):
    from gpuwhy.cli.app import main

    main(["bench", "--latency", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "bench-latency" and doc["points"]
    lv = {x["name"]: x["latency_s"] for x in doc["levels"]}
    # the full ladder, the same bounds as the small run (the H200: L1 16 ns, DRAM 347 ns)
    assert list(lv)[0] == "L1" and 3e-9 < lv["L1"] < 50e-9 and 150e-9 < lv["DRAM"] < 1e-6, lv


def test_compile_only_lists_the_latency_kernels():
    r = run_cli("bench", "--compile-only", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    by = {s["source"]: s for s in doc["sources"]}
    assert set(by["latency.cu"]["kernels"]) == {"chase_ca", "chase_cg", "touch_nodes"}
