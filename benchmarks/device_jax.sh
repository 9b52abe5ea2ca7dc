#!/usr/bin/env bash
# JAX on the GPU (issue 29), one call from the repo root with the wheels in .whl (`carry: [".whl"]`). A planted
# cause and its fixed twin: benchmarks/cupti/jax_train.py fetches its loss every step (JAX_FETCH_EVERY=1, a
# host sync per step); the twin fetches it once after the loop (JAX_FETCH_EVERY=STEPS). Each runs alone
# (its loop time), under `gpuwhy run --tracer cupti --steps 200` (steps marked by NVTX, JAX_NVTX=1: the
# budget, the verdict and each fix's ceiling) and the planted one under JAX's own profiler (`gpuwhy trace`
# of its trace). Then the program starting JAX's profiler under the CUPTI tracer (the note that says so).
# At most 8 files come back: the log, JAX's profiler trace, everything else in $OUT/jax.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheels did not install"; exit 3; }
export PYTHONPATH="/tmp/site:$PWD/src" PYTHONUNBUFFERED=1 COLUMNS=80 XDG_CACHE_HOME=/tmp/gpuwhy-cache
R="${OUT:-$PWD/out}"; O=/tmp/jaxcheck; rm -rf "$O"; mkdir -p "$O"
STEPS=${JAX_STEPS:-300}
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
timeout 120 python3 benchmarks/cupti/jax_costs_probe.py 2>&1 | grep -E "JAX_COSTS|Error" | tail -2
for rep in 1 2; do
  for every in 1 "$STEPS"; do
    timeout 120 env JAX_FETCH_EVERY=$every python3 benchmarks/cupti/jax_train.py "$STEPS" 2>&1 | grep "steps," | sed "s/^/alone every=$every rep=$rep: /"
  done
done
for every in 1 "$STEPS"; do
  GPUWHY_CUPTI_RECORDS="$O/every$every.records.json" timeout 150 env JAX_FETCH_EVERY=$every JAX_NVTX=1 \
    python3 -m gpuwhy run --json --tracer cupti --steps 200 --out "/tmp/jaxrun$every" -- \
    python3 benchmarks/cupti/jax_train.py "$STEPS" >"$O/every$every.json" 2>"$O/every$every.err"
  echo "every=$every under cupti: exit $?"; grep "steps," "$O/every$every.err"
  python3 - "$O/every$every.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); g = d.get("diagnosis") or {}
print("  line:", g.get("line")); print("  window_s", g.get("window_s"), "judged_s", g.get("judged_s"), "busy_s", g.get("busy_s"))
for r in g.get("remedies", []): print(f"  fix {r['key']:<16} removes {r['removed_s']:.4f} s  at most {r['ceiling_x']:.2f}x")
for n in d.get("notes", []):
    if "cost_analysis" in n or "jaxpr" in n: print("  note:", n[:300])
for k in d.get("kernels", [])[:4]: print(f"  kernel {k['name'][:40]:<40} regime {k['regime']} {k.get('roof_pct')} ({k.get('source') or k.get('why')})")
PY
done
timeout 150 env JAX_FETCH_EVERY=1 python3 benchmarks/cupti/jax_profile.py "$O/prof" 100 >"$O/prof.out" 2>&1; echo "jax profile: exit $?"
for t in "$O"/prof/plugins/profile/*/perfetto_trace.json.gz; do timeout 120 python3 -m gpuwhy trace "$t" | tail -4; echo "gpuwhy trace: exit $?"; done
timeout 150 python3 -m gpuwhy run --tracer cupti --out /tmp/jaxprof -- \
  python3 benchmarks/cupti/jax_profile.py "$O/prof-under" 50 >"$O/prof-under.txt" 2>&1
echo "jax profile under cupti: exit $?"; grep -i -A3 "JAX's profiler\|verdict" "$O/prof-under.txt" | head -12
gzip -f "$O"/*.records.json
} 2>&1 | tee "$O/log.txt"
for f in "$O"/prof/plugins/profile/*/perfetto_trace.json.gz; do mv "$f" "$R/prof.perfetto_trace.json.gz"; done
rm -rf "$O/prof" "$O/prof-under"
tar -czf "$R/jax.tar.gz" -C /tmp jaxcheck; cp "$O/log.txt" "$R/log.txt"; ls -la "$R"
