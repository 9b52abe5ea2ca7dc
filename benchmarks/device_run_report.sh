#!/usr/bin/env bash
# gpuwhy run --report on real programs (issue 18, the HTML report with its timeline strip), on the GPU machine,
# from the repo root:
#   bash benchmarks/device_run_report.sh
# Per program: `gpuwhy run --json --report` (one run, the last 4 steps), then the checks below on what it wrote,
# then `gpuwhy report --run` on the saved document (the same run section must come out). Last: --report on a
# file gpuwhy did not write (exit 2, the program must not run). Pages, documents, logs -> $OUT/device_run_report.tgz.
# Checks per program (ok = all hold):
#   bins      each bin's busy + idle = its length (largest error, s)
#   shares    each idle share of the budget = the sum of its bins (largest relative error; "unattributed" excluded)
#   busy      timeline busy - (budget busy + unattributed), s (float rounding of timestamps: < 1e-9 s per GPU event)
#   rects     <rect> in the page's strip = non-empty (bin, part) segments of the document
#   same      `gpuwhy report --run` gives the page's run section byte for byte
#   escaped   no raw '<' of a kernel name in the page (kernel names with templates are escaped)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
W=/tmp/gpuwhy-device-run-report; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
P=benchmarks/programs
declare -A progs=(
  [decode_b1]="$P/gpt2_small.py decode --batch 1 --steps 24"
  [prefill_b32]="$P/gpt2_small.py prefill --batch 32 --seq 1024 --steps 6"
  [slow_dataset]="$P/slow_dataset.py"
  [item_sync]="$P/item_every_step.py"
)
order="decode_b1 prefill_b32 slow_dataset item_sync"
declare -A result
for n in $order; do
  cmd=${progs[$n]}
  /usr/bin/time -f '%e' -o "$W/.t" timeout 150 python3 -m gpuwhy run --json --steps 4 --report "$W/$n.html" \
    --out "$W/$n" -- python3 $cmd > "$W/$n.json" 2> "$W/$n.err"; rc=$?
  secs=$(tail -n 1 "$W/.t")
  timeout 60 python3 -m gpuwhy report --run "$W/$n.json" --out "$W/$n-again.html" > "$W/$n-again.txt" 2>&1; rc2=$?
  result[$n]=$(timeout 60 python3 - "$W/$n.json" "$W/$n.html" "$W/$n-again.html" "$rc" "$rc2" "$secs" <<'EOF' 2>&1 | tail -n 1
import json, re, sys
doc_p, page_p, again_p, rc, rc2, secs = sys.argv[1:]
try:
    d = json.load(open(doc_p))
    b, tl = d["budget"], d["timeline"]
    bins = tl["bins"]
    worst_bin = max(abs(x["busy_s"] + sum(x["idle_s"].values()) - (x["end_s"] - x["start_s"])) for x in bins)
    tot = {c: sum(x["idle_s"][c] for x in bins) for c in tl["causes"]}
    shares = {s["cause"]: s["seconds"] for s in b["idle"]}
    rest = shares.pop("unattributed", 0.0)
    worst_share = max(abs(tot.get(c, 0.0) - s) / s for c, s in shares.items())
    busy_gap = sum(x["busy_s"] for x in bins) - (b["busy_s"] + rest)
    page, again = open(page_p).read(), open(again_p).read()
    sec = lambda t: t[t.index('<section id="run">'):t.index("</section>", t.index('<section id="run">'))]
    want = sum((x["busy_s"] > 0) + sum(v > 0 for v in x["idle_s"].values()) for x in bins)
    rects = sec(page).count("<rect ")
    raw = [k["name"] for k in d["kernels"] if "<" in k["name"] and k["name"] in page]
    ok = worst_bin < 1e-12 and worst_share < 1e-9 and rects == want and sec(page) == sec(again) and not raw \
        and abs(busy_gap) < 1e-6 and rc == "0" and rc2 == "0"
    v = b["fixes"][0]["detail"][:44] if b["fixes"] else "gpu-bound"
    print(f"{'ok' if ok else 'FAIL'} {secs:>6} {len(bins):4d} {worst_bin:8.1e} {worst_share:8.1e} {busy_gap:9.1e} "
          f"{rects:5d}/{want:<5d} {str(sec(page) == sec(again)):5} {str(not raw):5}  {v}")
except Exception as e:  # one line, whatever broke
    print(f"FAIL rc={rc} rc2={rc2}: {type(e).__name__}: {e}"[:150])
EOF
)
  echo "=== $n: $cmd (exit $rc; report --run exit $rc2)"; tail -n 3 "$W/$n.err"
done
echo '<html>mine</html>' > "$W/mine.html"
timeout 60 python3 -m gpuwhy run --report "$W/mine.html" --out "$W/refuse" -- python3 $P/item_every_step.py \
  > "$W/refuse.txt" 2>&1; refuse=$?
ran=$([[ -d "$W/refuse" ]] && echo "the program ran" || echo "the program did not run")
{ nvidia-smi; date -u +%FT%TZ; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_run_report.tgz" -C "$W" . 2>/dev/null
echo; echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null), $(date -u +%FT%TZ))"
printf '%-13s %-4s %6s %4s %8s %8s %9s %11s %5s %5s  %s\n' program ok run_s bins bins_err share_err busy_gap_s rects same escp verdict
for n in $order; do printf '%-13s %s\n' "$n" "${result[$n]}"; done
echo "--report on a user's file: exit $refuse ($ran): $(tail -n 1 "$W/refuse.txt")"
