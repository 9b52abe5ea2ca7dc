"""`--csv` on every table command: a header row, one row per record of the `--json`
document's table, SI units in the column names, numbers in full (render/csv_out.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
RECORDED_CHECK = Path(__file__).resolve().parents[1] / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"

# command, the JSON document's rows, columns that must be there (with their units), a number column
COMMANDS = [
    (["specs", "list"], lambda d: d["sheets"], {"name", "memory_bandwidth_gbs", "peak_tflops_fp32", "board_power_w"}, "memory_bandwidth_gbs"),
    (["classify", "--flops", "2.7e8", "--bytes", "3.2GB", "--gpu", "H200"], lambda d: [d],
     {"regime", "arithmetic_intensity", "t_memory_s", "memory_bandwidth_gbs", "workload_bytes"}, "predicted_time_s"),
    (["compare", "H100", "H200", "B200", "--intensity", "0.33"], lambda d: d["gpus"],
     {"gpu", "memory_bandwidth_gbs", "attainable_tflops", "speedup", "rank"}, "attainable_tflops"),
    (["llm", "--model", "llama-3-8b", "--gpu", "H200", "--sweep-batch"], lambda d: [d["decode"]] + d["sweep"][1:],
     {"batch", "step_time_s", "tokens_per_s_total", "kv_cache_bytes"}, "tokens_per_s_total"),
    (["ncu", str(REAL / "ncu_raw.csv")], lambda d: [k for dev in d["devices"] for k in dev["kernels"]],
     {"device", "name", "total_time_s", "achieved_gbs", "achieved_tflops", "roof_pct", "regime"}, "total_time_s"),
    (["classify", "--ncu", str(REAL / "ncu_details.csv")], lambda d: [k for dev in d["devices"] for k in dev["kernels"]],
     {"name", "total_time_s", "regime"}, "total_time_s"),
    (["trace", str(REAL / "trace_streams.json")], lambda d: d["devices"],
     {"device", "span_s", "busy_pct", "host_wait_s", "launch_latency_median_s"}, "idle_s"),
    (["check", "--recorded", str(RECORDED_CHECK)], lambda d: d["observations"],
     {"device", "uuid", "passed", "dram_bandwidth_gbs", "fp32_tflops", "launch_overhead_us", "dram_bandwidth_status"}, "dram_bandwidth_gbs"),
]


def _csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


@pytest.mark.parametrize("args, rows_of, columns, number", COMMANDS, ids=lambda a: " ".join(a[:2]) if isinstance(a, list) else "")
def test_csv_matches_the_json_table(cli, args, rows_of, columns, number):
    code, out, err = cli(*args, "--csv")
    assert code == 0, err
    head, rows = _csv(out)
    assert columns <= set(head), sorted(columns - set(head))
    code, js, err = cli(*args, "--json")
    assert code == 0, err
    table = rows_of(json.loads(js))
    assert len(rows) == len(table) > 0
    key = "dram_bandwidth_gbs" if number == "dram_bandwidth_gbs" else number
    for r, t in zip(rows, table):
        assert float(r[key]) == pytest.approx(t[key], rel=1e-11, abs=0)  # 12 significant figures, no float noise
        assert len(r[key].split("e")[0].replace(".", "").replace("-", "").strip("0")) <= 12, r[key]
    assert not out.lstrip().startswith("{") and "\x1b" not in out  # no JSON, no terminal styles


def test_csv_cells(cli):
    code, out, err = cli("compare", "H100", "H200", "--intensity", "0.33", "--csv")
    head, rows = _csv(out)
    # an empty cell for a missing value, true/false for booleans, floats to 12 significant figures
    assert rows[0]["usd_per_hour"] == "" and rows[1]["ridge_point"] == "13.9583333333"
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", "--csv")
    head, rows = _csv(out)
    assert rows[0]["fits_in_memory"] == "true" and rows[0]["model"] == "Llama-3 8B"


def test_csv_and_json_exclude_each_other(cli):
    code, out, err = cli("specs", "list", "--csv", "--json")
    assert code == 2 and "--csv and --json exclude each other" in err
    assert json.loads(out)["kind"] == "error"  # --json was asked: the error document, no CSV


def test_csv_cells_with_commas_and_quotes_round_trip(cli):
    """Kernel names hold commas, angle brackets and quotes: the CSV quotes them, a reader gets them back."""
    code, out, err = cli("ncu", str(REAL / "ncu_raw.csv"), "--csv")
    head, rows = _csv(out)
    code, js, err = cli("ncu", str(REAL / "ncu_raw.csv"), "--json")
    names = [k["full_name"] for dev in json.loads(js)["devices"] for k in dev["kernels"]]
    assert [r["full_name"] for r in rows] == names and any("," in n for n in names)


def test_flatten_and_write():
    from gpuwhy.render.csv_out import write_csv

    buf = io.StringIO()
    write_csv([{"a_s": 1.5e-06, "nested": {"x_gbs": 3.0, "na": {"n/a": "not read"}}, "tags": ["p", "q"], "rows": [{"z": 1}], "ok": False},
               {"a_s": None, "extra_bytes": 7}], buf)
    head, rows = _csv(buf.getvalue())
    assert head == ["a_s", "nested_x_gbs", "nested_na", "tags", "ok", "extra_bytes"]
    assert rows[0] == {"a_s": "1.5e-06", "nested_x_gbs": "3.0", "nested_na": "", "tags": "p; q", "ok": "false", "extra_bytes": ""}
    assert rows[1]["a_s"] == "" and rows[1]["extra_bytes"] == "7"
