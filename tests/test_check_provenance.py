"""`check --recorded`: the document's host and date (and where they came from); baseline failures
on a node of eight GPUs of one model name the GPU; `fleet summarize` names a file nested too deeply."""

from __future__ import annotations

import json

from conftest import ROOT, one_line, run_cli

H200_CHECK = ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"


def _node(tmp_path, name: str, slow: int | None = None, host: str | None = None, date: str | None = None):
    """A check document of eight H200s (UUIDs ending in their place), GPU ``slow`` 20% slower on DRAM."""
    doc = json.loads(H200_CHECK.read_text())
    one = doc["observations"][0]
    obs = []
    for i in range(8):
        o = dict(one, uuid=f"GPU-0a1b2c3d-0000-4000-8000-00000000020{i}")
        if i == slow:
            o["dram_bandwidth_gbs"] = one["dram_bandwidth_gbs"] * 0.8
        obs.append(o)
    doc["observations"] = obs
    if host is not None:
        doc["host"] = host
    if date is not None:
        doc["date"] = date
    f = tmp_path / name
    f.write_text(json.dumps(doc))
    return f


def test_recorded_json_fills_host_and_date_and_says_where_they_came_from(tmp_path):
    from gpuwhy.check.document import SOURCES

    p = run_cli("check", "--recorded", str(H200_CHECK), "--json")  # the file names neither
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["host"] and doc["date"][:2] == "20" and "T" in doc["date"]
    assert doc["sources"] == {"host": SOURCES["judged"], "date": SOURCES["judged"]}
    named = _node(tmp_path, "named.json", host="node-17", date="2026-11-30T10:00:00+00:00")
    p = run_cli("check", "--recorded", str(named), "--json")
    doc = json.loads(p.stdout)
    assert (doc["host"], doc["date"]) == ("node-17", "2026-11-30T10:00:00+00:00")
    assert doc["sources"] == {"host": SOURCES["recorded"], "date": SOURCES["recorded"]}


def test_baseline_failure_on_an_eight_gpu_node_names_the_gpu(tmp_path):
    base = _node(tmp_path, "base.json")
    run = _node(tmp_path, "run.json", slow=3)
    p = run_cli("check", "--recorded", str(run), "--baseline", str(base))
    line = one_line(p.returncode, p.stderr, want=1)
    assert "baseline_dram_bandwidth on #3 NVIDIA H200 (GPU-0a1b2c3d-0000-4000-8000-000000000203)" in line, line
    assert "#0" not in line and "000000000202" not in line
    assert "gpuwhy check: #3 NVIDIA H200 GPU-0a1b2c3d-0000-4000-8000-000000000203" in p.stdout


def test_fleet_summarize_names_a_file_nested_too_deeply(tmp_path):
    deep = tmp_path / "node-b" / "check.json"
    deep.parent.mkdir()
    deep.write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "node-a").mkdir()
    (tmp_path / "node-a" / "check.json").write_text(H200_CHECK.read_text())
    p = run_cli("fleet", "summarize", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert f"skipped {deep}: not JSON (nested too deeply" in " ".join(p.stdout.split())
    p = run_cli("fleet", "summarize", str(deep))
    line = one_line(p.returncode, p.stderr)
    assert str(deep) in line and "nested too deeply" in line
