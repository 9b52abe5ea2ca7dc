#!/usr/bin/env python3
"""Run the diagnosis benchmark: each planted program under ``gpuwhy run``, and each program and its
fixed twin alone; score the verdicts against the planted causes and the ceilings against the
achieved speed-ups. Run from the repository root on the GPU machine (``PYTHONPATH=src``); see
benchmarks/diagnosis/README.md.

For each program (benchmarks/diagnosis/programs/<name>.py), in this order:

1. phase 1: the planted variant alone (its ``calib_args``, if it calibrates, are passed to every
   later run of it), the fixed twin alone, then the planted variant under
   ``python3 -m gpuwhy run --json --steps N --out DIR [--kernels] -- python3 PROG --steps N``;
2. phase 2: the planted variant and the twin alone again (``--repeats``, default 2 runs each).

Phase 2 comes after every program's phase 1, so a ``--deadline-s`` that runs out drops repeats
first, not programs. A command that fails, times out or prints no result gives its row an
error; the run goes on. The table (80 columns) and the summary are printed last; ``--out FILE``
gets every figure as JSON; ``--docs DIR`` keeps each gpuwhy document and each run's log.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import score  # noqa: E402

PROGRAMS_DIR = HERE / "programs"
LOG_CHARS = 40_000  # the tail of each run's output kept in --docs


def add_output_options(ap: argparse.ArgumentParser, results: str, what: str) -> None:
    """The options every benchmark runner shares: ``--out`` (its results JSON, default ``results``),
    ``--docs``, ``--trace-dir`` and ``--python`` (the Python that runs ``what`` and gpuwhy)."""
    ap.add_argument("--out", default=results, help=f"the results JSON (default {results})")
    ap.add_argument("--docs", default=None, help="folder for the gpuwhy documents and run logs "
                                                 "(default: beside --out, <stem>-docs)")
    ap.add_argument("--trace-dir", default=None, help="gpuwhy run --out folder for traces (default: a temporary one)")
    ap.add_argument("--python", default=sys.executable, help=f"the Python that runs {what} and gpuwhy")


def selected(ap: argparse.ArgumentParser, only: str, entries, what: str) -> list:
    """The ``entries`` (each with a ``name``, in their order) that ``--only`` names (comma-separated; empty:
    all); an unknown name ends the parse with the list of known ones (``what``: the noun, e.g. "program")."""
    names = [n for n in only.split(",") if n]
    known = [e.name for e in entries]
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"unknown {what}(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return [e for e in entries if not names or e.name in names]


def timeout_within_deadline(a: argparse.Namespace, job, elapsed: float) -> float | None:
    """The timeout (s) for ``job`` started ``elapsed`` seconds into the run: its own (``job.timeout_s``),
    cut to what ``--deadline-s`` leaves (15 s at least); None, with a line saying so, when the job's
    estimate would end past the deadline (the job is skipped)."""
    if a.deadline_s and elapsed + job.est_s() > a.deadline_s:
        print(f"[{elapsed:6.1f}s] {job.label}: skipped, the deadline ({a.deadline_s:.0f} s) is near", flush=True)
        return None
    timeout = job.timeout_s(a.timeout)
    return min(timeout, max(15.0, a.deadline_s - elapsed)) if a.deadline_s else timeout


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated program names (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan (commands, estimates) and exit")
    ap.add_argument("--skip-gpuwhy", action="store_true", help="only the timings of the programs alone")
    ap.add_argument("--timeout", type=float, default=90.0,
                    help="seconds per command (gpuwhy runs get 2x, 3x with --kernels; default 90)")
    ap.add_argument("--deadline-s", type=float, default=0.0,
                    help="stop starting commands that would end past this many seconds (0: none)")
    ap.add_argument("--steps", type=int, default=30, help="measured steps per run (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up steps per run (default 5)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each variant alone (default 2)")
    add_output_options(ap, "diagnosis-results.json", "the programs")
    a = ap.parse_args(argv)
    a.programs = selected(ap, a.only, score.PROGRAMS, "program")
    if a.steps < 1 or a.warmup < 0 or a.repeats < 1 or a.timeout <= 0:
        ap.error("--steps and --repeats must be at least 1, --warmup at least 0, --timeout positive")
    return a


class Job:
    def __init__(self, entry: score.Planted, kind: str, rep: int, phase: int) -> None:
        # kind: planted | fixed (alone) | gpuwhy (the planted program under gpuwhy run) | gpuwhy-fixed (the twin)
        self.entry, self.kind, self.rep, self.phase = entry, kind, rep, phase

    @property
    def label(self) -> str:
        return f"{self.entry.name} {self.kind}" + ("" if self.kind.startswith("gpuwhy") else f" #{self.rep}")

    def est_s(self) -> float:
        e = self.entry.est_s
        if self.kind == "gpuwhy":
            return 2 * e + 4 + (25 if self.entry.kernels else 0)
        if self.kind == "gpuwhy-fixed":
            return 2 * e + 4
        return e

    def timeout_s(self, base: float) -> float:
        if self.kind == "gpuwhy":
            return base * (3 if self.entry.kernels else 2)
        if self.kind == "gpuwhy-fixed":
            return base * 2
        return base


def plan(a: argparse.Namespace) -> list[Job]:
    jobs = []
    for p in a.programs:
        jobs += [Job(p, "planted", 1, 1), Job(p, "fixed", 1, 1)]
        if not a.skip_gpuwhy:
            jobs += [Job(p, "gpuwhy", 1, 1), Job(p, "gpuwhy-fixed", 1, 1)]
    for rep in range(2, a.repeats + 1):
        for p in a.programs:
            jobs += [Job(p, "planted", rep, 2), Job(p, "fixed", rep, 2)]
    return jobs


def command(a: argparse.Namespace, job: Job, calib: list[str], trace_dir: Path) -> list[str]:
    prog = str((PROGRAMS_DIR / f"{job.entry.name}.py").relative_to(REPO))
    prog_args = ["--steps", str(a.steps), "--warmup", str(a.warmup), *calib]
    if job.kind.startswith("gpuwhy"):
        fixed = job.kind == "gpuwhy-fixed"
        cmd = [a.python, "-m", "gpuwhy", "run", "--json", "--steps", str(a.steps),
               "--out", str(trace_dir / (job.entry.name + ("-fixed" if fixed else "")))]
        if job.entry.kernels and not fixed:
            cmd.append("--kernels")
        return cmd + ["--", "python3", prog, *prog_args, *(["--fixed"] if fixed else [])]
    return [a.python, prog, *prog_args, *(["--fixed"] if job.kind == "fixed" else [])]


def environment() -> dict:
    env = dict(os.environ)
    src = str(REPO / "src")
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if src not in parts:
        parts.insert(0, src)
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def execute(cmd: list[str], timeout: float, env: dict) -> dict:
    """Run one command in its own process group; kill that group if it outlives ``timeout``."""
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", start_new_session=True)
    except OSError as exc:
        return {"rc": None, "wall_s": 0.0, "stdout": "", "stderr": "", "timed_out": False, "error": f"could not start: {exc}"}
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the group this call started: the program and its workers
        except ProcessLookupError:
            pass
        out, err = p.communicate()
    return {"rc": p.returncode, "wall_s": time.perf_counter() - t0, "stdout": out or "", "stderr": err or "",
            "timed_out": timed_out, "error": None}


def last_line(text: str, prefer: str | None = None) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if prefer:
        for ln in reversed(lines):
            if ln.startswith(prefer):
                return ln
    return lines[-1] if lines else "(no output)"


def run_error(res: dict, diag: dict | None, what: str) -> str | None:
    if res.get("error"):
        return f"{what}: {res['error']}"
    if res["timed_out"]:
        return f"{what}: timed out after {res['wall_s']:.0f} s"
    if res["rc"] != 0:
        return f"{what}: exit {res['rc']}: {last_line(res['stderr'], 'DIAG_CHECK_FAILED')[:300]}"
    if diag is None:
        return f"{what}: no DIAG_RESULT line in its output"
    return None


def write_log(docs: Path, name: str, res: dict) -> str:
    path = docs / name
    text = (f"$ {res.get('cmd', '')}\n# rc={res['rc']} wall_s={res['wall_s']:.2f} timed_out={res['timed_out']}\n"
            f"--- stdout ---\n{res['stdout'][-LOG_CHARS:]}\n--- stderr ---\n{res['stderr'][-LOG_CHARS:]}\n")
    path.write_text(text)
    return str(path)


def legacy_verdict(doc) -> str | None:
    """What the current engine's budget says (kept in the JSON for comparison; not scored)."""
    try:
        b = doc["budget"]
        if b.get("gpu_bound"):
            return "gpu-bound"
        fixes = b.get("fixes") or []
        return str(fixes[0].get("what")) if fixes else None
    except (KeyError, TypeError, AttributeError, IndexError):
        return None


