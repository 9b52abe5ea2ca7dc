#!/usr/bin/env python3
"""Run the planted regressions: the baseline and each regression under ``gpuwhy run``, then
``gpuwhy diff BASELINE REGRESSED`` per regression, scored against the planted cause. Run from the
repository root on the GPU machine (``PYTHONPATH=src``); see benchmarks/regressions/README.md.

In this order:

1. phase 1: the baseline under
   ``python3 -m gpuwhy run --json --steps N --out DIR -- python3 program.py --steps N --warmup W``
   (its step time under the profiler sizes ``host_work``'s ``--host-ms``: 1.5 x the step, at least
   5 ms, unless ``--host-ms`` is given), then each regression under the same command with
   ``--regress NAME``, each followed by ``python3 -m gpuwhy diff BASELINE.json REGRESSED.json --json``
   (benchmarks/diagnosis/diff_pairs.py's ``diff_one``);
2. phase 2: the baseline and each regression alone (``--alone`` runs each, default 1), for the real
   step times.

A ``--deadline-s`` stops starting commands that would end past it (phase 2's first). A crash, a
timeout, a failed in-process check or a missing result gives that row an error; the run goes on.
Scores (catalog.py): **ok** when the diff's top contributor is the planted cause, **explains**
when the named contributors hold at least 80% of the change; each regression's checksum (how far
the weights moved) is compared with the baseline's, so a regression that skips work is caught.
The table (80 columns) and the summary are printed last; ``--out FILE`` gets every figure as JSON,
``--docs DIR`` each gpuwhy document and run log.

``--cpu-smoke`` runs program.py with ``--cpu-smoke`` and tiny sizes instead (no GPU, no gpuwhy:
needs only PyTorch, a CPU build will do): the baseline and every regression, their checks and
checksums; ``--python`` picks the Python with torch.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DIAG = HERE.parent / "diagnosis"
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(DIAG))
import catalog  # noqa: E402
import diff_pairs  # noqa: E402  (benchmarks/diagnosis: gpuwhy diff of one pair, scored)
import run_all  # noqa: E402  (benchmarks/diagnosis: running one command, its environment, its log)
import score  # noqa: E402  (benchmarks/diagnosis: DIAG_RESULT lines, checksums)

PROGRAM = HERE / "program.py"
BASELINE = "baseline"
#: program.py's sizes for --cpu-smoke: seconds on two CPU cores per variant.
SMOKE_ARGS = ["--cpu-smoke", "--batch", "8", "--image", "32", "--patch", "8", "--dim", "32", "--depth", "2",
              "--heads", "2", "--classes", "10", "--workers", "2", "--book-ms", "0.2", "--host-ms", "1",
              "--log-ms", "0.2", "--micro", "2"]
#: host_work's extra Python per step against the baseline's step under the profiler (and its floor, ms).
HOST_FACTOR, HOST_MIN_MS = 1.5, 5.0
#: Seconds of one `gpuwhy diff` (an import of gpuwhy, two documents read).
DIFF_EST_S = 2.0


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated regressions (default: all ten; the baseline always runs)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan (commands, estimates) and exit")
    ap.add_argument("--cpu-smoke", action="store_true", help="run program.py on the CPU, tiny sizes, no gpuwhy")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per command (gpuwhy runs get 2x; default 90)")
    ap.add_argument("--deadline-s", type=float, default=0.0,
                    help="stop starting commands that would end past this many seconds (0: none)")
    ap.add_argument("--steps", type=int, default=10, help="measured steps per run (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up steps per run (default 3)")
    ap.add_argument("--alone", type=int, default=1, help="plain runs of each variant in phase 2 (default 1; 0: none)")
    ap.add_argument("--host-ms", type=float, default=None,
                    help=f"host_work's extra Python per step (default: {HOST_FACTOR} x the baseline's profiled step)")
    run_all.add_output_options(ap, "regressions-results.json", "program.py")
    a = ap.parse_args(argv)
    a.regressions = run_all.selected(ap, a.only, catalog.REGRESSIONS, "regression")
    if a.steps < 1 or a.warmup < 0 or a.alone < 0 or a.timeout <= 0:
        ap.error("--steps must be at least 1, --warmup and --alone at least 0, --timeout positive")
    if a.host_ms is not None and not a.host_ms > 0:
        ap.error("--host-ms must be positive")
    return a


class Job:
    """One command: ``kind`` gpuwhy (the variant under gpuwhy run, then its diff) or alone."""

    def __init__(self, variant: str, kind: str, rep: int = 1) -> None:
        self.variant, self.kind, self.rep = variant, kind, rep

    @property
    def label(self) -> str:
        return f"{self.variant} {self.kind}" + (f" #{self.rep}" if self.kind == "alone" else "")

    def est_s(self) -> float:
        e = catalog.BY_NAME[self.variant].est_s if self.variant in catalog.BY_NAME else 7.0
        if self.kind == "gpuwhy":
            return 2 * e + 4 + (DIFF_EST_S if self.variant != BASELINE else 0.0)
        return e

    def timeout_s(self, base: float) -> float:
        return 2 * base if self.kind == "gpuwhy" else base


def plan(a: argparse.Namespace) -> list[Job]:
    variants = [BASELINE, *(r.name for r in a.regressions)]
    jobs = [Job(v, "gpuwhy") for v in variants]
    for rep in range(1, a.alone + 1):
        jobs += [Job(v, "alone", rep) for v in variants]
    return jobs


def program_args(a: argparse.Namespace, variant: str, host_ms: float | str | None) -> list[str]:
    """program.py's options for ``variant`` (``host_ms``: host_work's ``--host-ms``; a string in the dry run's plan)."""
    args = ["--steps", str(a.steps), "--warmup", str(a.warmup)]
    if variant != BASELINE:
        args += ["--regress", variant]
    if variant == "host_work" and host_ms is not None:
        args += ["--host-ms", host_ms if isinstance(host_ms, str) else f"{host_ms:.1f}"]
    return args


