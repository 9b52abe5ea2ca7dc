#!/usr/bin/env python3
"""Record, or compare against a recording, what gpuwhy's CLI does without a GPU.

A fixed list of gpuwhy commands (:func:`cases`) is run from a source tree (a copy of
--src and its tree's specs/ and microbench/ at /tmp/gpuwhy-behaviour-N/tree, so every tree's
paths print alike), each in its own fresh folder with its own fresh HOME, and for each
the exit code, stdout, stderr and the files it wrote are kept, after normalising what
legitimately varies between runs (:data:`NORMALISATION`, nothing else).

    python benchmarks/behaviour/record.py --src PATH/src --out DIR       # one file per command + index.json
    python benchmarks/behaviour/record.py --src PATH/src --compare DIR   # diff per changed command; exit 1 if any

The inputs (tests/fixtures, docs/results/raw) are always taken from the repository this
script lives in (``--inputs`` to change), copied into the run's temp folder and named by
relative paths (``fx/...``, ``raw/...``), so the tree under test only supplies the code
(and its bundled specs/ and microbench/). Not part of the CI suite.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

#: stdout larger than this is kept as a sha256 plus its first and last HEAD_TAIL lines.
BIG_BYTES = 200_000
HEAD_TAIL = 40
#: Seconds one command may take before it is recorded as a timeout.
TIMEOUT_S = 180

# --------------------------------------------------------------------------- normalisation

#: What legitimately varies between two runs of the same code, and how it is normalised.
#: Applied, in this order, to stdout, stderr, every string (and key) of a JSON stdout, and the
#: text files the command wrote. Nothing else is changed.
NORMALISATION = [
    ("<TMP>", "the run's temp folder /tmp/gpuwhy-behaviour-N (each command's cwd, HOME and TMPDIR live under it), literal"),
    ("<TREE>", "the tree under test: its copy in <TMP>/tree (src/, specs/, microbench/: what runs) and --src's parent, literal"),
    ("<INPUTS>", "the absolute path of the repository the inputs are copied from, literal"),
    ("<NOW>", r"an ISO 8601 date-time \d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)? "
              "that falls within the run (start - 2 min .. end + 2 min); a date-time from an input file is kept"),
    ("<DUR>", r"a compile time in bench --compile-only's status cell: 'ok (\d+\.\d\d s)' -> 'ok (<DUR>)'"),
    ("<VERSION>", r"gpuwhy's version as the tree's version.py writes it, where it stands alone (?<![\w.])X(?![\w.])"),
    ("<SECONDS>", "JSON only: the number under a key named 'seconds' (bench --compile-only's per-source compile time)"),
    ("table squeeze", "only for cases marked squeeze (bench --compile-only without a warm cache): after <DUR>, runs of "
                      "spaces -> one space and runs of box rules [─━] -> one, since the status column's width "
                      "follows the compile times"),
]
_ISO = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
_DUR = re.compile(r"ok \(\d+\.\d\d s\)")
VOLATILE_JSON_KEYS = {"seconds"}


class Normaliser:
    def __init__(self, tmp: Path, trees: list[Path], inputs: Path, version: str, start: float):
        lits = {}
        for p, tag in ((tmp, "<TMP>"), *((t, "<TREE>") for t in trees), (inputs, "<INPUTS>")):
            for s in {str(p), str(p.resolve())}:
                lits.setdefault(s, tag)
        # longest first, so a path inside another is not cut short
        self.literals = sorted(lits.items(), key=lambda kv: -len(kv[0]))
        self.version = re.compile(r"(?<![\w.])" + re.escape(version) + r"(?![\w.])") if version else None
        self.start = start

    def _now(self, m: re.Match) -> str:
        s = m.group(0)
        try:
            t = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            return s
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)  # TZ=UTC for every command
        # normalised as each command ends: a date-time it printed is before now
        return "<NOW>" if self.start - 120 <= t.timestamp() <= time.time() + 120 else s

    def text(self, s: str, squeeze: bool = False) -> str:
        for lit, tag in self.literals:
            s = s.replace(lit, tag)
        s = _ISO.sub(self._now, s)
        s = _DUR.sub("ok (<DUR>)", s)
        if self.version is not None:
            s = self.version.sub("<VERSION>", s)
        if squeeze:
            s = re.sub(r" {2,}", " ", s)
            s = re.sub(r"─+", "─", s)
            s = re.sub(r"━+", "━", s)
        return s

    def json(self, v, squeeze: bool = False):
        if isinstance(v, str):
            return self.text(v, squeeze)
        if isinstance(v, list):
            return [self.json(x, squeeze) for x in v]
        if isinstance(v, dict):
            return {self.text(k, squeeze): ("<SECONDS>" if k in VOLATILE_JSON_KEYS and isinstance(x, (int, float))
                                            and not isinstance(x, bool) else self.json(x, squeeze))
                    for k, x in v.items()}
        return v


# --------------------------------------------------------------------------- the commands

@dataclass
class Case:
    argv: list[str]
    #: files to create in the command's cwd first: relative path -> text
    files: dict[str, str] = field(default_factory=dict)
    #: gpuwhy commands run first in the same cwd and HOME (their output is not kept; their exit codes are)
    pre: list[list[str]] = field(default_factory=list)
    #: extra environment
    env: dict[str, str] = field(default_factory=dict)
    squeeze: bool = False
    #: expected to take seconds: started first
    slow: bool = False
    slug: str = ""

    def __post_init__(self):
        if not self.slug:
            self.slug = slug_of(self.argv, self.env, self.files, self.pre)


def slug_of(argv, env, files, pre) -> str:
    words = "_".join(argv) if argv else "main"
    s = re.sub(r"[^A-Za-z0-9.=,+-]+", "_", words).strip("_")[:72].strip("_") or "main"
    if s.startswith("-"):  # a file name that is no option
        s = "top_" + s
    key = json.dumps([argv, sorted(env.items()), sorted(files), pre])
    return f"{s}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


# a custom spec sheet (--specs DIR, GPUWHY_SPECS), a model shape (--models) and a policy (--policy)
MY_SHEET = """name: Test GPU 9000
aliases: [tg9000]
vendor: NVIDIA
architecture: Hopper
compute_capability: "9.0"
nvml_names: ["Test GPU 9000"]
pci_device_ids: ["0xffff"]
sm_count: 100
fp32_lanes_per_sm: 128
boost_clock_mhz: 1800
memory_size_gb: 64
memory_type: HBM3
memory_bus_width_bits: 4096
memory_bandwidth_gbs: 3000
l2_cache_mib: 40
board_power_w: 500
peak_tflops:
  fp64: 20.0
  fp32: 46.0
  tf32: 300.0
  fp16: 600.0
  bf16: 600.0
  fp8: 1200.0
