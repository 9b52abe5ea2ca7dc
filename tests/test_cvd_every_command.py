"""CUDA_VISIBLE_DEVICES that leaves CUDA no GPU on a one-GPU machine (issue 31): ``probe``,
``bench`` and ``check`` give the same one line, naming the variable, its value and what it
hides or repeats (:func:`gpuwhy.device.visible.cvd_no_device_message`), never a bare
CUDA_ERROR_NO_DEVICE. Fakes stand in for the driver, which answers cuInit with
CUDA_ERROR_NO_DEVICE as the real one does for these forms."""

from __future__ import annotations

import sys

import pytest

from fakes import CUresult, FakeGpu, install, load_fixture, make_pynvml

H200 = load_fixture("h200")
UUID = H200["nvml"]["uuid"]
MISSING = "GPU-00000000-0000-0000-0000-000000000000"

FORMS = {
    "1": ["CUDA_VISIBLE_DEVICES='1' hides every GPU", "entry '1' is past the last device index (0)", UUID],
    MISSING: [f"CUDA_VISIBLE_DEVICES='{MISSING}' hides every GPU", "matches no device's UUID", UUID],
    "0,0": ["CUDA_VISIBLE_DEVICES='0,0' repeats GPU 0", UUID],
    "-1": ["CUDA_VISIBLE_DEVICES='-1' hides every GPU", "first entry '-1', which names no device"],
    "": ["CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU"],
}


@pytest.fixture
def no_device_machine(monkeypatch, tmp_path):
    """One H200 that NVML sees; a CUDA driver that answers cuInit with CUDA_ERROR_NO_DEVICE."""
    import cuda.bindings

    install(monkeypatch, FakeGpu(), tmp_path)
    drv = sys.modules["cuda.bindings.driver"]
    monkeypatch.setattr(drv, "cuInit", lambda flags: (CUresult.CUDA_ERROR_NO_DEVICE,))
    monkeypatch.setattr(drv, "cuGetErrorName", lambda e: (0, CUresult(int(e)).name.encode()))
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", make_pynvml([H200["nvml"]], H200["nvml_system"]))


@pytest.mark.parametrize("command", [["probe"], ["bench", "--quick"], ["check"]], ids=lambda c: c[0])
@pytest.mark.parametrize("value", list(FORMS), ids=lambda v: repr(v))
def test_every_command_names_the_variable_its_value_and_what_it_hides(no_device_machine, cli, monkeypatch, command, value):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
    code, out, err = cli(*command)
    line = err.strip()
    assert code == 3 and out == "" and len(line.splitlines()) == 1 and "Traceback" not in err, err
    for part in FORMS[value]:
        assert part in line, line
    assert "did not initialise" not in line


def test_without_nvml_the_engine_still_names_the_variable(no_device_machine, cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    code, out, err = cli("bench", "--quick")
    assert code == 3 and "CUDA_VISIBLE_DEVICES='1'" in err and "CUDA_ERROR_NO_DEVICE" in err, err
    assert "NVML cannot list" in err


def test_no_variable_no_device_is_not_blamed_on_it(no_device_machine, cli, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    code, out, err = cli("bench", "--quick")
    assert code == 3 and "CUDA_VISIBLE_DEVICES" not in err and "CUDA_ERROR_NO_DEVICE" in err, err


@pytest.fixture
def repeat_machine(no_device_machine, monkeypatch):
    """As measured on an H100 with driver 580.159.04: with CUDA_VISIBLE_DEVICES=0,0 cuInit fails with
    CUDA_ERROR_INVALID_DEVICE, not NO_DEVICE (docs/results/2026-12-07-diagnosis.md, call 2)."""
    drv = sys.modules["cuda.bindings.driver"]
    monkeypatch.setattr(drv, "cuInit", lambda flags: (CUresult.CUDA_ERROR_INVALID_DEVICE,))


@pytest.mark.parametrize("command", [["bench", "--quick"], ["check"]], ids=lambda c: c[0])
def test_a_repeat_refused_as_an_invalid_device_is_named(repeat_machine, cli, monkeypatch, command):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,0")
    code, out, err = cli(*command)
    line = err.strip()
    assert code == 3 and len(line.splitlines()) == 1, err
    assert "CUDA_VISIBLE_DEVICES='0,0' repeats GPU 0" in line and "CUDA_ERROR_INVALID_DEVICE" in line, line
    assert "did not initialise" not in line


def test_probe_shows_the_gpu_and_says_the_variable_repeats_it(repeat_machine, cli, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,0")
    code, out, err = cli("probe")
    assert code == 0, err
    assert "CUDA_VISIBLE_DEVICES='0,0' repeats GPU 0" in " ".join((out + err).split())
