"""`gpuwhy bench -i all` on fake nodes (tests/fake_node.py): one mode on several GPUs, one line per
GPU, each GPU's whole document kept, the slowest GPU named, the host link one GPU after another.
The runs are inline (GPUWHY_WORKERS=inline: the fake CUDA lives in this process); the worker
processes themselves are tested in test_multi_gpu.py."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def node(monkeypatch, tmp_path):
    from fake_node import install_node
    from gpuwhy.bench import link, memory

    monkeypatch.setattr(memory, "QUICK_SIZES", (2**10, 2**16))
    monkeypatch.setattr(memory, "CPU_ELEMENTS", 2**14)
    monkeypatch.setattr(link, "link_sizes", lambda *a, **k: [4096, 65536, 1 << 20])
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")
    # 4 x L2 = 32 KiB: the largest quick size (256 KiB of fp32) is a DRAM figure
    n = install_node(monkeypatch, tmp_path, 3, l2=8192)
    return n


def test_quick_on_three_gpus_json(node, cli):
    from test_schema import check_document

    node.slow = {1: 1.25}  # GPU 1's kernels take 25% longer: 0.8 x the others' bandwidth
    code, out, err = cli("bench", "-i", "all", "-k", "read-vec16", "-k", "launch", "--no-save", "--json")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert doc["kind"] == "bench-multi" and doc["mode"] == "quick" and doc["device_kind"] == "bench" and doc["gpus"] == 3
    for d in doc["devices"]:
        check_document(d["document"])  # each GPU's own bench --json, whole
        assert d["document"]["device"]["uuid"] == d["uuid"] and d["exit_code"] == 0
    dram = [d["figures"]["dram_bandwidth_gbs"] for d in doc["devices"]]
    assert dram[1] == pytest.approx(0.8 * dram[0], rel=0.02) and dram[0] == pytest.approx(dram[2])
    s = doc["slowest"]
    # every kernel of GPU 1 is slower: its bandwidth and its event-timed launches are both 0.8 x the median
    assert s["index"] == 1 and s["figure"] in ("dram_bandwidth_gbs", "launch_overhead_us")
    assert s["ratio"] == pytest.approx(0.8, rel=0.02)
    sch = doc["schedule"]
    assert sch["what"] == "quick" and sch["ran_in"] == "this process"


def test_quick_table_fits_80_columns(node, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("bench", "-i", "0,2", "-k", "read-vec16", "--no-save")
    assert code == 0, err
    assert max(len(x) for x in out.splitlines()) <= 80
    rows = [x.split() for x in out.splitlines() if x.split()[:1] in (["0"], ["2"])]
    assert [r[:3] for r in rows] == [["0", "NVIDIA", "H200"], ["2", "NVIDIA", "H200"]] and all(r[-1] == "ok" for r in rows)
    assert "bench --quick on 2 GPUs" in err


def test_link_runs_one_gpu_after_another(node, cli):
    code, out, err = cli("bench", "-i", "all", "--link", "--json")
    assert code == 0, err
    doc = json.loads(out)
    sch = doc["schedule"]
    assert sch["stages"] == [[0], [1], [2]] and not sch["parallel"]
    assert sch["why"].startswith("one GPU after another: link shares the host link")
    assert all(d["figures"]["h2d_pinned_gbs"] for d in doc["devices"])


def test_a_failing_gpu_is_named_and_the_others_reported(node, cli):
    node.bug = "read_vec16_f32"
    code, out, err = cli("bench", "-i", "all", "-k", "read-vec16", "--no-save", "--json")
    assert code == 4
    doc = json.loads(out)
    assert [d["exit_code"] for d in doc["devices"]] == [4, 4, 4]
    last = err.strip().splitlines()[-1]
    assert last.startswith("gpuwhy: error: 3 GPUs failed: GPU 0 (GPU-0a1b2c3d-0000-4000-8000-000000000200): kernel ")
    assert "; GPU 2 (GPU-0a1b2c3d-0000-4000-8000-000000000202): kernel " in last


def test_options_that_need_one_gpu(node, cli, tmp_path):
    code, out, err = cli("bench", "-i", "all", "--quick", "--csv", str(tmp_path / "x.csv"))
    assert code == 2 and "--csv-file has no effect with several GPUs" in err
    code, out, err = cli("bench", "-i", "all", "--roofline")
    assert code == 2 and "a measurement runs on one GPU and -i all names 3" in err
