"""node_exporter textfile metrics of `gpuwhy check` and `gpuwhy bench` (render/textfile.py), read back
with prometheus_client's own exposition parser, and the atomic write (outputs.write_atomically)."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace

import pytest

from test_check import H200

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is not installed")

#: dcgm-exporter's label names for a GPU, as its template writes them (NVIDIA/dcgm-exporter,
#: internal/pkg/rendermetrics/render_metrics.go, releases up to 4.5.3-4.8.2): written out here, not
#: imported, so a change of gpuwhy's names fails this test.
DCGM_LABELS = {"gpu", "UUID", "modelName", "Hostname"}


def _families(text: str) -> dict:
    return {f.name: f for f in parser.text_string_to_metric_families(text)}


def _value(fam, **labels) -> float:
    hits = [s.value for s in fam.samples if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(hits) == 1, (fam.name, labels, hits)
    return hits[0]


def _recorded(tmp_path, *obs) -> str:
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps({"kind": "check", "host": "node-a", "date": "2026-12-01T10:00:00+00:00",
                               "observations": [o.to_dict() for o in obs]}))
    return str(rec)


GOOD = replace(H200, nvml_index=0, uuid="GPU-0000aaaa")
BAD = replace(H200, nvml_index=3, uuid="GPU-0000bbbb", ecc_uncorrected=2, pcie_gen=(3, 5))


def test_check_textfile_parses_with_dcgm_exporter_labels(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("NODE_NAME", raising=False)
    prom = tmp_path / "gpuwhy.prom"
    code, out, err = cli("check", "--recorded", _recorded(tmp_path, GOOD, BAD), "--textfile", str(prom))
    assert code == 1, err  # a check failed: the file is written all the same (that is what it is for)
    fams = _families(prom.read_text())
    for fam in fams.values():
        assert fam.type == "gauge" and fam.documentation
        for s in fam.samples:
            assert s.labels["Hostname"] == "node-a" and s.labels["command"] == "check" and s.labels["level"] == "2"
            if fam.name not in ("gpuwhy_last_run_timestamp_seconds", "gpuwhy_unmeasured_gpus"):
                assert DCGM_LABELS <= set(s.labels), (fam.name, s.labels)
    state = fams["gpuwhy_check_state"]
    # a state set: per GPU and check, exactly one of DCGM's four states is 1
    seen = {}
    for s in state.samples:
        seen.setdefault((s.labels["UUID"], s.labels["check"]), []).append((s.labels["state"], s.value))
    assert all(sorted(st for st, _ in v) == ["fail", "pass", "skip", "warn"] and sum(x for _, x in v) == 1 for v in seen.values())
    assert _value(state, gpu="3", check="ecc_uncorrected", state="fail") == 1
    assert _value(state, gpu="3", check="pcie_link", state="fail") == 1
    assert _value(state, gpu="0", check="ecc_uncorrected", state="pass") == 1
    assert _value(state, gpu="0", check="power_cap", state="skip") == 1
    assert _value(fams["gpuwhy_gpu_state"], gpu="3", state="fail") == 1
    assert _value(fams["gpuwhy_gpu_state"], gpu="0", state="pass") == 1
    # figures in base units, the unit in the name
    assert _value(fams["gpuwhy_dram_bandwidth_bytes_per_second"], gpu="0") == pytest.approx(4450e9)
    assert _value(fams["gpuwhy_sheet_dram_bandwidth_bytes_per_second"], gpu="0") == pytest.approx(4800e9)
    assert _value(fams["gpuwhy_compute_ops_per_second"], gpu="0", precision="bf16") == pytest.approx(900e12)
    assert _value(fams["gpuwhy_compute_ops_per_second"], gpu="0", precision="fp32") == pytest.approx(64.8e12)
    assert _value(fams["gpuwhy_sheet_compute_ops_per_second"], gpu="0", precision="bf16") == pytest.approx(989.5e12)
    assert _value(fams["gpuwhy_launch_overhead_seconds"], gpu="0") == pytest.approx(2.1e-6)
    assert _value(fams["gpuwhy_fraction_of_sheet_ratio"], gpu="0", check="dram_bandwidth") == pytest.approx(4450 / 4800)
    assert _value(fams["gpuwhy_ecc_uncorrected_errors"], gpu="3") == 2
    assert _value(fams["gpuwhy_pcie_link_generation"], gpu="3", link="current") == 3
    assert _value(fams["gpuwhy_pcie_link_generation"], gpu="3", link="max") == 5
    assert _value(fams["gpuwhy_last_run_timestamp_seconds"]) == 1796119200.0  # 2026-12-01T10:00:00Z
    assert _value(fams["gpuwhy_unmeasured_gpus"]) == 0
    assert "metrics written to" in err


def test_hostname_is_node_name_when_set_and_label_values_are_escaped(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("NODE_NAME", "gpu-node-7")  # dcgm-exporter's Hostname under Kubernetes
    odd = replace(GOOD, device='NVIDIA "H200" \\ test')
    prom = tmp_path / "gpuwhy.prom"
    assert cli("check", "--recorded", _recorded(tmp_path, odd), "--textfile", str(prom))[0] == 0
    fams = _families(prom.read_text())
    s = fams["gpuwhy_gpu_state"].samples[0]
    assert s.labels["Hostname"] == "gpu-node-7" and s.labels["modelName"] == 'NVIDIA "H200" \\ test'


def test_a_missing_figure_is_left_out_never_zero(cli, tmp_path):
    prom = tmp_path / "gpuwhy.prom"
    cli("check", "--recorded", _recorded(tmp_path, replace(GOOD, dram_bandwidth_gbs=None, pcie_gen=None, pcie_width=None)),
        "--textfile", str(prom))
    fams = _families(prom.read_text())
    assert "gpuwhy_dram_bandwidth_bytes_per_second" not in fams and "gpuwhy_pcie_link_generation" not in fams
    assert _value(fams["gpuwhy_check_state"], check="dram_bandwidth", state="skip") == 1


def test_textfile_is_replaced_atomically_and_never_a_users_file(cli, tmp_path):
    rec = _recorded(tmp_path, GOOD)
    prom = tmp_path / "gpuwhy.prom"
    assert cli("check", "--recorded", rec, "--textfile", str(prom))[0] == 0
    first = prom.read_text()
    assert first.startswith("# gpuwhy textfile metrics")
    assert stat.S_IMODE(prom.stat().st_mode) == 0o644  # node_exporter often runs as another user
    assert cli("check", "--recorded", rec, "--textfile", str(prom))[0] == 0  # gpuwhy's own file: replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpuwhy.prom", "obs.json"]  # no temporary file left
    mine = tmp_path / "node.prom"
    mine.write_text("node_custom_metric 1\n")
    code, out, err = cli("check", "--recorded", rec, "--textfile", str(mine))
    assert code == 2 and err.count("\n") == 1 and "gpuwhy did not write it" in err
    assert mine.read_text() == "node_custom_metric 1\n"
    code, out, err = cli("check", "--recorded", rec, "--textfile", str(tmp_path / "gpuwhy.txt"))
    assert code == 2 and err.count("\n") == 1 and "*.prom" in err and out == ""
    code, out, err = cli("check", "--recorded", rec, "--textfile", str(tmp_path / "no" / "gpuwhy.prom"))
    assert code == 2 and err.count("\n") == 1 and "does not exist" in err


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from gpuwhy.errors import UsageError
    from gpuwhy.render.textfile import write_textfile

    prom = tmp_path / "gpuwhy.prom"
    write_textfile(str(prom), "# gpuwhy textfile metrics\nold 1\n")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(UsageError, match="cannot write .No space left on device"):
        write_textfile(str(prom), "# gpuwhy textfile metrics\nnew 1\n")
    assert prom.read_text() == "# gpuwhy textfile metrics\nold 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gpuwhy.prom"]


def test_node_exporter_would_refuse_no_series_twice(cli, tmp_path):
    """Level 1, level 2 and bench files may share a folder: their series differ by labels, and one
    file never holds a series twice (node_exporter refuses a scrape that does)."""
    rec = _recorded(tmp_path, GOOD, BAD)
    keys = []
    for level, name in (("1", "health.prom"), ("2", "check.prom")):
        assert cli("check", "--recorded", rec, "--level", level, "--textfile", str(tmp_path / name))[0] == 1
        for fam in _families((tmp_path / name).read_text()).values():
            keys += [(s.name, tuple(sorted(s.labels.items()))) for s in fam.samples]
    assert len(keys) == len(set(keys))


@pytest.fixture
def fake(monkeypatch, tmp_path):
    from fakes import install_quick

    return install_quick(monkeypatch, tmp_path)


def test_bench_quick_textfile_on_the_fake_gpu(cli, fake, tmp_path, monkeypatch):
    monkeypatch.delenv("NODE_NAME", raising=False)
    prom = tmp_path / "bench.prom"
    code, out, err = cli("bench", "--quick", "--no-save", "--json", "--textfile", str(prom))
    assert code == 0, err
    doc = json.loads(out)
    fams = _families(prom.read_text())
    bw = fams["gpuwhy_dram_bandwidth_bytes_per_second"].samples
    assert len(bw) == 1 and bw[0].value == pytest.approx(doc["sustained_dram_gbs"] * 1e9)
    assert bw[0].labels["UUID"] == doc["device"]["uuid"] and bw[0].labels["modelName"] == "NVIDIA H200"
    assert DCGM_LABELS <= set(bw[0].labels) and bw[0].labels["command"] == "bench" and "level" not in bw[0].labels
    assert _value(fams["gpuwhy_launch_overhead_seconds"]) == pytest.approx(doc["launch_overhead"]["event_s"])
    assert "gpuwhy_check_state" not in fams  # no baseline: nothing judged


def test_bench_textfile_applies_to_the_memory_runs_only(cli, fake, tmp_path):
    code, out, err = cli("bench", "--latency", "--textfile", str(tmp_path / "b.prom"))
    assert code == 2 and err.count("\n") == 1 and "--textfile applies to bench --quick and --sweep" in err
    assert not (tmp_path / "b.prom").exists()
