"""Under GitHub Actions (``GITHUB_ACTIONS=true``) `gpuwhy check` and `gpuwhy diff` turn failing and
warning checks and regressed figures into ``::error``/``::warning`` annotations on stderr and
append a Markdown table to ``$GITHUB_STEP_SUMMARY``; elsewhere they write neither, and stdout
stays the document in every case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from gpuwhy.render.github import annotation, cell, escape_data, escape_property, in_github_actions, table

ROOT = Path(__file__).resolve().parents[1]
DIFF = ROOT / "tests" / "fixtures" / "diff"
H200_CHECK = ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"


def test_the_workflow_command_format():
    assert annotation("error", "50% of sheet\nnext", "check: dram, gpu 0") == \
        "::error title=check%3A dram%2C gpu 0::50%25 of sheet%0Anext"
    assert annotation("warning", "a\rb") == "::warning::a%0Db"
    assert escape_data("100%") == "100%25" and escape_property("a:b,c") == "a%3Ab%2Cc"
    with pytest.raises(ValueError):
        annotation("fatal", "x")
    assert cell("a | b\nc") == "a \\| b c" and cell("") == "-"
    assert table(("x", "y"), [(1, "a|b")]) == "| x | y |\n|---|---|\n| 1 | a\\|b |\n"
    assert in_github_actions({"GITHUB_ACTIONS": "true"}) and not in_github_actions({"GITHUB_ACTIONS": "false"})
    assert not in_github_actions({})


@pytest.fixture
def gh(tmp_path):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step's summary\n")  # GitHub's file: appended to, never replaced
    return {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}, summary


def _annotations(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("::")]


def test_check_fail_and_warning_become_annotations_and_a_table(gh, tmp_path):
    env, summary = gh
    policy = tmp_path / "policy.yaml"
    policy.write_text("thresholds: {min_fp32: 0.999}\nseverity: {fp32_fma: warn}\n")
    r = run_cli("check", "--example", "h100-check", "--min-bandwidth", "0.99", "--policy", str(policy), "--json", env=env)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)  # stdout is still the document alone
    assert doc["status"] == "fail"
    notes = _annotations(r.stderr)
    assert len(notes) == 2, r.stderr
    err = next(n for n in notes if n.startswith("::error "))
    warn = next(n for n in notes if n.startswith("::warning "))
    assert err.startswith("::error title=gpuwhy check dram_bandwidth fail on NVIDIA H100 80GB HBM3 GPU-a25ba21f")
    assert "::3,267 GB/s (97.5%25 of sheet) (threshold >= 0.99 x 3350 GB/s = 3,316 GB/s)" in err
    assert warn.startswith("::warning title=gpuwhy check fp32_fma warn on NVIDIA H100")
    text = summary.read_text()
    assert text.startswith("earlier step's summary\n### gpuwhy check: fail on vm (9 pass, 1 warn, 1 fail)\n")
    assert "| GPU | check | status | value | threshold | detail |" in text
    assert "| dram_bandwidth | fail | 3,267 GB/s (97.5% of sheet) | >= 0.99 x 3350 GB/s = 3,316 GB/s |" in text
    assert "| fp32_fma | warn |" in text and "| launch_overhead | pass | 3.9 us | <= 20 us | - |" in text
    assert text.count("\n| NVIDIA H100") == 11


def test_a_passing_check_writes_the_table_and_no_annotation(gh):
    env, summary = gh
    r = run_cli("check", "--example", "h100-check", env=env)
    assert r.returncode == 0 and not _annotations(r.stderr), r.stderr
    assert "### gpuwhy check: pass on vm (11 pass)" in summary.read_text()


def test_nothing_outside_github_actions(gh):
    env, summary = gh
    for e in ({"GITHUB_STEP_SUMMARY": env["GITHUB_STEP_SUMMARY"]}, {**env, "GITHUB_ACTIONS": "false"}):
        r = run_cli("check", "--example", "h100-check", "--min-bandwidth", "0.99", env=e)
        assert r.returncode == 1 and not _annotations(r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1  # the one error line
    assert summary.read_text() == "earlier step's summary\n"


def test_an_unwritable_summary_is_one_warning_and_the_result_stands(tmp_path):
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "no-such-dir" / "summary.md")}
    r = run_cli("check", "--example", "h100-check", env=env)
    assert r.returncode == 0, r.stderr
    assert "GITHUB_STEP_SUMMARY" in r.stderr and "Traceback" not in r.stderr


def test_diff_fail_if_slower_annotates_the_slowdown(gh):
    from gpuwhy.units import fmt_pct, fmt_time

    env, summary = gh
    r = run_cli("diff", str(DIFF / "dataloader.fixed.json.gz"), str(DIFF / "dataloader.planted.json.gz"),
                "--fail-if-slower", "5", "--json", env=env)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("gpuwhy: error: --fail-if-slower 5: after is ")
    (note,) = _annotations(r.stderr)
    assert note == "::error title=gpuwhy diff%3A slower::" + line.removeprefix("gpuwhy: error: ").replace("%", "%25")
    top = next(c for c in doc["contributions"] if c["cause"] == "data_loading")
    row = (f"| {top['label']} | {fmt_time(top['before_s'])} | {fmt_time(top['after_s'])} | +{fmt_time(top['delta_s'])} | "
           f"{fmt_pct(top['change_pct'], 1)} |")
    assert row in summary.read_text(), (row, summary.read_text())


@pytest.mark.skipif(not H200_CHECK.is_file(), reason="the recorded H200 check document is not in this checkout")
def test_diff_of_check_documents_annotates_each_regressed_figure(gh):
    env, summary = gh
    r = run_cli("diff", str(H200_CHECK), str(DIFF / "check_h100.json"), "--fail-if-slower", "5", env=env)
    assert r.returncode == 1
    notes = _annotations(r.stderr)
    assert "::error title=gpuwhy diff%3A DRAM bandwidth regressed::4,590 -> 3,267 GB/s (28.8%25 worse; threshold 5%25)" in notes
    assert "::error title=gpuwhy diff%3A launch overhead regressed::3.52 -> 3.9 us (10.9%25 worse; threshold 5%25)" in notes
    assert "::warning title=gpuwhy diff%3A bf16 rate regressed::924 -> 896 TFLOP/s (3.1%25 worse; threshold 5%25)" in notes
    assert not any("fp32" in n for n in notes)  # not worse: no annotation
    assert "| DRAM bandwidth | 4,590 GB/s | 3,267 GB/s | -28.8% | 28.8% |" in summary.read_text()
