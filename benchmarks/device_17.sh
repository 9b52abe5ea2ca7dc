#!/usr/bin/env bash
# Issue 17 on the GPU machine (repo root, PYTHONPATH=src): record the trace cases the
# repository lacks, read every real trace with `gpuwhy trace`, run the trace tests with the
# new traces in place, and time a 500 MB trace against a bare json.load.
# Logs and traces go to $OUT/device_17.tgz (one file); a short table is printed last.
# Usage: bash benchmarks/device_17.sh   (about 3 minutes)
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

step record 150 python3 benchmarks/make_trace_cases.py "$W/traces"
cp "$W"/traces/*.json.gz tests/fixtures/real/ 2>/dev/null
step tests 90 python3 -m pytest -q -p no:cacheprovider -rs tests/test_torch_trace_real.py tests/test_torch_trace.py tests/test_torch_trace_causes.py
step read 90 bash -c 'for f in tests/fixtures/real/trace_*.json*; do b=$(basename "$f"); python3 -m gpuwhy trace "$f" --json > "'"$W"'/trace_out/$b.out.json" 2>&1; python3 -m gpuwhy trace "$f" > "'"$W"'/trace_out/$b.txt" 2>&1; echo "$b rc=$?"; done'
step bench 240 python3 benchmarks/bench_trace_real.py --mb "${BENCH_MB:-500}" --out "$W/bench_trace_real.json"

{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_17.tgz" -C "$W" .
echo
echo "=== issue 17 summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
for s in record tests read bench; do printf '%-7s %s\n' "$s" "${status[$s]:-skipped}"; done
python3 - "$W" <<'PY'
import json, sys
from pathlib import Path
w = Path(sys.argv[1])
print(f"{'trace':34s} {'verdict':20s} {'cause':13s} {'idle%':>6s}  largest causes (% of span)")
for p in sorted((w / "trace_out").glob("*.out.json")):
    try:
        d = json.loads(p.read_text())
    except ValueError:
        print(f"{p.name[:-9]:34s} {p.read_text().strip()[:60]}")
        continue
    dev = d["devices"][0] if d.get("devices") else None
    causes = ", ".join(f"{c['key']} {c['span_pct']:.0f}" for c in (dev["idle"]["causes"][:3] if dev else []))
    print(f"{p.name[:-9]:34s} {d['verdict']:20s} {str(d.get('cause')):13s} {dev['idle_pct'] if dev else 0:6.1f}  {causes}")
b = w / "bench_trace_real.json"
if b.exists():
    r = json.loads(b.read_text())
    runs = r["runs"]
    print(f"bench {r['trace']['file_mb']:.0f} MB: json.load {runs['json']['seconds']:.1f} s {runs['json']['peak_rss_mb']:.0f} MB; "
          f"paused-gc json.load {runs['json-nogc']['seconds']:.1f} s; gpuwhy {runs['gpuwhy']['seconds']:.1f} s "
          f"{runs['gpuwhy']['peak_rss_mb']:.0f} MB -> {r['ratio_seconds']:.2f}x time, {r['ratio_peak_rss']:.2f}x memory, "
          f"{'pass' if r['pass'] else 'FAIL'}")
PY
