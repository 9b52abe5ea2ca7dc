#!/usr/bin/env bash
# JAX on the GPU (issue 29), one call from the repo root with the wheels in .whl (`carry: [".whl"]`):
# what this JAX's cost_analysis says of the training step, the training loop under `gpuwhy run --tracer
# cupti` (document, log and records), and JAX's own profiler trace of it (alone, and under the CUPTI
# tracer). At most 8 files come back: JAX's profiler traces alone, the rest in $OUT/jax.tar.gz, and the log.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheels did not install"; exit 3; }
export PYTHONPATH="/tmp/site:$PWD/src" PYTHONUNBUFFERED=1 COLUMNS=80 XDG_CACHE_HOME=/tmp/gpuwhy-cache
R="${OUT:-$PWD/out}"; O=/tmp/jaxcheck; rm -rf "$O"; mkdir -p "$O"
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
timeout 120 python3 benchmarks/cupti/jax_costs_probe.py 2>&1 | grep -E "JAX_COSTS|Error" | tail -3
timeout 150 python3 -m gpuwhy run --json --tracer cupti --skip-first 4s --out /tmp/jaxrun -- \
  python3 benchmarks/cupti/jax_train.py 300 >"$O/jax_train.cupti.json" 2>"$O/jax_train.cupti.err"
echo "jax_train under cupti: exit $?"; tail -5 "$O/jax_train.cupti.err"
GPUWHY_CUPTI_RECORDS="$O/jax_train.records.json" timeout 150 python3 -m gpuwhy run --tracer cupti --skip-first 4s \
  --out /tmp/jaxrun2 -- python3 benchmarks/cupti/jax_train.py 300 >"$O/jax_train.cupti.txt" 2>&1
echo "jax_train under cupti (text): exit $?"; cat "$O/jax_train.cupti.txt" | tail -40
timeout 120 python3 benchmarks/cupti/jax_profile.py "$O/prof-alone" 100 >"$O/prof-alone.out" 2>&1; echo "jax profile alone: exit $?"
timeout 150 python3 -m gpuwhy run --json --tracer cupti --skip-first 4s --out /tmp/jaxprof -- \
  python3 benchmarks/cupti/jax_profile.py "$O/prof-under" 100 >"$O/prof-under.json" 2>"$O/prof-under.err"
echo "jax profile under cupti: exit $?"; tail -5 "$O/prof-under.err"; head -c 800 "$O/prof-under.json"; echo
for t in "$O"/prof-alone/plugins/profile/*/perfetto_trace.json.gz; do timeout 120 python3 -m gpuwhy trace "$t"; echo "gpuwhy trace: exit $?"; done
gzip -f "$O/jax_train.records.json"; rm -f "$O"/prof-*/plugins/profile/*/*.xplane.pb "$O"/prof-under/plugins/profile/*/*.trace.json.gz
find "$O" -type f -printf '%s %p\n'
} 2>&1 | tee "$O/log.txt"
for f in "$O"/prof-alone/plugins/profile/*/*.json.gz; do mv "$f" "$R/prof-alone.$(basename "$f")"; done
tar -czf "$R/jax.tar.gz" -C /tmp jaxcheck; cp "$O/log.txt" "$R/log.txt"; ls -la "$R"
