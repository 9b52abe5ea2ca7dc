#!/usr/bin/env bash
# The diagnosis benchmark on the GPU machine (one H100), from the repo root, in one call:
#   bash benchmarks/device_diagnosis.sh [run_all.py options, e.g. --only few_blocks,decode_b1]
# Twelve small PyTorch programs, each with one planted cause of slowness and a fixed twin
# (benchmarks/diagnosis/README.md): each planted program under `gpuwhy run --json` (the four
# kernel-regime ones with --kernels), and each program and its twin alone, twice. Writes under
# $OUT/diagnosis/: results.json (every figure), docs/ (each gpuwhy document, each run's log),
# console.log, env.txt and bench_sweep.txt. The table and its summary are printed last.
#
# Wall time, estimated (an H100 box: a Python process that imports torch and starts CUDA costs
# 4-6 s before any work, as the plain runs of docs/results/2026-12-06-run.md show; each program's
# own work is 1-2 s):
#   environment and `gpuwhy bench --sweep` (the measured L2 roof for l2_resident)  ~ 30 s (cap 60 s)
#   phase 1, 12 programs x (planted + twin alone, ~5.5 s each)                   ~ 130 s
#           8 `gpuwhy run` (trace only, ~11 s each) + 4 with --kernels (~30 s)     ~ 210 s
#   phase 2, 12 programs x (planted + twin alone again)                           ~ 130 s
#   total about 500 s. run_all.py starts no command that its estimate says would end past
#   DIAG_DEADLINE_S (default 440 s of its own time; a started command is cut at the deadline + 15 s),
#   so the call stays under 9 minutes: what does not fit is phase 2's repeats of the last programs,
#   listed as skipped in their rows.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=80
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
D="${OUT:-$PWD/out}/diagnosis"
mkdir -p "$D"
T=/tmp/gpuwhy-diag-traces; rm -rf "$T"; mkdir -p "$T"   # traces stay off $OUT (tens of MB each)
{ nvidia-smi; ncu --version; date -u +%FT%TZ; nproc
  python3 -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
  python3 -c 'import gpuwhy; print("gpuwhy", gpuwhy.__version__)'; } > "$D/env.txt" 2>&1
if [ "${DIAG_SWEEP:-1}" = 1 ]; then   # DIAG_SWEEP=0 leaves it out (then --kernels judges against the sheet)
  timeout 60 python3 -m gpuwhy bench --sweep > "$D/bench_sweep.txt" 2>&1; echo "gpuwhy bench --sweep: exit $?"
fi
python3 benchmarks/diagnosis/run_all.py --out "$D/results.json" --docs "$D/docs" --trace-dir "$T" \
  --deadline-s "${DIAG_DEADLINE_S:-440}" --timeout 90 "$@" 2>&1 | tee "$D/console.log"