def main(argv=None) -> int:
    a = parse_args(argv)
    jobs = plan(a)
    trace_dir = Path(a.trace_dir) if a.trace_dir else Path(tempfile.mkdtemp(prefix="gpuwhy-diag-traces-"))
    out_path = Path(a.out)
    docs = Path(a.docs) if a.docs else out_path.with_name(out_path.stem + "-docs")

    if a.dry_run:
        total = sum(j.est_s() for j in jobs)
        print(f"plan: {len(a.programs)} programs, {len(jobs)} commands, about {total:.0f} s "
              f"({total / 60:.1f} min) by the catalog's estimates"
              + (f"; deadline {a.deadline_s:.0f} s" if a.deadline_s else ""))
        print(f"results -> {out_path}; documents and logs -> {docs}; traces -> {trace_dir}")
        for p in a.programs:
            prog = PROGRAMS_DIR / f"{p.name}.py"
            print(f"  {p.name}: plants {p.cause}, twin applies {p.remedy}"
                  + (f", level {p.level}" if p.level else "") + (", --kernels" if p.kernels else "")
                  + ("" if prog.is_file() else "  [MISSING " + str(prog) + "]"))
        for j in jobs:
            cmd = command(a, j, ["[calib_args of the first planted run]"] if j.entry.calibrates and not
                          (j.kind == "planted" and j.rep == 1) else [], trace_dir)
            print(f"phase {j.phase}  {j.label:<28} est {j.est_s():>4.0f} s  timeout {j.timeout_s(a.timeout):>4.0f} s  "
                  f"$ {shlex.join(cmd)}")
        if not a.trace_dir:
            os.rmdir(trace_dir)
        return 0

    docs.mkdir(parents=True, exist_ok=True)
    env = environment()
    t_start = time.perf_counter()
    calib: dict[str, list[str]] = {}
    runs: dict[str, dict] = {p.name: {"planted": [], "fixed": [], "gpuwhy": None, "gpuwhy-fixed": None, "skipped": []}
                             for p in a.programs}
    for job in jobs:
        name = job.entry.name
        elapsed = time.perf_counter() - t_start
        timeout = timeout_within_deadline(a, job, elapsed)
        if timeout is None:
            runs[name]["skipped"].append(job.label)
            continue
        cmd = command(a, job, calib.get(name, []), trace_dir)
        if job.kind.startswith("gpuwhy"):
            (trace_dir / (name + ("-fixed" if job.kind == "gpuwhy-fixed" else ""))).mkdir(parents=True, exist_ok=True)
        res = execute(cmd, timeout, env)
        res["cmd"] = shlex.join(cmd)
        rec = {"cmd": res["cmd"], "rc": res["rc"], "wall_s": res["wall_s"], "timed_out": res["timed_out"]}
        if job.kind == "gpuwhy-fixed":
            (docs / f"{name}.gpuwhy-fixed.json").write_text(res["stdout"])
            (docs / f"{name}.gpuwhy-fixed.err").write_text(res["stderr"][-LOG_CHARS:])
            rec["profiled"] = score.parse_diag_result(res["stderr"])
            runs[name]["gpuwhy-fixed"] = rec
            step = (rec["profiled"] or {}).get("step_s_mean")
            print(f"[{elapsed:6.1f}s] {job.label}: exit {res['rc']}, {res['wall_s']:.1f} s, "
                  + (f"{step * 1e3:.3f} ms/step under the profiler" if step else "no DIAG_RESULT"), flush=True)
            continue
        if job.kind == "gpuwhy":
            doc_file = docs / f"{name}.gpuwhy.json"
            doc_file.write_text(res["stdout"])
            (docs / f"{name}.gpuwhy.err").write_text(res["stderr"][-LOG_CHARS:])
            rec["document"], rec["stderr_log"] = str(doc_file), str(docs / f"{name}.gpuwhy.err")
            doc, doc_error = None, None
            try:
                doc = json.loads(res["stdout"]) if res["stdout"].strip() else None
            except ValueError as exc:
                doc_error = f"gpuwhy printed no JSON document ({exc})"
            if doc is None and doc_error is None:
                doc_error = (f"gpuwhy: timed out after {res['wall_s']:.0f} s" if res["timed_out"] else
                             f"gpuwhy exit {res['rc']}, no document: {last_line(res['stderr'])[:300]}")
            if doc is not None and res["rc"] not in (0, None):
                rec["note"] = f"gpuwhy exit {res['rc']} (document still read): {last_line(res['stderr'])[:200]}"
            rec["doc_error"] = doc_error
            rec["profiled"] = score.parse_diag_result(res["stderr"])  # the program's line, under the profiler
            runs[name]["gpuwhy"] = (rec, doc)
            verdict = (doc or {}).get("diagnosis", {}) if isinstance(doc, dict) else {}
            top = verdict.get("top_cause") if isinstance(verdict, dict) else None
            print(f"[{elapsed:6.1f}s] {job.label}: exit {res['rc']}, {res['wall_s']:.1f} s, "
                  f"top cause {top or '-'}" + (f" ({doc_error})" if doc_error else ""), flush=True)
            continue
        diag = score.parse_diag_result(res["stdout"])
        rec["log"] = write_log(docs, f"{name}.{job.kind}{job.rep}.log", res)
        rec["result"] = diag
        rec["error"] = run_error(res, diag, job.label)
        runs[name][job.kind].append(rec)
        if diag and diag.get("calib_args") and name not in calib:
            calib[name] = [str(x) for x in diag["calib_args"]]
        step = (diag or {}).get("step_s_mean")
        print(f"[{elapsed:6.1f}s] {job.label}: "
              + (f"error: {rec['error']}" if rec["error"] else f"{step * 1e3:.3f} ms/step") +
              f" ({res['wall_s']:.1f} s)", flush=True)

    rows = []
    for p in a.programs:
        r = runs[p.name]
        ok_planted = [x["result"] for x in r["planted"] if not x["error"]]
        ok_fixed = [x["result"] for x in r["fixed"] if not x["error"]]
        gw = r["gpuwhy"]
        if gw is None:
            doc, doc_error = None, ("gpuwhy not run (--skip-gpuwhy)" if a.skip_gpuwhy else "gpuwhy not run (deadline)")
        else:
            doc, doc_error = gw[1], gw[0]["doc_error"]
        gf = r["gpuwhy-fixed"]
        profiled = ((gw[0].get("profiled") if gw else None), (gf or {}).get("profiled"))
        row = score.score_program(p, doc, ok_planted, ok_fixed, doc_error=doc_error, profiled=profiled)
        errors = [x["error"] for x in r["planted"] + r["fixed"] if x["error"]]
        if errors:
            row["error"] = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        if not ok_planted or not ok_fixed:
            row["notes"].append("no achieved speed-up: " + ("the planted run" if not ok_planted else "the twin")
                                + " gave no result")
        if r["skipped"]:
            row["notes"].append("skipped for the deadline: " + ", ".join(r["skipped"]))
        row["calib_args"] = calib.get(p.name)
        row["runs"] = {"planted": r["planted"], "fixed": r["fixed"], "gpuwhy": gw[0] if gw else None, "gpuwhy-fixed": gf}
        row["legacy_verdict"] = legacy_verdict(doc)
        prof = (gw[0].get("profiled") if gw else None) or {}
        row["profiled_step_s_mean"] = prof.get("step_s_mean")
        rows.append(row)
    summary = score.summarize(rows)
    result = {
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _git_commit(),
        "argv": sys.argv if argv is None else argv,
        "settings": {"steps": a.steps, "warmup": a.warmup, "repeats": a.repeats, "timeout": a.timeout,
                     "deadline_s": a.deadline_s, "skip_gpuwhy": a.skip_gpuwhy},
        "elapsed_s": time.perf_counter() - t_start,
        "summary": summary,
        "rows": rows,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1, default=str))
    print(f"\nresults: {out_path}; documents and logs: {docs}; elapsed {result['elapsed_s']:.0f} s")
    print("\nstep times alone (ms, each run) and the achieved speed-up (lowest-highest pair):")
    for row in rows:
        ach = row.get("achieved")
        if ach:
            pl = "/".join(f"{x * 1e3:.3g}" for x in ach["planted_step_s"])
            fx = "/".join(f"{x * 1e3:.3g}" for x in ach["fixed_step_s"])
            print(f"  {row['program']:<17} planted {pl}  fixed {fx}  {ach['x']:.2f}x "
                  f"({ach['x_low']:.2f}-{ach['x_high']:.2f})")
        else:
            print(f"  {row['program']:<17} -")
    print()
    print(score.format_table(rows, summary))
    return 1 if summary["errors"] else 0


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


if __name__ == "__main__":
    sys.exit(main())
