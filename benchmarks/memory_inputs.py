#!/usr/bin/env python3
"""Peak memory of `gpuwhy ncu` and `gpuwhy trace` on large inputs, against the file's size.

Issue 31: a 37 MB ncu export held 1.2 GB (33x the file) and a 150 MB trace 325 MB;
reading is meant to be streamed, its memory a few times the file at most.

Both inputs are synthetic but made only of committed real rows, repeated:

- the ncu export: ``tests/fixtures/real/ncu_full_raw.csv`` (``ncu --set full --csv
  --page raw`` on the H200: 2,238 columns, 8 launches), its preamble, header and units row
  kept and its 8 launch rows written again and again with new IDs up to ``--ncu-mb`` MB;
- the trace: ``tests/fixtures/real/trace_overhead.json`` (torch.profiler on the H200),
  its events written again and again, each copy shifted in time past the one before
  (timestamps, correlation and flow ids moved on so each copy is its own), up to
  ``--trace-mb`` MB.

Each command runs as a fresh process (``python -m gpuwhy ncu FILE`` / ``trace FILE``,
output thrown away); its peak resident memory is the kernel's accounting of that child
(``os.wait4``'s ``ru_maxrss``), so the interpreter, numpy and rich are in it. The
floor (the interpreter, numpy and rich) is `gpuwhy ncu` on the 274 KB fixture itself.

Prints one Markdown table (file size in MB of 1e6 bytes, peak RSS in MB, ratio, wall s);
``--out FILE`` also writes it with the machine, date and command line.

Usage: python3 benchmarks/memory_inputs.py [--ncu-mb 37] [--trace-mb 150] [--keep DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"
NCU_SOURCE = REAL / "ncu_full_raw.csv"
TRACE_SOURCE = REAL / "trace_overhead.json"


def write_ncu(path: Path, target_mb: float) -> int:
    """Write the repeated raw-page export to ``path``; returns the number of launch rows."""
    text = NCU_SOURCE.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    head = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    preamble, header, units, rows = lines[:head], lines[head], lines[head + 1], lines[head + 2:]
    parsed = [next(csv.reader([r])) for r in rows if r.strip()]
    target = target_mb * 1e6
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.writelines(preamble)
        fh.write(header)
        fh.write(units)
        written = sum(len(x) for x in (*preamble, header, units))
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
        while written < target:
            row = list(parsed[n % len(parsed)])
            row[0] = str(n)
            buf.seek(0)
            buf.truncate()
            w.writerow(row)
            s = buf.getvalue()
            fh.write(s)
            written += len(s)
            n += 1
    return n


def write_trace(path: Path, target_mb: float) -> int:
    """Write the repeated trace to ``path``; returns the number of events."""
    doc = json.loads(TRACE_SOURCE.read_text(encoding="utf-8"))
    events = doc.pop("traceEvents")
    meta = [e for e in events if e.get("ph") == "M"]
    timed = [e for e in events if e.get("ph") != "M"]
    t0 = min(float(e["ts"]) for e in timed if "ts" in e)
    t1 = max(float(e["ts"]) + float(e.get("dur", 0) or 0) for e in timed if "ts" in e)
    shift_us = (t1 - t0) + 1000.0
    ids = [int(e["id"]) for e in timed if isinstance(e.get("id"), int)]
    corr = [int(e["args"]["correlation"]) for e in timed if isinstance(e.get("args"), dict)
            and isinstance(e["args"].get("correlation"), int)]
    id_step = max(ids + corr + [0]) + 1
    target = target_mb * 1e6
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        head = json.dumps(doc)[:-1] + ', "traceEvents": [\n'
        fh.write(head)
        written = len(head)
        first = True
        for e in meta:
            s = ("" if first else ",\n") + json.dumps(e)
            first = False
            fh.write(s)
            written += len(s)
            n += 1
        k = 0
        while written < target:
            parts = []
            for e in timed:
                e = dict(e)
                if "ts" in e:
                    e["ts"] = round(float(e["ts"]) + k * shift_us, 3)
                if isinstance(e.get("id"), int):
                    e["id"] = e["id"] + k * id_step
                args = e.get("args")
                if isinstance(args, dict) and isinstance(args.get("correlation"), int):
                    e["args"] = dict(args, correlation=args["correlation"] + k * id_step)
                parts.append(json.dumps(e))
            s = ",\n" + ",\n".join(parts)
            fh.write(s)
            written += len(s)
            n += len(parts)
            k += 1
        fh.write("\n]}\n")
    return n


def peak_rss(argv: list[str], env: dict) -> tuple[int, float, float]:
    """``(exit code, peak RSS in MB of 1e6 bytes, wall seconds)`` of ``argv`` run as a child."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_maxrss * 1024 / 1e6, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ncu-mb", type=float, default=37.0, help="size of the ncu export in MB (1e6 bytes); default 37")
    ap.add_argument("--trace-mb", type=float, default=150.0, help="size of the trace in MB (1e6 bytes); default 150")
    ap.add_argument("--runs", type=int, default=1, help="runs of each command; the median peak is shown (default 1)")
    ap.add_argument("--keep", metavar="DIR", help="write the inputs into DIR and keep them")
    ap.add_argument("--out", metavar="FILE", help="also write the table, machine and date to FILE (Markdown)")
    a = ap.parse_args()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="gpuwhy-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COLUMNS="80")
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    try:
        ncu, trace = work / "ncu_raw_big.csv", work / "trace_big.json"
        launches = write_ncu(ncu, a.ncu_mb)
        events = write_trace(trace, a.trace_mb)
        py = [sys.executable, "-m", "gpuwhy"]
        small = NCU_SOURCE
        cases = [("floor: gpuwhy ncu on the fixture", [*py, "ncu", str(small)], small, "8 launches x 2,238 columns"),
                 ("gpuwhy ncu", [*py, "ncu", str(ncu)], ncu, f"{launches:,} launches x 2,238 columns"),
                 ("gpuwhy trace", [*py, "trace", str(trace)], trace, f"{events:,} events")]
        rows = []
        for label, argv, path, what in cases:
            runs = sorted((peak_rss(argv, env) for _ in range(max(1, a.runs))), key=lambda r: r[1])
            rc, mb, wall = runs[len(runs) // 2]
            size = path.stat().st_size / 1e6
            ratio = f"{mb / size:.1f}x"
            rows.append(f"| {label} | {what} | {size:.1f} | {mb:.0f} | {ratio} | {wall:.1f} | {rc} |")
        table = "\n".join(["| command | input | file MB | peak RSS MB | RSS / file | wall s | exit |",
                           "|---|---|---:|---:|---:|---:|---:|", *rows])
        print(table)
        if a.out:
            when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            cpus = os.cpu_count()
            head = (f"machine: {platform.node() or 'unknown'}, {platform.machine()}, {cpus} CPUs, "
                    f"Python {platform.python_version()}, {platform.system()} {platform.release()}\n"
                    f"date: {when}\ncommand: python3 benchmarks/memory_inputs.py "
                    + " ".join(sys.argv[1:]) + "\n\n")
            Path(a.out).write_text(head + table + "\n", encoding="utf-8")
        return 0
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
