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
    """Each data file of specs/, microbench/ and examples/ is matched by the package-data of the
    package its folder is shipped as (a subfolder is a package of its own: gpuwhy._specs.arch)."""
    tool = _pyproject()["tool"]["setuptools"]
    data = tool["package-data"]
    for pkg, folder in (("gpuwhy._specs", "specs"), ("gpuwhy._microbench", "microbench"), ("gpuwhy._examples", "examples")):
        for f in (ROOT / folder).rglob("*"):
            if f.is_file() and f.suffix in (".yaml", ".yml", ".cu", ".cuh", ".gz", ".json"):
                rel = f.relative_to(ROOT / folder)
                owner = ".".join([pkg, *rel.parts[:-1]])
                assert owner in tool["packages"], f"{folder}/{rel.as_posix()}: add {owner} to [tool.setuptools] packages"
                patterns = data.get(owner, [])
                assert any(Path(rel.name).match(p) and "/" not in p for p in patterns), \
                    f"{folder}/{rel.as_posix()} is not in package-data {owner}: {patterns}"


def test_dependency_ranges_admit_the_gpu_machine():
    project = _pyproject()["project"]
    deps = " ".join(project["dependencies"])
    # versions on the H200 test machine: Python 3.12, typer 0.27, numpy 2.x, cuda-core 1.2.0, cuda-bindings 13.3, NVRTC 13.0
    assert re.search(r"typer>=0\.\d+,<0\.29", deps)
    assert "numpy>=1.24" in deps and ">=3.10" in project["requires-python"]
    cu13 = " ".join(project["optional-dependencies"]["cu13"])
    assert "cuda-core>=1.2,<2" in cu13 and "cuda-bindings>=13.0,<14" in cu13 and "nvidia-cuda-nvrtc>=13.0,<14" in cu13
    assert "cuda" not in deps and "nvidia" not in deps  # the light base install
