#!/usr/bin/env bash
# Issue 21, the NCCL part: `gpuwhy bench --allreduce` and `gpuwhy llm --num-gpus`, on the GPU
# machine, from the repo root:
#   bash benchmarks/device_21n.sh
# One GPU: bench --allreduce must say "1 GPU: nothing to all-reduce across" and exit 0 (with the
# one-rank NCCL smoke test); llm --num-gpus 2 uses the assumed figure (no profile has one).
# Two or more GPUs (nvidia-smi -L): also the full sweep (8 B .. 1 GiB, bf16, -i all), then
# torch.distributed.all_reduce timed directly (benchmarks/allreduce_direct.py under torchrun: 1 GiB
# bf16, events, median of 20 after 5 warm-ups) in the same run, their ratio (issue 21: >= 0.95),
# and llm --num-gpus N using the measured figure. A private profile cache ($W/cache) keeps the
# machine's own cache out of it. NVLink multicast stays off in every process (NCCL_NVLS_ENABLE=0).
# Logs -> $OUT/device_21n.tgz; the summary table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/gpuwhy-device-21n; rm -rf "$W"; mkdir -p "$W"
export XDG_CACHE_HOME="$W/cache"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null || echo "n/a"; }

# 1. one GPU (-i 0): the message, exit 0, the one-rank smoke test
timeout 150 python3 -m gpuwhy bench --allreduce -i 0 > "$W/one.txt" 2> "$W/one.err"; one_rc=$?
timeout 150 python3 -m gpuwhy bench --allreduce -i 0 --max-size 1MiB --json > "$W/one.json" 2> "$W/one.json.err"; one_json_rc=$?
one_last=$(tail -n 1 "$W/one.txt")
one_smoke=$(j "$W/one.json" "'%.1f us (8 B, one rank, %d sizes, NCCL %s)' % (d['rows'][0]['time_s']*1e6, len(d['rows']), d['engine']['nccl_version']) if d['rows'] else 'skipped: ' + '; '.join(d['notes'])")
echo "=== bench --allreduce -i 0 (exit $one_rc)"; cat "$W/one.txt"; cat "$W/one.err"

# 2. llm before any all-reduce was measured: the assumed figure, said so
timeout 60 python3 -m gpuwhy llm --num-gpus 2 --model llama-3-8b --gpu H200 --json > "$W/llm_before.json" 2> "$W/llm_before.err"; llm_before_rc=$?
timeout 60 python3 -m gpuwhy llm --num-gpus 2 --model llama-3-8b --gpu H200 > "$W/llm_before.txt" 2>&1
llm_before=$(j "$W/llm_before.json" "'%.1f us: %s' % (d['scaling']['allreduce_latency_s']*1e6, d['scaling']['allreduce_source'][:60])")
echo "=== llm --num-gpus 2 --model llama-3-8b --gpu H200 (exit $llm_before_rc)"; grep -i "all-reduce" "$W/llm_before.txt"

sweep_rc=-; busbw=n/a; lat=n/a; direct_rc=-; direct=n/a; ratio=n/a; llm_after=n/a; llm_after_rc=-; limit=n/a
if [ "$ngpu" -ge 2 ]; then
  # 3. the full sweep on every GPU, text then --json (the second saves the profile the llm run reads)
  timeout 200 python3 -m gpuwhy bench --allreduce --no-save > "$W/sweep.txt" 2> "$W/sweep.err"
  echo "=== bench --allreduce (all $ngpu GPUs)"; cat "$W/sweep.txt"; cat "$W/sweep.err"
  timeout 200 python3 -m gpuwhy bench --allreduce --json > "$W/sweep.json" 2> "$W/sweep.json.err"; sweep_rc=$?
  busbw=$(j "$W/sweep.json" "'%.1f' % d['largest_busbw_gbs']")
  lat=$(j "$W/sweep.json" "'%.1f us' % (d['latency_s']*1e6)")
  limit=$(j "$W/sweep.json" "d['limit_source'][:50] if d['limit_gbs'] is None else '%.0f%% of %.0f GB/s' % (100*d['limit_fraction'], d['limit_gbs'])")
  # 4. the same engine timed directly, in the same run
  timeout 150 python3 -m torch.distributed.run --standalone --nproc-per-node "$ngpu" benchmarks/allreduce_direct.py \
    > "$W/direct.txt" 2> "$W/direct.err"; direct_rc=$?
  grep '^{' "$W/direct.txt" | tail -n 1 > "$W/direct.json"
  direct=$(j "$W/direct.json" "'%.1f' % d['busbw_gbs']")
  ratio=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['largest_busbw_gbs']; b=json.load(open(sys.argv[2]))['busbw_gbs']; print('%.3f' % (a/b))" "$W/sweep.json" "$W/direct.json" 2>/dev/null || echo n/a)
  # 5. llm on this machine's GPU model, now with the measured figure
  timeout 60 python3 -m gpuwhy llm --num-gpus "$ngpu" --model llama-3-8b --json > "$W/llm_after.json" 2> "$W/llm_after.err"; llm_after_rc=$?
  llm_after=$(j "$W/llm_after.json" "'%.1f us: %s' % (d['scaling']['allreduce_latency_s']*1e6, d['scaling']['allreduce_source'][:60])")
fi

{ nvidia-smi; nvidia-smi topo -m; date -u +%FT%TZ; python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_21n.tgz" -C "$W" --exclude=cache . 2>/dev/null

echo; echo "=== summary ($ngpu x $gpu, $(date -u +%FT%TZ))"
printf '%-44s %s\n' "check" "figure"
printf '%-44s %s\n' "bench --allreduce -i 0: exit (want 0)" "$one_rc / --json $one_json_rc"
printf '%-44s %s\n' "  last line (want 1 GPU: nothing ...)" "$one_last"
printf '%-44s %s\n' "  one-rank NCCL smoke test" "$one_smoke"
printf '%-44s %s\n' "llm --num-gpus 2 --gpu H200 (assumed)" "exit $llm_before_rc: $llm_before"
if [ "$ngpu" -ge 2 ]; then
  printf '%-44s %s\n' "bench --allreduce ($ngpu GPUs): exit" "$sweep_rc"
  printf '%-44s %s\n' "  busbw at 1 GiB, GB/s (gpuwhy)" "$busbw"
  printf '%-44s %s\n' "  8 B all-reduce" "$lat"
  printf '%-44s %s\n' "  vs NVLink limit" "$limit"
  printf '%-44s %s\n' "direct all_reduce busbw 1 GiB, GB/s" "$direct (exit $direct_rc)"
  printf '%-44s %s\n' "ratio gpuwhy / direct (want >= 0.95)" "$ratio"
  printf '%-44s %s\n' "llm --num-gpus $ngpu (measured)" "exit $llm_after_rc: $llm_after"
else
  printf '%-44s %s\n' "multi-GPU sweep, direct timing, ratio" "not run: $ngpu GPU(s)"
fi
