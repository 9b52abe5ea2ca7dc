#!/usr/bin/env bash
# Ten planted regressions on one training program (issue 30), on the GPU machine (one H100), from the
# repo root:   bash benchmarks/device_regressions.sh [run_regressions.py options]
# The baseline and each regression under `gpuwhy run --json`, `gpuwhy diff BASELINE REGRESSED` per
# regression, scored against the planted cause; then each variant alone for the real step times
# (dropped first when REGRESS_DEADLINE_S, default 330, runs out). benchmarks/regressions/README.md.
# Writes under $OUT: regressions.json (every figure), regressions.log (the console),
# regressions.tar.gz (each gpuwhy document, each run's log, env.txt). The table is printed last.
#
# Wall time, estimated (an H100 box: a Python process that imports torch and starts CUDA costs
# 4-6 s): 11 x ~16-20 s under gpuwhy + 10 diffs x ~2 s ~ 230 s (measured 227 s at width 512 on an H100,
# 2026-12-07, micro_batches alone 48 s); the plain runs (11 x ~6 s) only as far
# as the deadline allows. Traces stay off $OUT (tens of MB each).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=80
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
O="${OUT:-$PWD/out}"; W=/tmp/gpuwhy-regress; rm -rf "$W"; mkdir -p "$O" "$W/docs"
T=/tmp/gpuwhy-regress-traces; rm -rf "$T"; mkdir -p "$T"
{ nvidia-smi; date -u +%FT%TZ; nproc
  python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'import cupy; print("cupy", cupy.__version__)' || echo "no cupy: the logger's host function goes through ctypes"
  python3 -c 'import gpuwhy; print("gpuwhy", gpuwhy.__version__)'; git log --oneline -1 2>/dev/null; } > "$W/docs/env.txt" 2>&1
python3 benchmarks/regressions/run_regressions.py --out "$O/regressions.json" --docs "$W/docs" --trace-dir "$T" \
  --deadline-s "${REGRESS_DEADLINE_S:-330}" --timeout 90 "$@" 2>&1 | tee "$O/regressions.log"
rc=${PIPESTATUS[0]}
tar -czf "$O/regressions.tar.gz" -C "$W" docs
echo "run_regressions exit $rc"
tail -n 40 "$O/regressions.log"
