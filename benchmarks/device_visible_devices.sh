#!/usr/bin/env bash
# Issue 31 on a one-GPU machine (repo root): `probe`, `bench --quick` and `check` under each
# CUDA_VISIBLE_DEVICES form that hides or repeats the GPU (1, -1, empty, a missing UUID, 0,0) and
# under a UUID prefix of the real GPU (from `nvidia-smi -L`), each with its exit code and the first
# line of its message. Each command runs under `timeout 60`; the whole script takes under 4 minutes
# (the error forms end in seconds; only the prefix form measures).
# Logs: $OUT/visible_devices/<form>_<command>.log (stdout and stderr), env.txt, table.txt; the
# table is printed last.
# Usage: bash benchmarks/device_visible_devices.sh   (PYTHON=... to pick the interpreter)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100 GPUWHY_NO_CACHE=1
PY="${PYTHON:-python3}"
LOGS="${OUT:-$PWD/out}/visible_devices"
mkdir -p "$LOGS"
TABLE="$LOGS/table.txt"
: > "$TABLE"

# The real GPU's UUID, cut to a prefix CUDA must accept (GPU- and the first 8 hex digits).
REAL_UUID="$(nvidia-smi -L 2>/dev/null | sed -n 's/.*(UUID: \(GPU-[0-9a-fA-F-]*\)).*/\1/p' | head -n 1)"
PREFIX="${REAL_UUID:0:12}"

# label|value (the value may be empty: the empty form sets the variable to "")
FORMS=(
  "one|1"
  "minus_one|-1"
  "empty|"
  "missing_uuid|GPU-00000000-0000-0000-0000-000000000000"
  "repeat|0,0"
  "uuid_prefix|$PREFIX"
)
COMMANDS=("probe" "bench --quick" "check")

row() {  # form value command rc message
  printf '%-13s %-16.16s %-13s %3s  %s\n' "$1" "$2" "$3" "$4" "$5" | tee -a "$TABLE" >/dev/null
}

{ nvidia-smi -L; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; "$PY" --version; } > "$LOGS/env.txt" 2>&1
row form value command rc "first line of the message (stderr, else stdout)"
t_start=$SECONDS
for form in "${FORMS[@]}"; do
  label="${form%%|*}"; value="${form#*|}"
  if [ "$label" = uuid_prefix ] && [ -z "$PREFIX" ]; then
    row "$label" "(none)" "-" "-" "skipped: nvidia-smi -L names no GPU UUID here"
    continue
  fi
  for cmd in "${COMMANDS[@]}"; do
    log="$LOGS/${label}_${cmd%% *}.log"
    echo "=== CUDA_VISIBLE_DEVICES='$value' gpuwhy $cmd" >&2
    # shellcheck disable=SC2086  # $cmd is the command and its options, split on purpose
    CUDA_VISIBLE_DEVICES="$value" timeout 60 "$PY" -m gpuwhy $cmd >"$log.out" 2>"$log.err"
    rc=$?
    { echo "# CUDA_VISIBLE_DEVICES='$value' gpuwhy $cmd -> exit $rc"; echo "## stdout"; cat "$log.out";
      echo "## stderr"; cat "$log.err"; } > "$log"
    first="$(grep -m 1 -v '^[[:space:]]*$' "$log.err")"
    [ -n "$first" ] || first="$(grep -m 1 -v '^[[:space:]]*$' "$log.out")"
    [ "$rc" = 124 ] && first="(timed out after 60 s) $first"
    rm -f "$log.out" "$log.err"
    row "$label" "${value:-(empty)}" "$cmd" "$rc" "${first:0:400}"
  done
done
echo "total $((SECONDS - t_start)) s; logs in $LOGS" >> "$TABLE"
echo
cat "$TABLE"
