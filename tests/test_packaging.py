"""The wheel must carry every subpackage and every data file the code reads (no GPU needed)."""

import re
import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {".".join(p.relative_to(ROOT / "src").parts[:-1]) for p in (ROOT / "src" / "gpuwhy").rglob("__init__.py")}
    assert found <= listed, f"add to pyproject [tool.setuptools] packages: {sorted(found - listed)}"


def test_every_data_file_is_shipped():
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    for pkg, folder in (("gpuwhy._specs", "specs"), ("gpuwhy._microbench", "microbench")):
        patterns = data[pkg]
        for f in (ROOT / folder).rglob("*"):
            if f.is_file() and f.suffix in (".yaml", ".yml", ".cu", ".cuh"):
                rel = f.relative_to(ROOT / folder).as_posix()
                assert any(Path(rel).match(p) and rel.count("/") == p.count("/") for p in patterns), f"{folder}/{rel} is not in package-data {patterns}"


def test_dependency_ranges_admit_the_gpu_machine():
    deps = " ".join(_pyproject()["project"]["dependencies"])
    # versions on the H200 test machine: typer 0.27, cuda-core 1.2.0, cuda-bindings 13.3, NVRTC 13.0
    assert re.search(r"typer>=0\.\d+,<0\.29", deps)
    assert "cuda-core>=1.2,<2" in deps and "cuda-bindings>=13.0,<14" in deps and "nvidia-cuda-nvrtc>=13.0,<14" in deps
