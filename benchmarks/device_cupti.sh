#!/usr/bin/env bash
# The CUPTI tracer on the GPU (issue 29), one call from the repo root, with the wheels in .whl
# (cupti-python 13.0.1, pyelftools; `carry: [".whl"]`): benchmarks/cupti/check.py, then its table.
# Writes under $OUT/cupti: each gpuwhy run document and log, the raw CUPTI records of each program.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheels did not install"; exit 3; }
export PYTHONPATH="/tmp/site:$PWD/src" PYTHONUNBUFFERED=1 COLUMNS=80 XDG_CACHE_HOME=/tmp/gpuwhy-cache
O="${OUT:-$PWD/out}/cupti"; mkdir -p "$O"
{ python3 -m pip show nvidia-cuda-cupti nvidia-cuda-cupti-cu13 2>&1 | grep -E '^(Name|Version|Location)'
  python3 -c 'from cupti import cupti; print("cupti-python imports")'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } 2>&1 | tee "$O/env.txt"
timeout "${CUPTI_CHECK_S:-420}" python3 benchmarks/cupti/check.py "$O" 2>&1 | tee "$O/check.log"
# JAX's own profiler (CUPTI_JAX_PROFILE=1): its trace alone, then under `gpuwhy run --tracer cupti`, where
# the two want CUPTI at once (what each says is kept)
if [ "${CUPTI_JAX_PROFILE:-0}" = 1 ]; then
  J="$O/jax-profile"; mkdir -p "$J"
  timeout 120 python3 benchmarks/cupti/jax_profile.py "$J/alone" 100 >"$J/alone.out" 2>"$J/alone.err"; echo "jax profile alone: exit $?"
  timeout 150 python3 -m gpuwhy run --json --tracer cupti --skip-first 4s --out /tmp/jaxprof-run -- \
    python3 benchmarks/cupti/jax_profile.py "$J/under-cupti" 100 >"$J/under.json" 2>"$J/under.err"; echo "jax profile under cupti: exit $?"
  tail -3 "$J/under.err"; find "$J" -type f -printf '%s %p\n'
  for t in "$J"/alone/plugins/profile/*/perfetto_trace.json.gz; do python3 -m gpuwhy trace "$t"; echo "gpuwhy trace: exit $?"; done
fi
# every log and record file in one archive (the device returns few loose files)
tar -czf "${OUT:-$PWD/out}/cupti.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
