"""The import graph keeps its layers (docs/architecture.md): no module imports one above it,
no import loop outside the CLI's command registration, model/ stays pure, only device/ and
engine/ reach NVML and CUDA; the CLI reaches the use cases through api/ only, the package face
is a facade over api/, one function builds every document's header, and the use-case layer, the
CLI and the package face stay small. One answer each: numbers are formatted only in units.py,
architecture names parsed only in archs.py, NVML's UUID prefix put on only by device/uuids.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gpuwhy"

#: Bottom up; a module may import its own layer and those below.
LAYERS = [
    ("errors", "na", "units", "resources", "version", "archs", "inputs", "outputs", "notices", "plain"),
    ("specs",),
    ("model",),
    ("verdict", "diff"),
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
    if path.name == "__init__.py":
        pkg = [] if mod == "__init__" else mod.split(".")  # the package face is gpuwhy itself
    else:
        pkg = mod.split(".")[:-1]
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


def test_one_busy_interval_union():
    """The running maximum of ends (the union of busy intervals, spans and idle gaps) is computed in
    importers/timeline/intervals.py alone; everything else asks it."""
    bad = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
           if "maximum.accumulate" in p.read_text() and p.relative_to(SRC).as_posix() != "importers/timeline/intervals.py"]
    assert not bad, bad


def test_the_timeline_analysis_knows_no_source():
    """importers/timeline takes only the Timeline structure: no module of it imports a reader."""
    readers = ("importers.kineto", "importers.ncu")
    bad = [f"{m} -> {t}" for m, ts in _graph().items() if m.startswith("importers.timeline")
           for t in ts if t.startswith(readers)]
    assert not bad, bad


# ------------------------------------------------------------------ sizes --

#: No source file longer than this many lines, and no function (or method) longer than that
#: (from its first decorator to its last line, docstring included).
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
#: Today's offenders, each someone else's to split: ``path`` (the file) or ``path:function``.
#: Empty it as the splits land; a new entry needs a reason here.
SIZE_ALLOWED: set[str] = set()


def _oversized(root: Path = SRC) -> dict[str, int]:
    """Every file over :data:`MAX_FILE_LINES` lines and every function over :data:`MAX_FUNCTION_LINES`
    (from its first decorator, else its ``def``, to its last line) under ``root``: ``path`` or
    ``path:function`` -> lines."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        text = p.read_text()
        if len(text.splitlines()) > MAX_FILE_LINES:
            out[rel] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1
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


#: What a cli/ module may import: the use cases, the renderers, the CLI itself and the bottom layer.
CLI_MAY_IMPORT = ("api", "render", "cli", *LAYERS[0])
#: cli/ modules that still reach below api/, being rebuilt elsewhere (the timeline/verdict rebuild
#: moves their use cases into api/); each entry must still be needed (see the test).
CLI_NOT_YET: dict[str, str] = {}


def _cli_reaches_below_api() -> dict[str, list[str]]:
    return {m: sorted(t for t in ts if t.split(".")[0] not in CLI_MAY_IMPORT)
            for m, ts in _graph().items() if m.startswith("cli")}


def test_cli_imports_only_api_render_and_the_bottom():
    bad = [f"{m} -> {t}" for m, ts in _cli_reaches_below_api().items() if m not in CLI_NOT_YET for t in ts]
    assert not bad, bad


def test_cli_exemptions_are_still_needed():
    reach = _cli_reaches_below_api()
    stale = [m for m in CLI_NOT_YET if not reach.get(m)]
    assert not stale, f"{stale} import only api/, render/ and the bottom now: drop them from CLI_NOT_YET"


def test_the_package_face_is_a_facade_over_api():
    """gpuwhy/__init__.py imports api/ and the bottom layer only: never the CLI, nor what lies below api/."""
    face = _graph()["__init__"]
    bad = sorted(t for t in face if t.split(".")[0] not in ("api", *LAYERS[0]))
    assert not bad, bad
    assert not any(t.startswith("cli") for t in face)


