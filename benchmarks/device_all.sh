#!/usr/bin/env bash
# Several device scripts in one call (device time is spent per call):
#   bash benchmarks/device_all.sh SCRIPT_NAME... (e.g. ncu baseline 20_select run hierarchy gputests)
# Each benchmarks/device_NAME.sh writes its .tgz into a folder NAME and its console output to NAME.log,
# all packed into $OUT/device_all.tgz; the last 25 lines of each go to stdout; a table of exit codes and times is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
A=/tmp/gpuwhy-device-all; rm -rf "$A"; mkdir -p "$A"
declare -A status
for n in "$@"; do
  t0=$SECONDS
  if [ "$n" = gputests ]; then
    echo "=== gputests: pytest -m gpu"
    PYTHONPATH="$PWD/src" timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -ra > "$A/gputests.log" 2>&1; rc=$?
    tail -n 12 "$A/gputests.log"
  else
    echo "=== $n: benchmarks/device_$n.sh"
    mkdir -p "$A/$n"
    OUT="$A/$n" timeout 360 bash "benchmarks/device_$n.sh" > "$A/$n.log" 2>&1; rc=$?
    tail -n 12 "$A/$n.log"
  fi
  status[$n]="rc=$rc $((SECONDS - t0))s"
done
tar czf "$OUTDIR/device_all.tgz" -C "$A" . 2>/dev/null
echo; echo "=== device_all summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for n in "$@"; do printf '%-12s %s\n' "$n" "${status[$n]}"; done
