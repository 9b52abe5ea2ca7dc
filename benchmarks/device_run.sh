#!/usr/bin/env bash
# gpuwhy run on real programs (issue 18), on the GPU machine, from the repo root:
#   bash benchmarks/device_run.sh
# First `bench --sweep` (so --kernels judges against this GPU's measured roofline). Then, for
# four Python programs: the wall time alone, under `gpuwhy run` (trace only, text), under
# `gpuwhy run --kernels --json --report` (trace + ncu pass + HTML page, checked by
# benchmarks/check_run_report.py against `gpuwhy report --run` of the same document), and
# decode_b1 also as text with --kernels; a CUDA C++ program (no Python) built with nvcc, alone
# and under `gpuwhy run` (ncu alone); --report on a file gpuwhy did not write (exit 2, the
# program must not run); `gpuwhy run` with the GPU hidden (must exit 3). Logs, documents, pages
# and ncu CSVs -> $OUT/device_run.tgz; decode_b1's trace and ncu CSV for tests/fixtures/real/.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
W=/tmp/gpuwhy-device-run; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
P=benchmarks/programs
declare -A progs=(
  [decode_b1]="$P/gpt2_small.py decode --batch 1 --steps 24"
  [prefill_b32]="$P/gpt2_small.py prefill --batch 32 --seq 1024 --steps 6"
  [slow_dataset]="$P/slow_dataset.py"
  [item_sync]="$P/item_every_step.py"
)
order="${RUN_PROGRAMS:-decode_b1 prefill_b32 slow_dataset item_sync}"
declare -A plain under kern verdict measured pagecheck
secs() { tail -n 1 "$W/.t"; }
timeout 240 python3 -m gpuwhy bench --sweep > "$W/bench_sweep.txt" 2>&1; sweep_rc=$?
for n in $order; do
  cmd=${progs[$n]}
  /usr/bin/time -f '%e' -o "$W/.t" timeout 240 python3 $cmd > "$W/$n.plain.txt" 2>&1; plain[$n]="$(secs) rc=$?"
  if [ "${RUN_TRACE_ONLY:-1}" = 1 ]; then  # RUN_TRACE_ONLY=0 leaves out the trace-only run (the tool's overhead)
    /usr/bin/time -f '%e' -o "$W/.t" timeout 240 python3 -m gpuwhy run --steps 4 --out "$W/$n" -- python3 $cmd > "$W/$n.txt" 2>&1
    under[$n]="$(secs) rc=$?"
  else under[$n]="not run"; fi
  /usr/bin/time -f '%e' -o "$W/.t" timeout 300 python3 -m gpuwhy run --kernels --json --steps 4 --report "$W/$n.html" \
    --out "$W/$n" -- python3 $cmd > "$W/$n.kernels.json" 2> "$W/$n.kernels.err"
  rc=$?; kern[$n]="$(secs) rc=$rc"
  timeout 60 python3 -m gpuwhy report --run "$W/$n.kernels.json" --out "$W/$n-again.html" > "$W/$n-again.txt" 2>&1; rc2=$?
  pagecheck[$n]=$(timeout 60 python3 benchmarks/check_run_report.py "$W/$n.kernels.json" "$W/$n.html" "$W/$n-again.html" \
    "$rc" "$rc2" "$(secs)" 2>&1 | tail -n 1)
  verdict[$n]=$(python3 - "$W/$n.kernels.json" <<'PY' 2>&1 | tail -n 1
import json, sys
d = json.load(open(sys.argv[1]))
b = d["diagnosis"]  # schema 2: the verdict engine's diagnosis
if b is None:
    print("no diagnosis (no GPU work in the window)"); sys.exit()
top = (b["remedies"] or [{}])[0]
total = sum(s["share_pct"] for s in b["shares"])
print(f"{b['verdict']}: {str(b['top_cause'])[:30]} | first fix {top.get('key')} {top.get('share_pct') and round(top['share_pct'])}% "
      f"| x{top.get('ceiling_x') and round(top['ceiling_x'], 2)} | shares total {round(total, 3)}%")
PY
)
  measured[$n]=$(python3 - "$W/$n.kernels.json" <<'PY' 2>&1 | tail -n 1
import json, sys
d = json.load(open(sys.argv[1]))
kp = d.get("kernel_pass") or {}
m = kp.get("match") or {}
ks = [k for k in d["kernels"] if k["measured_launches"]]
print(f"{len(ks)}/{len(d['kernels'])} top measured, order {m.get('launches_by_order')} shape {m.get('launches_by_shape')} "
      f"unmatched {m.get('launches_unmatched')}; " + ", ".join(f"{k['regime']} {k['roof_pct'] and round(k['roof_pct'])}%" for k in ks[:3]))
PY
)
  echo "=== $n: $cmd"; cat "$W/$n.txt" 2>/dev/null