def command(a: argparse.Namespace, job: Job, host_ms: float | str | None, trace_dir: Path) -> list[str]:
    prog = str(PROGRAM.relative_to(REPO))
    args = program_args(a, job.variant, host_ms)
    if job.kind == "gpuwhy":
        return [a.python, "-m", "gpuwhy", "run", "--json", "--steps", str(a.steps), "--out",
                str(trace_dir / job.variant), "--", "python3", prog, *args]
    return [a.python, prog, *args]


def host_ms_for(step_s) -> float | None:
    """host_work's ``--host-ms`` from the baseline's step time under the profiler (None without one)."""
    if not isinstance(step_s, (int, float)) or not step_s > 0:
        return None
    return max(HOST_MIN_MS, HOST_FACTOR * step_s * 1e3)


def cpu_smoke(a: argparse.Namespace) -> int:
    """Every variant of program.py on the CPU (tiny sizes): its checks, and its checksum against the baseline's."""
    base, bad = None, 0
    for variant in [BASELINE, *(r.name for r in a.regressions)]:
        cmd = [a.python, str(PROGRAM), *SMOKE_ARGS, "--steps", str(min(a.steps, 3)), "--warmup", str(min(a.warmup, 1)),
               *(["--regress", variant] if variant != BASELINE else [])]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(a.timeout, 300), cwd=REPO)
        wall = time.perf_counter() - t
        d = score.parse_diag_result(p.stdout)
        if p.returncode != 0 or d is None:
            bad += 1
            print(f"{variant:17} FAILED rc={p.returncode} ({wall:.1f} s): {run_all.last_line(p.stderr)[:200]}")
            continue
        if variant == BASELINE:
            base = d
            print(f"{variant:17} ok ({wall:.1f} s) {d.get('check')}")
            continue
        same = score.compare_checksums(base, d)
        bad += same.startswith("DIFFER") or base is None
        print(f"{variant:17} ok ({wall:.1f} s) {d.get('check')}; checksum {same}")
    print(json.dumps({"variants": 1 + len(a.regressions), "failures": bad}))
    return 1 if bad else 0


def dry_run(a: argparse.Namespace, jobs: list[Job], out_path: Path, docs: Path, trace_dir: Path) -> None:
    total = sum(j.est_s() for j in jobs)
    print(f"plan: the baseline and {len(a.regressions)} regressions, {len(jobs)} commands and "
          f"{len(a.regressions)} diffs, about {total:.0f} s ({total / 60:.1f} min) by the catalog's estimates"
          + (f"; deadline {a.deadline_s:.0f} s" if a.deadline_s else ""))
    print(f"results -> {out_path}; documents and logs -> {docs}; traces -> {trace_dir}")
    for r in a.regressions:
        print(f"  {r.name}: planted {r.cause}")
    host = a.host_ms if a.host_ms is not None else f"[{HOST_FACTOR} x the baseline's step]"
    for j in jobs:
        cmd = command(a, j, host, trace_dir)
        print(f"{j.label:<26} est {j.est_s():>4.0f} s  timeout {j.timeout_s(a.timeout):>4.0f} s  $ {shlex.join(map(str, cmd))}")
        if j.kind == "gpuwhy" and j.variant != BASELINE:
            print(f"{'':<26} then $ {a.python} -m gpuwhy diff {docs / (BASELINE + '.gpuwhy.json')} "
                  f"{docs / (j.variant + '.gpuwhy.json')} --json")


