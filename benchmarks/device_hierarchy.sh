#!/usr/bin/env bash
# Issue 15 on the GPU machine: the memory hierarchy on the roofline, in one call (< 4 minutes).
# Usage (repo root, on the device): bash benchmarks/device_hierarchy.sh
#   1. gpuwhy bench --latency          the latency ladder (L1, near/far L2, DRAM), saved in the profile
#   2. gpuwhy bench --sweep            DRAM sweep, compute ceilings and the L2/shared/L1 ceilings, saved
#   3. benchmarks/bench_l2_peers.py    L2 read vs a CuPy 16-byte-vector kernel and torch.sum on the same
#                                      L2-resident set (target >= 0.98x), shared memory vs 128 B/clk/SM
#                                      x SMs x the sampled clock (target >= 90%)
#   4. benchmarks/hierarchy_measure.py gpuwhy.measure: an L2-resident kernel (working_set=) judged against
#                                      L2; the naive vecadd and a small grid judged latency-bound
#   5. plots and classify              roofline with one slope per level, classify --working-set, --plot
#   6. GPU tests                       pytest -m gpu on the new files
# Every log goes into $OUT/hierarchy.tgz (at most 8 files come back); a short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=200
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache-hierarchy}"
W=/tmp/gpuwhy-device-hierarchy; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
declare -A status
order=()
run_step() {  # name, limit_s, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  order+=("$name")
  echo "=== $name: $*"
  timeout "$limit" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  tail -n 30 "$W/$name.log"
  status[$name]="rc=$rc $((SECONDS - t0))s"
}
run_step latency 60 bash -c "$PY -m gpuwhy bench --latency --json > $W/latency.json && $PY -c 'import json; d=json.load(open(\"$W/latency.json\")); print(d[\"summary\"])'"
run_step sweep 150 bash -c "$PY -m gpuwhy bench --sweep --json > $W/bench_sweep.json && $PY -c 'import json,sys; d=json.load(open(\"$W/bench_sweep.json\")); c=d.get(\"caches\") or {}; print(c.get(\"summary\")); [print(r[\"level\"], r[\"op\"], r[\"working_set_bytes\"], round(r[\"gbs\"]), r[\"sm_clock_mhz\"], r[\"pct_of_limit\"], r[\"kernel\"], r[\"grid\"], r[\"block\"]) for r in c.get(\"rows\", [])]; print(d[\"summary\"])' && ls $XDG_CACHE_HOME/gpuwhy/profiles/*/ && cp \$(ls -t $XDG_CACHE_HOME/gpuwhy/profiles/*/*.json | head -1) $W/profile.json"
run_step caches 60 $PY -m gpuwhy bench --caches --no-save
run_step peers 120 env OUT="$W" $PY benchmarks/bench_l2_peers.py --rounds 3
run_step measure 120 env OUT="$W" $PY benchmarks/hierarchy_measure.py
run_step plots 90 bash -c "set -e; \
  $PY -m gpuwhy roofline --measured --dtype fp32,bf16 --point vecadd:268435456:3221225472:0.75ms --point gemm-bf16:1.1e12:402653184:1.45ms:bf16 --out $W/roofline_levels.png; \
  $PY -m gpuwhy roofline --measured --dtype fp32 --point vecadd:268435456:3221225472:0.75ms --json > $W/roofline_levels.json; \
  $PY -m gpuwhy roofline --measured --dtype fp32; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --working-set 32MiB --measured; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --working-set 32MiB --measured --plot $W/classify_l2.png --json > $W/classify_l2.json; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --gpu 'H100 SXM' --working-set 32MiB; \
  $PY -m gpuwhy classify --bytes 3.2GB --flops 268M --time 0.75ms --working-set 3.2GB --measured; \
  $PY -m gpuwhy probe --json > $W/probe.json; \
  $PY -m gpuwhy report --out $W/report_levels.html --probe $W/probe.json --bench $W/bench_sweep.json --latency $W/latency.json --point vecadd:268435456:3221225472:0.75ms"
run_step tests 150 $PY -m pytest -q -m gpu -p no:cacheprovider -ra tests/test_cache_bandwidth_gpu.py tests/test_hierarchy_gpu.py
{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/hierarchy.tgz" -C "$W" . 2>/dev/null
echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in "${order[@]}"; do printf '%-8s %s\n' "$s" "${status[$s]:-skipped}"; done
grep -h "caches:" "$W/sweep.log" 2>/dev/null | tail -n 1
sed -n '/^check /,$p' "$W/peers.log" 2>/dev/null
grep -hE "^(ok |NO )|verdicts as expected" "$W/measure.log" 2>/dev/null
