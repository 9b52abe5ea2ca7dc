#!/usr/bin/env bash
# Issue 20 (second half) on the GPU machine: a baseline saved and compared on the same GPU, a
# planted regression caught, the four check states with real figures, and fleet summarize on
# the real documents. Usage (repo root, on the device): bash benchmarks/device_baseline.sh
#   1 save      gpuwhy check --save-baseline $W/base.json --json          expect exit 0 (warn allowed)
#   2 compare   gpuwhy check --baseline $W/base.json --json --junit       expect exit 0, every baseline_* pass
#   3 planted   the saved baseline's DRAM bandwidth edited up by 10%       expect exit 1 naming baseline_dram_bandwidth
#   4 bench     gpuwhy bench --quick --save-baseline, then --baseline      expect exit 0, exit 0
#   5 fleet     gpuwhy fleet summarize over the check documents above      expect exit 0 (one GPU, too few for outliers)
# Everything is packed into $OUT/device_baseline.tgz; a short table is printed last.
# Dry run without a GPU (the check steps judge a recorded run, the bench steps exit 3):
#   PY=/tmp/venv/bin/python CHECK_EXTRA="--recorded docs/results/raw/2026-12-01-h200-refactor/check.json" \
#   OUT=/tmp/out bash benchmarks/device_baseline.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=160
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
W=/tmp/gpuwhy-device-baseline; rm -rf "$W"; mkdir -p "$W/fleet"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
declare -A rc
step() {  # name, limit_s, gpuwhy arguments...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "=== $name: gpuwhy $*"
  timeout "$limit" "$PY" -m gpuwhy "$@" >"$W/$name.out" 2>"$W/$name.err"
  rc[$name]=$?
  tail -n 6 "$W/$name.err"
  echo "($((SECONDS - t0)) s, exit ${rc[$name]})"
}
PY="${PY:-python3}"
read -r -a EXTRA <<<"${CHECK_EXTRA:-}"

step save 90 check "${EXTRA[@]}" --save-baseline "$W/base.json" --json --junit "$W/save.xml"
step compare 90 check "${EXTRA[@]}" --baseline "$W/base.json" --json --junit "$W/compare.xml"
"$PY" - "$W/base.json" "$W/base_up10.json" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    sys.exit(f"no baseline to plant a regression in: {exc}")
for o in doc["observations"]:
    o["dram_bandwidth_gbs"] *= 1.10          # the baseline 10% faster: this run is a 9.1% regression
json.dump(doc, open(sys.argv[2], "w"), indent=2)
EOF
step planted 90 check "${EXTRA[@]}" --baseline "$W/base_up10.json" --json --junit "$W/planted.xml"
step bench_save 120 bench --quick --no-save --save-baseline "$W/bench_base.json"
step bench_compare 120 bench --quick --no-save --baseline "$W/bench_base.json" --json
cp "$W/save.out" "$W/fleet/save.json"; cp "$W/compare.out" "$W/fleet/compare.json"
[ -f "$W/bench_base.json" ] && cp "$W/bench_base.json" "$W/fleet/bench_base.json"
step fleet 60 fleet summarize "$W/fleet"
step fleet_json 60 fleet summarize "$W/fleet" --json
{ nvidia-smi; date -u +%FT%TZ; git log -1 --format='%H %s' 2>/dev/null; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_baseline.tgz" -C "$W" . 2>/dev/null

echo
echo "=== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(date -u +%FT%TZ))"
"$PY" - "$W" "${rc[save]}" "${rc[compare]}" "${rc[planted]}" "${rc[bench_save]}" "${rc[bench_compare]}" "${rc[fleet]}" <<'EOF'
import json, sys
from pathlib import Path
w = Path(sys.argv[1])
codes = dict(zip(("save", "compare", "planted", "bench_save", "bench_compare", "fleet"), map(int, sys.argv[2:])))
want = {"save": 0, "compare": 0, "planted": 1, "bench_save": 0, "bench_compare": 0, "fleet": 0}
def doc(name):
    try:
        return json.loads((w / name).read_text())
    except (OSError, ValueError):
        return None
def checks(d):
    return {c["name"]: c for dev in (d or {}).get("devices", []) for c in dev["checks"]}
print(f"{'step':14} {'exit':>4} {'want':>4}  result")
for step, code in codes.items():
    ok = "ok " if code == want[step] else "BAD"
    extra = ""
    if step in ("save", "compare", "planted"):
        d = doc(f"{step}.out")
        c = checks(d)
        fails = [n for n, x in c.items() if x["status"] == "fail"]
        warns = [n for n, x in c.items() if x["status"] == "warn"]
        extra = f"status {d.get('status') if d else '?'}; fail: {','.join(fails) or '-'}; warn: {','.join(warns) or '-'}"
    if step == "bench_compare":
        d = doc("bench_compare.out") or {}
        extra = f"baseline {(d.get('baseline') or {}).get('status', '?')}"
    if step == "planted":
        last = (w / "planted.err").read_text().strip().splitlines()[-1:] or ["?"]
        extra += f" | {last[0][:100]}"
    print(f"{step:14} {code:>4} {want[step]:>4}  {ok} {extra}")
c = checks(doc("compare.out"))
print(f"{'figure':31} {'saved':>10} {'again':>10} {'change':>8} {'tol':>5}  status")
for name, x in c.items():
    if name.startswith("baseline_"):
        unit = next((k[len('measured_'):] for k in x if k.startswith("measured_")), "")
        cur, base = x.get(f"measured_{unit}"), x.get(f"baseline_{unit}")
        ch = x.get("change_fraction")
        print(f"{name + ' (' + unit + ')':31} {'n/a' if base is None else format(base, '.4g'):>10} {'n/a' if cur is None else format(cur, '.4g'):>10} "
              f"{'' if ch is None else format(ch, '+8.2%'):>8} {x['tolerance_fraction']:>5.0%}  {x['status']}")
pc = c.get("power_cap", {})
print(f"power_cap: {pc.get('status', '?')} {pc.get('value_text', '')}")
EOF
