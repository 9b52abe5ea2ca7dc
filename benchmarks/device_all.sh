#!/usr/bin/env bash
# Several device scripts in one call (device time is spent per call):
#   bash benchmarks/device_all.sh SCRIPT_NAME... (e.g. ncu baseline 20_select run hierarchy gputests)
# Each benchmarks/device_NAME.sh writes its own .tgz into $OUT; its console output goes to
# $OUT/device_all.log and its last 25 lines to stdout; a table of exit codes and times is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
declare -A status
for n in "$@"; do
  t0=$SECONDS
  if [ "$n" = gputests ]; then
    echo "=== gputests: pytest -m gpu"
    PYTHONPATH="$PWD/src" timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -ra > "$OUTDIR/gputests.log" 2>&1; rc=$?
    tail -n 25 "$OUTDIR/gputests.log"
  else
    echo "=== $n: benchmarks/device_$n.sh"
    timeout 360 bash "benchmarks/device_$n.sh" > "/tmp/device_all_$n.log" 2>&1; rc=$?
    cat "/tmp/device_all_$n.log" >> "$OUTDIR/device_all.log"
    tail -n 25 "/tmp/device_all_$n.log"
  fi
  status[$n]="rc=$rc $((SECONDS - t0))s"
done
echo; echo "=== device_all summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for n in "$@"; do printf '%-12s %s\n' "$n" "${status[$n]}"; done
