"""Shared test set-up: the `gpu` marker skips cleanly where no NVIDIA GPU and driver are present."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))


@pytest.fixture(autouse=True)
def _not_under_github_actions(monkeypatch):
    """The suite runs the same in a GitHub Actions job: without its variables gpuwhy writes no
    annotations or step summary (tests/test_github_output.py sets them where it means to)."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


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


@functools.lru_cache(maxsize=None)
def nvrtc_available() -> tuple[bool, str]:
    """(True, '') when NVRTC loads, (False, why) when gpuwhy says it cannot be loaded.

    Only the documented errors mean "skip" (NoDeviceError: NVRTC cannot be loaded, exit 3;
    UsageError); anything else (a broken check, a bug in gpuwhy.engine.compile) is raised,
    so it fails instead of skipping.
    """
    from gpuwhy.engine.compile import nvrtc_version
    from gpuwhy.errors import NoDeviceError, UsageError

    try:
        nvrtc_version()
    except (NoDeviceError, UsageError) as exc:
        return False, str(exc)
    return True, ""


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory):
    """One cubin cache folder (XDG_CACHE_HOME) for the session, so each (source, arch, options) compiles once."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(scope="session")
def compiled(kernel_cache):
    """``compiled(file_name, arch, defines=None)`` -> the CompiledModule of a bundled kernel, built once per
    session and stored in :func:`kernel_cache` (where compile_all finds it). Each first build is a fresh NVRTC
    run, so ``.log`` holds the compiler's messages (a cache hit has none)."""
    import os

    from gpuwhy.engine.compile import compile_file

    memo: dict = {}

    def build(file_name: str, arch: str, defines: dict | None = None):
        key = (file_name, arch, tuple(sorted((defines or {}).items())))
        if key not in memo:
            saved = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "GPUWHY_NO_CACHE")}
            os.environ["XDG_CACHE_HOME"] = str(kernel_cache)
            os.environ.pop("GPUWHY_NO_CACHE", None)
            try:
                mod = compile_file(file_name, arch, defines=defines, use_cache=True)
                if mod.cached:  # built by compile_all earlier: build again for the log
                    mod = compile_file(file_name, arch, defines=defines, use_cache=False)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            memo[key] = mod
        return memo[key]

    return build


@pytest.fixture(autouse=True)
def _test_columns(monkeypatch):
    """Commands run in-process print at 120 columns, as :func:`run_cli`'s do (piped output is 80
    columns when COLUMNS is unset: a test of that width sets or removes COLUMNS itself)."""
    import os

    if "COLUMNS" not in os.environ:
        monkeypatch.setenv("COLUMNS", "120")


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(*args: str, env: dict | None = None, cwd: str | None = None):
    """Run ``python -m gpuwhy ARGS`` in a subprocess; returns CompletedProcess (text).

    With ``GPUWHY_TEST_FORK_CLI=1`` (set by benchmarks/mutation.py, never in CI) the
    test process forks and the child runs the CLI's ``main`` with that environment,
    folder and captured output: the same code without starting an interpreter.
    """
    import os
    import subprocess

    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("COLUMNS", "120")
    if env:
        e.update(env)
    if os.environ.get("GPUWHY_TEST_FORK_CLI") == "1" and hasattr(os, "fork"):
        return _forked_cli(list(args), e, cwd)
    return subprocess.run([sys.executable, "-m", "gpuwhy", *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=120)


def one_line(code: int, err: str, want: int = 2) -> str:
    """The one stderr line of a failed command, once the exit code is ``want`` and no traceback came."""
    assert code == want, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _forked_cli(args: list[str], env: dict, cwd: str | None):
    """:func:`run_cli` in a forked child of the test process (see there)."""
    import os
    import subprocess
    import tempfile
    import time

    from gpuwhy.cli.app import main  # imported once, before the fork
    from gpuwhy.render import console

    with tempfile.TemporaryDirectory() as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                os.environ.clear()
                os.environ.update(env)
                if cwd:
                    os.chdir(cwd)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT), 1)
                os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT), 2)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False)
                console.out.cache_clear()
                console.err.cache_clear()
                try:
                    code = main(args)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else 70)
        deadline = time.monotonic() + 120
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["gpuwhy", *args], 120)
            time.sleep(0.005)
        with open(out_path, encoding="utf-8", errors="replace") as fo, open(err_path, encoding="utf-8", errors="replace") as fe:
            return subprocess.CompletedProcess(["gpuwhy", *args], os.waitstatus_to_exitcode(status), fo.read(), fe.read())


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
