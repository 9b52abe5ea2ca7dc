"""The sample inputs shipped in the wheel (``examples/``, installed as ``gpuwhy/_examples``): each
is read by its command (`gpuwhy trace|ncu|check --example NAME`), each `--json` fits its schema,
`--example list` lists them, and the wheel carries them (a wheel built from this checkout)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import one_line
from test_schema import check_document

ROOT = Path(__file__).resolve().parents[1]


def _samples():
    from gpuwhy.api.examples import sample_inputs

    return sample_inputs()


def test_one_sample_per_importer():
    samples = _samples()
    by_command = {}
    for name, s in samples.items():
        by_command.setdefault(s["command"], []).append(Path(s["file"]).name)
    assert set(by_command) == {"trace", "ncu", "check"}
    files = " ".join(by_command["trace"])
    assert ".json" in files and ".sqlite" in files  # a torch.profiler trace and an Nsight Systems export
    for s in samples.values():
        assert Path(s["file"]).stat().st_size < 100_000, s["file"]  # small: the wheel stays light
        assert s.get("source"), s


@pytest.mark.parametrize("name", sorted(_samples()))
def test_each_sample_is_read_by_its_command(cli, name):
    command = _samples()[name]["command"]
    code, out, err = cli(command, "--example", name, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == command
    check_document(doc)
    code, out, err = cli(command, "--example", name)
    assert code == 0 and out.strip(), err


@pytest.mark.parametrize("command", ["trace", "ncu", "check"])
def test_example_list(cli, command):
    code, out, err = cli(command, "--example", "list")
    assert code == 0, err
    names = [n for n, s in _samples().items() if s["command"] == command]
    assert names
    for n in names:
        assert f"gpuwhy {command} --example {n}\n" in out
    assert all(len(line) <= 80 for line in out.splitlines() if not line.lstrip().startswith(("file:", "source:")))


@pytest.mark.parametrize("args, message", [
    (("trace", "--example", "nope"), "unknown --example 'nope' for `gpuwhy trace`; known: dataloader, concurrent-kernels"),
    (("ncu", "--example", "dataloader"), "unknown --example 'dataloader' for `gpuwhy ncu`; known: h200-gemm-add"),
    (("trace", "x.json", "--example", "dataloader"), "give either a trace (x.json) or --example dataloader, not both"),
    (("check", "--recorded", "x.json", "--example", "h100-check"), "give either --recorded (x.json) or --example h100-check"),
    (("trace", "--example", "list", "--json"), "--example list prints the sample inputs for people; drop --json"),
    (("ncu", "--example", "list", "--csv"), "--example list prints the sample inputs for people; drop --csv"),
    (("trace",), "give a trace (gpuwhy trace TRACE.json or REPORT.sqlite), or try a sample: gpuwhy trace --example list"),
    (("ncu", "--example", "h200-gemm-add", "--", "python3", "x.py"), "give either --example h200-gemm-add or a program after `--`"),
])
def test_example_misuse_is_one_line(cli, args, message):
    code, out, err = cli(*args)
    assert message in one_line(code, err), err
    # with --json, the one error document every --json command prints on a failure; else nothing
    assert (json.loads(out)["kind"] == "error") if "--json" in args else out == ""


def test_the_package_data_globs_cover_the_samples():
    """Every file of examples/ is matched by pyproject's package-data for gpuwhy._examples."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"]["gpuwhy._examples"] == "examples" and "gpuwhy._examples" in tool["packages"]
    globs = tool["package-data"]["gpuwhy._examples"]
    for f in (ROOT / "examples").iterdir():
        assert any(fnmatch.fnmatch(f.name, g) for g in globs), f.name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from this checkout by pip (in an isolated build environment: setuptools from the index)."""
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and ("No matching distribution found for setuptools" in r.stdout + r.stderr
                              or "Could not find a version that satisfies" in r.stdout + r.stderr):
        pytest.skip("no setuptools>=77 reachable to build the wheel (offline)")
    assert r.returncode == 0, r.stderr[-2000:]
    (whl,) = out.glob("gpuwhy-*.whl")
    return whl, r.stdout + r.stderr


def test_the_wheel_carries_the_data_and_the_metadata(wheel):
    whl, log = wheel
    names = set(zipfile.ZipFile(whl).namelist())
    for s in _samples().values():
        assert f"gpuwhy/_examples/{Path(s['file']).name}" in names, s["file"]
    assert "gpuwhy/_examples/examples.yaml" in names and "gpuwhy/_examples/LICENSE.extrap" in names
    for must in ("gpuwhy/_specs/h200-sxm.yaml", "gpuwhy/_specs/policy/default.yaml", "gpuwhy/_specs/workloads/examples.yaml",
                 "gpuwhy/render/templates/report.html.j2", "gpuwhy/py.typed"):
        assert must in names, must
    assert any(n.startswith("gpuwhy/_microbench/") and n.endswith(".cu") for n in names)
    meta = next(zipfile.ZipFile(whl).read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: Apache-2.0" in meta
    for extra in ("cu12", "cu13", "ncu"):
        assert f"Provides-Extra: {extra}\n" in meta, extra
    base = [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    assert base and not any("cuda" in ln or "nvidia" in ln for ln in base), base
    assert "ncu-report" in meta
    # no setuptools warning about the build's configuration (left: the environment's byte-compiling note)
    # (pip's own "WARNING: ..." lines, about the index or running as root, are not the build's)
    warnings = [ln for ln in log.splitlines() if "warning" in ln.lower() and "byte-compiling is disabled" not in ln
                and not ln.strip().startswith("WARNING:")]
    assert not warnings, warnings
