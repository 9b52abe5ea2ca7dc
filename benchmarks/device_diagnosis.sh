#!/usr/bin/env bash
# The diagnosis benchmark on the GPU machine (one H100), from the repo root, one part per call:
#   bash benchmarks/device_diagnosis.sh PART [run_all.py options]
# PART a: python_work tiny_layers pageable_h2d d2h_sync dataloader item_gate (trace only), then
#         `pytest -m gpu` and `gpuwhy check` (the GPU checks after the house move, issue 27);
# PART b: stream_wait decode_b1 fp32_gemm elementwise_chain few_blocks l2_resident (the last four
#         with --kernels: an Nsight Compute pass), after `gpuwhy bench --sweep` (the measured L2 roof).
# DIAG_REPEATS: plain runs of each variant (part a 2, so a plain run's own spread is known; part b 1).
# DIAG_GPU_TESTS=0 skips part a's `pytest -m gpu` and `gpuwhy check`; DIAG_DEADLINE_S (default 400)
# stops starting programs after that many seconds; a later --only overrides the part's list.
# Each program: the planted variant and its twin alone, and each under `gpuwhy run --json`
# (benchmarks/diagnosis/README.md). Writes under $OUT: diagnosis-PART.json (every figure),
# diagnosis-PART.log (the console), diagnosis-PART.tar.gz (each gpuwhy document, each run's log,
# env.txt, the sweep or the GPU tests' logs). The table and its summary are printed last.
#
# Wall time, estimated (an H100 box: a Python process that imports torch and starts CUDA costs
# 4-6 s): part a 6 x (2 x 6 s alone + 2 x 16 s under gpuwhy) ~ 270 s, plus pytest -m gpu and
# check ~ 150 s; part b ~ 30 s sweep + 6 x (2 x 7 s + 18 s) + 4 x 30 s (ncu) ~ 340 s.
set -uo pipefail
cd "$(dirname "$0")/.."
PART="${1:?part a or b}"; shift
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=80
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/gpuwhy-cache}"
O="${OUT:-$PWD/out}"; W=/tmp/gpuwhy-diag-$PART; rm -rf "$W"; mkdir -p "$O" "$W/docs"
T=/tmp/gpuwhy-diag-traces; rm -rf "$T"; mkdir -p "$T"   # traces stay off $OUT (tens of MB each)
{ nvidia-smi; ncu --version; date -u +%FT%TZ; nproc
  python3 -c 'import sys, torch, triton, cupy; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "cupy", cupy.__version__)'
  python3 -c 'import gpuwhy; print("gpuwhy", gpuwhy.__version__)'; git log --oneline -1 2>/dev/null; } > "$W/docs/env.txt" 2>&1
case "$PART" in
  a) ONLY=python_work,tiny_layers,pageable_h2d,d2h_sync,dataloader,item_gate; REPEATS=${DIAG_REPEATS:-2} ;;
  b) ONLY=stream_wait,decode_b1,fp32_gemm,elementwise_chain,few_blocks,l2_resident; REPEATS=${DIAG_REPEATS:-1}
     timeout 90 python3 -m gpuwhy bench --sweep > "$W/docs/bench_sweep.txt" 2>&1; echo "gpuwhy bench --sweep: exit $?" ;;
  *) echo "part a or b" >&2; exit 2 ;;
esac
python3 benchmarks/diagnosis/run_all.py --only "$ONLY" --repeats "$REPEATS" --out "$O/diagnosis-$PART.json" --docs "$W/docs" \
  --trace-dir "$T" --deadline-s "${DIAG_DEADLINE_S:-400}" --timeout 90 "$@" 2>&1 | tee "$O/diagnosis-$PART.log"
rc=${PIPESTATUS[0]}
if [ "$PART" = a ] && [ "${DIAG_GPU_TESTS:-1}" != 0 ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -rs tests > "$W/docs/pytest_gpu.log" 2>&1
  echo "pytest -m gpu: exit $? ($(tail -1 "$W/docs/pytest_gpu.log"))"
  timeout 90 python3 -m gpuwhy check > "$W/docs/check.txt" 2>&1; echo "gpuwhy check: exit $?"
  timeout 90 python3 -m gpuwhy check --json > "$W/docs/check.json" 2>/dev/null
fi
# what each traced run's tracer cost the host (gpuwhy run measures it before the program: diagnosis.tracer_s)
python3 - "$W/docs" <<'PY' 2>&1 | tee -a "$O/diagnosis-$PART.log"
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.gpuwhy*.json")):
    try:
        d = json.loads(p.read_text()).get("diagnosis") or {}
    except ValueError:
        continue
    print(f"tracer {p.name:40s} tracer_s {d.get('tracer_s')} window_s {d.get('window_s')} top {d.get('top_cause')}")
PY
for f in "$T"/*/*.json "$T"/*.json; do [ -f "$f" ] && { head -c 65536 "$f" | grep -o '"gpuwhy_tracer"[^}]*}' | head -1 | sed "s|^|$(basename "$f"): |"; break; }; done
tar -czf "$O/diagnosis-$PART.tar.gz" -C "$W" docs
echo "run_all exit $rc"
tail -n 30 "$O/diagnosis-$PART.log"
