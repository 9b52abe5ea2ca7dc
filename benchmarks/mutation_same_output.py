#!/usr/bin/env python3
"""Do a module's surviving mutation edits change any trace verdict? (evidence for "equivalent").

For the surviving edits of one trace module in a ``benchmarks/mutation.py --json`` result, this
applies each edit to a copy of ``src/``, analyses a corpus of traces with it, and compares every
figure and line of the result (``to_plain`` of ``analyze_trace``/``load_trace``) with the unedited
code's. The corpus: every trace the trace tests build (recorded while they run) and the real
traces in tests/fixtures/real/. Prints ``SAME`` or ``DIFF`` per edit, with the first differing
figures; a ``DIFF`` names an input a test can pin.

    PYTHONPATH=src python3 benchmarks/mutation_same_output.py RESULT.json src/gpuwhy/importers/timeline/gaps.py

Not part of CI: a few seconds per edit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE_TESTS = ("tests/test_pinned_trace_causes.py", "tests/test_torch_trace_causes.py", "tests/test_torch_trace.py")

_RECORD = """
import itertools, json, os, sys
import pytest
n = itertools.count()
out = sys.argv[1]
class Rec:
    def pytest_configure(self, config):
        import gpuwhy.importers.kineto as tt
        orig = tt.analyze_trace
        def rec(trace, *a, **k):
            if isinstance(trace, dict) and not a and not k:
                with open(os.path.join(out, f"syn{next(n):04d}.json"), "w") as f:
                    json.dump(trace, f)
            return orig(trace, *a, **k)
        tt.analyze_trace = rec
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[2:]], plugins=[Rec()]))
"""

_DUMP = """
import glob, json, os, sys
from gpuwhy.importers.kineto import analyze_trace, load_trace
from gpuwhy.render.jsonout import to_plain
out = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")) + sorted(glob.glob(sys.argv[2] + "/trace_*.json*")):
    name = os.path.basename(f)
    try:
        out[name] = to_plain(analyze_trace(json.load(open(f))) if name.startswith("syn") else load_trace(f))
    except Exception as exc:  # noqa: BLE001 - a crash is a difference too
        out[name] = f"ERROR {type(exc).__name__}: {exc}"
json.dump(out, sys.stdout, sort_keys=True, default=str)
"""


def _diff(a, b, path=""):
    if type(a) is not type(b):
        return [f"{path}: {str(a)[:50]!r} -> {str(b)[:50]!r}"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items -> {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and abs(a - b) <= 1e-12 * max(abs(a), abs(b)):
        return []
    return [] if a == b else [f"{path}: {str(a)[:50]!r} -> {str(b)[:50]!r}"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    result, module = Path(argv[0]), argv[1]
    r = next((m for m in json.loads(result.read_text())["modules"] if m["module"] == module), None)
    if r is None:
        print(f"mutation_same_output: {module} is not in {result}", file=sys.stderr)
        return 2
    survivors = [x for x in r["results"] if x["outcome"] in ("survived", "error")]
    tmp = Path(tempfile.mkdtemp(prefix="gpuwhy-same-"))
    try:
        corpus = tmp / "corpus"
        corpus.mkdir()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONDONTWRITEBYTECODE="1")
        subprocess.run([sys.executable, "-c", _RECORD, str(corpus), *TRACE_TESTS], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        shutil.copytree(ROOT / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        env["PYTHONPATH"] = str(tmp / "src")
        path = tmp / module
        original = path.read_text(encoding="utf-8")

        def run() -> dict:
            p = subprocess.run([sys.executable, "-c", _DUMP, str(corpus), str(ROOT / "tests/fixtures/real")],
                               capture_output=True, text=True, env=env, timeout=600)
            return json.loads(p.stdout) if p.returncode == 0 else {"CRASH": p.stderr[-300:]}

        base = run()
        print(f"{len(base)} traces ({len(list(corpus.iterdir()))} built by the tests); {len(survivors)} edits")
        for x in survivors:
            path.write_text(original[: x["start"]] + x["new"] + original[x["end"]:], encoding="utf-8")
            got = run()
            path.write_text(original, encoding="utf-8")
            changed = {k: d for k in base if (d := _diff(base[k], got.get(k)))}
            print(f"{'DIFF' if changed else 'SAME'}  {module}:{x['line']}: {x['kind']}: {x['old']!r} -> {x['new']!r}   | {x['code'][:80]}")
            for k, d in list(changed.items())[:3]:
                print(f"        {k}: {len(d)} figures; " + "; ".join(d[:2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