def test_nothing_below_the_cli_imports_it():
    bad = [f"{m} -> {t}" for m, ts in _graph().items() if not m.startswith("cli") and m != "__main__"
           for t in ts if t.startswith("cli")]
    assert not bad, bad


def _names_imported(path: Path) -> set[str]:
    """``module.name`` for every ``from <gpuwhy module> import name`` in ``path`` (functions included)."""
    mod = _module(path)
    pkg = mod.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg[: len(pkg) - node.level + 1] if node.level > 1 else pkg
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.update(f"{target}.{a.name}" for a in node.names)
    return out


#: The writers of a document or a table on stdout: only render/output calls them for the commands.
WRITERS = {"render.jsonout.emit", "render.csv_out.emit_csv", "render.csv_out.write_csv"}


def test_commands_write_output_only_through_render_output():
    """No cli/ module prints a JSON document or CSV itself: every command hands its result to
    render/output.show (the modules of CLI_NOT_YET, and cli/run, being rebuilt, aside)."""
    bad = []
    for p in (SRC / "cli").glob("*.py"):
        m = _module(p)
        if m not in CLI_NOT_YET and m != "cli.run":
            bad += [f"{m} -> {n}" for n in _names_imported(p) & WRITERS]
    assert not bad, bad
    assert _names_imported(SRC / "render" / "output.py") & WRITERS, "the check finds a writer where there is one"


def _header_builders(tree: ast.AST) -> list[int]:
    """Lines that build a gpuwhy document header: a dict literal, ``dict(...)`` call or item
    assignment with the key ``gpuwhy`` (a device profile's ``gpuwhy=`` field, the version that
    wrote it, is no document header)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "gpuwhy" for k in node.keys):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and \
                any(k.arg == "gpuwhy" for k in node.keywords):
            lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.slice, ast.Constant) and node.slice.value == "gpuwhy":
            lines.append(node.lineno)
    return lines


def test_one_place_builds_the_document_header():
    """Every --json document and saved file gets its gpuwhy/schema/kind header from render/jsonout.document."""
    found = {p.relative_to(SRC).as_posix(): _header_builders(ast.parse(p.read_text())) for p in SRC.rglob("*.py")}
    builders = {f: lines for f, lines in found.items() if lines}
    assert list(builders) == ["render/jsonout.py"], builders
    assert len(builders["render/jsonout.py"]) == 1, builders


def test_the_header_check_finds_a_hand_built_header():
    """The check above is no tautology: each way of writing a header by hand is found."""
    for code in ('d = {"gpuwhy": v, "schema": 1, "kind": k}', 'd = dict(gpuwhy=v, kind=k)', 'd["gpuwhy"] = v'):
        assert _header_builders(ast.parse(code)) == [1], code
    assert _header_builders(ast.parse('d.get("gpuwhy")')) == []
    assert _header_builders(ast.parse('DeviceProfile(gpuwhy=v)')) == []


#: The use-case layer, the CLI and the package face: no file over MAX_FILE_LINES lines and no
#: function over MAX_FUNCTION_LINES (see below), with no allow-list.


def _small_ones() -> list[Path]:
    return [*sorted((SRC / "api").glob("*.py")), *sorted((SRC / "cli").glob("*.py")), SRC / "__init__.py",
            *(SRC / "render" / n for n in ("output.py", "jsonout.py", "csv_out.py", "report_file.py"))]


def test_use_cases_cli_and_face_stay_small():
    big, long = [], []
    for p in _small_ones():
        text = p.read_text()
        rel = p.relative_to(SRC).as_posix()
        if len(text.splitlines()) > MAX_FILE_LINES:
            big.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - first + 1 > MAX_FUNCTION_LINES:
                    long.append(f"{rel}:{node.name}: {node.end_lineno - first + 1} lines")
    assert not big and not long, big + long


# --- one home for number formatting (gpuwhy/units.py) -------------------------------------------

#: The one module that formats numbers for people (docs/architecture.md).
FORMATTER_HOME = "units.py"
#: Names the private copies had (``def _pct``, ``def _gbs``, ...): a function of one of these
#: names that returns text is a number formatter, wherever it is.
FORMATTER_NAMES = frozenset({
    "pct", "_pct", "num", "_num", "count", "_count", "gbs", "_gbs", "_bytes", "_b", "_n", "_size", "_ns", "_us",
    "_ms", "_kb", "_mib", "_gib", "_mhz", "_rate", "_usd", "_x", "_share", "_cyc", "_sci", "_t4", "_human",
})


def _returns_text(node: ast.FunctionDef) -> bool:
    """Annotated ``-> str``, or not annotated and returning an f-string, a string or a ``fmt_*`` call."""
    if node.returns is not None:
        return ast.unparse(node.returns) == "str"
    for r in ast.walk(node):
        if isinstance(r, ast.Return) and r.value is not None:
            v = r.value
            if isinstance(v, ast.JoinedStr) or (isinstance(v, ast.Constant) and isinstance(v.value, str)):
                return True
            if isinstance(v, ast.Call) and "fmt_" in ast.unparse(v.func):
                return True
    return False


def _formatter_defs(source: str) -> list[str]:
    """The number formatters ``source`` defines: a function named ``fmt_*`` or ``_fmt*``, or one
    of :data:`FORMATTER_NAMES`, that returns text. Methods and nested functions count too; a
    parser of the same name (``_num(x) -> float | None``) does not."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if (node.name.startswith(("fmt_", "_fmt")) or node.name in FORMATTER_NAMES) and _returns_text(node):
            found.append(f"{node.name} (line {node.lineno})")
    return found


