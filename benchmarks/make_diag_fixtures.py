#!/usr/bin/env python3
"""Make the real fixtures of issue 8 on a GPU machine: ncu exports, torch.profiler traces, gpuwhy.measure results.

Needs: python3 with PyTorch (CUDA), ``ncu`` on PATH (skipped with a note when
absent), a GPU. Run from the repository root::

    python3 benchmarks/make_diag_fixtures.py tests/fixtures/real

Writes into the folder given (all small, meant to be committed; each under ~2 MB):

- ``ncu_raw.csv``: ``ncu --csv --page raw`` of a small PyTorch program, as a
  user gets it (``==PROF==`` lines and the program's own output included);
- ``ncu_details.csv`` and ``ncu_raw_base.csv``: the details page and the raw
  page in base units (``--print-units base``), both from one ``--export``
  report of a second run of the same program;
- ``ncu_permission_error.csv`` instead, when ncu may not read the counters
  (ERR_NVGPUCTRPERM), or ``ncu_error.txt`` when ncu cannot profile at all on
  this machine (e.g. a gVisor runtime: "Failed to initialize the profiler");
- ``ncu_metrics_available.txt``: the tensor metrics ``ncu --query-metrics``
  lists on this GPU (which decides the tensor part of ``--metrics``);
- ``trace_overhead.json[.gz]``: torch.profiler trace of a loop of small ops
  with a host sync every 20 steps (expected: overhead-bound);
- ``trace_matmul.json[.gz]``: torch.profiler trace (``with_flops=True``) of a
  loop of 8192^3 bf16 matmuls (expected: gpu-bound);
- ``measure.json``: ``gpuwhy.measure`` of ``torch.add`` on 2^28 fp32 elements
  and of an 8192^3 bf16 matmul, against the sheet and (after ``gpuwhy bench
  --quick`` saved a profile) against the measured roof;
- ``manifest.json``: versions, GPU, sizes, the exact ncu command lines;
- ``SUMMARY.md``: the headline numbers (copy to docs/results/).

The program profiled by ncu (between cudaProfilerStart/Stop, so only these
kernels are profiled): two ``torch.add`` of 2^26 fp32 elements (memory-bound),
one 8192^3 bf16 ``torch.matmul`` (compute-bound), two in-place ops on 256
elements (launch-sized).

Prints one JSON document on stdout (the measure results and the file list);
progress on stderr. Exit code 0 when every part ran, 1 otherwise.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

ADD_N = 1 << 26  # fp32 elements per add in the ncu program (256 MiB per tensor)
MM_N = 8192  # bf16 matmul size
SMALL_N = 256
MEASURE_ADD_N = 1 << 28  # 256M fp32 elements: 1 GiB per tensor
MAX_FILE = 2_000_000

PROGRAM = r'''
import json, sys, torch
torch.backends.cuda.matmul.allow_tf32 = False
N, M, S = {add_n}, {mm_n}, {small_n}
a = torch.randn(N, device="cuda"); b = torch.randn(N, device="cuda"); out = torch.empty_like(a)
x = torch.randn(M, M, device="cuda", dtype=torch.bfloat16); y = torch.randn(M, M, device="cuda", dtype=torch.bfloat16)
z = torch.empty(M, M, device="cuda", dtype=torch.bfloat16)
small = torch.randn(S, device="cuda")
torch.add(a, b, out=out); torch.matmul(x, y, out=z); small.mul_(1.0001); small.add_(0.5)   # warm-up, not profiled
torch.cuda.synchronize()
torch.cuda.profiler.start()
torch.add(a, b, out=out)
torch.add(a, b, out=out)
torch.matmul(x, y, out=z)
small.mul_(1.0001)
small.add_(0.5)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print(json.dumps({{"program": "gpuwhy ncu fixture", "add_elements": N, "matmul": [M, M, M], "small_elements": S,
                  "gpu": torch.cuda.get_device_name(0)}}))
'''


def log(msg: str) -> None:
    sys.stderr.write(f"[make_diag_fixtures] {msg}\n")
    sys.stderr.flush()


def _write_small(path: Path, data: bytes) -> Path:
    """Write ``data``; gzip it (``.gz``) when it is over MAX_FILE bytes."""
    if len(data) > MAX_FILE:
        gz = path.with_name(path.name + ".gz")
        with gzip.open(gz, "wb", compresslevel=9) as fh:
            fh.write(data)
        return gz
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- ncu


def _has_header(text: str) -> bool:
    return any(ln.lstrip().startswith('"ID"') and "Kernel Name" in ln for ln in text.splitlines())


def ncu_metrics(ncu: str, out: Path) -> tuple[list[str], str]:
    """The --metrics list: gpuwhy's core counters plus the tensor counters this GPU has."""
    from gpuwhy.importers.ncu import CORE_METRICS

    extra_own = ["dram__bytes.sum", "dram__bytes.sum.per_second", "dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    try:
        q = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
        names = sorted(set(re.findall(r"^([a-z0-9]+__[a-z0-9_]+)\s", q.stdout, flags=re.M)))
    except Exception as exc:  # noqa: BLE001
        log(f"ncu --query-metrics failed ({exc}); using the documented tensor metrics")
        names = []
    tensor_ops = [n for n in names if n.startswith("sm__ops_path_tensor_")]
    generic = [n for n in tensor_ops if "_op_" not in n and "sparsity" not in n]
    families = [n for n in tensor_ops if "_op_" in n and "sparsity" not in n]
    sparsity_off = [n for n in tensor_ops if n.endswith("_sparsity_off")]
    chosen = generic or families or sparsity_off
    inst = [n for n in names if n in ("sm__inst_executed_pipe_tensor", "sm__inst_executed_pipe_tensor_op_hmma",
                                      "sm__inst_executed_pipe_tensor_op_gmma")]
    (out / "ncu_metrics_available.txt").write_text(
        "# tensor metrics listed by `ncu --query-metrics` on this GPU\n" + "\n".join(tensor_ops + inst) + "\n"
    )
    if not names:
        from gpuwhy.importers.ncu import TENSOR_METRICS

        tensor = list(TENSOR_METRICS)
        why = "documented list (query failed)"
    else:
        tensor = [n + ".sum" for n in inst + chosen]
        why = f"{len(chosen)} sm__ops_path_tensor_* counters from --query-metrics"
    return list(CORE_METRICS) + tensor + extra_own, why


def run_ncu(out: Path, manifest: dict) -> bool:
    ncu = shutil.which("ncu")
    if not ncu:
        log("ncu is not on PATH: skipping the ncu exports")
        manifest["ncu"] = "not found on PATH"
        return False
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    manifest["ncu_version"] = ver[-1] if ver else "?"
    metrics, why = ncu_metrics(ncu, out)
    manifest["ncu_metrics_choice"] = why
    tmp = Path(tempfile.mkdtemp(prefix="gpuwhy-ncu-"))
    prog = tmp / "ncu_program.py"
    prog.write_text(PROGRAM.format(add_n=ADD_N, mm_n=MM_N, small_n=SMALL_N))
    dropped: list[str] = []
    for _attempt in range(8):
        common = ["--metrics", ",".join(metrics), "--clock-control", "none", "--profile-from-start", "off",
                  "--target-processes", "all"]
        cmd_a = [ncu, "--csv", "--page", "raw", *common, sys.executable, str(prog)]
        log("ncu run 1: --csv --page raw (the export a user redirects to a file)")
        t0 = time.time()
        a = subprocess.run(cmd_a, capture_output=True, text=True, timeout=400)
        log(f"  {time.time() - t0:.0f} s, exit {a.returncode}")
        bad = re.search(r"(?:Failed to find metric|[Mm]etric)\s+'?([A-Za-z0-9_.]+)'?\s*(?:$|is not|not found|could not|is invalid)",
                        a.stdout + a.stderr, flags=re.M)
        if a.returncode != 0 and bad and bad.group(1) in metrics:
            log(f"  ncu does not know {bad.group(1)} on this GPU: dropping it and retrying")
            metrics = [m for m in metrics if m != bad.group(1)]
            dropped.append(bad.group(1))
            continue
        break
    manifest["ncu_metrics"] = metrics
    manifest["ncu_metrics_dropped"] = dropped
    manifest["ncu_command_raw"] = " ".join(cmd_a[1:]).replace(str(prog), "ncu_program.py").replace(sys.executable, "python3")
    (out / "ncu_raw.stderr.txt").write_text(a.stderr[-20000:])
    if "ERR_NVGPUCTRPERM" in a.stdout + a.stderr:
        _write_small(out / "ncu_permission_error.csv", (a.stdout + a.stderr).encode())
        log("ncu has no permission to read the counters (ERR_NVGPUCTRPERM): saved ncu_permission_error.csv; "
            "re-run as root or with NVreg_RestrictProfilingToAdminUsers=0 for the real exports")
        manifest["ncu"] = "ERR_NVGPUCTRPERM"
        return False
    if not _has_header(a.stdout):
        # e.g. gVisor machines: "Failed to initialize the profiler: LibraryNotLoaded" (see the device notes).
        (out / "ncu_error.txt").write_text(a.stdout[-20000:] + "\n--- stderr ---\n" + a.stderr[-20000:])
        last = [ln for ln in (a.stdout + a.stderr).splitlines() if "==ERROR==" in ln][:3]
        log(f"ncu wrote no CSV (exit {a.returncode}): {' | '.join(last) or 'see ncu_error.txt'}; no ncu fixtures from this machine")
        manifest["ncu"] = "failed: " + (" | ".join(last) or f"exit {a.returncode}")
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    _write_small(out / "ncu_raw.csv", a.stdout.encode())
    rep = tmp / "report"
    cmd_b = [ncu, "--export", str(rep), "--force-overwrite", *common, sys.executable, str(prog)]
    log("ncu run 2: --export, then --import as the details page and the raw page in base units")
    b = subprocess.run(cmd_b, capture_output=True, text=True, timeout=400)
    rep_file = rep.with_suffix(".ncu-rep")
    ok = a.returncode == 0 and b.returncode == 0 and rep_file.exists()
    if rep_file.exists():
        d = subprocess.run([ncu, "--import", str(rep_file), "--csv", "--page", "details"], capture_output=True, text=True, timeout=120)
        if _has_header(d.stdout):
            _write_small(out / "ncu_details.csv", d.stdout.encode())
        r = subprocess.run([ncu, "--import", str(rep_file), "--csv", "--page", "raw", "--print-units", "base"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            log(f"--print-units base refused ({r.stderr.strip()[:200]}); exporting the raw page with default units")
            r = subprocess.run([ncu, "--import", str(rep_file), "--csv", "--page", "raw"], capture_output=True, text=True, timeout=120)
        if _has_header(r.stdout):
            _write_small(out / "ncu_raw_base.csv", r.stdout.encode())
        ok = ok and d.returncode == 0 and r.returncode == 0
    else:
        log(f"ncu --export failed (exit {b.returncode}): {b.stderr.strip().splitlines()[-1:] }")
    manifest["ncu_command_export"] = " ".join(cmd_b[1:]).replace(str(prog), "ncu_program.py").replace(sys.executable, "python3").replace(str(rep), "report")
    manifest["ncu_program"] = PROGRAM.format(add_n=ADD_N, mm_n=MM_N, small_n=SMALL_N)
    shutil.rmtree(tmp, ignore_errors=True)
    return ok


# --------------------------------------------------------------------------- traces


def make_traces(out: Path, manifest: dict) -> bool:
    import torch
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    tmp = Path(tempfile.mkdtemp(prefix="gpuwhy-trace-"))

    # (1) A loop of small ops with a host sync every 20 steps: overhead-bound.
    x = torch.randn(1024, device="cuda")
    for _ in range(10):
        x = x * 1.0001 + 0.5
    torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        for i in range(200):
            x = x * 1.0001 + 0.5
            if i % 20 == 0:
                x.sum().item()
        torch.cuda.synchronize()
    p1 = tmp / "trace_overhead.json"
    prof.export_chrome_trace(str(p1))
    f1 = _write_small(out / "trace_overhead.json", p1.read_bytes())

    # (2) A loop of large bf16 matmuls: the GPU is busy.
    a = torch.randn(MM_N, MM_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MM_N, MM_N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    for _ in range(3):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    with profile(activities=acts, with_flops=True) as prof:
        for _ in range(20):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    p2 = tmp / "trace_matmul.json"
    prof.export_chrome_trace(str(p2))
    f2 = _write_small(out / "trace_matmul.json", p2.read_bytes())
    manifest["traces"] = {
        f1.name: "200 steps of x = x * 1.0001 + 0.5 on 1024 fp32 elements, x.sum().item() every 20 steps",
        f2.name: f"20 x torch.matmul of {MM_N}^3 bf16 (with_flops=True)",
    }
    shutil.rmtree(tmp, ignore_errors=True)
    return True


# --------------------------------------------------------------------------- measure


def run_measure(out: Path, manifest: dict, bench: bool) -> dict:
    import torch

    import gpuwhy
    from gpuwhy.render.jsonout import to_plain

    results: dict = {}
    if bench:
        log("gpuwhy bench --quick (saves the measured profile measure(measured=True) uses)")
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
        try:
            bq = subprocess.run([sys.executable, "-m", "gpuwhy", "bench", "--quick", "--json"], capture_output=True, text=True,
                                timeout=300, env=env)
            results["bench_exit"] = bq.returncode
            try:
                doc = json.loads(bq.stdout)
                results["bench_sustained_gbs"] = doc.get("sustained_dram_gbs")
                results["bench_sustained_pct_of_spec"] = doc.get("sustained_dram_pct_of_spec")
            except ValueError:
                results["bench_stderr"] = bq.stderr[-2000:]
        except Exception as exc:  # noqa: BLE001
            results["bench_error"] = str(exc)

    a = torch.randn(MEASURE_ADD_N, device="cuda")
    b = torch.randn_like(a)
    x = torch.randn(MM_N, MM_N, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(MM_N, MM_N, device="cuda", dtype=torch.bfloat16)
    cases = {
        "torch.add 2^28 fp32": (torch.add, (a, b)),
        f"torch.matmul {MM_N}^3 bf16": (torch.matmul, (x, y)),
    }
    for label, (fn, args) in cases.items():
        for roof in ("sheet", "measured"):
            key = f"{label} [{roof} roof]"
            try:
                r = gpuwhy.measure(fn, *args, measured=(roof == "measured"), name=label)
                results[key] = {"summary": r.summary(), "regime": r.verdict.regime, "sol_pct": r.verdict.sol_pct,
                                "result": to_plain(r)}
                log(r.summary())
            except Exception as exc:  # noqa: BLE001
                results[key] = {"error": f"{type(exc).__name__}: {exc}"}
                log(f"{key}: {type(exc).__name__}: {exc}")
    (out / "measure.json").write_text(json.dumps(results, indent=2, allow_nan=False, default=str) + "\n")
    return results


# --------------------------------------------------------------------------- summary


def summarize(out: Path, manifest: dict, measure: dict) -> str:
    from gpuwhy.importers.ncu import load_ncu_report
    from gpuwhy.importers.kineto import load_trace

    lines = [f"# gpuwhy diagnose fixtures on {manifest.get('gpu')} ({time.strftime('%Y-%m-%d')})", ""]
    lines += [f"PyTorch {manifest.get('torch')}, CUDA {manifest.get('torch_cuda')}, {manifest.get('ncu_version', 'no ncu')}", ""]
    for name in ("ncu_raw.csv", "ncu_details.csv", "ncu_raw_base.csv"):
        p = out / name
        if not p.exists():
            continue
        try:
            r = load_ncu_report(p)
        except Exception as exc:  # noqa: BLE001
            lines.append(f"- `{name}`: {exc}")
            continue
        lines.append(f"## `gpuwhy ncu {name}`")
        lines.append("")
        lines.append("| kernel | launches | total | FLOP/B | TFLOP/s | GB/s | % roof | regime |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for d in r.devices:
            for k in d.kernels:
                if k.classifiable:
                    lines.append(f"| {k.name} | {k.launches} | {k.total_time_s * 1e6:.1f} us | {k.intensity:.3g} | "
                                 f"{k.achieved_tflops:.3g} | {k.achieved_gbs:.0f} | {k.roof_pct:.0f}% | {k.regime} ({k.precision}) |")
                else:
                    lines.append(f"| {k.name} | {k.launches} | | | | | | not classifiable: {k.reason} |")
        lines.append("")
    for p in sorted(out.glob("trace_*.json*")):
        try:
            t = load_trace(p)
            lines.append(f"- `gpuwhy trace {p.name}`: **{t.verdict}**: {t.summary}")
        except Exception as exc:  # noqa: BLE001
            lines.append(f"- `{p.name}`: {exc}")
    lines.append("")
    lines.append("## gpuwhy.measure")
    lines.append("")
    for k, v in measure.items():
        if isinstance(v, dict):
            lines.append(f"- {k}: {v.get('summary') or v.get('error')}")
    text = "\n".join(lines) + "\n"
    (out / "SUMMARY.md").write_text(text)
    return text


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.stderr.write("usage: python3 benchmarks/make_diag_fixtures.py OUT_DIR [--no-ncu] [--no-trace] [--no-measure] [--no-bench]\n")
        return 2
    out = Path(sys.argv[1])
    flags = set(sys.argv[2:])
    out.mkdir(parents=True, exist_ok=True)
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write("make_diag_fixtures: PyTorch sees no CUDA GPU\n")
        return 3
    manifest: dict = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": sys.version.split()[0],
        "ncu_program_sizes": {"add_elements": ADD_N, "matmul": [MM_N, MM_N, MM_N], "small_elements": SMALL_N},
        "measure_sizes": {"add_elements": MEASURE_ADD_N, "matmul": [MM_N, MM_N, MM_N]},
    }
    ok = True
    if "--no-ncu" not in flags:
        try:
            ok &= run_ncu(out, manifest)
        except Exception as exc:  # noqa: BLE001
            log(f"ncu part failed: {type(exc).__name__}: {exc}")
            manifest["ncu_error"] = str(exc)
            ok = False
    if "--no-trace" not in flags:
        try:
            ok &= make_traces(out, manifest)
        except Exception as exc:  # noqa: BLE001
            log(f"trace part failed: {type(exc).__name__}: {exc}")
            ok = False
    measure: dict = {}
    if "--no-measure" not in flags:
        try:
            measure = run_measure(out, manifest, bench="--no-bench" not in flags)
        except Exception as exc:  # noqa: BLE001
            log(f"measure part failed: {type(exc).__name__}: {exc}")
            ok = False
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    try:
        summary = summarize(out, manifest, measure)
        sys.stderr.write(summary)
    except Exception as exc:  # noqa: BLE001
        log(f"summary failed: {type(exc).__name__}: {exc}")
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    print(json.dumps({"ok": bool(ok), "folder": str(out), "files": files,
                      "measure": {k: (v.get("summary") or v.get("error")) if isinstance(v, dict) else v for k, v in measure.items()}},
                     indent=2, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
