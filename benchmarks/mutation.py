#!/usr/bin/env python3
"""Mutation testing of gpuwhy's pure core: do the tests fail when a number is wrong?

For each module it makes one small edit at a time to a copy of the tree, runs
the tests that exercise that module (``MODULES`` below) against the copy, and
counts the edit *caught* when they fail, error or time out. The edit kinds:

- arithmetic: ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``**`` -> ``*``
  (also in ``+=``, ``*=`` ...); a dropped unary minus;
- constants: an int ``n`` -> ``n + 1``, a float ``x`` -> ``10 x`` (``0.0`` -> ``1.0``);
- comparisons: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``,
  ``in`` <-> ``not in``, ``is`` <-> ``is not``;
- logic: ``and`` <-> ``or``, a dropped ``not``, ``min`` <-> ``max``;
- a dropped ``raise`` (the statement becomes ``pass``).

Strings, docstrings, annotations and lines marked ``# pragma: no mutate`` are
left alone. It prints, per module, the edits made, the caught fraction and
every surviving edit (file:line, the edit, the line); ``--json FILE`` writes
them all. benchmarks/mutation_equivalent.txt names surviving edits judged
harmless, with the reason; they are listed with it, and still counted as
survivors.

Not part of CI: a module takes minutes (each edit forks a process that runs
pytest with ``-x`` on the module's tests; the third-party imports are done once
in the parent). Run it on a quiet machine:

    PYTHONPATH=src python3 benchmarks/mutation.py                        # every module in MODULES
    PYTHONPATH=src python3 benchmarks/mutation.py src/gpuwhy/units.py    # one module, its tests from MODULES
    PYTHONPATH=src python3 benchmarks/mutation.py src/gpuwhy/x.py --tests tests/test_x.py
    python3 benchmarks/mutation.py --list src/gpuwhy/model/roofline/classify.py   # the edits, nothing run
    python3 benchmarks/mutation.py --tree /tmp/old-checkout ...          # mutate and test another tree
    ... --survivors-of last.json --json now.json                         # after adding tests: rerun the survivors

Exit status: 0 when every module reaches ``--target`` percent caught (default
90), 1 when one does not, 2 for bad arguments or tests that fail unmutated.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Module (relative to the tree) -> the tests that exercise it, fastest first
#: (pytest runs them in this order and stops at the first failure).
MODULES: dict[str, tuple[str, ...]] = {
    "src/gpuwhy/model/roofline/classify.py": (
        "tests/test_pinned_roofline.py",
        "tests/test_ncu_launch_sized.py",
        "tests/test_roofline.py",
        "tests/test_classify_cli.py",
        "tests/test_user_errors.py",
    ),
    "src/gpuwhy/model/llm/estimate.py": ("tests/test_pinned_llm.py", "tests/test_llm.py", "tests/test_llm_scaling.py"),
    "src/gpuwhy/model/llm/roofline.py": ("tests/test_pinned_llm.py", "tests/test_llm.py", "tests/test_llm_scaling.py"),
    "src/gpuwhy/model/llm/scaling.py": ("tests/test_pinned_llm_scaling.py", "tests/test_pinned_llm.py", "tests/test_llm_scaling.py",
                                        "tests/test_allreduce.py"),
    "src/gpuwhy/model/multi_gpu/allreduce.py": ("tests/test_allreduce.py",),
    "src/gpuwhy/units.py": ("tests/test_pinned_units.py", "tests/test_units.py"),
    "src/gpuwhy/specs.py": ("tests/test_pinned_specs.py", "tests/test_specs.py", "tests/test_sheet_choice.py"),
    "src/gpuwhy/device/sheet.py": ("tests/test_pinned_specs.py", "tests/test_sheet_choice.py", "tests/test_specs.py"),
    "src/gpuwhy/importers/ncu/counters.py": ("tests/test_pinned_importers.py", "tests/test_ncu_import.py", "tests/test_real_fixtures.py"),
    # The memory-hierarchy (issue 15) and shapes (issue 16) modules.
    "src/gpuwhy/model/roofline/hierarchy.py": ("tests/test_pinned_hierarchy.py", "tests/test_hierarchy.py"),
    "src/gpuwhy/model/roofline/level_verdict.py": ("tests/test_pinned_hierarchy.py", "tests/test_hierarchy.py"),
    "src/gpuwhy/model/kernels/shapes.py": ("tests/test_shapes.py",),
    "src/gpuwhy/model/kernels/gemm_shape.py": ("tests/test_pinned_gemm_shape.py", "tests/test_shapes.py"),
    # `gpuwhy run`'s budget (issue 18), the ncu figures (issue 14) and the trace's idle causes (issue 17).
    "src/gpuwhy/model/timeline/budget.py": ("tests/test_pinned_time_budget.py", "tests/test_run_program.py"),
    # `gpuwhy run --kernels`: which launches the ncu pass asks for, and where they land (issue 18).
    "src/gpuwhy/importers/ncu/kernel_pass.py": ("tests/test_run_kernels.py",),
    "src/gpuwhy/importers/ncu/figures.py": ("tests/test_pinned_ncu_figures.py", "tests/test_pinned_importers.py", "tests/test_ncu_import.py",
                                            "tests/test_ncu_real.py", "tests/test_real_fixtures.py"),
    "src/gpuwhy/importers/timeline/gaps.py": ("tests/test_pinned_trace_causes.py", "tests/test_torch_trace_causes.py",
                                             "tests/test_torch_trace.py", "tests/test_torch_trace_real.py",
                                             "tests/test_tracer_cost.py", "tests/test_cupti_records.py"),
    "src/gpuwhy/model/timeline/bins.py": ("tests/test_run_timeline.py",),
    # Several GPUs (issue 21): 100% of 69, 98.8% of 82 (one equivalent), 100% of 50, 100% of 46 edits.
    "src/gpuwhy/model/multi_gpu/links.py": ("tests/test_topology.py", "tests/test_link.py"),
    "src/gpuwhy/model/multi_gpu/topology.py": ("tests/test_topology.py",),
    "src/gpuwhy/model/multi_gpu/p2p.py": ("tests/test_p2p.py",),
    "src/gpuwhy/model/multi_gpu/schedule.py": ("tests/test_multi_gpu.py",),
    # The verdict (issue 28): the vocabulary, the figures, the remedies and the engine, on windows built by hand:
    # 100% of 2, 100% of 18 (2026-12-07, with tracer_s), 95.5% of 111 (5 equivalent; 2026-12-07, after the fusion
    # rules), engine.py 96.3% of 187 (2026-12-07, with the tracer allowance and the busy floor; its 7 survivors
    # equivalent); workload.py 100% of 11;
    # gaps.py above: 86.5% of 163, its 22 survivors all equivalent (mutation_equivalent.txt).
    "src/gpuwhy/verdict/causes.py": ("tests/test_verdict_engine.py",),
    "src/gpuwhy/verdict/figures.py": ("tests/test_verdict_engine.py", "tests/test_verdict_mutants.py", "tests/test_torch_trace_causes.py"),
    "src/gpuwhy/verdict/remedies.py": ("tests/test_verdict_engine.py", "tests/test_verdict_mutants.py", "tests/test_torch_trace_causes.py",
                                      "tests/test_pinned_trace_causes.py"),
    "src/gpuwhy/verdict/engine.py": ("tests/test_verdict_engine.py", "tests/test_verdict_mutants.py", "tests/test_torch_trace_causes.py",
                                    "tests/test_pinned_trace_causes.py", "tests/test_tracer_cost.py"),
    "src/gpuwhy/verdict/workload.py": ("tests/test_classify_diagnosis.py",),
}

#: Third-party modules imported once in the parent so that each forked run skips them.
PRELOAD = ("pytest", "numpy", "yaml", "rich", "rich.console", "rich.table", "typer", "click", "jinja2")

EQUIVALENT_FILE = Path(__file__).with_name("mutation_equivalent.txt")

_BINOPS = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"), ast.FloorDiv: ("//", "/"), ast.Pow: ("**", "*")}
_CMPOPS = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"), ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
}
_OP_RE = re.compile(r"\*\*=?|//=?|<<=?|>>=?|[-+*/%@&|^]=?")
_CMP_RE = re.compile(r"not\s+in\b|is\s+not\b|==|!=|<=|>=|<|>|\bin\b|\bis\b")


@dataclass(frozen=True)
class Edit:
    """One mutation: replace ``source[start:end]`` (``old``) with ``new``; ``line`` is 1-based."""

    kind: str
    line: int
    start: int
    end: int
    old: str
    new: str

    def describe(self) -> str:
        old = " ".join(self.old.split())
        return f"{self.kind}: {old[:40]!r} -> {self.new!r}"


class _Offsets:
    """Character offsets from ast's (line, UTF-8 byte column) positions."""

    def __init__(self, source: str):
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))

    def __call__(self, lineno: int, col_bytes: int) -> int:
        text = self.lines[lineno - 1].encode("utf-8")[:col_bytes].decode("utf-8", errors="replace")
        return self.starts[lineno - 1] + len(text)


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: annotations, docstrings, ``__all__`` and ``if __name__ == "__main__"``."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None:
                    mark(arg.annotation)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            mark(node)
        elif isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            mark(node)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                mark(first)
    return skip