def test_number_formatters_live_only_in_units():
    bad = [f"{p.relative_to(SRC).as_posix()}: {d}" for p in SRC.rglob("*.py")
           if p.relative_to(SRC).as_posix() != FORMATTER_HOME for d in _formatter_defs(p.read_text())]
    assert not bad, f"format numbers with gpuwhy.units (add a function or an argument there): {bad}"


def test_the_formatter_rule_finds_a_private_copy():
    copy = 'def _pct(x: float) -> str:\n    return f"{x:.0f}%"\n\n\nclass T:\n    def fmt_gbs(self, b):\n        return f"{b:,.0f}"\n'
    assert _formatter_defs(copy) == ["_pct (line 1)", "fmt_gbs (line 6)"]
    nested = "def view(x):\n    def _gbs(v):\n        return fmt_num(v / 1e9)\n    return _gbs(x)\n"
    assert _formatter_defs(nested) == ["_gbs (line 2)"]
    # a parser or a helper of the same name is not a formatter
    assert _formatter_defs("def _num(x) -> float | None:\n    return None\n\n\ndef _n(self, k):\n    return int(k)\n") == []
    assert "fmt_num (line" in " ".join(_formatter_defs((SRC / FORMATTER_HOME).read_text()))


# --- one parser of architecture names (gpuwhy/archs.py) -----------------------------------------

#: Architecture text read by hand: a compute capability or arch taken apart, a number read out of
#: one, the ``sm_`` cut off or looked for, a regular expression over one (``sm__`` metric names,
#: two underscores, are ncu's and do not count).
ARCH_PARSES = (
    re.compile(r"(compute_capability|\bcc|\barch)\b[\w.()\[\]]*\.(split|rsplit|partition|replace|removeprefix|lstrip)\("),
    re.compile(r"\b(int|float)\((str\()?[\w.]*(compute_capability|\bcc|\barch)\b"),
    re.compile(r"\[\s*3\s*:\s*\]|\b(startswith|removeprefix|lstrip|split|partition|find|index)\(\s*r?[\"'](sm|compute)_(?!_)"),
    re.compile(r"\bre\.(compile|match|fullmatch|search|findall)\(\s*r?[\"'][^\"']*(sm|compute)_(?!_)"),
)
#: Modules allowed one such line, and why.
ARCH_PARSE_ALLOWED = {
    # ncu's CC column is a number ("9" or "9.0"), written X.Y for matching sheets; parse_arch takes no "9"
    "importers/ncu/identify.py": 'return f"{float(la.cc):.1f}"',
}


