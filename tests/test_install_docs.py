"""The install commands the README and docs/ name work today: gpuwhy is not on a package index, so
each `pip install` of gpuwhy names the checkout (`.`), a wheel file or folder, or an extra of an
installed gpuwhy (`'gpuwhy[cu13]'`, resolved against the installed copy); never the bare name,
which would fetch whatever someone registered under it. Each extra named exists in pyproject."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PIP = re.compile(r"pip3? install ([^`\n\"]*)")


def _extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib")
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _targets(text: str) -> list[str]:
    """The requirement words of every ``pip install`` command in ``text`` (options dropped)."""
    out = []
    for m in PIP.finditer(text):
        cmd = m.group(1).split("&&")[0].split(";")[0].split("#")[0]
        try:
            words = shlex.split(cmd)
        except ValueError:
            words = cmd.split()
        out += [w for w in words if not w.startswith("-") and w not in ("python3", "-m")]
    return out


def bad_install(word: str, extras: set[str]) -> str | None:
    """Why the requirement ``word`` of a documented ``pip install`` does not work, or None."""
    m = re.fullmatch(r"(.*?)(?:\[([^\]]*)\])?", word)
    base, wanted = m.group(1), [e.strip() for e in (m.group(2) or "").split(",") if e.strip()]
    is_gpuwhy = base.lower() == "gpuwhy" or re.match(r"(?i)gpuwhy\s*[=<>~!]", base)
    if base in (".", "") or "/" in base or base.endswith(".whl") or base.startswith("gpuwhy-"):
        pass  # the checkout, a folder or a wheel file
    elif is_gpuwhy:
        if not wanted or base.lower() != "gpuwhy":
            return f"{word}: gpuwhy from a package index (it is not published there)"
    else:
        return None  # another package (torch, pandas, ...)
    unknown = [e for e in wanted if e not in extras]
    return f"{word}: no extra {', '.join(unknown)} in pyproject" if unknown else None


def test_the_rule_catches_what_does_not_work():
    extras = {"cu13", "cu12", "plot", "test"}
    for word in ("gpuwhy", "gpuwhy==0.1.0", "gpuwhy>=0.1", ".[cu14]", "gpuwhy[cu11]", "./dist/gpuwhy-0.1.0-py3-none-any.whl[gpu]"):
        assert bad_install(word, extras), word
    for word in (".", ".[test,cu13]", "gpuwhy[plot]", "/shared/gpuwhy/gpuwhy-0.1.0-py3-none-any.whl[cu13]", "torch", "pandas"):
        assert bad_install(word, extras) is None, word
    assert _targets("run `python3 -m pip install --user '.[cu13]'` then") == [".[cu13]"]
    assert _targets('command: ["sh", "-c", "pip install gpuwhy && gpuwhy check"]') == ["gpuwhy"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_installs_work(doc):
    extras = _extras()
    bad = [why for w in _targets(doc.read_text()) if (why := bad_install(w, extras))]
    assert not bad, bad


def test_the_readme_starts_with_the_light_install_and_names_both_cuda_extras():
    text = (ROOT / "README.md").read_text()
    assert "python3 -m pip install . && gpuwhy" in text
    assert "'.[cu13]'" in text and "'.[cu12]'" in text


def _dockerfile_runs(text: str) -> tuple[dict[str, str], list[list[str]]]:
    """The ``ARG`` defaults and, per stage, the ``RUN`` commands of a Dockerfile (continuation
    lines joined, ``${ARG}``/``$ARG`` replaced by the default)."""
    args: dict[str, str] = {}
    stages: list[list[str]] = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "ARG" and "=" in rest:
            name, _, default = rest.partition("=")
            args[name.strip()] = default.strip().strip("\"'")
        elif word == "FROM":
            stages.append([])
        elif word == "RUN":
            stages[-1].append(re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), rest))
    return args, stages


def test_the_container_image_holds_the_gpu_packages():
    """docs/fleet/Dockerfile's image runs `gpuwhy check` on GPU nodes: the wheels it installs must be
    gpuwhy's with a GPU extra (cuda-bindings, nvidia-ml-py), not the light install, which makes every
    check exit 3 ("nvidia-ml-py (pynvml) is not importable"). The last stage installs with --no-index
    from the build stage's wheels: nothing is fetched there, nor when the container starts."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    gpu = {name for name, deps in extras.items()
           if any(d.startswith("cuda-bindings") for d in deps) and any(d.startswith("nvidia-ml-py") for d in deps)}
    assert gpu == {"cu12", "cu13"}
    args, stages = _dockerfile_runs((ROOT / "docs" / "fleet" / "Dockerfile").read_text())
    assert args.get("GPU_EXTRA") == "cu13", args  # the default: drivers R580 and newer
    build, final = stages[0], stages[-1]
    wheel = [w for cmd in build for w in shlex.split(cmd) if "[" in w]
    assert any(w.endswith(f"[{args['GPU_EXTRA']}]") for w in wheel), build  # the extra's wheels are built
    (install,) = [cmd for cmd in final if "pip install" in cmd]
    words = shlex.split(install.split("&&")[0])
    assert "--no-index" in words, install
    assert f"gpuwhy[{args['GPU_EXTRA']}]" in words, install
    assert args["GPU_EXTRA"] in gpu


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_documented_install_is_a_user_install(doc):
    """`pip install --user` into the system Python is refused on Debian 12 and Ubuntu 23.04 and later
    (PEP 668: "error: externally-managed-environment", seen with Debian 12's Python 3.11): the docs
    install into a virtual environment instead."""
    users = [m.group(0) for m in PIP.finditer(doc.read_text()) if re.search(r"(?<![\w-])--user\b", m.group(1))]
    assert not users, users
