#!/usr/bin/env bash
# One call on the GPU machine: GPU tests, probe, benchmarks and peer comparisons.
# Usage (repo root, on the device): bash benchmarks/device_check.sh [steps...]
#   steps: tests probe bench compute peers check cold (default: all)
# Writes JSON and logs under $OUT (or ./out), prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUT="${OUT:-$PWD/out}"; mkdir -p "$OUT"
steps="${*:-tests probe bench compute peers check cold}"
declare -A status
run_step() {  # name, command...
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name: $*"
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.log"
  status[$name]="rc=$rc $((SECONDS - t0))s"
}
for s in $steps; do
  case $s in
    tests)   run_step tests python3 -m pytest -q -m gpu -p no:cacheprovider ;;
    probe)   run_step probe bash -c 'python3 -m gpuwhy probe; python3 -m gpuwhy probe --json > "$OUT/probe.json"' ;;
    bench)   run_step bench bash -c 'python3 -m gpuwhy bench --sweep --json > "$OUT/bench_sweep.json" && python3 -m gpuwhy bench --quick' ;;
    compute) run_step compute bash -c 'python3 -m gpuwhy bench --compute --json > "$OUT/bench_compute.json"' ;;
    peers)   run_step peers bash -c 'python3 benchmarks/bench_memory_peers.py; python3 benchmarks/bench_compute_peers.py' ;;
    check)   run_step check bash -c 'python3 -m gpuwhy check --junit "$OUT/check.xml"; echo "exit $?"; python3 -m gpuwhy check --min-bandwidth 0.99 --junit "$OUT/check_fail.xml"; echo "exit $?"' ;;
    cold)    run_step cold python3 benchmarks/cold_start.py ;;
  esac
done
echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in $steps; do printf '%-8s %s\n' "$s" "${status[$s]:-skipped}"; done