def _arch_parses(rel: str, text: str) -> list[str]:
    allowed = ARCH_PARSE_ALLOWED.get(rel)
    return [f"{rel}:{i}: {line.strip()}" for i, line in enumerate(text.splitlines(), 1)
            if any(r.search(line) for r in ARCH_PARSES) and not (allowed and allowed in line)]


def test_architecture_names_are_parsed_only_by_archs():
    bad = [hit for p in SRC.rglob("*.py") if p.name != "archs.py"
           for hit in _arch_parses(p.relative_to(SRC).as_posix(), p.read_text())]
    assert not bad, f"parse architecture text with gpuwhy.archs.parse_arch (or a Sheet's .arch): {bad}"


@pytest.mark.parametrize("line", [
    'major = int(str(compute_capability).split(".")[0])',  # the parses parse_arch replaced
    'major = int(str(sheet.compute_capability).split(".")[0])',
    """if f"sm_{cc.replace('.', '')}" != key:""",
    "have = sorted(table, key=lambda k: int(k[3:]))",
    """archs = [f"sm_{d.identity.compute_capability.replace('.', '')}" for d in reports]""",
    '_NEEDS = re.compile(r"//\\s*gpuwhy:\\s*needs\\s+sm_(\\d+)")',
    'if arch.startswith("sm_"):',
])
def test_the_architecture_rule_finds_a_hand_parse(line):
    assert _arch_parses("x.py", line)


def test_the_architecture_rule_leaves_ncu_metric_names_alone():
    assert not _arch_parses("x.py", 'wanted = [m for m in names if m.startswith("sm__ops_path_tensor_")]')


# --- one writer of NVML's UUID prefix (device/uuids.py) -----------------------------------------

UUID_HOME = "device/uuids.py"
#: A string that puts "GPU-" or "MIG-" before a UUID: the prefix alone, an f-string or glob
#: starting with it, a literal UUID ("GPU-to-GPU" and "GPU-bound" are words, not UUIDs).
UUID_PREFIXING = re.compile(r"""(?<!\w)(f["'](GPU|MIG)-[\w-]*\{|["'](GPU|MIG)-(["'*]|[0-9a-fA-F]{4}))""")


def test_the_uuid_prefix_is_written_only_by_device_uuids():
    bad = [f"{p.relative_to(SRC).as_posix()}:{i}: {line.strip()}" for p in SRC.rglob("*.py")
           if p.relative_to(SRC).as_posix() != UUID_HOME
           for i, line in enumerate(p.read_text().splitlines(), 1) if UUID_PREFIXING.search(line)]
    assert not bad, f"put NVML's prefix on a UUID with gpuwhy.device.uuids.with_uuid_prefix: {bad}"


@pytest.mark.parametrize("line, found", [
    ('uuid=uuid if uuid.upper().startswith("GPU-") else f"GPU-{uuid}",', True),  # the copies it replaced
    ('return ("MIG-" if t.mig_from_driver else "GPU-") + t.drv.uuid_hex', True),
    ('guuid = g.uuid if not is_na(g.uuid) else f"GPU-unknown-{g.index}"', True),
    ('pattern = "GPU-*/*.json"', True),
    ('UUID = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"', True),
    ('"""GPU-to-GPU figures"""', False),
    ('Text(f"GPU-bound: busy {pct}%")', False),
])
def test_the_uuid_rule_finds_a_prefix(line, found):
    assert bool(UUID_PREFIXING.search(line)) is found