def _strip_comments(text: str) -> str:
    return re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), text)


def _between(src: str, off: _Offsets, a: ast.AST, b: ast.AST, pattern: re.Pattern, want: str) -> tuple[int, int] | None:
    """Span of the operator ``want`` between nodes ``a`` and ``b``, or None."""
    lo, hi = off(a.end_lineno, a.end_col_offset), off(b.lineno, b.col_offset)
    gap = _strip_comments(src[lo:hi])
    m = pattern.search(gap)
    if not m or " ".join(m.group(0).split()) != want:
        return None
    return lo + m.start(), lo + m.end()


def _number_edit(value: int | float) -> str:
    if isinstance(value, int):
        return repr(value + 1)
    return "1.0" if value == 0 else repr(value * 10)


def find_edits(source: str) -> list[Edit]:
    """Every edit of the kinds in the module docstring that ``source`` allows, in source order."""
    tree = ast.parse(source)
    off = _Offsets(source)
    skip = _skipped_nodes(tree)
    nomutate = {i + 1 for i, ln in enumerate(off.lines) if "pragma: no mutate" in ln}
    edits: list[Edit] = []

    def add(kind: str, node: ast.AST, start: int, end: int, new: str) -> None:
        if node.lineno in nomutate:
            return
        edits.append(Edit(kind, node.lineno, start, end, source[start:end], new))

    def span(node: ast.AST) -> tuple[int, int]:
        return off(node.lineno, node.col_offset), off(node.end_lineno, node.end_col_offset)

    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            sym, new = _BINOPS[type(node.op)]
            if isinstance(node.op, (ast.Add, ast.Mod)) and any(
                isinstance(s, ast.JoinedStr) or (isinstance(s, ast.Constant) and isinstance(s.value, str)) for s in (node.left, node.right)
            ):
                continue  # string concatenation, not arithmetic
            sp = _between(source, off, node.left, node.right, _OP_RE, sym)
            if sp:
                add("arith", node, *sp, new)
        elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOPS:
            sym, new = _BINOPS[type(node.op)]
            sp = _between(source, off, node.target, node.value, _OP_RE, sym + "=")
            if sp:
                add("arith", node, *sp, new + "=")
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                sym, new = _CMPOPS[type(op)]
                sp = _between(source, off, left, right, _CMP_RE, sym)
                if sp:
                    add("compare", node, *sp, new)
                left = right
        elif isinstance(node, ast.BoolOp):
            sym, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for a, b in zip(node.values, node.values[1:]):
                sp = _between(source, off, a, b, re.compile(rf"\b{sym}\b"), sym)
                if sp:
                    add("logic", node, *sp, new)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            start = off(node.lineno, node.col_offset)
            end = off(node.operand.lineno, node.operand.col_offset)
            word = "not" if isinstance(node.op, ast.Not) else "-"
            text = source[start:end]
            if text.startswith(word):  # drop the operator, keep any parenthesis before the operand
                add("logic" if word == "not" else "arith", node, start, end, text[len(word):].lstrip())
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            start, end = span(node)
            try:
                ok = ast.literal_eval(source[start:end]) == node.value
            except (ValueError, SyntaxError):
                ok = False
            if ok:
                add("const", node, start, end, _number_edit(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            start, end = span(node.func)
            add("logic", node, start, end, "max" if node.func.id == "min" else "min")
        elif isinstance(node, ast.Raise):
            start, end = span(node)
            add("raise", node, start, end, "pass")
    out: list[Edit] = []
    for e in sorted(set(edits), key=lambda e: (e.start, e.kind, e.new)):
        mutated = source[: e.start] + e.new + source[e.end :]
        try:
            if ast.dump(ast.parse(mutated)) != ast.dump(tree):
                out.append(e)
        except SyntaxError:
            pass
    return out


def _load_equivalent() -> dict[tuple[str, str, str], str]:
    """``(module, stripped line, edit) -> reason`` from mutation_equivalent.txt.

    Format: blocks of three lines ``module | edit``, the source line, ``why: reason``;
    ``#`` comments and blank lines between blocks.
    """
    known: dict[tuple[str, str, str], str] = {}
    if not EQUIVALENT_FILE.is_file():
        return known
    lines = [ln.rstrip("\n") for ln in EQUIVALENT_FILE.read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    for i in range(0, len(lines) - 2, 3):
        head, code, why = lines[i], lines[i + 1], lines[i + 2]
        module, _, edit = head.partition(" | ")
        known[(module.strip(), code.strip(), edit.strip())] = why.strip().removeprefix("why:").strip()
    return known


# --- running ---------------------------------------------------------------------------------


def _copy_tree(src: Path) -> Path:
    dest = Path(tempfile.mkdtemp(prefix="gpuwhy-mutation-"))
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "dist", ".venv", "*.pyc")
    for item in src.iterdir():
        if item.name in (".git",):
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(item, dest / item.name)
    return dest


def _run_pytest(tree: Path, tests: list[str], timeout: float, write_bytecode: bool = False) -> tuple[str, float]:
    """Fork, run pytest -x on ``tests`` in ``tree``; ``(outcome, seconds)``.

    outcome: ``survived`` (all passed), ``caught`` (a failure or collection
    error), ``timeout`` (killed after ``timeout`` s), ``error`` (pytest usage
    error or no tests: a harness problem).
    """
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: its own process group, so a timeout kills its subprocesses too
        rc = 70
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(tree)
            sys.dont_write_bytecode = not write_bytecode
            os.environ["PYTHONDONTWRITEBYTECODE"] = "" if write_bytecode else "1"
            os.environ["PYTHONPATH"] = str(tree / "src")
            os.environ["GPUWHY_TEST_FORK_CLI"] = "1"  # tests/conftest.run_cli forks instead of starting python
            sys.path[:] = [str(tree / "src")] + [p for p in sys.path if not (Path(p) / "gpuwhy").is_dir()]
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            import pytest

            rc = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tree), *tests]))
        except BaseException:  # noqa: BLE001 - the child must exit, whatever happened
            rc = 70
        os._exit(rc)
    deadline = t0 + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                _kill_group(pid)
                return "timeout", time.monotonic() - t0
            time.sleep(0.01)
    except BaseException:
        _kill_group(pid)
        raise
    rc = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - t0
    if rc == 0:
        return "survived", took
    if rc in (4, 5):
        return "error", took
    return "caught", took


