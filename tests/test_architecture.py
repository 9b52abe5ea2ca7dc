"""The import graph keeps its layers (docs/architecture.md): no module imports one above it,
no import loop outside the CLI's command registration, model/ stays pure, only device/ and
engine/ reach NVML and CUDA."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "gpuwhy"

#: Bottom up; a module may import its own layer and those below.
LAYERS = [
    ("errors", "na", "units", "resources", "version", "archs", "inputs", "outputs"),
    ("specs",),
    ("model",),
    ("device", "engine"),
    ("profiles", "profile_sections"),
    ("bench", "importers"),
    ("api", "check"),
    ("render",),
    ("cli",),
    ("__init__", "__main__"),
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """gpuwhy modules imported anywhere in ``path`` (also inside functions), as dotted names."""
    mod = _module(path)
    pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1] if node.level > 1 else pkg
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
                names = [target] + [f"{target}.{a.name}" for a in node.names]
            elif node.module and node.module.startswith("gpuwhy"):
                target = node.module[len("gpuwhy."):] if node.module != "gpuwhy" else ""
                names = [target] + [f"{target}.{a.name}".strip(".") for a in node.names]
            else:
                continue
            out.update(n for n in names if n and _exists(n))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("gpuwhy."):
                    n = a.name[len("gpuwhy."):]
                    if _exists(n):
                        out.add(n)
    out.discard(mod)
    return out


def _exists(dotted: str) -> bool:
    p = SRC.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in SRC.rglob("*.py")}


def _layer(mod: str) -> int:
    return LAYER[mod.split(".")[0]]


def test_every_top_level_module_has_a_layer():
    top = {_module(p).split(".")[0] for p in SRC.rglob("*.py")}
    assert top <= set(LAYER), f"add {sorted(top - set(LAYER))} to LAYERS and docs/architecture.md"


def test_no_import_runs_back_up_a_layer():
    bad = [f"{m} -> {t}" for m, ts in _graph().items() for t in ts if _layer(t) > _layer(m)]
    assert not bad, bad


def test_model_is_pure():
    bad = [f"{m} -> {t}" for m, ts in _graph().items() if m.startswith("model")
           for t in ts if t.split(".")[0] in ("device", "engine", "render", "bench", "api", "cli", "profiles")]
    assert not bad, bad
    for p in (SRC / "model").rglob("*.py"):
        text = p.read_text()
        for word in ("pynvml", "cuda.bindings", "cuda.core", "import torch"):
            assert word not in text, f"{p.name} uses {word}"


def test_only_device_and_engine_reach_nvml_and_cuda():
    allowed = ("device/", "engine/", "bench/launch.py")  # launch.py: the launch it measures
    bad = []
    for p in SRC.rglob("*.py"):
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith(allowed):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            bad += [f"{rel}: {n}" for n in names if n.split(".")[0] in ("pynvml", "cuda")]
    assert not bad, bad


def test_no_import_loop_outside_the_cli():
    g = {m: {t for t in ts if not t.startswith("cli")} for m, ts in _graph().items() if not m.startswith("cli")}
    # Tarjan's strongly connected components.
    index, low, stack, on, loops, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                loops.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not loops, loops


# ------------------------------------------------------------------ sizes --

#: No source file longer than this many lines, and no function (or method) longer than that.
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
#: Today's offenders, each someone else's to split: ``path`` (the file) or ``path:function``.
#: Empty it as the splits land; a new entry needs a reason here.
SIZE_ALLOWED = {
    "importers/trace/analyze.py",
    "importers/trace/analyze.py:_report",
    "importers/trace/analyze.py:_analyze_gpu",
    "importers/trace/scan.py:scan",
    "importers/ncu/analyse.py:analyze",
    "api/measure.py:measure",
    "cli/report.py:report_cmd",
}


def _oversized(root: Path = SRC) -> dict[str, int]:
    """Every file over :data:`MAX_FILE_LINES` lines and every function over :data:`MAX_FUNCTION_LINES`
    (from its ``def`` to its last line) under ``root``: ``path`` or ``path:function`` -> lines."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        text = p.read_text()
        if len(text.splitlines()) > MAX_FILE_LINES:
            out[rel] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out[f"{rel}:{node.name}"] = n
    return out


def test_no_file_over_800_lines_and_no_function_over_120():
    bad = {k: n for k, n in _oversized().items() if k not in SIZE_ALLOWED}
    assert not bad, f"split these (lines): {bad}"


def test_the_size_allow_list_holds_only_todays_offenders():
    stale = sorted(SIZE_ALLOWED - set(_oversized()))
    assert not stale, f"no longer over the limit: remove {stale} from SIZE_ALLOWED"


def test_the_size_check_sees_a_long_function_and_a_long_file(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def f():\n{body}\n")
    (tmp_path / "short.py").write_text("def g():\n    return 1\n" + "\n" * MAX_FILE_LINES)
    assert _oversized(tmp_path) == {"long.py:f": MAX_FUNCTION_LINES + 1, "short.py": MAX_FILE_LINES + 2}