done
if [[ " $order " == *" decode_b1 "* ]]; then
  if [ "${RUN_TEXT:-1}" = 1 ]; then  # RUN_TEXT=0 leaves out decode_b1's --kernels run as text
    timeout 300 python3 -m gpuwhy run --kernels --steps 4 --out "$W/decode_b1_text" -- python3 ${progs[decode_b1]} > "$W/decode_b1.kernels.txt" 2>&1
    echo "=== decode_b1 --kernels (text)"; cat "$W/decode_b1.kernels.txt"
  fi
  mkdir -p "$W/fixtures"
  t=$(ls -t "$W"/decode_b1/gpuwhy-run-trace*.json | head -n 1); c=$(ls -t "$W"/decode_b1/gpuwhy-run-ncu*.csv | head -n 1)  # the --kernels run's pair
  gzip -c "$t" > "$W/fixtures/run_decode_b1_trace.json.gz" 2>/dev/null
  gzip -c "$c" > "$W/fixtures/run_decode_b1_ncu.csv.gz" 2>/dev/null
fi
# A CUDA C++ program: ncu alone
app_build=$(nvcc -O3 -arch=sm_90 -o "$W/cuda_app" $P/cuda_app.cu 2>&1; echo "rc=$?")
/usr/bin/time -f '%e' -o "$W/.t" timeout 120 "$W/cuda_app" > "$W/cuda_app.plain.txt" 2>&1; app_plain="$(secs) rc=$?"
/usr/bin/time -f '%e' -o "$W/.t" timeout 300 python3 -m gpuwhy run --out "$W/cuda_app_run" -- "$W/cuda_app" > "$W/cuda_app.txt" 2>&1; app_under="$(secs) rc=$?"
timeout 300 python3 -m gpuwhy run --json --out "$W/cuda_app_run" -- "$W/cuda_app" > "$W/cuda_app.json" 2> "$W/cuda_app.json.err"
echo "=== cuda_app (ncu alone)"; cat "$W/cuda_app.txt"
echo '<html>mine</html>' > "$W/mine.html"
timeout 60 python3 -m gpuwhy run --report "$W/mine.html" --out "$W/refuse" -- python3 $P/item_every_step.py \
  > "$W/refuse.txt" 2>&1; refuse=$?
ran=$([[ -d "$W/refuse" ]] && echo "the program ran" || echo "the program did not run")
CUDA_VISIBLE_DEVICES=-1 python3 -m gpuwhy run --out "$W/nogpu" -- python3 $P/item_every_step.py > "$W/nogpu.txt" 2>&1; nogpu=$?
{ nvidia-smi; ncu --version; date -u +%FT%TZ; } > "$W/env.txt" 2>&1
# the logs, --json documents, ncu CSVs and the fixtures (traces and .ncu-rep files stay behind: too large)
(cd "$W" && tar czf "$OUTDIR/device_run.tgz" --exclude='gpuwhy-run-trace*.json' --exclude='*.ncu-rep' --exclude=cuda_app . 2>/dev/null)
echo; echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%FT%TZ)); bench --sweep rc=$sweep_rc"
printf '%-13s %12s %14s %16s  %s\n' program plain_s gpuwhy_run_s run_kernels_s "verdict (--kernels) | share | ceiling | shares total"
for n in $order; do printf '%-13s %12s %14s %16s  %s\n' "$n" "${plain[$n]}" "${under[$n]}" "${kern[$n]}" "${verdict[$n]}"; done
for n in $order; do printf '%-13s %s\n' "$n" "${measured[$n]}"; done
printf '%-13s %-4s %6s %4s %8s %8s %9s %11s %5s %5s  %s\n' page ok run_s bins bins_err share_err busy_gap_s rects same escp verdict
for n in $order; do printf '%-13s %s\n' "$n" "${pagecheck[$n]}"; done
echo "--report on a user's file: exit $refuse ($ran): $(tail -n 1 "$W/refuse.txt")"
echo "cuda_app: build $app_build; alone $app_plain; under gpuwhy run (ncu alone) $app_under; $(tail -n 2 "$W/cuda_app.txt" | head -c 200)"
echo "no GPU (CUDA_VISIBLE_DEVICES=-1): exit $nogpu: $(tail -n 1 "$W/nogpu.txt")"