def _kill_group(pid: int) -> None:
    """Kill the process group of the child ``pid`` (the child and what it started) and reap it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _key(e: dict) -> tuple:
    return (e["kind"], e["start"], e["end"], e["old"], e["new"])


def mutate_module(tree: Path, module: str, tests: list[str], timeout: float | None, limit: int | None, log,
                  earlier: dict | None = None) -> dict:
    """Run every edit of ``module`` in ``tree``; the per-module result (see :func:`main`).

    ``earlier`` (this module's result from an earlier ``--json``): when its edits are exactly
    this source's, the edits it caught are kept as caught and only its survivors run again.
    Tests only ever get added between such runs, so a caught edit stays caught; a changed
    source runs every edit.
    """
    path = tree / module
    original = path.read_text(encoding="utf-8")
    edits = find_edits(original)
    if limit:
        edits = edits[:limit]
    kept: list[dict] = []
    if earlier is not None:
        if {_key(asdict(e)) for e in edits} == {_key(r) for r in earlier["results"]}:
            again = {_key(r) for r in earlier["results"] if r["outcome"] in ("survived", "error")}
            kept = [{**r, "earlier": True} for r in earlier["results"] if _key(r) not in again]
            edits = [e for e in edits if _key(asdict(e)) in again]
            log(f"  {len(kept)} edits caught by the earlier run; running its {len(edits)} survivors again")
        else:
            log("  the source changed since the earlier run: every edit runs")
    base, base_s = _run_pytest(tree, tests, 600, write_bytecode=True)  # also warms __pycache__
    if base != "survived":
        print(f"mutation: the tests {' '.join(tests)} do not pass on the unmutated {module} ({base}); fix them first", file=sys.stderr)
        raise SystemExit(2)
    per_edit_timeout = timeout or max(20.0, 3 * base_s)
    pyc = Path(__import__("importlib.util").util.cache_from_source(str(path)))
    results = []
    lines = original.splitlines()
    t0 = time.monotonic()
    try:
        for i, e in enumerate(edits, 1):
            path.write_text(original[: e.start] + e.new + original[e.end :], encoding="utf-8")
            pyc.unlink(missing_ok=True)
            outcome, took = _run_pytest(tree, tests, per_edit_timeout)
            results.append({**asdict(e), "outcome": outcome, "seconds": round(took, 2), "code": lines[e.line - 1].strip()})
            if outcome in ("survived", "error"):
                log(f"  {outcome}: {module}:{e.line}: {e.describe()}")
            if i % 25 == 0:
                log(f"  ... {i}/{len(edits)} edits, {time.monotonic() - t0:.0f} s")
    finally:
        path.write_text(original, encoding="utf-8")
        pyc.unlink(missing_ok=True)
    results = sorted(kept + results, key=lambda r: (r["start"], r["kind"], r["new"]))
    caught = sum(r["outcome"] in ("caught", "timeout") for r in results)
    return {
        "module": module,
        "tests": tests,
        "edits": len(results),
        "caught": caught,
        "caught_pct": round(100.0 * caught / len(results), 1) if results else None,
        "baseline_s": round(base_s, 2),
        "seconds": round(time.monotonic() - t0, 1),
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="module paths relative to the tree (default: every module in MODULES that exists)")
    ap.add_argument("--tests", nargs="+", help="tests to run (default: the module's from MODULES, those that exist)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout to copy and mutate (default: this one)")
    ap.add_argument("--list", action="store_true", help="print the edits and run nothing")
    ap.add_argument("--limit", type=int, help="only the first N edits of each module")
    ap.add_argument("--timeout", type=float, help="seconds per edit (default: 3x the unmutated run, at least 20)")
    ap.add_argument("--target", type=float, default=90.0, help="caught percent each module must reach (default 90)")
    ap.add_argument("--json", type=Path, help="write every edit and its outcome here")
    ap.add_argument("--survivors-of", type=Path, nargs="+", metavar="JSON", default=[],
                    help="earlier --json files: keep the edits they caught (same source), run only their survivors")
    args = ap.parse_args(argv)

    tree = args.tree.resolve()
    modules = args.modules or [m for m in MODULES if (tree / m).is_file()]
    for m in modules:
        if not (tree / m).is_file():
            print(f"mutation: no module {m!r} in {tree}", file=sys.stderr)
            return 2
    if args.list:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `... --list | head` ends quietly
        for m in modules:
            edits = find_edits((tree / m).read_text(encoding="utf-8"))
            print(f"{m}: {len(edits)} edits")
            for e in edits:
                print(f"  {e.line}: {e.describe()}")
        return 0

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    known = _load_equivalent()
    earlier: dict[str, dict] = {}
    if args.survivors_of:
        for path in args.survivors_of:
            for r in json.loads(path.read_text(encoding="utf-8"))["modules"]:
                earlier[r["module"]] = r

    def stop(signum, frame):  # a background job ignores SIGINT: SIGTERM too must restore and clean up
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    copy = _copy_tree(tree)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    reports = []
    try:
        for m in modules:
            tests = args.tests or [t for t in MODULES.get(m, ()) if (copy / t).is_file()]
            if not tests:
                print(f"mutation: no tests for {m}; give --tests", file=sys.stderr)
                return 2
            log(f"{m}: tests {' '.join(tests)}")
            reports.append(mutate_module(copy, m, tests, args.timeout, args.limit, log, earlier.get(m)))
            if args.json:  # after each module, so that a stopped run keeps what it finished
                args.json.write_text(json.dumps({"tree": str(tree), "modules": reports}, indent=1) + "\n", encoding="utf-8")
    except KeyboardInterrupt:
        print("mutation: stopped", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(copy, ignore_errors=True)

    worst_ok = True
    print(f"{'module':44} {'edits':>6} {'caught':>7} {'caught %':>9} {'time':>7}")
    for r in reports:
        pct = "n/a" if r["caught_pct"] is None else f"{r['caught_pct']:.1f}%"  # a module with no edit to make
        print(f"{r['module']:44} {r['edits']:>6} {r['caught']:>7} {pct:>9} {r['seconds']:>6.0f}s")
        worst_ok &= r["caught_pct"] is None or r["caught_pct"] >= args.target
    for r in reports:
        survivors = [x for x in r["results"] if x["outcome"] in ("survived", "error")]
        if not survivors:
            continue
        print(f"\nsurviving edits in {r['module']} ({len(survivors)}):")
        for x in survivors:
            e = Edit(x["kind"], x["line"], x["start"], x["end"], x["old"], x["new"])
            why = known.get((r["module"], x["code"], e.describe()))
            x["equivalent"] = why
            print(f"  {r['module']}:{x['line']}: {e.describe()}{' [' + x['outcome'] + ']' if x['outcome'] != 'survived' else ''}")
            print(f"      {x['code'][:100]}")
            if why:
                print(f"      why harmless: {why}")
    if args.json:
        args.json.write_text(json.dumps({"tree": str(tree), "modules": reports}, indent=1) + "\n", encoding="utf-8")
    return 0 if worst_ok else 1


if __name__ == "__main__":
    sys.exit(main())
