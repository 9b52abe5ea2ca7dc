"""CI-grade behaviour (issue 19): odd environments, all with fakes and no GPU.

NVML strings that are not UTF-8, NVRTC missing, a libcuda too old for cuda-bindings,
Ctrl-C during compiles and parsing. Each test names the kind of fault it pins.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types

import pytest

from conftest import ROOT
from test_probe_nvml import FakeLibNvml, Machine, load_fixture, make_driver

from gpuwhy.device import probe as probe_mod


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


class _BadBytesLibNvml(FakeLibNvml):
    """The fake libnvidia-ml.so with bytes that are not UTF-8 in every string NVML hands back
    (seen on WSL2 drivers): the name, the UUID, the PCI bus id and the driver version."""

    def __getattr__(self, name):
        g = self.gpu
        if name == "nvmlDeviceGetUUID":
            return lambda h, buf, n: (setattr(buf, "value", g["uuid"].encode()[:-2] + b"\xfe\xff"), 0)[1]
        if name == "nvmlDeviceGetPciInfo_v3":
            return lambda h, p: (setattr(p._obj, "busId", b"0000\xc3:19:00.0"), setattr(p._obj, "pciDeviceId", int(g["pci_device_id"], 16)), 0)[2]
        if name == "nvmlSystemGetDriverVersion":
            return lambda buf, n: (setattr(buf, "value", b"580.159\x80"), 0)[1]
        return super().__getattr__(name)


def test_nvml_strings_not_utf8_on_every_path_keep_the_probe_going(machine, monkeypatch):
    pynvml = pytest.importorskip("pynvml")
    fx = load_fixture("h200")
    monkeypatch.setitem(sys.modules, "pynvml", pynvml)
    monkeypatch.setattr(pynvml, "nvmlLib", _BadBytesLibNvml(fx["nvml"], b"NVIDIA H\xff200"))
    monkeypatch.setattr(pynvml, "_nvmlGetFunctionPointer_cache", {})
    machine.no_driver_library()  # NVML is the only source: nothing clean to fall back on
    rep = probe_mod.probe_devices()
    d = rep.devices[0]
    # Unreadable strings are n/a with their reason (issue 31), never the undecoded bytes as a value.
    for field in ("name", "uuid", "pci_bus_id"):
        value = getattr(d.identity, field)
        assert value.kind == "undecodable" and "not UTF-8" in value.reason, field
    assert rep.software.driver_version.kind == "undecodable" or "\\x" not in str(rep.software.driver_version)
    # The name is unreadable, so the PCI device id picks the sheet.
    assert d.sheet.sheet.name == "H200 SXM" and d.sheet.rule == "pci_id"
    said = " ".join(d.warnings)
    for field in ("name", "uuid", "pci bus id"):
        assert f"the {field} the driver reports is unreadable" in said
    assert any("driver version NVML reports is unreadable" in w for w in rep.software.warnings)
    doc = json.loads(json.dumps(rep.to_dict(), allow_nan=False))
    ident = doc["devices"][0]["identity"]
    assert ident["name"] is None and ident["sources"]["name"] == "n/a" and "not UTF-8" in ident["n/a"]["name"]
    from gpuwhy.render.probe_view import device_panel, software_panel  # noqa: F401  (renders without error)
    from rich.console import Console

    con = Console(width=100, record=True)
    con.print(software_panel(rep.software), device_panel(d))
    shown = con.export_text()
    assert "NVIDIA H\\xff200" not in shown and "580.159\\x80" not in shown and "unreadable" in shown


def _fake_nvrtc_missing(monkeypatch):
    class DynamicLibNotFoundError(RuntimeError):
        pass

    m = types.ModuleType("cuda.bindings.nvrtc")

    def missing(*a):
        raise DynamicLibNotFoundError('Failure finding "libnvrtc.so.13 or libnvrtc.so.12": No such file')

    m.nvrtcVersion = m.nvrtcGetSupportedArchs = m.nvrtcCreateProgram = missing
    import cuda.bindings

    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", m)
    monkeypatch.setattr(cuda.bindings, "nvrtc", m, raising=False)


def test_nvrtc_missing_is_exit_3_with_the_package_and_the_path_searched(cli, monkeypatch):
    _fake_nvrtc_missing(monkeypatch)
    code, out, err = cli("bench", "--compile-only", "--arch", "sm_90")
    assert code == 3, err
    line = err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in err
    assert "NVRTC" in line and "pip install nvidia-cuda-nvrtc" in line and "searched:" in line and "site-packages" in line
    # The same line wherever NVRTC is first needed (a measurement compiles through the same loader).
    from gpuwhy.engine.compile import compile_file
    from gpuwhy.errors import NoDeviceError

    with pytest.raises(NoDeviceError, match="pip install nvidia-cuda-nvrtc"):
        compile_file("memory.cu", "sm_90", use_cache=False)


def test_nvrtc_missing_named_by_the_probe_and_found_nvrtc_named_with_its_path(machine, monkeypatch):
    machine.fixture("h200")
    sw = probe_mod.probe_devices().software
    assert sw.nvrtc_version == "13.0"  # the fake NVRTC: no library mapped, so no path to name
    _fake_nvrtc_missing(monkeypatch)
    sw = probe_mod.probe_devices().software
    assert "pip install nvidia-cuda-nvrtc" in str(sw.nvrtc_version)
    # With the real NVRTC the probe names the library file it loaded.
    monkeypatch.undo()
    from gpuwhy.device.driver import nvrtc_library_path, nvrtc_version

    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except Exception:
        pytest.skip("no cuda-bindings here")
    if isinstance(nvrtc_version(), tuple):
        assert "libnvrtc.so" in str(nvrtc_library_path())


def test_libcuda_missing_a_symbol_names_the_symbol_and_the_driver_needed(cli, machine, monkeypatch):
    import cuda.bindings

    old = make_driver([], init=RuntimeError('Function "cuInit" not found'))
    machine.driver(old)
    monkeypatch.setattr(cuda.bindings, "driver", old, raising=False)
    (machine.proc / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n")
    code, out, err = cli("bench", "--quick")
    assert code == 3, err
    line = err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in err
    assert "has no cuInit" in line and "470.256.02" in line and "or newer" in line and "update the driver" in line
    # The probe says the same, not "library not found".
    from gpuwhy.device.driver import open_driver

    na = open_driver()
    assert na.kind == "missing_function" and "has no cuInit" in na.reason
    # And wherever else a missing function surfaces first, the CLI maps it to that line (exit 3).
    from gpuwhy.device.driver import library_error

    err2 = library_error(RuntimeError('Function "cuLaunchKernelEx" not found'))
    assert err2 is not None and err2.exit_code == 3 and "cuLaunchKernelEx" in str(err2)


def _env():
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(COLUMNS="120", GPUWHY_NO_CACHE="1")
    return e


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _interrupt_when(args, ready, timeout=60.0):
    """Start ``gpuwhy ARGS``, send SIGINT once ``ready(proc, elapsed)`` is true; return
    (returncode, stderr, seconds from SIGINT to exit)."""
    p = subprocess.Popen([sys.executable, "-m", "gpuwhy", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=_env())
    t0 = time.monotonic()
    try:
        while not ready(p, time.monotonic() - t0):
            if p.poll() is not None or time.monotonic() - t0 > timeout:
                pytest.fail(f"gpuwhy {' '.join(args)} ended (rc {p.returncode}) before it could be interrupted")
            time.sleep(0.02)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=30)[1]
        return p.returncode, err, time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc to see the parse start")
def test_ctrl_c_while_parsing_a_big_trace_exits_130_within_a_second(tmp_path):
    # A 150 MB torch.profiler trace: json's C parser alone takes seconds on it.
    doc = json.loads((ROOT / "tests" / "fixtures" / "real" / "trace_dataloader.json").read_text())
    events = doc["traceEvents"]
    doc["traceEvents"] = events * (150_000_000 // len(json.dumps(events)) + 1)
    big = tmp_path / "big_trace.json"
    big.write_text(json.dumps(doc))
    size = big.stat().st_size
    # Interrupt while the file is read and parsed (a few seconds; the reader holds a window of it, not the
    # whole file, so its memory no longer tells when: once it holds more than the interpreter, after a second).
    rc, err, took = _interrupt_when(["trace", str(big)], lambda p, t: t > 1.0 and _rss_bytes(p.pid) > 0.4 * size)
    assert rc == 130, err
    assert err.strip().splitlines() == ["gpuwhy: error: interrupted (Ctrl-C)"]
    assert took < 1.0, f"{took:.2f} s from Ctrl-C to exit"


def test_ctrl_c_during_an_nvrtc_compile_exits_130_within_a_second():
    pytest.importorskip("cuda.bindings.nvrtc")
    from gpuwhy.device.driver import nvrtc_version

    if not isinstance(nvrtc_version(), tuple):
        pytest.skip("no NVRTC here")
    # No cache: every bundled kernel is compiled, several seconds in all; interrupt in the middle.
    rc, err, took = _interrupt_when(["bench", "--compile-only", "--arch", "sm_90"], lambda p, t: t > 2.5)
    assert rc == 130, err
    assert err.strip().splitlines() == ["gpuwhy: error: interrupted (Ctrl-C)"]
    assert took < 1.0, f"{took:.2f} s from Ctrl-C to exit"