def read_doc(res: dict) -> tuple[dict | None, str | None]:
    """The gpuwhy document a run printed, or why there is none."""
    try:
        doc = json.loads(res["stdout"]) if res["stdout"].strip() else None
    except ValueError as exc:
        return None, f"gpuwhy printed no JSON document ({exc})"
    if doc is None:
        return None, (f"gpuwhy: timed out after {res['wall_s']:.0f} s" if res["timed_out"] else
                      f"gpuwhy exit {res['rc']}, no document: {run_all.last_line(res['stderr'])[:300]}")
    return doc, None


def diff(a: argparse.Namespace, entry: catalog.Regression, base: Path, reg: Path) -> dict:
    """``gpuwhy diff BASE REG --json`` through diff_pairs.diff_one (an error row when it cannot run)."""
    try:
        return diff_pairs.diff_one(entry, base, reg, python=a.python)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return {"program": entry.name, "error": f"gpuwhy diff could not run: {exc}"}


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.cpu_smoke:
        return cpu_smoke(a)
    jobs = plan(a)
    trace_dir = Path(a.trace_dir) if a.trace_dir else Path(tempfile.mkdtemp(prefix="gpuwhy-regress-traces-"))
    out_path = Path(a.out)
    docs = Path(a.docs) if a.docs else out_path.with_name(out_path.stem + "-docs")
    if a.dry_run:
        dry_run(a, jobs, out_path, docs, trace_dir)
        if not a.trace_dir:
            trace_dir.rmdir()
        return 0

    docs.mkdir(parents=True, exist_ok=True)
    env = run_all.environment()
    t_start = time.perf_counter()
    host_ms = a.host_ms
    runs: dict[str, dict] = {v: {"gpuwhy": None, "alone": [], "diff": None, "skipped": []}
                             for v in [BASELINE, *(r.name for r in a.regressions)]}
    base_doc: Path | None = None
    for job in jobs:
        v = job.variant
        elapsed = time.perf_counter() - t_start
        timeout = run_all.timeout_within_deadline(a, job, elapsed)
        if timeout is None:
            runs[v]["skipped"].append(job.label)
            continue
        if job.kind == "gpuwhy":
            (trace_dir / v).mkdir(parents=True, exist_ok=True)
        cmd = command(a, job, host_ms, trace_dir)
        res = run_all.execute(cmd, timeout, env)
        res["cmd"] = shlex.join(cmd)
        rec = {"cmd": res["cmd"], "rc": res["rc"], "wall_s": res["wall_s"], "timed_out": res["timed_out"]}
        if job.kind == "alone":
            result = score.parse_diag_result(res["stdout"])
            rec.update(log=run_all.write_log(docs, f"{v}.alone{job.rep}.log", res), result=result,
                       error=run_all.run_error(res, result, job.label))
            runs[v]["alone"].append(rec)
            step = (result or {}).get("step_s_mean")
            print(f"[{elapsed:6.1f}s] {job.label}: " + (f"error: {rec['error']}" if rec["error"] else
                                                        f"{step * 1e3:.3f} ms/step") + f" ({res['wall_s']:.1f} s)",
                  flush=True)
            continue
        doc_file = docs / f"{v}.gpuwhy.json"
        doc_file.write_text(res["stdout"])
        (docs / f"{v}.gpuwhy.err").write_text(res["stderr"][-run_all.LOG_CHARS:])
        doc, doc_error = read_doc(res)
        profiled = score.parse_diag_result(res["stderr"])  # the program's line (stdout goes to stderr under --json)
        rec.update(document=str(doc_file), doc_error=doc_error, profiled=profiled,
                   error=doc_error or run_all.run_error({**res, "rc": 0}, profiled, job.label))
        if doc is not None and res["rc"] not in (0, None):
            rec["note"] = f"gpuwhy exit {res['rc']} (document still read): {run_all.last_line(res['stderr'])[:200]}"
        runs[v]["gpuwhy"] = rec
        top = ((doc or {}).get("diagnosis") or {}).get("top_cause") if isinstance(doc, dict) else None
        step = (profiled or {}).get("step_s_mean")
        print(f"[{elapsed:6.1f}s] {job.label}: exit {res['rc']}, {res['wall_s']:.1f} s, top cause {top or '-'}, "
              + (f"{step * 1e3:.3f} ms/step under the profiler" if step else "no DIAG_RESULT")
              + (f" ({doc_error})" if doc_error else ""), flush=True)
        if v == BASELINE:
            base_doc = doc_file if doc is not None else None
            if host_ms is None:
                host_ms = host_ms_for(step)
            continue
        if base_doc is not None and doc is not None:
            d = diff(a, catalog.BY_NAME[v], base_doc, doc_file)
            runs[v]["diff"] = d
            print(f"[{time.perf_counter() - t_start:6.1f}s] {v} diff: "
                  + (f"error: {d['error']}" if "error" in d else f"top contributor {d['top_contributor']}, "
                     f"named hold {d['explained_pct'] if d['explained_pct'] is not None else float('nan'):.0f}%"),
                  flush=True)

    rows = rows_from(a, runs)
    summary = catalog.summarize(rows)
    result = {
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": run_all._git_commit(),
        "argv": sys.argv if argv is None else argv,
        "settings": {"steps": a.steps, "warmup": a.warmup, "alone": a.alone, "timeout": a.timeout,
                     "deadline_s": a.deadline_s, "host_ms": host_ms, "host_ms_given": a.host_ms is not None},
        "elapsed_s": time.perf_counter() - t_start,
        "summary": summary,
        "baseline": runs[BASELINE],
        "rows": rows,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1, default=str))
    print(f"\nresults: {out_path}; documents and logs: {docs}; elapsed {result['elapsed_s']:.0f} s")
    base = runs[BASELINE]
    print("\nstep times (ms): under the profiler / alone (mean of the plain runs):")
    for v in runs:
        prof = ((runs[v]["gpuwhy"] or {}).get("profiled") or {}).get("step_s_mean")
        alone = mean_step(runs[v]["alone"])
        print(f"  {v:<17} {'-' if prof is None else f'{prof * 1e3:.3f}':>9} / {'-' if alone is None else f'{alone * 1e3:.3f}'}")
    if base["gpuwhy"] is None or base["gpuwhy"].get("error"):
        print("the baseline has no gpuwhy document: " + str((base["gpuwhy"] or {}).get("error") or "not run"))
    print()
    print(catalog.format_table(rows, summary))
    return 1 if summary["errors"] else 0


