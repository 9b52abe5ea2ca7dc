#!/usr/bin/env bash
# Several GPUs in one host (issue 21), on the GPU machine, from the repo root:
#   bash benchmarks/device_21.sh
# On one GPU: probe -i all, probe --topo (text and --json), bench --p2p (must say
# "1 GPU: nothing to pair", exit 0, and report the GPU's own checked copies), check -i all
# --json, bench -i all --quick, the new kernel compiled for every architecture CI builds,
# and the worker-process path with real CUDA: two worker processes measuring at once
# (bench --quick's run and check's observe_device on the same GPU), which on one GPU is the
# only way to run it. With 2 or more GPUs also: the full p2p matrix, check -i all, bench -i
# all --quick and --link, each timed. Logs and --json documents -> $OUT/device_21.tgz;
# a summary table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COLUMNS=100
W=/tmp/gpuwhy-device-21; rm -rf "$W"; mkdir -p "$W"
OUTDIR="${OUT:-$PWD/out}"; mkdir -p "$OUTDIR"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
G="python3 -m gpuwhy"
declare -a names rcs secs notes

# step NAME TIMEOUT_S ARGS...: run gpuwhy ARGS, stdout -> $W/NAME.out, stderr -> $W/NAME.err
step() {
  local name=$1 limit=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout "$limit" $G "$@" > "$W/$name.out" 2> "$W/$name.err"; local rc=$?
  local dt; dt=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  names+=("$name"); rcs+=("$rc"); secs+=("$dt")
  echo "=== $name (gpuwhy $*): exit $rc, $dt s"; cat "$W/$name.out"; tail -n 3 "$W/$name.err"
}
# fig NAME PYTHON-EXPR: a figure read from $W/NAME.out (a --json document, as d), or the error
fig() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$W/$1.out" 2>&1 | tail -n 1; }

step probe_all 60 probe -i all
notes+=("$(grep -c 'GPU [0-9]' "$W/probe_all.out") GPU panel(s)")
step topo 60 probe --topo
notes+=("$(grep -m1 '^GPU0' "$W/topo.out" | tr -s ' ')")
step topo_json 60 probe --topo --json
notes+=("$(fig topo_json "d['kind'], len(d['gpus']), d['gpus'][0]['numa_node'], d['gpus'][0]['cpu_affinity'], len(d['gpus'][0]['nvlinks']), d['gpus'][0]['nvlink_note'][:40]")")
step p2p 120 bench --p2p
notes+=("$(grep -m1 -o '1 GPU: nothing to pair' "$W/p2p.out" || echo 'NO "nothing to pair" line')")
step p2p_json 120 bench --p2p --json
notes+=("$(fig p2p_json "'ce %.0f sm %.0f GB/s own copy, chase %.0f ns' % (d['matrices']['ce_unidirectional_gbs']['values'][0][0], d['matrices']['sm_unidirectional_gbs']['values'][0][0], 1e9 * d['matrices']['chase_latency_s']['values'][0][0])")")
step check_all 240 check -i all --json
notes+=("$(fig check_all "d['status'], len(d['devices']), 'slowest', d['slowest'] and d['slowest']['device_index'], 'schedule', d['schedule'] and d['schedule']['why'][:40], 'failed', len(d['failed_devices'])")")
step bench_all 240 bench -i all --quick --no-save
notes+=("$(grep -m1 'GB/s' "$W/bench_all.out" | tr -s ' ' | cut -c1-70)")
for a in sm_80 sm_89 sm_90 sm_100 sm_120; do
  step "compile_$a" 180 bench --compile-only --arch "$a" --json
  notes+=("$(fig "compile_$a" "d['ok'], [s['kernels'] for s in d['sources'] if s['source'] == 'p2p.cu']")")
done

# The worker-process path with real CUDA: two spawned workers at once on GPU 0 (bench --quick's
# run and check's observe_device), their time spans must overlap and both must measure.
t0=$(date +%s.%N)
timeout 300 python3 benchmarks/workers_overlap.py > "$W/workers.out" 2> "$W/workers.err"
rc=$?
names+=("workers"); rcs+=("$rc"); secs+=("$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")")
echo "=== workers (two spawned worker processes on GPU 0): exit $rc"; cat "$W/workers.out"; tail -n 5 "$W/workers.err"
notes+=("$(fig workers "'overlap', d['overlap'], 'quick', d['quick_exit'], round(d['quick_dram_gbs'] or 0), 'check', d['check_exit'], round(d['check_dram_gbs'] or 0), 'wall %.0f s vs %.0f + %.0f' % (d['wall_s'], d['quick_s'], d['check_s'])")")

if [ "$NGPU" -ge 2 ]; then
  step p2p_full 300 bench --p2p --json
  notes+=("$(fig p2p_full "d['summary'][:90]")")
  step p2p_full_text 300 bench --p2p
  notes+=("$(grep -m1 'slowest pair' "$W/p2p_full_text.out" | cut -c1-90)")
  step check_all_multi 300 check -i all --json
  notes+=("$(fig check_all_multi "'wall %.0f s, GPUs add up to %.0f s' % (d['schedule']['wall_s'], d['schedule']['sum_of_gpus_s']), d['schedule']['ran_in'], 'slowest', d['slowest']")")
  step bench_all_multi 300 bench -i all --quick --no-save --json
  notes+=("$(fig bench_all_multi "'wall %.0f s, GPUs add up to %.0f s' % (d['schedule']['wall_s'], d['schedule']['sum_of_gpus_s']), [round(x['figures']['dram_bandwidth_gbs'] or 0) for x in d['devices']]")")
  step link_all_multi 300 bench -i all --link --json
  notes+=("$(fig link_all_multi "d['schedule']['why'][:40], [round(x['figures']['h2d_pinned_gbs'] or 0) for x in d['devices']]")")
fi

{ nvidia-smi; nvidia-smi topo -m; date -u +%FT%TZ; } > "$W/env.txt" 2>&1
tar czf "$OUTDIR/device_21.tgz" -C "$W" . 2>/dev/null
echo; echo "=== summary ($NGPU x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%FT%TZ))"
printf '%-18s %4s %7s  %s\n' step exit seconds "what to look at"
for i in "${!names[@]}"; do printf '%-18s %4s %7s  %s\n' "${names[$i]}" "${rcs[$i]}" "${secs[$i]}" "${notes[$i]}"; done
