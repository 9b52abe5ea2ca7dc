"""`gpuwhy probe` from the command line: exit 3 and one line without a GPU, JSON and rich output with fakes, and the real GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import gpu_available
from gpuwhy.cli.app import main
from fakes import Machine  # the fake NVML/driver modules
from test_probe_nvml import HEALTHY

ROOT = Path(__file__).resolve().parents[1]
KNOWN_NO_DEVICE = (
    "no NVIDIA driver on this machine",
    "NVIDIA kernel driver is not loaded",
    "no NVIDIA GPU found",
    "hides every GPU",
    "neither nvidia-ml-py nor cuda-bindings",
    "no usable GPU",
)


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gpuwhy", *args], capture_output=True, text=True, env=e, cwd=ROOT, timeout=120)


@pytest.mark.skipif(gpu_available()[0], reason="this machine has a GPU and a driver")
@pytest.mark.parametrize("args", [("probe",), ("probe", "--json")])
def test_no_driver_exit_3_one_line(args):
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    r = subprocess.run([sys.executable, "-m", "gpuwhy", *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**env, "PYTHONPATH": str(ROOT / "src")})
    assert r.returncode == 3, r.stderr
    if "--json" in args:  # the error document (docs/schema/error.schema.json) says what the line says
        doc = json.loads(r.stdout)
        assert doc["kind"] == "error" and doc["error"]["exit_code"] == 3
        assert r.stderr.strip() == f"gpuwhy: error: {doc['error']['message']}"
    else:
        assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("gpuwhy: error: ")
    assert any(k in lines[0] for k in KNOWN_NO_DEVICE), lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("value", ["-1", ""])
def test_cuda_visible_devices_hiding_all_exit_3_one_line(value):
    r = run_cli("probe", "--json", env={"CUDA_VISIBLE_DEVICES": value})
    assert r.returncode == 3 and json.loads(r.stdout)["error"]["exit_code"] == 3  # the error document
    (line,) = r.stderr.splitlines()
    assert line.startswith("gpuwhy: error: CUDA_VISIBLE_DEVICES") and "hides every GPU" in line


def test_startup_loads_no_gpu_library():
    code = "import sys; import gpuwhy.cli.register; print(any(m in sys.modules for m in ('pynvml', 'cuda.bindings.driver', 'cuda.bindings.nvrtc')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


def test_probe_json_with_fakes(machine, capsys):
    machine.fixture("h200", nvml_extra=HEALTHY)
    assert main(["probe", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["kind"] == "probe" and [d["identity"]["name"] for d in doc["devices"]] == ["NVIDIA H200"]
    assert doc["devices"][0]["sheet"]["name"] == "H200 SXM"
    assert doc["software"]["cuda_driver_version"] == 13000


def test_probe_rich_output_with_fakes(machine, capsys):
    machine.fixture("h200", nvml_extra={**HEALTHY, "processes": [{"pid": 4242, "used": 2**30}]})
    assert main(["probe"]) == 0
    text = capsys.readouterr().out
    for s in ("GPU 0: NVIDIA H200", "Hopper", "H200 SXM", "132 SMs x 128 FP32 lanes", "4.81 TB/s", "66.9 TFLOP/s", "benchmarks on a busy GPU are noise", "software"):
        assert s in text, s


def test_probe_device_option_errors_exit_2(machine, capsys):
    machine.fixture("h200")
    assert main(["probe", "--device", "7"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "-i 7: nvidia-smi lists 1 GPU, indices 0..0" in err[0]


def test_probe_no_device_in_process_exit_3(machine, capsys):
    machine.no_nvml_library()
    machine.no_driver_library()
    assert main(["probe"]) == 3
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.splitlines()) == 1 and "no NVIDIA driver" in cap.err


def test_bare_gpuwhy_probes_then_runs_a_quick_bench(machine, capsys, monkeypatch):
    machine.fixture("a100-sxm4-40gb")
    import gpuwhy.bench.runner as runner
    import gpuwhy.render.bench_view as bench_view

    calls = []
    monkeypatch.setattr(runner, "run_bench", lambda opts, progress=None: calls.append(opts.mode) or "bench-result")
    monkeypatch.setattr(bench_view, "render_bench", lambda result: calls.append(result))
    assert main([]) == 0
    assert calls == ["quick", "bench-result"]
    assert "A100 SXM4 40GB" in capsys.readouterr().out


@pytest.mark.gpu
def test_real_gpu_probe_matches_a_sheet():
    from gpuwhy.device.probe import probe_devices

    rep = probe_devices()
    assert rep.devices
    d = rep.devices[0]
    for v in (d.identity.name, d.identity.uuid, d.identity.compute_capability, d.shape.sm_count, d.shape.fp32_lanes_per_sm,
              d.shape.memory_clock_mhz, d.shape.memory_bus_width_bits, d.shape.boost_clock_mhz):
        assert not hasattr(v, "reason"), v
    assert d.sheet.matched, d.sheet.note
    assert d.derived.comparisons and all(c.ok for c in d.derived.comparisons), [c.message for c in d.derived.comparisons]
    assert d.sheet.sheet.compute_capability == d.identity.compute_capability
    r = run_cli("probe", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["devices"][0]["sheet"]["matched"] is True
