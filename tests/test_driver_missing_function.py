"""A libcuda.so.1 that loads but lacks a driver function (issue 31): recognised by the kind of
error cuda-bindings raises, in every release's wording, never taken for "no driver"."""

from __future__ import annotations

import pytest

from test_probe_nvml import Machine, make_driver
from fakes import DynamicLibNotFoundError

from gpuwhy.device.driver import missing_function_name, open_driver


class FunctionNotFoundError(RuntimeError):
    """Stands in for cuda.bindings._internal.utils.FunctionNotFoundError (cuda-bindings 13.x)."""


class SymbolNotFoundError(AttributeError):
    """A binding that names the kind in its class and says nothing useful in its text."""


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


WORDINGS = [
    RuntimeError('Function "cuInit" not found'),  # cuda-bindings 12.x
    FunctionNotFoundError("function cuInit is not found"),  # cuda-bindings 13.5
    FunctionNotFoundError(""),  # the kind alone: named by the function called
    SymbolNotFoundError("lookup failed"),
    RuntimeError("cuInit: symbol could not be found in libcuda.so.1"),
    AttributeError("/usr/lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: cuInit"),  # ctypes
    RuntimeError("the driver entry point cuInit is unavailable"),
]


@pytest.mark.parametrize("exc", WORDINGS, ids=lambda e: f"{type(e).__name__}:{e}")
def test_a_missing_cuinit_is_named_in_every_wording(exc):
    assert missing_function_name(exc, "cuInit") == "cuInit"


@pytest.mark.parametrize("exc", [
    DynamicLibNotFoundError('"cuda" is an NVIDIA driver library and can only be found via system search'),
    OSError("libcuda.so.1: cannot open shared object file: No such file or directory"),
    RuntimeError("CUDA_ERROR_NOT_FOUND in cuModuleGetFunction"),  # a status, not a missing symbol
    ValueError("function cuInit is not found"),  # not an error a binding raises for a symbol
    RuntimeError("something went wrong"),
], ids=lambda e: type(e).__name__)
def test_other_errors_are_not_a_missing_function(exc):
    assert missing_function_name(exc, "cuInit") is None


@pytest.mark.parametrize("exc", WORDINGS[:3], ids=lambda e: f"{type(e).__name__}:{e}")
def test_open_driver_and_bench_say_the_driver_is_too_old_not_absent(exc, machine, cli, monkeypatch):
    import cuda.bindings

    drv = machine.driver(make_driver([], init=exc))
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    (machine.proc / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n")
    na = open_driver()
    assert na.kind == "missing_function" and "has no cuInit" in na.reason, na.reason
    code, out, err = cli("bench", "--quick")
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "has no cuInit" in err and "470.256.02" in err and "no NVIDIA driver" not in err
    from gpuwhy.device.driver import cuda_bindings_major

    if cuda_bindings_major() == 13:  # the older packages are named as the extra that installs them
        assert "580.65.06 or newer" in err and "python3 -m pip install 'gpuwhy[cu12]'" in err, err


def _wrapped_by_cuda_core(fn: str) -> SystemError:
    """What cuda-core 1.2.2 raises on cuda-bindings 13.5 when libcuda lacks ``fn`` (seen with a
    stand-in libcuda.so.1 that lacks cuDevicePrimaryCtxRetain): its error check calls cuGetErrorName
    while the FunctionNotFoundError is still set, and Python reports a SystemError caused by it."""
    inner = FunctionNotFoundError(f"function {fn} is not found")
    outer = SystemError(f"<class 'cuda.bindings._internal.utils.FunctionNotFoundError'> returned a result "
                        "with an exception set")
    outer.__cause__ = inner
    outer.__context__ = inner
    return outer


def test_a_missing_function_behind_a_system_error_is_named():
    assert missing_function_name(_wrapped_by_cuda_core("cuDevicePrimaryCtxRetain")) == "cuDevicePrimaryCtxRetain"
    plain = SystemError("error return without exception set")
    assert missing_function_name(plain) is None
    loop = SystemError("a cycle of causes")  # a chain that points back at itself ends
    loop.__context__ = loop
    assert missing_function_name(loop) is None


def test_opening_a_gpu_on_a_driver_without_a_function_exits_3_naming_it(monkeypatch):
    """The lock-out case: cuda-bindings of a newer CUDA than the driver's opens the GPU through
    cuda-core and a function is missing: exit 3 naming it and the driver needed, not exit 4's
    "opening GPU 0 failed: SystemError"."""
    from gpuwhy.device import driver
    from gpuwhy.engine import context
    from gpuwhy.errors import NoDeviceError

    def fails(index):
        raise _wrapped_by_cuda_core("cuDevicePrimaryCtxRetain")

    monkeypatch.setattr(context, "init_driver", lambda: 1)
    monkeypatch.setattr(context, "GpuContext", fails)
    monkeypatch.setattr(driver, "cuda_bindings_major", lambda: 13)
    monkeypatch.setattr(driver, "_driver_version_text", lambda: "driver 550.54.15")
    with pytest.raises(NoDeviceError) as info:
        context.open_device(0)
    line = str(info.value)
    assert "\n" not in line and "has no cuDevicePrimaryCtxRetain" in line and "550.54.15" in line, line
    assert "580.65.06 or newer" in line and "'gpuwhy[cu12]'" in line, line
