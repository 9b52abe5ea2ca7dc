#!/usr/bin/env bash
# gpuwhy run on four real programs (issue 18), on the GPU machine, from the repo root:
#   bash benchmarks/device_run.sh
# Each program: its wall time alone (one run) and under `gpuwhy run` (text and --json),
# then `gpuwhy run` with the GPU hidden (must exit 3). Logs and traces -> $OUT/device_run.tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
W=/tmp/gpuwhy-device-run; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
P=benchmarks/programs
declare -A progs=(
  [decode_b1]="$P/gpt2_small.py decode --batch 1 --steps 24"
  [prefill_b32]="$P/gpt2_small.py prefill --batch 32 --seq 1024 --steps 6"
  [slow_dataset]="$P/slow_dataset.py"
  [item_sync]="$P/item_every_step.py"
)
order="decode_b1 prefill_b32 slow_dataset item_sync"
declare -A plain under verdict
wall() { /usr/bin/time -f '%e' -o "$W/.t" "$@" >/dev/null 2>&1; cat "$W/.t" | tail -n 1; }
for n in $order; do
  cmd=${progs[$n]}
  ts=("$(wall python3 $cmd)")
  plain[$n]=$(printf "%s\n" "${ts[@]}" | sort -n | head -n 1)
  /usr/bin/time -f '%e' -o "$W/.t" timeout 240 python3 -m gpuwhy run --steps 4 --out "$W/$n" -- python3 $cmd > "$W/$n.txt" 2>&1; rc=$?
  under[$n]="$(tail -n 1 "$W/.t") rc=$rc"
  timeout 240 python3 -m gpuwhy run --json --steps 4 --out "$W/$n" -- python3 $cmd > "$W/$n.json" 2> "$W/$n.json.err"
  verdict[$n]=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d['budget']['fixes'][0]; print(v['detail'][:60], '|', round(v['share_pct']), '% |', v['ceiling_x'] and round(v['ceiling_x'],2))" "$W/$n.json" 2>&1 | tail -1)
  echo "=== $n: $cmd"; cat "$W/$n.txt"
done
CUDA_VISIBLE_DEVICES=-1 python3 -m gpuwhy run --out "$W/nogpu" -- python3 $P/item_every_step.py > "$W/nogpu.txt" 2>&1; nogpu=$?
cp -r benchmarks/programs "$W/programs"
{ nvidia-smi; date -u +%FT%TZ; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_run.tgz" -C "$W" . 2>/dev/null
echo; echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%TZ))"
printf '%-13s %9s %16s  %s\n' program plain_s under_gpuwhy_run verdict
for n in $order; do printf '%-13s %9.2f %16s  %s\n' "$n" "${plain[$n]}" "${under[$n]}" "${verdict[$n]}"; done
echo "no GPU (CUDA_VISIBLE_DEVICES=-1): exit $nogpu: $(tail -n 1 "$W/nogpu.txt")"
