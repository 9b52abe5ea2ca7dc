"""Shared test set-up: the `gpu` marker skips cleanly where no NVIDIA GPU and driver are present."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))


@functools.lru_cache(maxsize=None)
def gpu_available() -> tuple[bool, str]:
    """(True, '') when the CUDA driver initialises and sees at least one device, else (False, why)."""
    try:
        from cuda.bindings import driver
    except Exception as exc:  # cuda-bindings not installed
        return False, f"cuda-bindings not importable ({exc})"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return False, f"cuInit failed ({err.name})"
        err, n = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS or n < 1:
            return False, "no CUDA device"
    except Exception as exc:  # no libcuda.so
        return False, f"no CUDA driver ({type(exc).__name__})"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(*args: str, env: dict | None = None, cwd: str | None = None):
    """Run ``python -m gpuwhy ARGS`` in a subprocess; returns CompletedProcess (text)."""
    import os
    import subprocess

    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("COLUMNS", "120")
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "gpuwhy", *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=120)


def one_line(code: int, err: str, want: int = 2) -> str:
    """The one stderr line of a failed command, once the exit code is ``want`` and no traceback came."""
    assert code == want, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def cli():
    """In-process CLI runner: cli(*args) -> (exit_code, stdout, stderr)."""
    import contextlib
    import io

    from gpuwhy.cli.app import main

    def _run(*args: str):
        out, err = io.StringIO(), io.StringIO()
        from gpuwhy.render import console

        console.out.cache_clear()
        console.err.cache_clear()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        console.out.cache_clear()
        console.err.cache_clear()
        return code, out.getvalue(), err.getvalue()

    return _run
