#!/usr/bin/env python3
"""`gpuwhy diff` on each planted program against its fixed twin (issue 30): is the planted cause the
top contributor of the change, and how did the planted remedy's predicted ceiling fare?

Reads the `gpuwhy run --json` documents a run of ``run_all.py --docs DIR`` left
(``DIR/<name>.gpuwhy.json`` and ``DIR/<name>.gpuwhy-fixed.json``; the names of
tests/fixtures/diff, ``<name>.planted.json[.gz]`` and ``<name>.fixed.json[.gz]``, are read too)
and runs, for each program of ``score.PROGRAMS`` with both documents, as a user would::

    python3 -m gpuwhy diff PLANTED FIXED --json [--remedy PLANTED_REMEDY]

(``--remedy`` when the planted document offers the planted remedy, so its ceiling is the one
scored). Per program: **ok** when the change's top contributor is the planted cause; the named
contributors' share of the change (``expl``); the planted remedy's ceiling, what the twin achieved
under the profiler (``ach``), achieved/ceiling and WRONG when the prediction was beaten beyond
the runs' spread. Printed last: the table (80 columns) and "planted cause top contributor in X
of N". ``--out FILE`` gets every figure as JSON. No GPU needed: it reads documents.

On the GPU machine, after the benchmark (``bash benchmarks/device_diagnosis.sh`` keeps the
documents under $OUT/diagnosis/docs)::

    PYTHONPATH=src python3 benchmarks/diagnosis/diff_pairs.py --docs $OUT/diagnosis/docs --out $OUT/diff_pairs.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import score  # noqa: E402

#: The document names of one program, planted and fixed: run_all.py's, then the test fixtures'.
NAMES = (("{}.gpuwhy.json", "{}.gpuwhy-fixed.json"), ("{}.planted.json.gz", "{}.fixed.json.gz"),
         ("{}.planted.json", "{}.fixed.json"))


def pair(docs: Path, name: str) -> tuple[Path, Path] | None:
    """The planted and fixed documents of ``name`` in ``docs`` (None when either is missing)."""
    for a, b in NAMES:
        pa, pb = docs / a.format(name), docs / b.format(name)
        if pa.is_file() and pb.is_file():
            return pa, pb
    return None


def offers(path: Path, remedy: str) -> bool:
    """Whether the planted document offers ``remedy``."""
    import gzip

    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    diag = doc.get("diagnosis") or {}
    return any(r.get("key") == remedy for r in diag.get("remedies") or [])


def diff_one(entry: score.Planted, a: Path, b: Path, python: str = sys.executable) -> dict:
    """The row of one program: the command run, its exit code, and the scores (``error`` on failure)."""
    cmd = [python, "-m", "gpuwhy", "diff", str(a), str(b), "--json"]
    offered = offers(a, entry.remedy)
    if offered:
        cmd += ["--remedy", entry.remedy]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    row = {"program": entry.name, "planted": entry.cause, "remedy": entry.remedy, "command": cmd,
           "exit_code": res.returncode, "offered": offered}
    if res.returncode != 0:
        row["error"] = (res.stderr.strip().splitlines() or ["no output"])[-1]
        return row
    d = json.loads(res.stdout)
    ch = d["change"] or {}
    top = ch.get("top_contributor")
    pred = next((p for p in d["predictions"] if p["applied"]), None)
    row.update({"top_contributor": top, "ok": top == entry.cause, "named": ch.get("named"),
                "explained_pct": ch.get("explained_pct"), "speedup_x": ch.get("speedup_x"),
                "line": d["line"], "ceiling_x": pred["ceiling_x"] if pred and offered else None,
                "achieved_x": pred["achieved_x"] if pred else ch.get("speedup_x"),
                "of_ceiling_pct": pred["of_ceiling_pct"] if pred and offered else None,
                "wrong": bool(pred and offered and pred["wrong"])})
    return row


def table(rows: list[dict]) -> list[str]:
    """The table, 80 columns at most, and the summary lines."""
    out = [f"{'program':<17}|{'planted':<15}|{'top contributor':<15}|ok |{'expl':>5}|{'ceil':>7}|{'ach':>7}|{'a/c':>4}",
           "-" * 80]
    for r in rows:
        if "error" in r:
            out.append(f"{r['program']:<17}| error: {r['error'][:54]}")
            continue
        num = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
        out.append(f"{r['program']:<17}|{r['planted'][:15]:<15}|{(r['top_contributor'] or '-')[:15]:<15}|"
                   f"{'yes' if r['ok'] else ' NO'}|{num(r['explained_pct'], '{:4.0f}%'):>5}|"
                   f"{num(r['ceiling_x'], '{:6.2f}x'):>7}|{num(r['achieved_x'], '{:6.2f}x'):>7}|"
                   f"{num(None if r['of_ceiling_pct'] is None else r['of_ceiling_pct'] / 100, '{:.2f}'):>4}")
        if r["wrong"]:
            out.append(f"  WRONG: achieved {r['achieved_x']:.2f}x > predicted at most {r['ceiling_x']:.2f}x")
        if not r["offered"]:
            out.append(f"  remedy {r['remedy']} not offered by the planted run's document")
    scored = [r for r in rows if "error" not in r]
    out.append("")
    out.append(f"planted cause top contributor in {sum(r['ok'] for r in scored)} of {len(scored)}"
               + (f" ({len(rows) - len(scored)} failed)" if len(scored) < len(rows) else ""))
    out.append(f"predictions beaten (wrong): {sum(r['wrong'] for r in scored)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", required=True, help="folder of the gpuwhy run documents (run_all.py --docs)")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--out", default=None, help="write every row as JSON here")
    a = ap.parse_args(argv)
    docs = Path(a.docs)
    names = [n for n in a.only.split(",") if n]
    rows, missing = [], []
    for entry in score.PROGRAMS:
        if names and entry.name not in names:
            continue
        got = pair(docs, entry.name)
        if got is None:
            missing.append(entry.name)
            continue
        rows.append(diff_one(entry, *got))
    for line in table(rows):
        print(line)
    if missing:
        print(f"no planted/fixed pair of documents in {docs} for {len(missing)} programs:")
        print("  " + ", ".join(missing))
    if a.out:
        Path(a.out).write_text(json.dumps({"rows": rows, "missing": missing}, indent=1) + "\n")
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
