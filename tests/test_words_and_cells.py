"""Counts agree with their nouns, sources nest no parentheses, CSV cells hold plain numbers."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from conftest import ROOT, run_cli


def test_fmt_counted_agrees_with_the_count():
    from gpuwhy.units import fmt_counted

    assert fmt_counted(1, "gap") == "1 gap"
    assert fmt_counted(0, "gap") == "0 gaps"
    assert fmt_counted(1234, "launch", "launches") == "1,234 launches"
    assert fmt_counted(1, "launch", "launches") == "1 launch"
    assert fmt_counted(2.5, "GPU") == "2.5 GPUs"


def test_no_message_writes_a_plural_in_parentheses():
    """"1 GPU(s)", "2 file(s)": a count given in the text always meets its noun through fmt_counted."""
    found = []
    for path in sorted((ROOT / "src" / "gpuwhy").rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\}[^\"'{}]{0,40}[a-z]\(s\)|\}[^\"'{}]{0,40}\(es\)", line):
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, found


def _trace(tmp_path: Path, kernels: list[tuple[float, float]]) -> Path:
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i}", "ts": ts, "dur": dur, "pid": 0, "tid": 7,
               "args": {"device": 0, "stream": 7, "correlation": i + 1}} for i, (ts, dur) in enumerate(kernels)]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events}))
    return p


def test_one_gap_is_one_gap(tmp_path):
    p = run_cli("trace", str(_trace(tmp_path, [(1000.0, 10.5), (1050.3, 20.1)])))
    assert p.returncode == 0, p.stderr
    assert "in 1 gap" in p.stdout and "1 gaps" not in p.stdout
    assert "1 gap ending with work" in p.stdout and "1 stream)" in p.stdout
    assert "(1 launch," in p.stdout and "1 launches" not in p.stdout


def test_trace_csv_cells_are_plain_rounded_numbers_with_units_in_the_header(tmp_path):
    p = run_cli("trace", str(_trace(tmp_path, [(1000.0, 10.5), (1050.3, 20.1), (1100.1, 0.3)])), "--csv")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert "time_resolution" not in rows[0] and float(rows[0]["time_resolution_s"]) == 1e-9
    for key, cell in rows[0].items():
        assert not re.search(r"\d{13,}", cell or ""), (key, cell)  # no float noise (0.30000000000000004)
        assert not re.fullmatch(r"[\d.]+ ?(us|ns|ms|s)", cell or ""), (key, cell)  # no unit in a cell
    assert rows[0]["span_s"] == "0.0001004"
    doc = json.loads(run_cli("trace", str(tmp_path / "t.json"), "--json").stdout)["devices"][0]
    assert (doc["time_resolution_s"], doc["time_resolution"]) == (1e-9, "1 ns")  # the text stays beside it in JSON


def test_csv_cell_rounds_away_float_noise_only():
    from gpuwhy.render.csv_out import _cell

    assert _cell(0.1 + 0.2) == "0.3" and _cell(7.039999999999985e-05) == "7.04e-05"
    assert _cell(3350.123456789) == "3350.12345679" and _cell(1e-9) == "1e-09" and _cell(5.0) == "5.0"


def test_the_sheet_source_nests_no_parentheses():
    p = run_cli("classify", "--bytes", "1GB", "--flops", "1T", "--gpu", "H100 SXM")
    assert p.returncode == 0, p.stderr
    gpu = next(ln for ln in p.stdout.splitlines() if ln.startswith("GPU"))
    assert gpu.split(None, 1)[1] == "H100 SXM (bundled spec sheet)"
    j = run_cli("classify", "--bytes", "1GB", "--flops", "1T", "--gpu", "H100 SXM", "--json")
    assert json.loads(j.stdout)["ceilings_source"] == "bundled spec sheet"
