#!/usr/bin/env python3
"""Cold-start wall time of `gpuwhy classify ... --json` against a bare `python -c pass`.

Target (issue 2): under 0.3 s above the bare interpreter. Runs each command
N times (default 15) in fresh processes and reports medians; writes JSON to
$OUT/cold_start.json when OUT is set.

Usage: python3 benchmarks/cold_start.py [N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLASSIFY = ["-m", "gpuwhy", "classify", "--flops", "2.7e8", "--bytes", "3.2GB", "--gpu", "H200", "--json"]


def _time(args: list[str], n: int, env: dict) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, check=True)
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    _time(CLASSIFY, 2, env)  # warm the OS file cache and __pycache__
    bare = _time(["-c", "pass"], n, env)
    cls = _time(CLASSIFY, n, env)
    heavy = subprocess.run(
        [sys.executable, "-c", "import runpy,sys; sys.argv=['gpuwhy']+sys.argv[1:];"
         "from gpuwhy.cli.app import main; main(sys.argv[1:]); sys.stdout.flush();"
         "bad=[m for m in ('pandas','cuda','pynvml','numpy','matplotlib') if m in sys.modules]; print(' '.join(bad), file=sys.stderr)",
         *CLASSIFY[2:]],
        env=env, capture_output=True, text=True,
    ).stderr.strip().splitlines()
    res = {
        "runs": n,
        "bare_python_median_s": statistics.median(bare),
        "classify_median_s": statistics.median(cls),
        "overhead_median_s": statistics.median(cls) - statistics.median(bare),
        "classify_min_s": min(cls),
        "heavy_modules_imported": heavy[-1].split() if heavy else [],
        "target_overhead_s": 0.3,
    }
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "cold_start.json").write_text(json.dumps(res, indent=2))
    print(f"bare python {res['bare_python_median_s']*1e3:.0f} ms, classify --json {res['classify_median_s']*1e3:.0f} ms, "
          f"overhead {res['overhead_median_s']*1e3:.0f} ms (target < 300 ms), heavy modules: {res['heavy_modules_imported'] or 'none'}")
    return 0 if res["overhead_median_s"] < 0.3 and not res["heavy_modules_imported"] else 1


if __name__ == "__main__":
    sys.exit(main())
