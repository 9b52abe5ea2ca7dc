"""`gpuwhy check --level 1|2` (as ``dcgmi diag -r``) and ``--drain-reason``, on fake nodes of
recorded H200s (tests/fakes.py: NVML and the CUDA driver faked) and on recorded observations."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fakes import Machine, h200_node, make_driver
from test_check import H200

HEALTHY = {"ecc_volatile_uncorrected": 0, "remapped_rows": (0, 0, False, False), "retired_pages_pending": False,
           "clock_event_reasons": 0x1, "processes": []}  # idle, nothing pending


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


def _node(machine, extra=None):
    """Two healthy H200s (``extra`` overrides GPU 1's NVML fields) whose CUDA driver counts its cuInit calls."""
    h200_node(machine, 2, nvml_extra=[dict(HEALTHY), {**HEALTHY, **(extra or {})}])
    import sys

    drv = sys.modules["cuda.bindings.driver"]
    inits = []
    real = drv.cuInit
    drv.cuInit = lambda flags: inits.append(flags) or real(flags)
    return inits


def _forbid_measuring(monkeypatch):
    """Any measurement at level 1 is a bug: the engine and the benchmarks raise if called."""
    from gpuwhy.bench import runner
    from gpuwhy.check import observe
    from gpuwhy.engine import context

    def boom(*a, **k):
        raise AssertionError("level 1 measured")

    monkeypatch.setattr(context, "open_device", boom)
    monkeypatch.setattr(runner, "run_bench", boom)
    monkeypatch.setattr(observe, "observe_device", boom)


def test_level_1_reads_nvml_alone_and_judges_health(machine, cli, monkeypatch):
    inits = _node(machine, {"ecc_volatile_uncorrected": 4, "clock_event_reasons": 0x8, "pcie_gen_current": 3})
    _forbid_measuring(monkeypatch)
    code, out, err = cli("check", "--level", "1", "-i", "all", "--json")
    assert code == 1, err
    assert inits == []  # the CUDA driver was never initialised: no cuInit, no context
    doc = json.loads(out)
    assert doc["level"] == 1 and [o["nvml_index"] for o in doc["observations"]] == [0, 1]
    names = [c["name"] for c in doc["devices"][0]["checks"]]
    assert names == ["ecc_uncorrected", "remapped_rows", "clock_events", "pcie_link", "other_processes", "driver_nvrtc"]
    st0 = {c["name"]: c["status"] for c in doc["devices"][0]["checks"]}
    st1 = {c["name"]: c for c in doc["devices"][1]["checks"]}
    assert set(st0.values()) == {"pass"}  # idle is not a slowdown
    assert st1["ecc_uncorrected"]["status"] == "fail" and st1["pcie_link"]["status"] == "fail"
    assert st1["clock_events"]["status"] == "fail" and st1["clock_events"]["clock_events"] == ["hw_slowdown"]
    assert st1["clock_events"]["threshold_text"] == "no slowdown now"
    assert doc["drain_reason"].startswith("gpuwhy check -r1: GPU 1 ecc_uncorrected: 4 volatile uncorrected errors; ")
    from test_schema import check_document

    check_document(doc)


def test_level_1_terminal_view_says_nothing_was_measured(machine, cli, monkeypatch):
    _node(machine)
    _forbid_measuring(monkeypatch)
    code, out, err = cli("check", "-r", "1")
    assert code == 0, err
    assert "nothing measured" in out and "dram_bandwidth" not in out and "ecc_uncorrected" in out


def test_level_2_is_the_default_and_measures(machine, cli, monkeypatch):
    from gpuwhy.check import observe
    from gpuwhy.check.policy import Observations

    inits = _node(machine)
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")
    seen = []

    def fake_observe(device, policy, spec_dirs=(), gpu=None):
        seen.append(device)
        return replace(H200, uuid=device, nvml_index=0), 0.5

    monkeypatch.setattr(observe, "observe_device", fake_observe)
    code, out, err = cli("check", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["level"] == 2 and len(seen) == 1 and inits  # the measuring level opens the CUDA driver
    assert "dram_bandwidth" in [c["name"] for c in doc["devices"][0]["checks"]] and doc["drain_reason"] is None
    assert Observations  # the fake returns the real type


@pytest.mark.parametrize("args, needle", [
    (["--level", "3"], "--level must be 1 (NVML health only, nothing measured"),
    (["--level", "1", "--min-bandwidth", "0.9"], "--min-bandwidth has no effect at --level 1"),
    (["--level", "1", "--baseline", "b.json"], "--baseline has no effect at --level 1"),
    (["--drain-reason", "--json"], "--drain-reason and --json exclude each other"),
])
def test_level_and_drain_reason_refusals(cli, tmp_path, args, needle):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([H200.to_dict()]))
    code, out, err = cli("check", "--recorded", str(rec), *args)
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    # with --json, the one error document every --json command prints on a failure; else nothing
    assert (json.loads(out)["kind"] == "error") if "--json" in args else out == ""


def test_drain_reason_is_one_line_on_stdout(cli, tmp_path):
    rec = tmp_path / "obs.json"
    bad = replace(H200, nvml_index=5, ecc_uncorrected=2, device='NVIDIA "H200"')
    rec.write_text(json.dumps([replace(H200, nvml_index=0).to_dict(), bad.to_dict()]))
    code, out, err = cli("check", "--recorded", str(rec), "--drain-reason")
    assert code == 1
    assert out == "gpuwhy check -r2: GPU 5 ecc_uncorrected: 2 volatile uncorrected errors\n"
    rec.write_text(json.dumps([H200.to_dict()]))
    code, out, err = cli("check", "--recorded", str(rec), "--drain-reason")
    assert (code, out) == (0, "")  # nothing to drain for: nothing on stdout


def test_drain_reason_of_a_gpu_that_cannot_be_read(machine, cli):
    machine.no_nvml_library()
    machine.driver(make_driver([]))
    code, out, err = cli("check", "--level", "1", "--drain-reason")
    assert code == 3 and out.count("\n") == 1 and out.startswith("gpuwhy check -r1: ") and '"' not in out
    assert err.count("\n") == 1  # and the error line, as always


def test_drain_reason_keeps_whole_items_and_counts_the_rest():
    from gpuwhy.check.drain import MAX_CHARS, drain_reason

    items = [f"GPU {i} ecc_uncorrected: {1000 + i} volatile uncorrected errors" for i in range(8)]
    line = drain_reason(items, 1)
    assert len(line) <= MAX_CHARS and line.endswith(" more")
    kept = line.removeprefix("gpuwhy check -r1: ").split("; ")
    assert kept[:-1] == items[: len(kept) - 1] and kept[-1] == f"and {8 - len(kept) + 1} more"
    assert drain_reason(['a "quoted"\nthing'], 2) == "gpuwhy check -r2: a 'quoted' thing"
    assert drain_reason([], 2) is None