def mean_step(alone: list[dict]) -> float | None:
    xs = [r["result"]["step_s_mean"] for r in alone if not r.get("error") and r.get("result")
          and isinstance(r["result"].get("step_s_mean"), (int, float))]
    return sum(xs) / len(xs) if xs else None


def rows_from(a: argparse.Namespace, runs: dict) -> list[dict]:
    """One scored row per regression: the diff's scores, the checksums against the baseline's, the slowdown alone."""
    base = runs[BASELINE]
    base_prof = (base["gpuwhy"] or {}).get("profiled")
    base_alone = next((r["result"] for r in base["alone"] if not r.get("error")), None)
    rows = []
    for entry in a.regressions:
        r = runs[entry.name]
        row = catalog.score(entry, r["diff"])
        gw = r["gpuwhy"] or {}
        errors = [x for x in [gw.get("error"), *(x.get("error") for x in r["alone"])] if x]
        if base["gpuwhy"] is None or base["gpuwhy"].get("doc_error"):
            errors.insert(0, "no baseline document to diff against")
        if errors:
            row["error"] = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        mine = gw.get("profiled") or next((x["result"] for x in r["alone"] if not x.get("error")), None)
        row["checksums"] = score.compare_checksums(base_prof or base_alone, mine)
        if row["checksums"].startswith("DIFFER"):
            row["notes"].append("the regression's training differs from the baseline's: " + row["checksums"])
        row["alone_pct"] = catalog.slowdown_pct(mean_step(base["alone"]), mean_step(r["alone"]))
        row["profiled_pct"] = catalog.slowdown_pct((base_prof or {}).get("step_s_mean"),
                                                   (gw.get("profiled") or {}).get("step_s_mean"))
        if r["skipped"]:
            row["notes"].append("skipped for the deadline: " + ", ".join(r["skipped"]))
        row["runs"] = {"gpuwhy": r["gpuwhy"], "alone": r["alone"]}
        row["diff"] = r["diff"]
        rows.append(row)
    return rows


if __name__ == "__main__":
    sys.exit(main())
