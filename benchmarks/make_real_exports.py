#!/usr/bin/env python3
"""Make the real inputs of issues 14 and 17 on a GPU machine: ncu exports made the way users make them, and torch.profiler traces of real loops.

Run from the repository root on the GPU machine::

    python3 benchmarks/make_real_exports.py OUT_DIR

Writes into OUT_DIR (each file small enough to commit; gzipped above 2 MB):

ncu (issue 14), all of one program (``ncu_mix.py``, written beside them) of
several kernel kinds: a bf16 GEMM, SDPA (flash) attention, layer norm, softmax,
GELU, tiny elementwise ops and an fp32 (non-TF32) matmul, profiled between
``cudaProfilerStart/Stop`` (``--profile-from-start off``):

- ``ncu_default_details.csv``: ``ncu --csv --page details`` (default sections);
- ``ncu_full_raw.csv``: ``ncu --set full --csv --page raw``;
- ``ncu_nersc.csv``: the NERSC roofline metric list (``--metrics ... --csv``,
  the details page as that recipe prints it);
- ``ncu_pct_raw.csv``: percentage and pipe-utilisation metrics only, raw page;
- ``ncu_mix.ncu-rep``: ``ncu -o`` (default sections), plus
  ``ncu_rep_import_raw.csv``, its ``ncu --import ... --csv --page raw``;
- ``ncu_query_metrics.txt``: ``ncu --query-metrics`` on this GPU;
- ``ncu_report_module.txt``: where NVIDIA's ``ncu_report`` module lives.

Traces (issue 17), ``torch.profiler`` Chrome traces:

- ``trace_dataloader.json``: a small CNN training loop whose DataLoader
  (``num_workers=0``) does CPU work per sample;
- ``trace_streams.json``: two streams, the second waiting on the first through
  events (``wait_stream``), launches queued ahead;
- ``trace_one_kernel.json``: a single small kernel;
- ``trace_item_sync.json``: a training step with ``loss.item()`` each step;
- ``trace_decode.json``: eager token-by-token decoding of a small transformer;
- ``memory_timeline.json``: ``export_memory_timeline`` (not a trace).

``commands.json`` holds every command line exactly, the versions and the GPU.
Progress goes to stderr; a one-line summary per file to stdout. Exit 0 when
every part ran, 1 otherwise.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MAX_FILE = 2_000_000

PROGRAM = r'''
"""Several kernel kinds, profiled between cudaProfilerStart and cudaProfilerStop."""
import torch
import torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
q = torch.randn(4, 16, 2048, 128, device=dev, dtype=torch.bfloat16)
k = torch.randn_like(q); v = torch.randn_like(q)
x = torch.randn(8192, 4096, device=dev)
ln = torch.nn.LayerNorm(4096, device=dev)
g = torch.randn(1 << 26, device=dev)
f32a = torch.randn(2048, 2048, device=dev); f32b = torch.randn(2048, 2048, device=dev)
tiny = torch.randn(256, device=dev)

def step():
    c = a @ b                                                     # bf16 GEMM
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # flash attention
    y = ln(x)                                                     # layer norm
    s = torch.softmax(x, dim=-1)                                  # softmax
    h = F.gelu(g)                                                 # GELU
    tiny.mul_(1.0001); tiny.add_(0.5)                             # tiny elementwise
    m = f32a @ f32b                                               # fp32 matmul, TF32 off
    return c, o, y, s, h, m

with torch.no_grad():
    step(); torch.cuda.synchronize()                              # warm-up, not profiled
    torch.cuda.profiler.start()
    step()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
print("ncu_mix done on", torch.cuda.get_device_name(0))
'''

# The NERSC "roofline on NVIDIA GPUs" metric list (time from cycles / rate,
# DRAM/L2/L1 bytes, the sass FLOP counters, the tensor pipe).
NERSC = [
    "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "sm__inst_executed_pipe_tensor.sum",
]
PCT = [
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
]


def log(msg: str) -> None:
    sys.stderr.write(f"[make_real_exports] {msg}\n")
    sys.stderr.flush()


def write_small(path: Path, data: bytes) -> Path:
    if len(data) > MAX_FILE:
        gz = path.with_name(path.name + ".gz")
        with gzip.open(gz, "wb", compresslevel=9) as fh:
            fh.write(data)
        return gz
    path.write_bytes(data)
    return path


def shown(cmd: list[str], out: Path) -> str:
    return " ".join(cmd).replace(sys.executable, "python3").replace(str(out) + "/", "")


def run_ncu(out: Path, cmds: dict) -> bool:
    ncu = shutil.which("ncu")
    if not ncu:
        cmds["ncu"] = "not on PATH"
        return False
    cmds["ncu_path"] = os.path.realpath(ncu)
    cmds["ncu_version"] = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()
    prog = out / "ncu_mix.py"
    prog.write_text(PROGRAM.lstrip())
    q = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    write_small(out / "ncu_query_metrics.txt", q.stdout.encode())
    known = set(ln.split()[0] for ln in q.stdout.splitlines() if ln.strip() and "__" in ln.split()[0])
    cmds["ncu --query-metrics"] = f"exit {q.returncode}, {len(known)} metric bases"
    # Where NVIDIA's ncu_report Python module is (extras/python beside ncu).
    base = Path(os.path.realpath(ncu)).parent
    found = [str(p) for p in [base / "extras" / "python", base.parent / "extras" / "python"] if (p / "ncu_report.py").exists()]
    (out / "ncu_report_module.txt").write_text("\n".join(found) + "\n")
    cmds["ncu_report_module"] = found
    py = [sys.executable, str(prog)]
    common = ["--profile-from-start", "off"]
    ok = True
    runs = [
        ("ncu_default_details.csv", [ncu, *common, "--csv", "--page", "details", *py]),
        ("ncu_full_raw.csv", [ncu, *common, "--set", "full", "--csv", "--page", "raw", *py]),
        ("ncu_pct_raw.csv", [ncu, *common, "--metrics", ",".join(PCT), "--csv", "--page", "raw", *py]),
    ]
    nersc = list(NERSC)
    missing = [m for m in nersc if m.split(".")[0] not in known]
    cmds["nersc_missing_on_this_gpu"] = missing
    runs.append(("ncu_nersc.csv", [ncu, *common, "--metrics", ",".join(nersc), "--csv", *py]))
    if missing:
        kept = [m for m in nersc if m not in missing]
        if "sm__inst_executed_pipe_tensor.sum" in missing:
            for alt in ("sm__inst_executed_pipe_tensor_op_hmma", "sm__inst_executed_pipe_tensor_op_gmma"):
                if alt in known:
                    kept.append(alt + ".sum")
        runs.append(("ncu_nersc_hopper.csv", [ncu, *common, "--metrics", ",".join(kept), "--csv", *py]))
    for name, cmd in runs:
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
        log(f"{name}: exit {r.returncode} in {time.time() - t0:.0f} s")
        write_small(out / name, r.stdout.encode())
        if r.stderr.strip():
            (out / (name + ".stderr.txt")).write_text(r.stderr[-20000:])
        cmds[name] = {"command": shown(cmd, out) + f" > {name}", "exit": r.returncode, "seconds": round(time.time() - t0, 1)}
        ok &= r.returncode == 0 or name == "ncu_nersc.csv"
    rep = out / "ncu_mix"
    cmd = [ncu, *common, "-o", str(rep), "-f", *py]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    cmds["ncu_mix.ncu-rep"] = {"command": shown(cmd, out), "exit": r.returncode}
    ok &= r.returncode == 0
    if rep.with_suffix(".ncu-rep").exists():
        cmd = [ncu, "--import", str(rep.with_suffix(".ncu-rep")), "--csv", "--page", "raw"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        write_small(out / "ncu_rep_import_raw.csv", r.stdout.encode())
        cmds["ncu_rep_import_raw.csv"] = {"command": shown(cmd, out) + " > ncu_rep_import_raw.csv", "exit": r.returncode}
        if found:
            env = dict(os.environ, PYTHONPATH=found[0])
            probe = ("import ncu_report,sys; c=ncu_report.load_report(sys.argv[1]); r=c.range_by_idx(0); "
                     "print(r.num_actions(), [r.action_by_idx(i).name() for i in range(r.num_actions())][:3]); "
                     "a=r.action_by_idx(0); print(sorted(a.metric_names())[:5]); "
                     "m=a.metric_by_name('gpu__time_duration.sum'); print(m.as_double(), m.unit())")
            r = subprocess.run([sys.executable, "-c", probe, str(rep.with_suffix(".ncu-rep"))], capture_output=True,
                               text=True, env=env, timeout=120)
            (out / "ncu_report_probe.txt").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr[-4000:])
    return ok


def export(prof, out: Path, name: str, what: str, cmds: dict) -> None:
    tmp = out / (name + ".tmp")
    prof.export_chrome_trace(str(tmp))
    f = write_small(out / name, tmp.read_bytes())
    tmp.unlink()
    cmds[f.name] = what
    log(f"{f.name}: {f.stat().st_size} bytes")


def make_traces(out: Path, cmds: dict) -> bool:
    import numpy as np
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile, schedule

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    dev = "cuda"

    # (1) DataLoader-bound training: num_workers=0, CPU augmentation per sample.
    class Noisy(torch.utils.data.Dataset):
        def __len__(self):
            return 10_000

        def __getitem__(self, i):
            rng = np.random.default_rng(i)
            img = rng.standard_normal((3, 64, 64)).astype(np.float32)
            for _ in range(6):  # a CPU "augmentation" people really write
                img = np.clip(img * 1.01 + rng.standard_normal(img.shape).astype(np.float32) * 0.01, -3, 3)
            return torch.from_numpy(img), int(i % 10)

    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = torch.utils.data.DataLoader(Noisy(), batch_size=64, shuffle=True, num_workers=0)
    lossf = nn.CrossEntropyLoss()
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=3, repeat=1)) as prof:
        for i, (xb, yb) in enumerate(loader):
            xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(xb), yb)
            loss.backward()
            opt.step()
            prof.step()
            if i >= 5:
                break
    export(prof, out, "trace_dataloader.json",
           "CNN training, DataLoader(batch_size=64, num_workers=0) with 6 numpy passes per 3x64x64 sample; "
           "schedule(wait=1, warmup=1, active=3)", cmds)

    # (2) Two streams: s2 waits on s1 (events), launches queued ahead.
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    big = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    small = torch.randn(1 << 20, device=dev)
    torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        for _ in range(20):
            with torch.cuda.stream(s1):
                for _ in range(4):
                    big = (big @ big).clamp_(-1, 1)
            s2.wait_stream(s1)
            with torch.cuda.stream(s2):
                for _ in range(8):
                    small.mul_(0.999)
            s1.wait_stream(s2)
        torch.cuda.synchronize()
    export(prof, out, "trace_streams.json",
           "20 x (4 bf16 4096^3 matmul+clamp on stream 1; stream 2 waits (wait_stream) then 8 small mul_; "
           "stream 1 waits on stream 2)", cmds)

    # (3) One kernel.
    t = torch.randn(1024, device=dev)
    torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        t.mul_(2.0)
        torch.cuda.synchronize()
    export(prof, out, "trace_one_kernel.json", "one t.mul_(2.0) on 1024 fp32 elements", cmds)

    # (4) A training step that syncs each step through loss.item().
    mlp = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(dev)
    o2 = torch.optim.AdamW(mlp.parameters(), lr=1e-3)
    xb = torch.randn(256, 1024, device=dev)
    with profile(activities=acts) as prof:
        hist = []
        for _ in range(30):
            o2.zero_grad(set_to_none=True)
            loss = mlp(xb).pow(2).mean()
            loss.backward()
            o2.step()
            hist.append(loss.item())
            time.sleep(0.002)  # logging / metrics on the host
        torch.cuda.synchronize()
    export(prof, out, "trace_item_sync.json",
           "30 AdamW steps of a 1024-4096-1024 MLP at batch 256, loss.item() and a 2 ms host pause each step", cmds)

    # (5) Eager decoding of a small transformer, token by token.
    layer = nn.TransformerDecoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True).to(dev).eval()
    dec = nn.TransformerDecoder(layer, num_layers=4).to(dev).eval()
    emb = nn.Embedding(32000, 512).to(dev)
    head = nn.Linear(512, 32000).to(dev)
    mem = torch.randn(1, 16, 512, device=dev)
    with torch.no_grad():
        toks = torch.randint(0, 32000, (1, 8), device=dev)
        with profile(activities=acts) as prof:
            for _ in range(16):
                h = dec(emb(toks), mem)
                nxt = head(h[:, -1]).argmax(-1, keepdim=True)
                toks = torch.cat([toks, nxt], dim=1)
            torch.cuda.synchronize()
    export(prof, out, "trace_decode.json",
           "16 greedy decode steps of a 4-layer d=512 nn.TransformerDecoder at batch 1, eager", cmds)

    # (6) A memory timeline export (not a trace: a different JSON shape).
    with profile(activities=acts, profile_memory=True, record_shapes=True, with_stack=True) as prof:
        for _ in range(3):
            o2.zero_grad(set_to_none=True)
            mlp(xb).pow(2).mean().backward()
            o2.step()
        torch.cuda.synchronize()
    mt = out / "memory_timeline.json"
    prof.export_memory_timeline(str(mt), device="cuda:0")
    data = mt.read_bytes()
    mt.unlink()
    f = write_small(mt, data)
    cmds[f.name] = "prof.export_memory_timeline('memory_timeline.json', device='cuda:0') of 3 MLP steps"
    return True


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python3 benchmarks/make_real_exports.py OUT_DIR\n")
        return 2
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    import torch

    cmds: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
                  "torch": torch.__version__, "torch_cuda": torch.version.cuda, "python": sys.version.split()[0]}
    ok = True
    for part in (run_ncu, make_traces):
        try:
            ok &= part(out, cmds)
        except Exception as exc:  # noqa: BLE001
            log(f"{part.__name__} failed: {type(exc).__name__}: {exc}")
            cmds[part.__name__ + "_error"] = f"{type(exc).__name__}: {exc}"
            ok = False
    (out / "commands.json").write_text(json.dumps(cmds, indent=2) + "\n")
    for p in sorted(out.iterdir()):
        print(f"{p.name:32} {p.stat().st_size:>10}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
