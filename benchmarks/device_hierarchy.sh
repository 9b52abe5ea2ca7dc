#!/usr/bin/env bash
# Issue 15 on the GPU machine: the memory hierarchy on the roofline, in one call (about 2 minutes).
# Usage (repo root, on the device): bash benchmarks/device_hierarchy.sh
#   1. sass                            the cache kernels compiled by the device's NVRTC: every shared/L1/L2
#                                      load in the machine code (8 per rep; nothing hoisted or merged)
#   2. gpuwhy bench --latency          the latency ladder (L1, near/far L2, DRAM), saved in the profile
#   3. gpuwhy bench --sweep            DRAM sweep, compute ceilings and the L2/shared/L1 ceilings, saved
#                                      (a family that fails is "not reported: why" and the rest is saved)
#   4. gpuwhy bench --caches           the cache ceilings alone, as a user sees them
#   5. benchmarks/bench_l2_peers.py    L2 read vs a CuPy 16-byte-vector kernel and torch.sum on the same
#                                      L2-resident set (target >= 0.98x), shared memory vs 128 B/clk/SM
#                                      x SMs x the sampled clock (target 0.90..1.03), L1 (never > 1.03)
#   6. benchmarks/hierarchy_measure.py gpuwhy.measure: an L2-resident kernel (working_set=) judged against
#                                      L2; the naive vecadd and a small grid judged latency-bound
#   7. plots and classify              roofline with one slope per level, classify --working-set, --plot
#   8. GPU tests                       pytest -m gpu on the new files
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
run_step sass 40 $PY -m pytest -q -p no:cacheprovider -ra tests/test_cache_bandwidth.py -k "machine_code or inside_the_rep or schedule or sums_follow"
run_step latency 45 bash -c "$PY -m gpuwhy bench --latency --json > $W/latency.json && $PY -c 'import json; d=json.load(open(\"$W/latency.json\")); print(d[\"summary\"])'"
# what the sweep measured and saved: the cache rows (clock, % of the limit), the families not
# reported (why), and the cache figures of the profile the later steps judge against
cat > "$W/sweep_summary.py" <<'PYEOF'
import glob, json, os, shutil, sys
w = sys.argv[1]
d = json.load(open(os.path.join(w, "bench_sweep.json")))
print(d.get("summary"))
c = d.get("caches") or {}
for r in c.get("rows", []):
    pct = "-" if r["pct_of_limit"] is None else f"{r['pct_of_limit']:.1f}% of {r['clock_limit_gbs']:,.0f}"
    print(f"  {r['level']:<6} {r['op']:<10} {r['working_set_bytes']:>10,} B {r['gbs']:>9,.0f} GB/s  clk {r['sm_clock_mhz']} "
          f"(max {r['sm_clock_max_mhz']})  {pct}  {r['kernel']} {r['grid']}x{r['block']} x{r['repeat']}")
for f in c.get("not_reported", []):
    print(f"NOT REPORTED {f['level']} {f['op']}: {f['reason']}")
print(c.get("summary"))
newest = max(glob.glob(os.path.join(os.environ["XDG_CACHE_HOME"], "gpuwhy", "profiles", "*", "*.json")), key=os.path.getmtime)
shutil.copy(newest, os.path.join(w, "profile.json"))
p = json.load(open(newest))
keys = ("dram_bandwidth_gbs", "l2_read_bandwidth_gbs", "l2_read_write_bandwidth_gbs", "shared_bandwidth_gbs",
        "shared_clock_limit_gbs", "l1_bandwidth_gbs", "cache_sm_clock_mhz", "cache_date")
print("profile: " + ", ".join(f"{k}={p.get(k) if not isinstance(p.get(k), float) else round(p[k])}" for k in keys))
PYEOF
run_step sweep 110 bash -c "$PY -m gpuwhy bench --sweep --json > $W/bench_sweep.json; rc=\$?; echo bench --sweep rc=\$rc; $PY $W/sweep_summary.py $W; exit \$rc"
run_step caches 40 $PY -m gpuwhy bench --caches --no-save
run_step peers 60 env OUT="$W" $PY benchmarks/bench_l2_peers.py --rounds 3
run_step measure 60 env OUT="$W" $PY benchmarks/hierarchy_measure.py
run_step plots 60 bash -c "set -e; \
  $PY -m gpuwhy roofline --measured --dtype fp32,bf16 --point vecadd:268435456:3221225472:0.75ms --point gemm-bf16:1.1e12:402653184:1.45ms:bf16 --out $W/roofline_levels.png; \
  $PY -m gpuwhy roofline --measured --dtype fp32 --point vecadd:268435456:3221225472:0.75ms --json > $W/roofline_levels.json; \
  $PY -m gpuwhy roofline --measured --dtype fp32; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --working-set 32MiB --measured; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --working-set 32MiB --measured --plot $W/classify_l2.png --json > $W/classify_l2.json; \
  $PY -m gpuwhy classify --bytes 32MiB --flops 8M --time 9us --gpu 'H100 SXM' --working-set 32MiB; \
  $PY -m gpuwhy classify --bytes 3.2GB --flops 268M --time 0.75ms --working-set 3.2GB --measured; \
  $PY -m gpuwhy probe --json > $W/probe.json; \
  $PY -m gpuwhy report --out $W/report_levels.html --probe $W/probe.json --bench $W/bench_sweep.json --latency $W/latency.json --point vecadd:268435456:3221225472:0.75ms"
run_step tests 60 $PY -m pytest -q -m gpu -p no:cacheprovider -ra tests/test_cache_bandwidth_gpu.py tests/test_hierarchy_gpu.py
{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/hierarchy.tgz" -C "$W" . 2>/dev/null
echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in "${order[@]}"; do printf '%-8s %s\n' "$s" "${status[$s]:-skipped}"; done
tail -n 1 "$W/sass.log" 2>/dev/null | sed 's/^/sass: /'
grep -hE "^caches:|^NOT REPORTED|^profile:" "$W/sweep.log" 2>/dev/null
sed -n '/^check /,$p' "$W/peers.log" 2>/dev/null
grep -h "not reported:" "$W/peers.log" 2>/dev/null
grep -hE "^(ok |NO )|verdicts as expected" "$W/measure.log" 2>/dev/null
