#!/usr/bin/env bash
# Issue 14 on the GPU machine: `gpuwhy ncu -- python3 tests/fixtures/real/ncu_mix.py` end to end
# (no metric list given), the .ncu-rep it kept read back, and the failure cases (no ncu, no GPU).
# Usage (repo root, on the device): bash benchmarks/device_ncu.sh
# Logs and the exports go to $OUT/device_ncu.tgz; a short table is printed last. Under 4 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=120
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache-ncu}"
W=/tmp/gpuwhy-device-ncu; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
PY=$(command -v python3)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
export PATH="$(dirname "$NCU"):$PATH"
declare -A rc

step() {  # name, limit_s, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "=== $name: $*"
  timeout "$limit" "$@" >"$W/$name.out" 2>"$W/$name.err"
  rc[$name]="exit $? in $((SECONDS - t0))s"
  tail -n 40 "$W/$name.out"; tail -n 8 "$W/$name.err"
}

{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; "$NCU" --version; } > "$W/env.txt" 2>&1

# 1. the run, as a user types it (the metric list is gpuwhy's choice for this GPU), kept as $W/mix.*
step run 150 "$PY" -m gpuwhy ncu --export "$W/mix" -- "$PY" tests/fixtures/real/ncu_mix.py
# 2. the same export as JSON (no second profiling run), and the .ncu-rep it kept read back
step json 60 "$PY" -m gpuwhy ncu "$W/mix.csv" --json
cp "$W/json.out" "$W/mix.json"
step rep 90 "$PY" -m gpuwhy ncu "$W/mix.ncu-rep" --top 20
step rep_module 30 "$PY" -c "from gpuwhy.importers.ncu.rep import ncu_report_dirs, import_ncu_report; print('dirs', ncu_report_dirs()); m, w = import_ncu_report(); print('ncu_report:', m is not None, w)"
# 3. without ncu (PATH and CUDA_HOME without it), and without a GPU: exit 3, one line each
step no_ncu 30 env PATH=/usr/bin:/bin CUDA_HOME=/nonexistent "$PY" -m gpuwhy ncu -- "$PY" tests/fixtures/real/ncu_mix.py
step no_gpu 60 env CUDA_VISIBLE_DEVICES= "$PY" -m gpuwhy ncu -- "$PY" tests/fixtures/real/ncu_mix.py
# 4. the cached metric list: a second run must not query again
step cached 150 "$PY" -m gpuwhy ncu --export "$W/mix2" --json -- "$PY" tests/fixtures/real/ncu_mix.py

# the .ncu-rep can be large; keep it only when small enough to come back
for f in "$W"/*.ncu-rep; do [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 30000000 ] && gzip -f "$f"; done
tar czf "$OUTDIR/device_ncu.tgz" -C "$W" . 2>/dev/null

echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in run json rep rep_module no_ncu no_gpu cached; do printf '%-10s %s\n' "$s" "${rc[$s]:-skipped}"; done
echo "no_ncu: $(tail -n 1 "$W/no_ncu.err")"
echo "no_gpu: $(tail -n 1 "$W/no_gpu.err")"
"$PY" - "$W/mix.json" "$W/cached.out" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as exc:  # noqa: BLE001
    print(f"no JSON from the run ({exc})"); sys.exit(0)
for d in doc.get("devices", []):
    print(f"GPU {d['device']} {d['name']} -> {d['sheet']}: {d['launches']} launches, classified {d['classified_fraction']:.3f} "
          f"of {d['total_time_s'] * 1e3:.3f} ms; ncu SOL agrees on {d['ncu_agreement']['fraction']}")
    print(f"{'kernel':44} {'regime':9} {'basis':11} {'time':>9} {'% roof':>6}  ncu says")
    for k in d["kernels"]:
        sol = k.get("ncu_sol") or {}
        t = f"{k['total_time_s'] * 1e6:.1f}us" if k["total_time_s"] else "n/a"
        roof = f"{k['roof_pct']:.0f}" if k["roof_pct"] is not None else "n/a"
        print(f"{k['name'][:44]:44} {str(k['regime']):9} {k['basis']:11} {t:>9} {roof:>6}  {sol.get('verdict')} agrees={sol.get('agrees')}")
try:
    run2 = json.load(open(sys.argv[2]))["run"]
    print("second run metric list from:", run2["metrics_source"])
except Exception as exc:  # noqa: BLE001
    print(f"second run: no JSON ({exc})")
EOF
