#!/usr/bin/env bash
# One call on the GPU machine: GPU tests, probe, benchmarks, peer comparisons, check, fixtures.
# Usage (repo root, on the device): bash benchmarks/device_check.sh [steps...]
#   steps: tests probe bench peers check main cold diag exports compile (default: tests probe bench peers check main cold)
# Every step's output goes to a log; all of it is packed into $OUT/device_check.tgz
# (the device returns at most 8 files) and a short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=200
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
W=/tmp/gpuwhy-device-check; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
steps="${*:-tests probe bench peers check main cold}"
declare -A status
run_step() {  # name, limit_s, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "=== $name: $*"
  timeout "$limit" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$W/$name.log"
  status[$name]="rc=$rc $((SECONDS - t0))s"
}
for s in $steps; do
  case $s in
    tests)   run_step tests 240 env GPUWHY_OCCUPANCY_RECORD="$W/occupancy.json" python3 -m pytest -q -m gpu -p no:cacheprovider -ra ;;
    probe)   run_step probe 60 bash -c "python3 -m gpuwhy probe && python3 -m gpuwhy probe --json > $W/probe.json" ;;
    bench)   run_step bench 240 bash -c "python3 -m gpuwhy bench --sweep --csv $W/sweep.csv && python3 -m gpuwhy bench --sweep --json > $W/bench_sweep.json && python3 -m gpuwhy bench --quick --json > $W/bench_quick.json && /usr/bin/time -f 'quick wall %e s' python3 -m gpuwhy bench --quick && /usr/bin/time -f 'sweep wall %e s' python3 -m gpuwhy bench --sweep --no-save > /dev/null && python3 -m gpuwhy classify --example vecadd --measured && python3 -m gpuwhy classify --example gemm-bf16-8192 --measured" ;;
    peers)   run_step peers 240 bash -c "OUT=$W python3 benchmarks/bench_memory_peers.py; python3 benchmarks/bench_compute_peers.py --json $W/compute_peers.json" ;;
    check)   run_step check 120 bash -c "/usr/bin/time -f 'check wall %e s' python3 -m gpuwhy check --junit $W/check.xml; echo \"exit \$?\"; python3 -m gpuwhy check --min-bandwidth 0.99 --junit $W/check_fail.xml; echo \"exit \$?\"; python3 -m gpuwhy check --json > $W/check.json; echo \"exit \$?\"" ;;
    main)    run_step main 120 bash -c "python3 -m gpuwhy; echo \"exit \$?\"; CUDA_VISIBLE_DEVICES=-1 python3 -m gpuwhy probe; echo \"exit \$?\"; python3 -m gpuwhy bench --compile-only" ;;
    cold)    run_step cold 60 env OUT="$W" python3 benchmarks/cold_start.py ;;
    roofline) run_step roofline 240 bash -c "python3 -m gpuwhy bench --compute --json > $W/bench_compute.json && python3 -m gpuwhy bench --roofline --json > $W/roofline_sweep.json && python3 -m gpuwhy roofline --measured --dtype fp32 && python3 -m gpuwhy roofline --measured --dtype fp32,bf16 --out $W/roofline.png && python3 -m gpuwhy classify --example gemm-bf16-8192 --measured && python3 -m gpuwhy classify --example vecadd --measured --json > $W/classify_measured.json && python3 -m gpuwhy classify --example vecadd --measured --plot $W/classify_vecadd.png" ;;
    hierarchy) run_step hierarchy 180 bash -c "python3 -m gpuwhy bench --latency && python3 -m gpuwhy bench --latency --json > $W/latency.json && python3 -m gpuwhy bench --link && python3 -m gpuwhy bench --link --json > $W/link.json" ;;
    report)  run_step report 120 bash -c "python3 -m gpuwhy check --json > $W/check_report.json; python3 -m gpuwhy probe --json > $W/probe_report.json; python3 -m gpuwhy bench --sweep --json > $W/bench_report.json && python3 -m gpuwhy report --out $W/report.html --probe $W/probe_report.json --bench $W/bench_report.json --check $W/check_report.json \$( [ -f $W/latency.json ] && echo --latency $W/latency.json ) \$( [ -f $W/link.json ] && echo --link $W/link.json ) --point vecadd:268435456:3221225472:0.75ms --point gemm-bf16:1.1e12:402653184:1.45ms" ;;
    diag)    run_step diag 420 python3 benchmarks/make_diag_fixtures.py "$W/real" ;;
    exports) run_step exports 540 python3 benchmarks/make_real_exports.py "$W/exports" ;;
    compile) run_step compile 120 bash -c "for a in sm_80 sm_89 sm_90 sm_100 sm_120; do python3 -m gpuwhy bench --compile-only --arch \$a | tail -n 3; done" ;;
  esac
done
{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_check.tgz" -C "$W" . 2>/dev/null
echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in $steps; do printf '%-8s %s\n' "$s" "${status[$s]:-skipped}"; done
