#!/usr/bin/env bash
# Issue 20 (first half) on the GPU machine: -i/--id as nvidia-smi reads it, CUDA_VISIBLE_DEVICES,
# --csv, and every --json document of probe/bench/check against docs/schema/.
# Usage (repo root, on the device): bash benchmarks/device_20_select.sh     (about 2 minutes)
# Logs and documents are packed into $OUT/device_20_select.tgz; a table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache-20}"
unset CUDA_VISIBLE_DEVICES
W=/tmp/gpuwhy-device-20; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
G="python3 -m gpuwhy"
declare -a rows
row() {  # name, expected exit code, command...
  local name=$1 want=$2; shift 2
  local t0=$SECONDS
  "$@" >"$W/$name.out" 2>"$W/$name.err"
  local rc=$?
  local verdict=ok; [ "$rc" = "$want" ] || verdict=FAIL
  rows+=("$(printf '%-26s rc=%-3s want=%-3s %-4s %3ss  %s' "$name" "$rc" "$want" "$verdict" $((SECONDS - t0)) "$(tail -n1 "$W/$name.err" | cut -c1-90)")")
}

nvidia-smi -L >"$W/nvidia-smi-L.txt" 2>&1
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader >"$W/nvidia-smi-query.csv" 2>&1
row probe-list 0 $G probe -L
row probe-json 0 $G probe --json
UUID=$(python3 -c "import json;print(json.load(open('$W/probe-json.out'))['devices'][0]['identity']['uuid'])" 2>/dev/null)
BUS=$(python3 -c "import json;print(json.load(open('$W/probe-json.out'))['devices'][0]['identity']['pci_bus_id'])" 2>/dev/null)
row probe-i-0 0 $G probe -i 0 --json
row probe-i-all 0 $G probe -i all --json
row probe-i-uuid-prefix 0 $G probe -i "${UUID:0:12}" --json
row probe-i-uuid-nogpu 0 $G probe -i "${UUID:4}" --json
row probe-i-bus 0 $G probe -i "$BUS" --json
row probe-i-cuda0 0 $G probe -i cuda:0 --json
row probe-i-past-last 2 $G probe -i 99
row probe-i-no-uuid 2 $G probe -i GPU-ffffffff
row probe-device-alias 0 $G probe --device 0
row cvd-minus-1 3 env CUDA_VISIBLE_DEVICES=-1 $G probe
row cvd-empty 3 env CUDA_VISIBLE_DEVICES= $G bench --kernel launch
row cvd-uuid 0 env CUDA_VISIBLE_DEVICES="$UUID" $G probe -i 0 --json
row cvd-hides-1 2 env CUDA_VISIBLE_DEVICES="$UUID" $G probe -i 1
row bench-i-uuid 0 $G bench --kernel launch -i "${UUID:0:12}" --no-save --json
row bench-i-all 0 $G bench --kernel launch -i all --no-save --json
row bench-quick-json 0 $G bench --quick --no-save --json
row bench-csv-file 0 $G bench --quick --no-save --csv "$W/bench_rows.csv"
row check-i-all 0 $G check -i all --json
row check-csv 0 $G check -i 0 --csv
row occupancy-i-0 0 $G occupancy --block-size 256 --registers 64 -i 0 --json
row main-json 0 $G --json
# every --json document made here against its published schema, and the units rule
row schemas 0 python3 - "$W" <<'EOF'
import json, sys
from pathlib import Path
sys.path.insert(0, "tests")
from test_schema import check_document
bad = 0
for p in sorted(Path(sys.argv[1]).glob("*.out")):
    text = p.read_text()
    if not text.lstrip().startswith("{"):
        continue
    try:
        check_document(json.loads(text))
        print(f"{p.name}: valid")
    except AssertionError as exc:
        bad += 1
        print(f"{p.name}: INVALID {str(exc)[:300]}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

tar -czf "$OUTDIR/device_20_select.tgz" -C "$W" .
echo "=== nvidia-smi -L"; cat "$W/nvidia-smi-L.txt"
echo "=== gpuwhy probe -L"; cat "$W/probe-list.out"
echo "=== check --csv"; cut -c1-160 "$W/check-csv.out"
echo "=== results (name, exit code, wanted, verdict, seconds, last stderr line)"
printf '%s\n' "${rows[@]}"
