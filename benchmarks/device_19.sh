#!/usr/bin/env bash
# Issue 19 on a GPU machine: what only a real driver shows. Run from the repo root with
#   PYTHONPATH=src bash benchmarks/device_19.sh
# Writes logs under $OUT (one .tgz) and prints a short table last; about 2 minutes.
#
# 1. probe names the NVRTC it loaded (version and library file);
# 2. Ctrl-C during a measurement (bench --sweep) exits 130 with one line within ~1 s,
#    and the GPU memory it held is free again (nvidia-smi memory.used before/after);
# 3. Ctrl-C during an uncached NVRTC compile (bench --compile-only, GPU's own arch) likewise;
# 4. a closed stdout and /dev/full on a GPU command (probe) give 0 and 74;
# 5. check --json holds numbers (measured_gbs, threshold_us) on the real GPU.
set -u
OUT=${OUT:-/tmp/out19}
LOG="$OUT/device19"
mkdir -p "$LOG"
PY=${PY:-python3}
G="$PY -m gpuwhy"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$LOG/table.txt"; }
mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1; }

interrupt() {  # interrupt NAME AFTER_S ARGS... -> "rc=.. took=..s mem_before=.. mem_after=.. stderr=.."
  local name=$1 after=$2; shift 2
  local before; before=$(mem)
  $G "$@" >"$LOG/$name.out" 2>"$LOG/$name.err" &
  local pid=$!
  sleep "$after"
  local t0; t0=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid"; local rc=$?
  local t1; t1=$(date +%s.%N)
  sleep 1
  local after_mem; after_mem=$(mem)
  printf 'rc=%s took=%.2fs mem_MiB before=%s after=%s stderr="%s"' "$rc" "$($PY -c "print($t1 - $t0)")" "$before" "$after_mem" \
    "$(tail -1 "$LOG/$name.err")"
}

$G probe >"$LOG/probe.txt" 2>&1
row "probe: NVRTC line" "$(grep -m1 'NVRTC' "$LOG/probe.txt" | tr -s ' ')"

row "Ctrl-C during bench --sweep (after 8 s)" "$(interrupt sweep 8 bench --sweep --no-save)"
export GPUWHY_NO_CACHE=1
row "Ctrl-C during NVRTC compile (after 2 s)" "$(interrupt compile 2 bench --compile-only)"
unset GPUWHY_NO_CACHE

( $G probe | true ) 2>"$LOG/pipe.err"; row "probe | true" "rc=${PIPESTATUS[0]} stderr_bytes=$(wc -c <"$LOG/pipe.err")"
$G probe >/dev/full 2>"$LOG/full.err"; row "probe > /dev/full" "rc=$? $(tail -1 "$LOG/full.err")"

$G check --json >"$LOG/check.json" 2>"$LOG/check.err"; rc=$?
row "check --json (numbers with units in keys)" "rc=$rc $($PY -c "
import json,sys
d=json.load(open('$LOG/check.json'))['devices'][0]['checks']
c={x['name']:x for x in d}
print('dram measured_gbs=%s threshold_gbs=%s; launch measured_us=%s threshold_us=%s' % (
  c['dram_bandwidth'].get('measured_gbs'), c['dram_bandwidth'].get('threshold_gbs'),
  c['launch_overhead'].get('measured_us'), c['launch_overhead'].get('threshold_us')))" 2>&1)"

$G classify --example vecadd --measured >"$LOG/classify.txt" 2>&1
row "classify --measured (engineering units)" "$(grep -m1 -E '^t_memory|^predicted' "$LOG/classify.txt" | tr -s ' ')"

tar -czf "$OUT/device19.tgz" -C "$OUT" device19 && rm -rf "$LOG"
echo
echo "issue 19 on the GPU:"
tar -xzOf "$OUT/device19.tgz" device19/table.txt
