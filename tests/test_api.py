"""The Python API at the top level: every use case, nothing stray, fast to import, typed;
and the CLI's packaging (completion, py.typed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gpuwhy

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"


def test_dir_is_the_public_api():
    names = [n for n in dir(gpuwhy) if not n.startswith("__")]
    assert set(names) == {"classify", "llm", "compare", "occupancy", "read_ncu", "read_trace", "load_spec", "measure", "probe",
                          "GpuwhyError", "UsageError", "SpecError", "NoDeviceError", "MeasurementError", "CheckFailed"}
    assert "annotations" not in dir(gpuwhy) and "__version__" in dir(gpuwhy)
    assert sorted(gpuwhy.__all__) == dir(gpuwhy)
    for n in gpuwhy.__all__:
        assert getattr(gpuwhy, n) is not None and (n == "__version__" or getattr(gpuwhy, n).__doc__), n


def _import_cost(code: str) -> dict:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    return json.loads(r.stdout)


def test_import_is_light():
    """``import gpuwhy`` loads none of the heavy modules (python -X importtime shows it at a few ms)."""
    mods = _import_cost("import json, sys, gpuwhy; print(json.dumps(sorted(sys.modules)))")
    heavy = {"typer", "click", "rich", "numpy", "yaml", "jinja2", "pandas", "cuda", "pynvml"}
    assert not heavy & {m.split(".")[0] for m in mods}
    assert not [m for m in mods if m.startswith("gpuwhy.") and m not in ("gpuwhy.errors", "gpuwhy.version")]


def test_the_api_gives_what_the_commands_print(cli):
    """Each function's result is the object the command renders: its to_dict() is the --json body."""
    def body(*args):
        code, out, err = cli(*args, "--json")
        assert code == 0, err
        doc = json.loads(out)
        return {k: v for k, v in doc.items() if k not in ("gpuwhy", "schema", "kind")}

    from gpuwhy.render.jsonout import to_plain

    assert to_plain(gpuwhy.llm(model="llama-3-8b", gpu="H200", context=4096, batch=8)) == body(
        "llm", "--model", "llama-3-8b", "--gpu", "H200", "--context", "4096", "--batch", "8")
    assert to_plain(gpuwhy.llm(params=70e9, gpu="H100", weight_dtype="fp8", prompt_len=2048)) == body(
        "llm", "--params", "70B", "--gpu", "H100", "--weight-dtype", "fp8", "--prompt-len", "2048")
    assert to_plain(gpuwhy.compare(["H100", "H200", "B200"], 0.33)) == body("compare", "H100", "H200", "B200", "--intensity", "0.33")
    assert to_plain(gpuwhy.compare(["H100", "H200"], flops="2T", bytes="1GB", costs={"H100": 2.49, "H200": 3.5}, per_watt=True)) == body(
        "compare", "H100", "H200", "--flops", "2T", "--bytes", "1GB", "--cost", "H100=2.49,H200=3.5", "--per-watt")
    assert to_plain(gpuwhy.occupancy(256, 64, gpu="H200")) == body("occupancy", "--block-size", "256", "--registers", "64", "--gpu", "H200")
    assert to_plain(gpuwhy.occupancy(128, 32, 49152, arch="sm_80", carveout=100)) == body(
        "occupancy", "--block-size", "128", "--registers", "32", "--shared-mem", "48KiB", "--arch", "sm_80", "--carveout", "100")
    ncu = gpuwhy.read_ncu(REAL / "ncu_raw.csv")
    assert to_plain(ncu) == body("ncu", str(REAL / "ncu_raw.csv"))
    assert ncu.devices[0].kernels[0].regime == "compute"
    trace = gpuwhy.read_trace(REAL / "trace_dataloader.json", top=3)
    assert to_plain(trace) == body("trace", str(REAL / "trace_dataloader.json"), "--top", "3")
    assert trace.verdict == "overhead-bound"


@pytest.mark.parametrize("call, words", [
    (lambda: gpuwhy.llm(gpu="H200"), "needs params"),
    (lambda: gpuwhy.llm(params="8B", gpu="no such gpu"), "no such gpu"),
    (lambda: gpuwhy.compare("H100", 0.3), "list of GPU names"),
    (lambda: gpuwhy.compare(["H100", "H100 SXM"], 0.3), "listed twice"),
    (lambda: gpuwhy.occupancy(256, 64), "one of gpu='H200' or arch='sm_90'"),
    (lambda: gpuwhy.occupancy(4096, 64, gpu="H200"), "block"),
    (lambda: gpuwhy.read_ncu(REAL / "trace_streams.json"), "trace_streams.json"),
    (lambda: gpuwhy.read_trace(REAL / "ncu_raw.csv"), "ncu_raw.csv"),
])
def test_api_errors_are_gpuwhy_errors(call, words):
    with pytest.raises(gpuwhy.UsageError, match=words):
        call()


def test_py_typed_is_shipped():
    tomllib = pytest.importorskip("tomllib")
    assert (ROOT / "src" / "gpuwhy" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["gpuwhy"]


def test_shell_completion_is_on(cli):
    code, out, err = cli("--help")
    assert code == 0 and "--install-completion" in out and "--show-completion" in out
    r = subprocess.run([sys.executable, "-m", "gpuwhy"], capture_output=True, text=True, check=False,
                       env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "_GPUWHY_COMPLETE": "complete_bash",
                            "COMP_WORDS": "gpuwhy spe", "COMP_CWORD": "1"})
    assert r.returncode == 0 and r.stdout.split() == ["specs"]
