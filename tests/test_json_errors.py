"""Every command given --json prints one JSON document on failure (docs/schema/error.schema.json),
beside its one stderr line and with its exit code; one that fails after its document prints no second."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, one_line, run_cli
from schema_check import Validator

VALIDATOR = Validator(ROOT / "docs" / "schema")
H200_CHECK = ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"


def _json_commands() -> list[tuple[str, ...]]:
    """Every command path of the CLI that takes --json (the root's own: the main job)."""
    from gpuwhy.cli import register  # noqa: F401
    from gpuwhy.cli.app import _click_command

    found = []

    def walk(cmd, path):
        if any("--json" in getattr(p, "opts", ()) for p in cmd.params):
            found.append(path)
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, (*path, name))

    walk(_click_command(), ())
    return found


def _error_document(out: str, err: str, code: int, command: str) -> dict:
    line = one_line(code, err, code)
    doc = json.loads(out)
    VALIDATOR.validate(doc, "error.schema.json")
    assert doc["kind"] == "error" and doc["command"] == command
    assert doc["error"]["exit_code"] == code and line == f"gpuwhy: error: {doc['error']['message']}"
    return doc


def test_the_scan_finds_the_commands():
    paths = {" ".join(p) for p in _json_commands()}
    assert {"", "classify", "probe", "check", "bench", "ncu", "trace", "specs list", "fleet summarize", "llm"} <= paths


@pytest.mark.parametrize("path", _json_commands(), ids=lambda p: " ".join(p) or "main job")
def test_every_json_command_prints_an_error_document_on_bad_usage(cli, path):
    code, out, err = cli(*path, "--no-such-option", "--json")
    assert code == 2
    _error_document(out, err, 2, " ".join(path))
    code, out, err = cli(*path, "--no-such-option")
    assert code == 2 and out == ""  # without --json: the line only


@pytest.mark.parametrize("command, args", [
    ("classify", ("--flops", "1T", "--bytes", "1GB", "--gpu", "no-such-gpu")),
    ("trace", ("/no/such/trace.json",)),
    ("ncu", ("/no/such/export.csv",)),
    ("check", ("--recorded", "/no/such/check.json")),
    ("fleet summarize", ("/no/such/folder",)),
    ("specs show", ("no-such-gpu",)),
    ("llm", ("--model", "no-such-model", "--gpu", "H100")),
    ("classify", ("--flops", "1T", "--bytes", "1GB", "--gpu", "H100 SXM", "--csv")),
])
def test_a_failing_command_prints_the_error_document(cli, command, args):
    code, out, err = cli(*command.split(), *args, "--json")
    assert code == 2, err
    _error_document(out, err, 2, command)


def test_no_gpu_is_an_error_document_with_exit_3():
    p = run_cli("bench", "--quick", "--json", env={"CUDA_VISIBLE_DEVICES": ""})
    if p.returncode == 0:
        pytest.skip("a GPU answered")
    doc = _error_document(p.stdout, p.stderr, p.returncode, "bench")
    assert doc["error"]["exit_code"] in (3, 4)


def test_a_failure_after_the_document_prints_no_second_document(cli, tmp_path):
    base = tmp_path / "base.json"
    doc = json.loads(H200_CHECK.read_text())
    doc["observations"][0]["dram_bandwidth_gbs"] *= 1.10
    base.write_text(json.dumps(doc))
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--baseline", str(base), "--json")
    assert code == 1
    assert json.loads(out)["kind"] == "check"  # one document: json.loads refuses a second one after it
