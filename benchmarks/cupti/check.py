"""The CUPTI tracer on the GPU (issue 29), one call: run from the repo root with ``PYTHONPATH=src``
and cupti-python importable; writes every document and log under OUT (argv[1]) and prints a table last.

1. The same PyTorch programs (the diagnosis benchmark's pageable_h2d and tiny_layers, planted, steps
   marked by NVTX as well, ``DIAG_NVTX=1``) under ``gpuwhy run --tracer torch`` and ``--tracer cupti``:
   busy time of the window and the top cause of each, ``CUPTI_REPEATS`` (2) runs under each, alternating,
   with their spread; the raw CUPTI records kept for the tests.
2. The tracers' overhead on the program: its measured steps' mean time alone, under torch.profiler,
   under CUPTI (the programs time their own steps: ``DIAG_RESULT``).
3. A JAX training loop, a CuPy program and a Triton kernel in a Python loop under ``--tracer cupti``:
   each gets a budget and a verdict; the JAX step's kernels get regimes from XLA's ``cost_analysis``
   (no ncu), printed per kernel with where each came from.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
OUT.mkdir(parents=True, exist_ok=True)
TMP = Path("/tmp/gpuwhy-cupti-check")
PY = sys.executable
DIAG = Path("benchmarks/diagnosis/programs")
rows: list[tuple] = []


def sh(cmd, log: str, env=None, timeout=150):
    t = time.perf_counter()
    e = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, so, se = 124, exc.stdout or "", exc.stderr or ""
        so = so.decode() if isinstance(so, bytes) else so
        se = se.decode() if isinstance(se, bytes) else se
    wall = time.perf_counter() - t
    (OUT / f"{log}.out").write_text(so)
    (OUT / f"{log}.err").write_text(f"$ {shlex.join(cmd)}\nexit {rc}, {wall:.1f} s\n" + se[-200_000:])
    print(f"{log}: exit {rc}, {wall:.1f} s", flush=True)
    return rc, so, se, wall


def diag_step(text: str):
    for line in text.splitlines():
        if line.startswith("DIAG_RESULT "):
            return json.loads(line[len("DIAG_RESULT "):]).get("step_s_mean")
    return None


def gpuwhy_run(name: str, tracer: str, prog: list[str], window: list[str], env=None):
    out = TMP / f"{name}-{tracer}"
    rc, so, se, wall = sh([PY, "-m", "gpuwhy", "run", "--json", "--tracer", tracer, *window, "--out", str(out),
                           "--", *prog], f"{name}.{tracer}", env=env)
    try:
        doc = json.loads(so)
    except ValueError:
        doc = None
    d = (doc or {}).get("diagnosis") or {}
    return {"rc": rc, "wall_s": wall, "busy_s": d.get("busy_s"), "window_s": d.get("window_s"),
            "top": d.get("top_cause"), "line": d.get("line"), "step_s": diag_step(se), "doc": doc}


#: CUPTI_PROGS=a,b runs only those (names of both lists below); unset: all of them
ONLY = set(filter(None, os.environ.get("CUPTI_PROGS", "").split(",")))


def wanted(name: str) -> bool:
    return not ONLY or name in ONLY


#: CUPTI_REPEATS=N: each PyTorch program N times under each tracer, alternating (default 2), so a tracer's
#: difference in busy time can be told from the runs' own spread (each run is its own process: kernel times
#: move between runs with the clocks)
REPEATS = max(1, int(os.environ.get("CUPTI_REPEATS", "2")))


def busy_spread(runs: list) -> tuple:
    """``(median busy_s, lowest, highest)`` of the runs that gave a busy time; Nones without any."""
    import statistics as st

    b = sorted(r["busy_s"] for r in runs if r["busy_s"])
    return (st.median(b), b[0], b[-1]) if b else (None, None, None)


# 1 and 2: PyTorch under both tracers, and alone
for prog in (p for p in ("pageable_h2d", "tiny_layers") if wanted(p)):
    cmd = ["python3", str(DIAG / f"{prog}.py"), "--steps", "30", "--warmup", "5"]
    env = {"DIAG_NVTX": "1"}
    rc, so, se, wall = sh(cmd, f"{prog}.alone", env=env)
    alone = diag_step(so)
    ts, cs = [], []
    for i in range(REPEATS):
        tag = "" if i == 0 else f"-{i + 1}"
        ts.append(gpuwhy_run(prog + tag, "torch", cmd, ["--steps", "30"], env))
        c = gpuwhy_run(prog + tag, "cupti", cmd, ["--steps", "30"],
                       dict(env, GPUWHY_CUPTI_RECORDS=str(OUT / f"{prog}{tag}.cupti-records.json")))
        if c["busy_s"] is None:  # no NVTX steps seen: the window after the warm-up instead
            c = gpuwhy_run(prog + tag + "-skip", "cupti", cmd, ["--skip-first", "1s"], env)
        cs.append(c)
    t, c = ts[0], cs[0]
    for tr, runs in (("torch", ts), ("cupti", cs)):
        for r in runs:
            rows.append((prog, tr, r["rc"], r["window_s"], r["busy_s"], r["top"], r["step_s"], alone))
    (tm, tlo, thi), (cm, clo, chi) = busy_spread(ts), busy_spread(cs)
    if tm and cm:
        print(f"{prog}: busy over {REPEATS} run(s) each, median (lowest-highest): torch {tm:.6f} s ({tlo:.6f}-{thi:.6f}), "
              f"cupti {cm:.6f} s ({clo:.6f}-{chi:.6f}); cupti/torch {100 * (cm / tm - 1):+.2f}%, torch's own spread "
              f"{100 * (thi / tlo - 1):.2f}%, cupti's {100 * (chi / clo - 1):.2f}%; top causes torch "
              f"{sorted({r['top'] for r in ts})} cupti {sorted({r['top'] for r in cs})}", flush=True)
    try:  # the tracer's own time: each buffer CUPTI handed over, turned into records
        cap = json.loads((OUT / f"{prog}.cupti-records.json").read_text())
        bufs = cap.get("buffers", [])
        inside = sum((b1 - b0) for b0, b1, n in bufs) / 1e9
        print(f"{prog}: {len(bufs)} CUPTI buffers, {sum(n for *_, n in bufs)} records, {inside:.3f} s turning them "
              f"into records; buffers at {[round((b0 - cap['start_ns']) / 1e9, 3) for b0, _, _ in bufs][:8]} s "
              f"of a {(cap['stop_ns'] - cap['start_ns']) / 1e9:.3f} s capture", flush=True)
        import statistics as st
        recs = cap["records"]
        by = {}
        for r in recs:
            by.setdefault(r["k"], []).append(r)
        api = sorted(by.get("runtime", []) + by.get("driver", []), key=lambda r: r["start"])
        rt = by.get("runtime", [])
        launch = [r["end"] - r["start"] for r in rt if r["name"].startswith("cudaLaunchKernel")]
        gaps = [b["start"] - a["end"] for a, b in zip(api, api[1:]) if b["start"] > a["end"]]
        print(f"{prog}: records by kind {dict((k, len(v)) for k, v in by.items())}; cudaLaunchKernel median "
              f"{st.median(launch) / 1e3 if launch else float('nan'):.2f} us; host time between API calls median "
              f"{st.median(gaps) / 1e3 if gaps else float('nan'):.2f} us, p90 "
              f"{sorted(gaps)[int(0.9 * len(gaps))] / 1e3 if gaps else float('nan'):.2f} us", flush=True)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{prog}: no record file ({exc})", flush=True)
    if t["busy_s"] and c["busy_s"]:
        print(f"{prog}: busy per window second torch {t['busy_s'] / t['window_s']:.4f} "
              f"cupti {c['busy_s'] / c['window_s']:.4f}; busy torch {t['busy_s']:.6f} s cupti {c['busy_s']:.6f} s "
              f"({100 * (c['busy_s'] / t['busy_s'] - 1):+.2f}%)", flush=True)

# 3: programs without torch.profiler
for name, prog, window in (("jax_train", ["python3", "benchmarks/cupti/jax_train.py", "300"], ["--skip-first", "4s"]),
                           ("cupy_loop", ["python3", "benchmarks/cupti/cupy_loop.py", "60"], ["--skip-first", "1s"]),
                           ("triton_loop", ["python3", "benchmarks/cupti/triton_loop.py", "3000"],
                            ["--skip-first", "1s"])):
    if not wanted(name):
        continue
    rc, so, se, wall = sh(prog, f"{name}.alone")
    c = gpuwhy_run(name, "cupti", prog, window, {"GPUWHY_CUPTI_RECORDS": str(OUT / f"{name}.cupti-records.json")})
    rows.append((name, "cupti", c["rc"], c["window_s"], c["busy_s"], c["top"], None, wall))
    if c["line"]:
        print(f"{name}: {c['line']}", flush=True)
    doc = c["doc"] or {}
    for note in doc.get("notes", []):  # the jitted functions' cost_analysis figures and verdicts
        if note.startswith("cost_analysis of") or note.startswith("kernel regimes from"):
            print(f"{name}: {note}", flush=True)
    for k in doc.get("kernels", []):  # each top kernel's regime, and where it came from
        print(f"{name}: kernel {k['name'][:48]:<48} {k['total_s'] * 1e3:9.3f} ms  regime {k['regime']}"
              f" {'' if k['roof_pct'] is None else format(k['roof_pct'], '.0f') + '% of roof'}"
              f"  ({k.get('source') or k['why']})", flush=True)


def f(x, spec):
    return "-" if x is None else format(x, spec)


print("\nprogram       tracer  rc  window_s  busy_s    top cause          step_ms  alone")
for p, tr, rc, w, b, top, step, alone in rows:
    print(f"{p:<13} {tr:<6} {rc:>3}  {f(w, '8.4f')}  {f(b, '8.4f')}  {str(top):<18} "
          f"{f(None if step is None else step * 1e3, '7.3f')}  {f(None if alone is None else alone * 1e3, '7.3f')}")
