"""gpuwhy without the GPU packages (what `pip install` gives on macOS): every no-GPU command
works, every GPU command exits 3 with the one pip line that installs them.

The packages are made unimportable by an import blocker (a ``sitecustomize`` module
on ``PYTHONPATH`` adding a meta-path finder) in each subprocess: ``cuda`` (cuda-bindings,
cuda-core), ``nvidia`` (the NVRTC wheel), ``pynvml`` (nvidia-ml-py), and pandas and
matplotlib, which no command needs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"
BLOCKED = ("cuda", "nvidia", "pynvml", "pandas", "matplotlib")

BLOCKER = textwrap.dedent(
    f"""
    import sys

    BLOCKED = {BLOCKED!r}


    class _Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the no-CUDA test)", name=name)
            return None


    sys.meta_path.insert(0, _Blocker())
    """
)


@pytest.fixture(scope="module")
def blocked_env(tmp_path_factory):
    d = tmp_path_factory.mktemp("nocuda")
    (d / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(d), str(ROOT / "src")])
    env["COLUMNS"] = "100"
    env["XDG_CACHE_HOME"] = str(d / "cache")  # no bench profile of this machine's
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("GPUWHY_SPECS", None)
    return env, d


def _run(env, *args: str, code: str | None = None):
    cmd = [sys.executable, "-c", code] if code is not None else [sys.executable, "-m", "gpuwhy", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env[0], cwd=env[1], timeout=120, check=False)


def test_the_blocker_blocks(blocked_env):
    for mod in ("cuda.bindings.driver", "cuda.core", "pynvml", "pandas", "nvidia.cuda_nvrtc"):
        r = _run(blocked_env, code=f"import {mod}")
        assert r.returncode != 0 and "blocked by the no-CUDA test" in r.stderr, mod


NO_GPU_COMMANDS = [
    ("--version",),
    ("classify", "--flops", "2.7e8", "--bytes", "3.2GB", "--gpu", "H200"),
    ("classify", "--example", "vecadd", "--gpu", "rtx 5070", "--json"),
    ("classify", "--ncu", str(REAL / "ncu_raw.csv")),
    ("llm", "--model", "llama-3-8b", "--gpu", "H200"),
    ("compare", "H100", "H200", "--intensity", "0.33"),
    ("compare", "H100", "H200", "--llm", "--params", "8B", "--json"),
    ("occupancy", "--block-size", "256", "--registers", "64", "--gpu", "H200"),
    ("occupancy", "--block-size", "256", "--registers", "64", "--arch", "sm_90", "--json"),
    ("ncu", str(REAL / "ncu_raw.csv")),
    ("ncu", str(REAL / "ncu_details.csv"), "--json"),
    ("trace", str(REAL / "trace_dataloader.json")),
    ("trace", str(REAL / "trace_streams.json"), "--json"),
    ("roofline", "--gpu", "H200", "--point", "gemm:2.2T:400MB"),
    ("specs", "list"),
    ("specs", "show", "H200"),
    ("specs", "validate"),
]


@pytest.mark.parametrize("args", NO_GPU_COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_no_gpu_commands_work_without_the_gpu_packages(blocked_env, args):
    r = _run(blocked_env, *args)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip(), "printed nothing"
    assert "Traceback" not in r.stderr


def test_report_works_without_the_gpu_packages(blocked_env):
    out = blocked_env[1] / "report.html"
    r = _run(blocked_env, "report", "--gpu", "H200", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text().lstrip().lower().startswith("<!doctype html")


def test_the_main_job_falls_back_to_a_spec_sheet_example(blocked_env):
    r = _run(blocked_env)
    assert r.returncode == 0, r.stderr
    assert "no GPU here" in r.stderr and "pip install" in r.stderr and "verdict" in r.stdout


@pytest.mark.parametrize(
    "args",
    [("probe",), ("probe", "-i", "0"), ("bench",), ("bench", "--compute"), ("bench", "--compile-only", "--arch", "sm_90"),
     ("check",), ("check", "--level", "1"), ("check", "-i", "all", "--level", "1"),
     ("occupancy", "--block-size", "256", "--registers", "64", "-i", "0")],
    ids=lambda a: " ".join(a),
)
def test_gpu_commands_exit_3_with_the_pip_line(blocked_env, args):
    from gpuwhy.errors import GPU_PIP_LINE

    r = _run(blocked_env, *args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 3, r.stderr
    assert len(lines) == 1 and lines[0].startswith("gpuwhy: error: ") and GPU_PIP_LINE in lines[0], lines
    assert r.stdout == ""


def test_the_python_api_without_the_gpu_packages(blocked_env):
    code = textwrap.dedent(
        """
        import gpuwhy
        r = gpuwhy.classify(flops=2**28, bytes=12 * 2**28, gpu="rtx 5070")
        assert r.verdict.regime == "memory"
        e = gpuwhy.llm(params="8B", gpu="H200")
        assert e.decode.tokens_per_s_per_seq > 0
        try:
            gpuwhy.probe()
        except gpuwhy.errors.NoDeviceError as exc:
            assert "pip install" in str(exc)
        else:
            raise AssertionError("probe worked without NVML and cuda-bindings")
        print("ok")
        """
    )
    r = _run(blocked_env, code=code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def _pyproject():
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_extras_are_the_pyproject_gpu_extras():
    from gpuwhy.errors import GPU_EXTRAS

    project = _pyproject()
    extras = project["optional-dependencies"]
    assert {f"cu{m}" for m in GPU_EXTRAS} <= set(extras)
    for major, pkgs in GPU_EXTRAS.items():
        marked = [d.split(";")[0].strip() for d in extras[f"cu{major}"]]
        assert sorted(marked) == sorted(pkgs), major
        for d in extras[f"cu{major}"]:
            assert d.split(";")[1].strip() == "sys_platform == 'linux' or sys_platform == 'win32'"
    # the light install: no CUDA wheel and no pandas in the base dependencies
    deps = " ".join(project["dependencies"])
    for heavy in ("cuda", "nvidia", "pandas", "matplotlib"):
        assert heavy not in deps, heavy
    assert any(d.startswith("cuda-bindings>=12") and "<13" in d for d in GPU_EXTRAS[12])
    assert any(d.startswith("nvidia-cuda-nvrtc-cu12") for d in GPU_EXTRAS[12])


FAKE_DRIVER = textwrap.dedent(
    """
    import ctypes
    import os

    _real = ctypes.CDLL


    class _FakeCuda:
        def cuDriverGetVersion(self, ref):
            ref._obj.value = int(os.environ["FAKE_CUDA_DRIVER_VERSION"])
            return 0


    def _cdll(name, *args, **kwargs):
        if "libcuda" in str(name) or "nvcuda" in str(name):
            return _FakeCuda()
        return _real(name, *args, **kwargs)


    ctypes.CDLL = _cdll
    """
)


@pytest.mark.parametrize("version, extra, other", [(12040, "cu12", "cu13"), (13010, "cu13", "cu12"), (12000, "cu12", "cu13")])
def test_the_exit_3_line_names_the_extra_of_the_driver(blocked_env, version, extra, other):
    """A driver of CUDA 12 (a fake libcuda answering cuDriverGetVersion) gets gpuwhy[cu12], of 13 gpuwhy[cu13]."""
    env, d = blocked_env
    (d / "fake_driver").mkdir(exist_ok=True)
    (d / "fake_driver" / "sitecustomize.py").write_text(BLOCKER + FAKE_DRIVER)
    env = dict(env, PYTHONPATH=os.pathsep.join([str(d / "fake_driver"), str(ROOT / "src")]),
               FAKE_CUDA_DRIVER_VERSION=str(version))
    for args in (("probe",), ("check",), ("check", "--level", "1"), ("bench", "--compile-only", "--arch", "sm_90")):
        r = _run((env, d), *args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 3 and len(lines) == 1, r.stderr
        want = f"(CUDA {version // 1000}.{version % 1000 // 10})"
        assert want in lines[0] and f"'gpuwhy[{extra}]'" in lines[0] and f"gpuwhy[{other}]" not in lines[0], lines[0]
    r = _run((env, d))  # the main job falls back to the spec sheet and says which extra
    assert r.returncode == 0 and f"gpuwhy[{extra}]" in r.stderr, r.stderr


def test_the_extra_by_driver_version():
    from gpuwhy.errors import GPU_EXTRAS, gpu_packages_missing

    def line(v):
        return str(gpu_packages_missing("cuda-bindings", v))

    assert "gpuwhy[cu12]" in line(12090) and "gpuwhy[cu13]" not in line(12090)
    assert "CUDA 12.9" in line(12090) and "'cuda-bindings>=12.9,<13'" in line(12090)
    assert "gpuwhy[cu13]" in line(13000) and "gpuwhy[cu12]" not in line(13000)
    assert "gpuwhy[cu13]" in line(14000)  # a newer driver runs the newest packages
    old = line(11080)
    assert "CUDA 11.8" in old and "update the NVIDIA driver" in old and "525.60.13" in old and "gpuwhy[cu12]" in old
    unknown = line(None)
    assert "gpuwhy[cu13]" in unknown and "'gpuwhy[cu12]'" in unknown and "580.65.06" in unknown
    for v in (None, 11080, 12090, 13000):
        assert "\n" not in line(v)
    assert set(GPU_EXTRAS) == {12, 13}


def test_driver_cuda_version_without_a_driver(monkeypatch):
    import ctypes

    from gpuwhy.device import cuda_version

    def missing(name, *a, **k):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert cuda_version.driver_cuda_version() is None

    class Failing:
        def cuDriverGetVersion(self, ref):
            return 3  # CUDA_ERROR_NOT_INITIALIZED

    monkeypatch.setattr(ctypes, "CDLL", lambda name, *a, **k: Failing())
    assert cuda_version.driver_cuda_version() is None
