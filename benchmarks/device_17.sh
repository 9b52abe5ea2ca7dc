#!/usr/bin/env bash
# Issue 17 on the GPU machine (repo root, PYTHONPATH=src): run the trace tests on the committed real
# traces, read every real trace with `gpuwhy trace`, and time a 500 MB trace against a bare json.load.
# RECORD=1 also records the five trace cases again (benchmarks/make_trace_cases.py) into traces/ of the
# .tgz and reads them (trace_out/new_*), without touching tests/fixtures/real/.
# Logs go to $OUT/device_17.tgz (one file); a short table is printed last.
# Usage: bash benchmarks/device_17.sh   (about 2 minutes; 2.5 with RECORD=1)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
W=/tmp/gpuwhy-device-17; rm -rf "$W"; mkdir -p "$W/traces" "$W/trace_out"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
declare -A status
step() {  # name, limit_s, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "=== $name: $*"
  timeout "$limit" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  tail -n 8 "$W/$name.log"
  status[$name]="rc=$rc $((SECONDS - t0))s"
}
read_one() {  # trace file, output name
  python3 -m gpuwhy trace "$1" --json > "$W/trace_out/$2.out.json" 2>&1
  python3 -m gpuwhy trace "$1" > "$W/trace_out/$2.txt" 2>&1
  echo "$2 rc=$?"
}
export -f read_one; export W

if [ "${RECORD:-0}" = 1 ]; then
  step record 150 python3 benchmarks/make_trace_cases.py "$W/traces"
fi
step tests 120 python3 -m pytest -q -p no:cacheprovider -rs tests/test_torch_trace_real.py tests/test_torch_trace.py \
  tests/test_torch_trace_causes.py tests/test_trace_stream.py
step read 90 bash -c 'for f in tests/fixtures/real/trace_*.json*; do read_one "$f" "$(basename "$f")"; done;
  for f in "$W"/traces/*.json.gz; do [ -e "$f" ] && read_one "$f" "new_$(basename "$f")"; done; true'
step bench 200 python3 benchmarks/bench_trace_real.py --mb "${BENCH_MB:-500}" --repeat 3 --out "$W/bench_trace_real.json"

{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; python3 -c 'import sys, numpy; print(sys.version, numpy.__version__)'; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_17.tgz" -C "$W" .
echo
echo "=== issue 17 summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in record tests read bench; do printf '%-7s %s\n' "$s" "${status[$s]:-skipped}"; done
echo "tgz: $(tar tzf "$OUTDIR/device_17.tgz" | grep -c '\.json\.gz$') recorded traces, $(tar tzf "$OUTDIR/device_17.tgz" | grep -c 'trace_out/.*\.txt$') trace reports"
python3 - "$W" <<'PY'
import json, sys
from pathlib import Path
w = Path(sys.argv[1])
print(f"{'trace':38s} {'verdict':20s} {'cause':13s} {'idle%':>6s}  largest causes (% of span)")
for p in sorted((w / "trace_out").glob("*.out.json")):
    try:
        d = json.loads(p.read_text())
    except ValueError:
        print(f"{p.name[:-9]:38s} {p.read_text().strip()[:60]}")
        continue
    dev = d["devices"][0] if d.get("devices") else None
    causes = ", ".join(f"{c['key']} {c['span_pct']:.0f}" for c in (dev["idle"]["causes"][:3] if dev else []))
    print(f"{p.name[:-9]:38s} {d['verdict']:20s} {str(d.get('cause')):13s} {dev['idle_pct'] if dev else 0:6.1f}  {causes}")
b = w / "bench_trace_real.json"
if b.exists():
    r = json.loads(b.read_text())
    runs = r["runs"]
    print(f"bench {r['trace']['file_mb']:.0f} MB: json.load {runs['json']['seconds']:.2f} s {runs['json']['peak_rss_mb']:.0f} MB; "
          f"paused-gc json.load {runs['json-nogc']['seconds']:.2f} s; gpuwhy {runs['gpuwhy']['seconds']:.2f} s "
          f"{runs['gpuwhy']['peak_rss_mb']:.0f} MB -> {r['ratio_seconds']:.2f}x time "
          f"({r['ratio_seconds_vs_paused_gc']:.2f}x the paused-gc load), {r['ratio_peak_rss']:.2f}x memory, "
          f"{'pass' if r['pass'] else 'FAIL'} (target <= {r['target_ratio']}x; aim <= 1.3x)")
PY
