"""Findings of a newcomer's break-it session: each is one line on stderr, a documented exit code, nothing lost."""

import json

import pytest

from conftest import run_cli


def _one_line(err):
    return len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_plot_never_overwrites_a_users_file(cli, tmp_path):
    mine = tmp_path / "mine.png"
    mine.write_text("my notes")
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H200", "--plot", str(mine))
    assert code == 2 and _one_line(err) and "did not write it" in err
    assert mine.read_text() == "my notes"


def test_csv_path_checked_before_measuring(cli, tmp_path):
    mine = tmp_path / "rows.csv"
    mine.write_text("mine")
    code, out, err = cli("bench", "--quick", "--csv", str(mine))
    assert code == 2 and "already exists" in err and mine.read_text() == "mine"
    code, out, err = cli("bench", "--quick", "--csv", str(tmp_path / "missing" / "x.csv"))
    assert code == 2 and "does not exist" in err


@pytest.mark.parametrize("doc, expected", [
    ([], "non-empty list"),
    ([1, 2], "entry 0 is not an object"),
    ([{"device": "x", "dram_bandwidth_gbs": "fast", "sheet_bandwidth_gbs": 4800}], "bad value"),
])
def test_check_recorded_bad_documents(cli, tmp_path, doc, expected):
    f = tmp_path / "obs.json"
    f.write_text(json.dumps(doc))
    code, out, err = cli("check", "--recorded", str(f))
    assert code == 2 and _one_line(err) and expected in err


def test_malformed_trace_is_a_usage_error(cli, tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [[1, 2], "x"]}))
    code, out, err = cli("trace", str(f))
    assert code == 2 and _one_line(err) and "no trace events" in err
    # An event with odd fields (a numeric name, args that are not an object) is read, not refused.
    f.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": 5, "ts": 1, "dur": 2, "args": "x"}]}))
    code, out, err = cli("trace", str(f))
    assert code == 0 and "too-little-to-judge" in out


def test_debug_flag_after_the_command_and_group_without_command():
    r = run_cli("classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--debug", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["regime"]
    r = run_cli("specs")
    assert "gpuwhy: error:" not in r.stderr


def test_specs_validate_of_an_empty_folder_fails(cli, tmp_path):
    code, out, err = cli("specs", "validate", str(tmp_path))
    assert code == 2 and "nothing was validated" in err


def test_times_need_units(cli):
    code, out, err = cli("classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--launch-overhead", "5")
    assert code == 2 and _one_line(err) and "has no unit" in err


def test_report_says_when_gpu_sheet_is_not_the_measured_gpu(cli, tmp_path):
    import gzip
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "docs/results/raw/2026-11-29-h200-run6/bench_sweep.json.gz"
    bench = tmp_path / "bench.json"
    bench.write_bytes(gzip.decompress(raw.read_bytes()))
    code, out, err = cli("report", "--gpu", "rtx 5070", "--bench", str(bench), "--out", str(tmp_path / "a.html"), "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert any("NVIDIA H200" in n and "GeForce RTX 5070" in n and "two different GPUs" in n for n in notes)
    code, out, err = cli("report", "--gpu", "H200", "--bench", str(bench), "--out", str(tmp_path / "b.html"), "--json")
    assert code == 0 and json.loads(out)["notes"] == []