sources:
  datasheet: https://example.com/tg9000
"""
MY_MODEL = """name: Tiny 1M
aliases: [tiny]
params: 1000000
layers: 2
hidden_size: 128
attention_heads: 4
kv_heads: 4
head_dim: 32
vocab_size: 1000
max_context: 512
dtype: bf16
source: https://example.com/tiny
"""
MY_POLICY = """thresholds:
  min_dram_bandwidth: 0.97
  max_launch_overhead_us: 3
"""

CHECK = "raw/2026-12-01-h200-refactor/check.json"
RUN4 = "raw/2026-12-06-h100/call4/decode_b1.kernels.json.gz"
REF = "raw/2026-12-01-h200-refactor"
PROFILE = "fx/profiles/h200-2026-11-29.json"


def cases() -> list[Case]:
    C = Case
    out: list[Case] = []
    add = out.append

    # ---- top level: the main job, version, help, bad options
    for a in ([], ["--json"], ["--version"], ["--help"], ["--bogus"], ["nosuchcommand"], ["--debug", "--json"]):
        add(C(a))
    add(C([], env={"COLUMNS": "120"}))
    for cmd in (["classify"], ["probe"], ["bench"], ["compare"], ["llm"], ["check"], ["occupancy"], ["ncu"], ["trace"],
                ["roofline"], ["report"], ["run"], ["mfu"], ["specs"], ["specs", "list"], ["specs", "show"],
                ["specs", "validate"], ["fleet"], ["fleet", "summarize"]):
        add(C([*cmd, "--help"]))

    # ---- classify
    g = ["--gpu", "H200"]
    for a in (
        ["--flops", "2.7e8", "--bytes", "3.2GB", *g],
        ["--flops", "2.2T", "--bytes", "400MB", "--time", "3.1ms", "--launches", "4", "--gpu", "H100", "--dtype", "bf16"],
        ["--flops", "1.1T", "--bytes", "402MB", "--dtype", "bf16", *g, "--time", "1.6ms"],
        ["--flops", "1.1T", "--bytes", "402MB", "--dtype", "bf16", *g, "--time", "1.6ms", "--json"],
        ["--flops", "1.1T", "--bytes", "402MB", "--dtype", "bf16", *g, "--time", "1.6ms", "--csv"],
        ["--flops", "2.7e8", "--bytes", "3.2GB", *g, "--time", "100ms"],
        ["--flops", "1e6", "--bytes", "1e6", *g, "--launches", "100", "--launch-overhead", "4us"],
        ["--flops", "1T", "--bytes", "64MiB", "--working-set", "32MiB", *g, "--time", "50us"],
        ["--flops", "1T", "--bytes", "64MiB", "--working-set", "32MiB", *g, "--json"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--dtype", "fp8"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--dtype", "tf32", "--no-tensor-cores", "--json"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--dtype", "fp64"],
        ["--example", "vecadd", "--gpu", "rtx 5070"],
        ["--example", "vecadd", "--gpu", "rtx 5070", "--json"],
        ["--example", "gemm-bf16-8192", "--gpu", "rtx 5070"],
        ["--example", "saxpy", "--gpu", "H100", "--csv"],
        ["--gemm", "4095x4096x4096", "--dtype", "fp16", *g],
        ["--gemm", "8192x8192x8192", "--dtype", "bf16", *g, "--json"],
        ["--gemm", "1024x1024x1024", "--batch", "8", "--accumulate", "--tile", "128x256", "--gpu", "H100", "--dtype", "bf16"],
        ["--attention", "1,32,4096,128", "--causal", "--dtype", "bf16", *g],
        ["--attention", "8,32,4096,128", "--kv-heads", "8", "--q-len", "1", "--dtype", "bf16", "--gpu", "H100", "--json"],
        ["--elementwise", "2^28", "--inputs", "2", "--outputs", "1", *g],
        ["--elementwise", "1M", "--inputs", "3", "--outputs", "1", "--flops-per-element", "4", "--gpu", "A100", "--csv"],
        ["--ncu", "fx/real/ncu_details.csv"],
        ["--flops", "2.2T", "--bytes", "400MB", "--gpu", "tg9000", "--specs", "my-specs"],
        # errors
        ["--flops", "0", "--bytes", "1GB", *g],
        ["--flops", "-1", "--bytes", "1GB", *g],
        ["--flops", "1T", "--bytes", "0", *g],
        ["--flops", "1T", "--bytes", "1GB", "--gpu", "Z9000"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--dtype", "fp7"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--dtype", ""],
        ["--flops", "1TB", "--bytes", "1GB", *g],
        ["--flops", "1T", "--bytes", "8Gb", *g],
        ["--flops", "1T", "--bytes", "1GB", *g, "--time", "5"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--launch-overhead", "5"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--bogus-flag"],
        ["--flops", "1T", *g],
        ["--flops", "1T", "--bytes", "1GB"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--json", "--csv"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--measured"],
        ["--flops", "1T", "--bytes", "1GB", *g, "--plot", "w.png"],
        ["--ncu", "fx/real/ncu_details.csv", "--measured"],
        ["--example", "nosuch", *g],
        ["--gemm", "4096x4096", *g],
        ["--attention", "1,32,4096", *g],
        ["--elementwise", "1M", *g],
    ):
        add(C(["classify", *a], files={"my-specs/tg9000.yaml": MY_SHEET} if "my-specs" in a else {}))
    add(C(["--json", "classify", "--example", "vecadd", "--gpu", "rtx 5070"]))
    add(C(["classify", "--flops", "1T", "--bytes", "1GB", *g, "--debug", "--json"]))

    # ---- specs
    for a in (["list"], ["list", "--json"], ["list", "--csv"], ["show", "H200"], ["show", "H200", "--json"],
              ["show", "rtx 5070"], ["show", "H100"], ["show", "rtx4090", "--json"], ["show", "no such gpu"],
              ["validate"], ["validate", "--json"], ["validate", "fx/bad_specs"],
              ["validate", "fx/bad_specs/malformed.yaml", "fx/bad_specs/unknown-field.yaml"],
              ["validate", "fx/bad_specs/wrong-unit.yaml", "--json"], ["validate", "nosuch.yaml"]):
        add(C(["specs", *a]))
    add(C(["specs"]))
    add(C(["specs", "list", "--specs", "my-specs"], files={"my-specs/tg9000.yaml": MY_SHEET}))
    add(C(["specs", "show", "tg9000"], files={"my-specs/tg9000.yaml": MY_SHEET}, env={"GPUWHY_SPECS": "my-specs"}))
    add(C(["specs", "list", "--specs", "fx/bad_specs"]))
    add(C(["specs", "list"], env={"COLUMNS": "200"}))
    add(C(["specs", "list"], env={"COLUMNS": "abc"}))

    # ---- roofline
    for a in (["--gpu", "H200"], ["--gpu", "H200", "--dtype", "all"], ["--gpu", "H100", "--no-tensor-cores", "--dtype", "bf16"],
              ["--gpu", "H100", "--dtype", "bf16", "--point", "gemm:2.2T:400MB:3.1ms", "--point", "add:1G:12GB"],
              ["--gpu", "H200", "--point", "gemm:2.2T:400MB:3.1ms:bf16", "--json"],
              ["--gpu", "H200 SXM", "--profile", PROFILE], ["--gpu", "H200 SXM", "--profile", PROFILE, "--json"],
              ["--gpu", "H100 SXM", "--profile", PROFILE], ["--gpu", "H200", "--point", "k[bold]x[/]:1T:1GB"],
              ["--measured"], ["--gpu", "H200", "--out", "r.png"], ["--gpu", "H200", "--point", "bad"],
              ["--gpu", "H200", "--point", "g:1T:1GB:5"]):
        add(C(["roofline", *a]))

    # ---- compare
    for a in (["H100", "H200", "B200", "--intensity", "0.33"],
              ["H100", "H200", "--flops", "2T", "--bytes", "1GB", "--cost", "H100=2.49,H200=3.5", "--per-watt"],
              ["H100", "H200", "--llm", "--model", "llama-3-70b", "--batch", "8", "--context", "4096"],
              ["H100 SXM", "H200 SXM", "B200", "A100 SXM4 80GB", "L4", "--intensity", "1000", "--dtype", "bf16", "--json"],
              ["H100 SXM", "H200 SXM", "B200", "--intensity", "0.33", "--cost", "H100=2.5,B200=6", "--per-watt", "--csv"],
              ["H100 SXM", "H200 SXM", "--llm", "--params", "8B", "--no-plot"],
              ["H100 SXM", "--llm", "--model", "llama-3-70b", "--num-gpus", "4", "--cost", "H100=2", "--json"],
              ["H200", "H100", "--intensity", "0.33", "--measured", "--json"],
              ["H100", "Z9000", "--intensity", "0.33"], ["H100", "--intensity", "0.33", "--cost", "H200=3"],
              ["H100", "H200"], ["H100", "--intensity", "1", "--out", "c.png"]):
        add(C(["compare", *a]))

    # ---- occupancy
    for a in (["--block-size", "256", "--registers", "64", "--gpu", "H200"],
              ["--block-size", "256", "--registers", "64", "--gpu", "H100 SXM", "--json"],
              ["--block-size", "128", "--registers", "40", "--shared-mem", "48KiB", "--arch", "sm_80"],
              ["--block-size", "128", "--registers", "32", "--shared-mem", "48KiB", "--arch", "sm_80", "--carveout", "100", "--json"],
              ["--block-size", "1024", "--registers", "64", "--arch", "sm_90"],
              ["--block-size", "1024", "--registers", "255", "--arch", "sm_90"],
              ["--block-size", "4096", "--registers", "32", "--arch", "sm_80"],
              ["--block-size", "-5", "--registers", "32", "--arch", "sm_90"],
              ["--block-size", "256", "--registers", "32", "--device", "0"],
              ["--block-size", "256", "--registers", "32"],
              ["--block-size", "256", "--registers", "32", "--arch", "sm_12"]):
        add(C(["occupancy", *a]))

    # ---- llm
    for a in (["--model", "llama-3-8b", "--gpu", "H200"], ["--model", "llama-3-8b", "--gpu", "H200", "--json"],
              ["--params", "3B", "--gpu", "rtx 5070"], ["--params", "3B", "--gpu", "rtx 5070", "--csv"],
              ["--params", "70B", "--weight-dtype", "fp8", "--gpu", "H100", "--prompt-len", "2048", "--batch", "16", "--sweep-batch"],
              ["--params", "47B", "--active-params", "13B", "--num-gpus", "2", "--gpu", "H100", "--layers", "32", "--kv-heads", "8",
               "--head-dim", "128", "--quant-group", "32", "--weight-dtype", "int4", "--context", "8192"],
              ["--model", "llama-3-70b", "--gpu", "H100 SXM", "--num-gpus", "4", "--context", "1024"],
              ["--params", "46.7B", "--active-params", "12.9B", "--gpu", "H100 SXM"],
              ["--model", "llama-3-8b", "--gpu", "H100", "--speculative", "4", "--acceptance", "0.8", "--draft-model", "llama-3.2-3b"],
              ["--params", "70B", "--gpu", "H200", "--speculative", "5", "--acceptance", "0.7", "--draft-params", "1B", "--json"],
              ["--model", "llama-3-8b", "--gpu", "H200", "--cost-per-hour", "3.5"],
              ["--model", "llama-3-8b", "--gpu", "H200", "--cost-per-hour", "3.5", "--json"],
              ["--model", "llama-3.2-3b", "--gpu", "rtx 5070", "--prompt-len", "512", "--context", "4096", "--json"],
              ["--model", "gpt2", "--gpu", "rtx 5070", "--json"],
              ["--model", "nosuch", "--gpu", "H200"], ["--model", "llama-3-8b", "--gpu", "H200", "--speculative", "4"],
              ["--gpu", "H200"], ["--params", "3B", "--gpu", "nosuch"], ["--params", "3B", "--gpu", "H200", "--measured"]):
        add(C(["llm", *a]))
    add(C(["llm", "--model", "tiny", "--models", "m", "--gpu", "H200"], files={"m/tiny.yaml": MY_MODEL}))

    # ---- mfu
    for a in (["--params", "8B", "--tokens-per-s", "12k", "--gpu", "H100"],
              ["--params", "70B", "--tokens-per-s", "3000", "--gpus", "8", "--infer", "--dtype", "fp8", "--gpu", "H200",
               "--seq-len", "4096", "--layers", "80", "--hidden", "8192", "--json"],
              ["--params", "8B", "--tokens-per-s", "12k", "--gpus", "8", "--gpu", "H100", "--train", "--seq-len", "8192",
               "--layers", "32", "--hidden", "4096"],
              ["--params", "8B", "--tokens-per-s", "12k", "--gpu", "H100", "--train", "--infer"],
              ["--params", "8B", "--gpu", "H100"], ["--params", "8B", "--tokens-per-s", "0", "--gpu", "H100"]):
        add(C(["mfu", *a]))

    # ---- ncu (committed exports)
    for f, extra in (("real/ncu_raw.csv", []), ("real/ncu_raw.csv", ["--json"]), ("real/ncu_raw.csv", ["--csv"]),
                     ("real/ncu_default_details.csv", ["--gpu", "H200"]), ("real/ncu_nersc.csv", ["--gpu", "H200"]),
                     ("real/ncu_pct_raw.csv", []), ("real/ncu_full_raw.csv", []), ("real/ncu_full_raw.csv", ["--json"]),
                     ("real/ncu_details.csv", ["--top", "3"]), ("real/ncu_details.csv", ["--csv"]),
                     ("real/ncu_rep_import_raw.csv", []), ("real/ncu_raw_base.csv", []),
                     ("real/run_decode_h100_ncu.csv.gz", []), ("real/run_decode_h100_ncu.csv.gz", ["--json"]),
                     ("ncu/raw_multi_gpu.csv", ["--gpu", "H100"]), ("ncu/raw_multi_gpu.csv", ["--gpu", "H100", "--device", "1"]),
                     ("ncu/raw_na.csv", ["--gpu", "H100"]), ("ncu/details_basic.csv", ["--csv"]), ("ncu/raw_basic.csv", ["--json"]),
                     ("ncu/raw_basic.csv", ["--dtype", "fp16"]), ("ncu/raw_mangled.csv", []), ("ncu/raw_moved_columns.csv", []),
                     ("ncu/raw_no_units_row.csv", []), ("ncu/raw_tensor_no_ops.csv", []), ("ncu/raw_units_prefixed.csv", []),
                     ("ncu/real_variants/default_details_old_cli.csv", []), ("ncu/real_variants/full_raw_all_na.csv", []),
                     ("ncu/real_variants/nersc_old_units.csv", []), ("ncu/real_variants/pct_raw_program_output.csv", []),
                     ("ncu/not_ncu.csv", []), ("ncu/perm_error.csv", []), ("ncu/other_error.csv", []),
                     ("real/ncu_mix.ncu-rep.gz", []), ("real/ncu_raw.csv", ["--measured"]),
                     ("real/ncu_raw.csv", ["--plot", "k.png"]), ("nosuch.csv", [])):
        add(C(["ncu", f"fx/{f}", *extra]))
    add(C(["ncu"]))
    add(C(["ncu", "--", "./app"]))

    # ---- trace (committed traces, the real ones included)
    real = ["trace_cuda_graph.json.gz", "trace_dataloader.json", "trace_decode.json.gz", "trace_h2d_pageable_pinned.json.gz",
            "trace_item_heavy.json.gz", "trace_item_sync.json.gz", "trace_matmul.json", "trace_one_kernel.json",
            "trace_overhead.json", "trace_streams.json", "trace_streams_sync.json.gz", "trace_workers_pinned.json.gz",
            "run_decode_h100_trace.json.gz"]
    for f in real:
        add(C(["trace", f"fx/real/{f}"]))
    for f in ("trace_decode.json.gz", "trace_dataloader.json", "trace_streams.json", "trace_one_kernel.json",
              "trace_item_sync.json.gz", "run_decode_h100_trace.json.gz"):
        add(C(["trace", f"fx/real/{f}", "--json"]))
    for f in ("trace_decode.json.gz", "trace_overhead.json", "trace_workers_pinned.json.gz"):
        add(C(["trace", f"fx/real/{f}", "--csv"]))
    add(C(["trace", "fx/real/trace_decode.json.gz", "--top", "3"]))
    for f in ("multi_gpu.json", "with_flops.json", "window.json", "multistream.json", "overhead_loop.json", "busy_matmul.json.gz",
              "old_categories.json", "event_list.json", "real_three_kernels.json", "real_whole_us.json.gz",
              "real_other_accelerator.json.gz", "real_stray_late.json.gz", "real_stray_near_zero.json.gz",
              "real_stray_negative.json.gz", "corrupt.json.gz", "not_trace.json", "no_gpu.json", "zero_events.json",
              "flows_only.json"):
        add(C(["trace", f"fx/trace/{f}"]))
    add(C(["trace", "fx/trace/multi_gpu.json", "--json"]))
    add(C(["trace", "fx/trace/multi_gpu.json", "--csv"]))
    add(C(["trace", "nosuch.json"]))
    add(C(["trace", "fx/real/trace_decode.json.gz", "--json", "--csv"]))

    # ---- report
    for a in (["--out", "r.html", "--gpu", "H200", "--point", "gemm:2.2T:100MB:3.1ms"],
              ["--out", "r.html", "--gpu", "rtx 5070", "--dtype", "bf16", "--json"],
              ["--out", "r.html", "--probe", f"{REF}/probe.json", "--bench", f"{REF}/bench_sweep.json.gz",
               "--check", f"{REF}/check.json", "--latency", f"{REF}/latency.json", "--link", f"{REF}/link.json", "--json"],
              ["--out", "r.html", "--gpu", "H200", "--bench", PROFILE],
              ["--out", "r.html", "--run", RUN4],
              ["--out", "r.html", "--run", "raw/2026-12-06-h100/call2/item_sync.kernels.json.gz", "--json"],
              ["--out", "r.html", "--run", "raw/2026-12-02-h200/run/decode_b1.json"],
              ["--out", "r.html", "--run", RUN4, "--gpu", "H100", "--json"],
              ["--out", "r.html"], ["--gpu", "H200"], ["--out", "r.html", "--run", "fx/trace/not_trace.json"],
              ["--out", "sub/none/r.html", "--gpu", "H200"]):
        add(C(["report", *a]))
    add(C(["report", "--out", "mine.html", "--gpu", "H200"], files={"mine.html": "<p>my own page</p>\n"}))

    # ---- check (recorded observations; measuring needs a GPU)
    for a in (["--recorded", CHECK], ["--recorded", CHECK, "--json"], ["--recorded", CHECK, "--csv"],
              ["--recorded", CHECK, "--min-bandwidth", "0.99"], ["--recorded", CHECK, "--junit", "check.xml"],
              ["--recorded", CHECK, "--baseline", "raw/2026-12-02-h200/baseline/base.json"],
              ["--recorded", CHECK, "--save-baseline", "base.json", "--json"],
              ["--recorded", "raw/2026-11-29-h200-run6/check.json"],
              ["--recorded", CHECK, "--max-launch-overhead", "5"], ["--recorded", "fx/trace/not_trace.json"], [],
              ["--json"]):
        add(C(["check", *a]))
    add(C(["check", "--recorded", CHECK, "--policy", "policy.yaml"], files={"policy.yaml": MY_POLICY}))

    # ---- fleet (generated from the recorded check document, and the committed ones)
    committed = [CHECK, "raw/2026-11-29-h200-run6/check.json", "raw/2026-11-29-h200-run5/check.json",
                 "raw/2026-12-02-h200/baseline/base.json"]
    for a in (["gen/fleet"], ["gen/fleet", "--json"], ["gen/fleet", "--csv"], ["gen/fleet", "--expect", "64"],
              ["gen/fleet-clean"], ["gen/fleet-clean", "--json"], ["gen/fleet", "--mads", "0"], committed,
              [REF], ["nosuch"], ["gen/fleet", "--json", "--csv"]):
        add(C(["fleet", "summarize", *a]))

    # ---- bench (NVRTC compiles need no GPU; everything else exits 3)
    add(C(["bench", "--compile-only", "--arch", "sm_90", "--json"], slow=True))
    add(C(["bench", "--compile-only", "--arch", "sm_80"], slow=True, squeeze=True))
    add(C(["bench", "--compile-only", "--arch", "sm_80"], pre=[["bench", "--compile-only", "--arch", "sm_80", "--json"]],
          slow=True))
    for a in (["--compile-only", "--arch", "sm_90", "--csv", "x.csv"], ["--compile-only", "--arch", "sm_12"], ["--compile-only"],
              ["--quick"], [], ["--sweep", "--json"], ["--allreduce"], ["--p2p"]):
        add(C(["bench", *a]))

    # ---- probe (needs a GPU: exit 3)
    for a in ([], ["--json"], ["-L"], ["--topo"], ["-i", "0"], ["-i", "all", "--json"]):
        add(C(["probe", *a]))

    # ---- run (usage errors; no PyTorch, no ncu here)
    for a in ([], ["--", "x.py"], ["--steps", "2", "--skip-first", "1s", "--", "python", "p.py"],
              ["--", "python", "p.py"], ["--skip-first", "5", "--", "python", "p.py"], ["--", "./app"]):
        add(C(["run", *a], files={"p.py": "print('hi')\n"}))
    return out


def make_inputs(inputs_repo: Path, dest: Path) -> None:
    """Copy the committed inputs and generate the fleets (deterministic: no randomness)."""
    shutil.copytree(inputs_repo / "tests" / "fixtures", dest / "fx")
    shutil.copytree(inputs_repo / "docs" / "results" / "raw", dest / "raw")
    doc = json.loads((inputs_repo / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json").read_text())
    # 8 nodes x 1 GPU: small wobbles, one slow HBM (dirty only), one ECC failure (dirty only)
    wobble = [1.0, 0.996, 1.003, 0.998, 1.002, 0.997, 1.001, 0.999]
    for name, plants in (("fleet", True), ("fleet-clean", False)):
        folder = dest / "gen" / name
        folder.mkdir(parents=True)
        for n, w in enumerate(wobble):
            d = json.loads(json.dumps(doc))
            uuid = f"GPU-0000{n:04x}-0000-4000-8000-000000000000"
            obs = d["observations"][0]
            obs["uuid"] = d["devices"][0]["uuid"] = uuid
            for k in ("dram_bandwidth_gbs", "fp32_tflops", "tensor_tflops"):
                obs[k] *= w
            obs["launch_overhead_us"] /= w
            if plants and n == 5:
                obs["dram_bandwidth_gbs"] *= 0.88
            if plants and n == 6:
                obs["ecc_uncorrected"] = 2
                d["passed"] = d["devices"][0]["passed"] = False
                d["devices"][0]["checks"].append({"name": "ecc_uncorrected", "status": "fail", "value": "2",
                                                  "threshold": "0", "detail": "volatile uncorrected ECC errors"})
            d["host"] = f"node-{n:03d}"
            d["date"] = f"2026-12-02T{n:02d}:00:00+00:00"
            (folder / f"node-{n:03d}.json").write_text(json.dumps(d, indent=1))


# --------------------------------------------------------------------------- running

def tree_version(src: Path) -> str:
    m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", (src / "gpuwhy" / "version.py").read_text())
    return m.group(1) if m else ""


def base_env(src: Path, home: Path, tmp: Path, extra: dict) -> dict:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(src), "HOME": str(home), "TMPDIR": str(tmp),
           "TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "COLUMNS": "80"}
    env.update(extra)
    return env


def split_lines(s: str) -> list[str]:
    return s.split("\n")


def scan(root: Path, prefix: str, norm: Normaliser, squeeze: bool, skip: set[str]) -> dict:
    """Every file and folder under root (not following links), normalised and hashed."""
    found = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.split("/")[0] in skip or p.is_symlink():
            continue
        key = f"{prefix}/{rel}"
        if p.is_dir():
            found[key] = {"dir": True}
            continue
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            found[key] = {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}
            continue
        t = norm.text(text, squeeze).encode()
        found[key] = {"sha256": hashlib.sha256(t).hexdigest(), "bytes": len(t), "text": True}
    return found


def run_case(case: Case, python: str, src: Path, tmp: Path, norm: Normaliser) -> dict:
    root = tmp / "cases" / case.slug
    cwd, home, ttmp = root / "cwd", root / "home", root / "tmp"
    for d in (cwd, home, ttmp):
        d.mkdir(parents=True)
    for name in ("fx", "raw", "gen"):
        (cwd / name).symlink_to(tmp / "inputs" / name)
    for rel, text in case.files.items():
        (cwd / rel).parent.mkdir(parents=True, exist_ok=True)
        (cwd / rel).write_text(text)
    env = base_env(src, home, ttmp, case.env)
    pre_codes = []
    for argv in case.pre:
        r = subprocess.run([python, "-m", "gpuwhy", *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT_S)
        pre_codes.append(r.returncode)
    given = set(case.files)
    t0 = time.monotonic()
    try:
        r = subprocess.run([python, "-m", "gpuwhy", *case.argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT_S)
        code, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = "timeout", exc.stdout or b"", exc.stderr or b""
    took = time.monotonic() - t0
    rec: dict = {"slug": case.slug, "argv": case.argv}
    if case.env:
        rec["env"] = case.env
    if case.files:
        rec["given_files"] = sorted(case.files)
    if case.pre:
        rec["pre"] = [{"argv": a, "exit": c} for a, c in zip(case.pre, pre_codes)]
    rec["exit"] = code
    out_s = out.decode("utf-8", "replace")
    parsed = None
    if out_s.strip()[:1] in ("{", "["):
        try:
            parsed = json.loads(out_s)
        except ValueError:
            parsed = None
    if parsed is not None:
        v = norm.json(parsed, case.squeeze)
        dump = json.dumps(v, indent=1, sort_keys=False, ensure_ascii=False)
        if len(dump.encode()) > BIG_BYTES:
            rec["stdout_json_big"] = big(dump)
        else:
            rec["stdout_json"] = v
    else:
        t = norm.text(out_s, case.squeeze)
        if len(t.encode()) > BIG_BYTES:
            rec["stdout_big"] = big(t)
        else:
            rec["stdout"] = split_lines(t)
    rec["stderr"] = split_lines(norm.text(err.decode("utf-8", "replace"), case.squeeze))
    files = scan(cwd, "cwd", norm, case.squeeze, {"fx", "raw", "gen"})
    for rel in given:  # the files the case wrote itself are kept only when the command changed them
        parts = rel.split("/")
        for i in range(1, len(parts)):
            files.pop("cwd/" + "/".join(parts[:i]), None)
        h = files.get(f"cwd/{rel}")
        if h and h.get("sha256") == hashlib.sha256(norm.text(case.files[rel]).encode()).hexdigest():
            files.pop(f"cwd/{rel}")
    files.update(scan(home, "home", norm, case.squeeze, set()))
    files.update(scan(ttmp, "tmp", norm, case.squeeze, set()))
    rec["files"] = files
    rec["_took_s"] = took
    return rec


def big(text: str) -> dict:
    lines = text.split("\n")
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "bytes": len(text.encode()), "lines": len(lines),
            "head": lines[:HEAD_TAIL], "tail": lines[-HEAD_TAIL:]}


def make_temp_root() -> Path:
    """A new folder /tmp/gpuwhy-behaviour-N (the first N free): the same path on every run, so
    a path gpuwhy prints wraps the same way (the folder is removed at the end)."""
    base = Path(tempfile.gettempdir()).resolve()
    for n in range(1000):
        p = base / f"gpuwhy-behaviour-{n}"
        try:
            p.mkdir()
            return p
        except FileExistsError:
            continue
    raise SystemExit(f"no free {base}/gpuwhy-behaviour-N folder")


#: What is copied from the tree under test: the code and the bundled data it reads in place.
TREE_PARTS = ("src", "specs", "microbench", "pyproject.toml")


def copy_tree(src: Path, dest: Path) -> None:
    """The tree's code and bundled data at a path of fixed length (dest), so the paths gpuwhy
    prints (a sheet's file) are the same whichever folder the tree is checked out in."""
    dest.mkdir()
    for part in TREE_PARTS:
        p = src if part == "src" else src.parent / part
        if p.is_dir():
            shutil.copytree(p, dest / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        elif p.is_file():
            shutil.copy2(p, dest / part)


def run_all(src: Path, inputs_repo: Path, python: str, jobs: int, only: str | None,
            keep: bool = False) -> tuple[list[dict], float]:
    tree = src.resolve().parent
    all_cases = cases()
    slugs = [c.slug for c in all_cases]
    dup = {s for s in slugs if slugs.count(s) > 1}
    if dup:
        raise SystemExit(f"duplicate cases: {sorted(dup)}")
    if only:
        all_cases = [c for c in all_cases if re.search(only, c.slug)]
    start = time.time()
    t0 = time.monotonic()
    tmp = make_temp_root()
    try:
        copy_tree(src.resolve(), tmp / "tree")
        run_src = tmp / "tree" / "src"
        where = subprocess.run([python, "-c", "import gpuwhy; print(gpuwhy.__file__)"],
                               env=base_env(run_src, tmp, tmp, {}), cwd=tmp, capture_output=True, text=True)
        if not where.stdout.strip().startswith(str(run_src) + os.sep):
            raise SystemExit(f"gpuwhy imports from {where.stdout.strip() or where.stderr.strip()}, not from {run_src}")
        make_inputs(inputs_repo, tmp / "inputs")
        norm = Normaliser(tmp, [tmp / "tree", tree], inputs_repo, tree_version(src), start)
        order = sorted(all_cases, key=lambda c: not c.slow)  # the slow ones first
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futs = {c.slug: pool.submit(run_case, c, python, run_src, tmp, norm) for c in order}
            raw = {s: f.result() for s, f in futs.items()}
        recs = [raw[c.slug] for c in all_cases]
    finally:
        if keep:
            print(f"kept the run's folder {tmp} (each command's cwd/home/tmp under cases/SLUG/)", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return recs, time.monotonic() - t0


# --------------------------------------------------------------------------- record / compare

def strip_private(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if not k.startswith("_")}


def write(out: Path, recs: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    for rec in recs:
        (out / f"{rec['slug']}.json").write_text(json.dumps(strip_private(rec), indent=1, ensure_ascii=False) + "\n")
    index = {
        "what": "gpuwhy CLI behaviour without a GPU: benchmarks/behaviour/record.py",
        "normalisation": [{"tag": t, "what": w} for t, w in NORMALISATION],
        "commands": len(recs),
        "exit_codes": count_codes(recs),
        "cases": [{"slug": r["slug"], "argv": r["argv"], "exit": r["exit"], **({"env": r["env"]} if "env" in r else {})}
                  for r in recs],
    }
    (out / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")


def count_codes(recs: list[dict]) -> dict:
    c: dict[str, int] = {}
    for r in recs:
        c[str(r["exit"])] = c.get(str(r["exit"]), 0) + 1
    return dict(sorted(c.items()))


def json_diff(a, b, path="$", out=None, limit=40) -> list[str]:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                out.append(f"  {path}.{k}: removed (was {short(a[k])})")
            else:
                json_diff(a[k], b[k], f"{path}.{k}", out, limit)
        for k in b:
            if k not in a:
                out.append(f"  {path}.{k}: added {short(b[k])}")
        if [k for k in a if k in b] != [k for k in b if k in a]:
            out.append(f"  {path}: key order changed")
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            json_diff(x, y, f"{path}[{i}]", out, limit)
        if len(a) != len(b):
            out.append(f"  {path}: {len(a)} items -> {len(b)}")
    elif a != b or type(a) is not type(b):
        out.append(f"  {path}: {short(a)} -> {short(b)}")
    return out[:limit]


def short(v) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 120 else s[:117] + "..."


def text_diff(a: list[str], b: list[str], name: str, limit=60) -> list[str]:
    d = list(difflib.unified_diff(a, b, f"baseline {name}", f"now {name}", n=2, lineterm=""))
    if len(d) > limit:
        d = d[:limit] + [f"... ({len(d) - limit} more diff lines)"]
    return ["  " + x for x in d]


def diff_record(base: dict, now: dict) -> list[str]:
    lines: list[str] = []
    if base.get("argv") != now.get("argv") or base.get("env") != now.get("env"):
        lines.append(f"  argv/env: {short([base.get('argv'), base.get('env')])} -> {short([now.get('argv'), now.get('env')])}")
    if base.get("pre") != now.get("pre"):
        lines.append(f"  pre-commands: {short(base.get('pre'))} -> {short(now.get('pre'))}")
    if base["exit"] != now["exit"]:
        lines.append(f"  exit code: {base['exit']} -> {now['exit']}")
    kinds = ("stdout", "stdout_json", "stdout_big", "stdout_json_big")
    bk = next(k for k in kinds if k in base)
    nk = next(k for k in kinds if k in now)
    if bk != nk:
        lines.append(f"  stdout form: {bk} -> {nk}")
        a = base[bk] if bk == "stdout" else json.dumps(base[bk], indent=1).split("\n")
        b = now[nk] if nk == "stdout" else json.dumps(now[nk], indent=1).split("\n")
        lines += text_diff(a, b, "stdout")
    elif bk == "stdout_json":
        d = json_diff(base[bk], now[nk])
        if d:
            lines.append("  stdout (JSON):")
            lines += d
    elif bk == "stdout":
        if base[bk] != now[nk]:
            lines += text_diff(base[bk], now[nk], "stdout")
    else:
        if base[bk]["sha256"] != now[nk]["sha256"]:
            lines.append(f"  stdout (big, sha256 differs; {base[bk]['lines']} -> {now[nk]['lines']} lines)")
            lines += text_diff(base[bk]["head"], now[nk]["head"], "stdout head")
            lines += text_diff(base[bk]["tail"], now[nk]["tail"], "stdout tail")
    if base["stderr"] != now["stderr"]:
        lines += text_diff(base["stderr"], now["stderr"], "stderr")
    bf, nf = base.get("files", {}), now.get("files", {})
    for k in sorted(set(bf) | set(nf)):
        if k not in nf:
            lines.append(f"  file {k}: no longer written")
        elif k not in bf:
            lines.append(f"  file {k}: newly written {short(nf[k])}")
        elif bf[k] != nf[k]:
            lines.append(f"  file {k}: {short(bf[k])} -> {short(nf[k])}")
    return lines


def compare(base_dir: Path, recs: list[dict], only: str | None = None) -> int:
    base = {}
    for p in sorted(base_dir.glob("*.json")):
        if p.name != "index.json":
            d = json.loads(p.read_text())
            if not only or re.search(only, d["slug"]):
                base[d["slug"]] = d
    now = {r["slug"]: strip_private(r) for r in recs}
    same = 0
    changed = 0
    for slug, rec in now.items():
        if slug not in base:
            print(f"== {slug}: not in the baseline (a new command)")
            changed += 1
            continue
        d = diff_record(base[slug], rec)
        if d:
            changed += 1
            print(f"== {slug}: gpuwhy {' '.join(rec['argv'])}")
            print("\n".join(d))
        else:
            same += 1
    missing = [s for s in base if s not in now]
    for s in missing:
        print(f"== {s}: in the baseline, not run now")
    total = len(set(base) | set(now))
    print(f"{same} of {total} commands identical")
    return 0 if same == total else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, type=Path, help="the tree's src/ folder (PYTHONPATH)")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", type=Path, help="record into DIR (one file per command, plus index.json)")
    mode.add_argument("--compare", type=Path, help="re-run and compare with the recording in DIR")
    ap.add_argument("--inputs", type=Path, default=REPO, help="repository whose tests/fixtures and docs/results/raw are "
                                                              "the inputs (default: this script's)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with gpuwhy's dependencies")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--only", help="regex: only the cases whose slug matches (for debugging)")
    ap.add_argument("--keep", action="store_true", help="keep the run's temp folder (the files each command wrote) "
                                                        "to look at what a changed file hash means")
    a = ap.parse_args(argv)
    src = a.src.resolve()
    if not (src / "gpuwhy" / "__init__.py").is_file():
        ap.error(f"{src} has no gpuwhy package")
    recs, took = run_all(src, a.inputs.resolve(), a.python, a.jobs, a.only, a.keep)
    slowest = sorted(recs, key=lambda r: -r["_took_s"])[:3]
    print(f"ran {len(recs)} commands in {took:.1f} s (exit codes {count_codes(recs)}; slowest: "
          + ", ".join(f"{r['slug']} {r['_took_s']:.1f} s" for r in slowest) + ")", file=sys.stderr)
    if a.out:
        write(a.out, recs)
        print(f"recorded {len(recs)} commands in {a.out}", file=sys.stderr)
        return 0
    return compare(a.compare, recs, a.only)


if __name__ == "__main__":
    sys.exit(main())
