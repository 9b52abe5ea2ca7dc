"""CI-grade behaviour (issue 19): exit codes and pipes, the terminal, text printed literally.

Each test names the kind of fault it pins; all run without a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

FIX = ROOT / "tests" / "fixtures"

#: Commands that print on stdout without a GPU.
PRINTING = [
    ["specs", "list"],
    ["specs", "show", "H200 SXM"],
    ["classify", "--example", "vecadd", "--gpu", "rtx 5070"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200 SXM"],
    ["compare", "H100 SXM", "H200 SXM", "--intensity", "0.33"],
    ["occupancy", "--block-size", "256", "--registers", "64", "--arch", "sm_90"],
    ["roofline", "--gpu", "H200 SXM"],
    ["ncu", str(FIX / "ncu" / "raw_basic.csv"), "--gpu", "H200 SXM"],
    ["trace", str(FIX / "trace" / "overhead_loop.json")],
    ["--help"],
]

#: The same commands' documents (``--json``, ``--csv``): click answers a closed pipe under a write
#: of its own with exit 1 (issue 31), the terminal views never did.
DOCUMENTS = [
    ["specs", "list", "--json"],
    ["specs", "list", "--csv"],
    ["classify", "--example", "vecadd", "--gpu", "rtx 5070", "--json"],
    ["classify", "--example", "vecadd", "--gpu", "rtx 5070", "--csv"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200 SXM", "--json"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200 SXM", "--csv"],
    ["ncu", str(FIX / "ncu" / "raw_basic.csv"), "--gpu", "H200 SXM", "--json"],
    ["ncu", str(FIX / "ncu" / "raw_basic.csv"), "--gpu", "H200 SXM", "--csv"],
    ["trace", str(FIX / "trace" / "overhead_loop.json"), "--json"],
    ["trace", str(FIX / "trace" / "overhead_loop.json"), "--csv"],
]


def _env(**kw):
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(kw)
    return e


@pytest.mark.parametrize("args", PRINTING + DOCUMENTS, ids=lambda a: " ".join(a[:1] + a[-1:]))
def test_closed_pipe_exits_0_with_nothing_on_stderr(args):
    # The reader goes away before gpuwhy writes (`gpuwhy ... | true`).
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "gpuwhy", *args], stdout=w, stderr=subprocess.PIPE, text=True,
                           env=_env(COLUMNS="120"), timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_unwritable_stdout_is_one_line_and_exit_74(json_flag):
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "gpuwhy", "specs", "list", *json_flag], stdout=full,
                           stderr=subprocess.PIPE, text=True, env=_env(), timeout=120)
    assert p.returncode == 74
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write the output" in lines[0] and "Traceback" not in p.stderr


def test_check_with_nothing_checked_fails_with_its_own_line_and_junit_state(tmp_path):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200"}]))
    junit = tmp_path / "check.xml"
    p = run_cli("check", "--recorded", str(rec), "--junit", str(junit), "--json")
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert doc["passed"] is False and doc["devices"][0]["nothing_checked"] is True
    assert "nothing was checked" in p.stderr and "Traceback" not in p.stderr
    xml = junit.read_text()
    assert '<testcase classname="gpuwhy.check.NVIDIA H200" name="nothing_checked">' in xml and "<failure" in xml
    # One real measurement makes it an ordinary result again.
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    p = run_cli("check", "--recorded", str(rec), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["devices"][0]["nothing_checked"] is False


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_in_any_position(where):
    args = ["specs", "show", "no such gpu"]
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    p = run_cli(*args)
    assert p.returncode == 2
    assert "Traceback (most recent call last)" in p.stderr and p.stderr.strip().splitlines()[-1].startswith("gpuwhy: error:")
    plain = run_cli("specs", "show", "no such gpu")
    assert "Traceback" not in plain.stderr and len(plain.stderr.strip().splitlines()) == 1


def test_json_before_the_command_is_honoured():
    p = run_cli("--json", "specs", "show", "H200")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["kind"] == "specs.show"
    p = run_cli("--json", "classify", "--example", "vecadd", "--gpu", "rtx 5070", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["kind"] == "classify"


def test_text_from_data_and_users_is_printed_literally():
    p = run_cli("classify", "--example", "vecadd", "--gpu", "rtx 5070")
    assert p.returncode == 0 and "c[i] = a[i] + b[i]" in p.stdout
    p = run_cli("roofline", "--gpu", "H200", "--point", "k[bold]x[/]:1T:1GB", "--point", "[red]:1T:10GB")
    assert p.returncode == 0, p.stderr
    assert "k[bold]x[/]" in p.stdout and "[red]" in p.stdout


@pytest.mark.parametrize("columns", ["", "abc", "0", "-5", "3"])
def test_bad_columns_fall_back_to_a_sane_width(columns):
    for args in (["specs", "list"], ["--help"]):
        p = run_cli(*args, env={"COLUMNS": columns})
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""
        assert len(p.stdout.splitlines()) > 10
    p = run_cli("specs", "list", env={"COLUMNS": columns})
    assert "H200 SXM" in p.stdout


NARROW = [
    ["specs", "list"],
    ["specs", "show", "H200 SXM"],
    ["compare", "H100", "H200", "B200", "--intensity", "0.33", "--cost", "H100=2.5,H200=3.5,B200=6", "--per-watt"],
    ["compare", "H100", "H200", "--llm", "--model", "llama-3-8b"],
    ["ncu", str(FIX / "ncu" / "raw_basic.csv"), "--gpu", "H200 SXM"],
    ["ncu", str(FIX / "real" / "ncu_details.csv")],
    ["classify", "--example", "vecadd", "--gpu", "H200"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200 SXM"],
    ["roofline", "--gpu", "H200", "--dtype", "fp32,bf16", "--point", "gemm:2.2T:400MB:3.1ms"],
    ["trace", str(FIX / "real" / "trace_overhead.json")],
    ["occupancy", "--block-size", "256", "--registers", "64", "--arch", "sm_90"],
]


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("args", NARROW, ids=lambda a: " ".join(a[:3]))
def test_narrow_terminals_never_cut_a_number(args, columns):
    import re

    p = run_cli(*args, env={"COLUMNS": str(columns)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines
    too_wide = [ln for ln in lines if len(ln) > columns]
    assert not too_wide, too_wide[:3]
    assert not re.search(r"\d…|…\d", p.stdout), [ln for ln in lines if re.search(r"\d…|…\d", ln)][:3]


def test_a_table_too_wide_for_the_terminal_becomes_key_value_records():
    from rich.console import Console
    from rich.table import Table

    from gpuwhy.render.fit import fit_table, numeric_width

    assert numeric_width(["4,800", "n/a", "3.49 us", "87%"]) == 7 and numeric_width(["H200", "12"]) is None
    t = Table()
    for h in ("GPU", "DRAM GB/s", "fp32 TFLOP/s", "bf16 TFLOP/s", "$/h", "per $ PFLOP/$"):
        t.add_column(h)
    t.add_row("GeForce RTX 5070", "672", "30.9", "61.7", "0.35", "1,234,567.89")
    wide = fit_table(t, Console(width=120))
    assert wide is t  # fits: untouched
    t2 = Table()
    for h in ("GPU", "DRAM GB/s", "fp32 TFLOP/s", "bf16 TFLOP/s", "$/h", "per $ PFLOP/$"):
        t2.add_column(h)
    t2.add_row("GeForce RTX 5070", "672", "30.9", "61.7", "0.35", "1,234,567.89")
    con = Console(width=30, record=True)
    narrow = fit_table(t2, con)
    assert narrow is not t2 and not narrow.show_header
    con.print(narrow)
    text = con.export_text()
    assert "1,234,567.89" in text and "per $ PFLOP/$" in text and "…" not in text
