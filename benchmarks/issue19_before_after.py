"""Issue 19's closing-note table: each kind of fault, the command that showed it, before and after.

Runs every command twice, once with another checkout's sources (``--before``, default
/work/main) and once with this one's, and prints a markdown table of the exit code and
the line that matters. No GPU needed; the Ctrl-C rows need /proc and take ~20 s.

    PYTHONPATH=src python benchmarks/issue19_before_after.py [--before /path/to/main]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"


def _env(src: Path, **extra) -> dict:
    e = dict(os.environ)
    e.update(PYTHONPATH=str(src), COLUMNS="120", GPUWHY_NO_CACHE="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return e


def run(src: Path, args: list[str], env: dict | None = None, timeout: float = 180) -> tuple[int, str, str]:
    p = subprocess.run([sys.executable, "-m", "gpuwhy", *args], capture_output=True, text=True,
                       env={**_env(src), **(env or {})}, timeout=timeout, cwd=tempfile.gettempdir())
    return p.returncode, p.stdout, p.stderr


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def interrupt(src: Path, args: list[str], after: float | str) -> tuple[int, str, str]:
    """Start, send SIGINT after ``after`` s (or, given a file, once the process holds 2.5x its
    size: it is parsing it); the stderr line carries the seconds to exit."""
    p = subprocess.Popen([sys.executable, "-m", "gpuwhy", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=_env(src), cwd=tempfile.gettempdir())
    if isinstance(after, str):
        size = os.path.getsize(after)
        while _rss(p.pid) < 2.5 * size and p.poll() is None:  # the parsed objects outgrow the text
            time.sleep(0.02)
    else:
        time.sleep(after)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=120)[1]
    return p.returncode, "", f"[{time.monotonic() - t0:.1f} s to exit] " + (err.strip().splitlines() or ["(nothing on stderr)"])[-1]


def first(pattern: str, missing: str | None = None):
    """A shower: the first stdout/stderr line matching ``pattern`` (else ``missing``, else the last stderr line)."""
    def show(rc, out, err):
        for ln in (out + "\n" + err).splitlines():
            if re.search(pattern, ln):
                return ln.strip()
        if missing is not None:
            return missing
        return (err.strip().splitlines() or out.strip().splitlines() or [""])[-1].strip()
    return show


def err_line(rc, out, err):
    lines = err.strip().splitlines()
    return (f"{len(lines)} lines: " if len(lines) > 1 else "") + (lines[-1].strip() if lines else "(nothing on stderr)")


# Fakes run in-process against either tree (the tests' fakes of that tree's tests/ folder).
_NVML = """
import sys, pynvml
sys.path.insert(0, 'tests')
from test_probe_nvml import FakeLibNvml, load_fixture, make_driver
class DynamicLibNotFoundError(RuntimeError): pass
fx = load_fixture('h200')
class Bad(FakeLibNvml):
    def __getattr__(self, name):
        if name == 'nvmlDeviceGetPciInfo_v3':
            g = self.gpu
            return lambda h, p: (setattr(p._obj, 'busId', b'0000\\xc3:19:00.0'), setattr(p._obj, 'pciDeviceId', int(g['pci_device_id'], 16)), 0)[2]
        return super().__getattr__(name)
pynvml.nvmlLib = Bad(fx['nvml'], b'NVIDIA H\\xff200'); pynvml._nvmlGetFunctionPointer_cache = {}
sys.modules['cuda.bindings.driver'] = make_driver([], init=DynamicLibNotFoundError('x'))
import types
nv = types.ModuleType('cuda.bindings.nvrtc'); nv.nvrtcVersion = lambda: (0, 13, 0); sys.modules['cuda.bindings.nvrtc'] = nv
from gpuwhy.cli.app import main
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = main(['probe', '--json'])
if rc == 0:
    import json; d = json.loads(buf.getvalue())['devices'][0]
    print('probe ok: name', repr(d['identity']['name']), 'sheet', d['sheet']['name'], 'by', d['sheet']['rule'])
sys.exit(rc)
"""
_NVRTC = """
import sys, types
class DynamicLibNotFoundError(RuntimeError): pass
def missing(*a): raise DynamicLibNotFoundError('Failure finding "libnvrtc.so.13": No such file')
m = types.ModuleType('cuda.bindings.nvrtc'); m.nvrtcVersion = m.nvrtcGetSupportedArchs = m.nvrtcCreateProgram = missing
import cuda.bindings
cuda.bindings.nvrtc = sys.modules['cuda.bindings.nvrtc'] = m
from gpuwhy.cli.app import main
sys.exit(main(['bench', '--compile-only', '--arch', 'sm_90']))
"""
_LIBCUDA = """
import sys
sys.path.insert(0, 'tests')
from test_probe_nvml import make_driver
import cuda.bindings
cuda.bindings.driver = sys.modules['cuda.bindings.driver'] = make_driver([], init=RuntimeError('Function "cuInit" not found'))
from gpuwhy.cli.app import main
sys.exit(main(['bench', '--quick']))
"""


def cases(tmp: Path):
    big = tmp / "big_trace.json"
    doc = json.loads((FIX / "real" / "trace_dataloader.json").read_text())
    ev = doc["traceEvents"]
    doc["traceEvents"] = ev * (150_000_000 // len(json.dumps(ev)) + 1)
    big.write_text(json.dumps(doc))
    junk = tmp / "junk.bin"
    junk.write_bytes(b"\x7fELF" + b"\0" * 5000)
    rec = tmp / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "sheet": "H200 SXM", "sheet_bandwidth_gbs": 4800,
                                "dram_bandwidth_gbs": 4450.0, "launch_overhead_us": 4.0}]))
    prof = json.loads((FIX / "profiles" / "h200-2026-11-29.json").read_text())
    prof["dram_bandwidth_gbs"] = -4800
    badprof = tmp / "bad_profile.json"
    badprof.write_text(json.dumps(prof))
    afile = tmp / "a_file.txt"
    afile.write_text("x")
    report = tmp / "r.html"
    H = ["--gpu", "H200 SXM"]
    return [
        ("engineering notation", ["classify", *H, "--flops", "1e18", "--bytes", "1e9", "--time", "9us"], first(r"^t_compute|verdict")),
        ("engineering notation", ["compare", "H100 SXM", "H200 SXM", "--intensity", "1e6"], first(r"^compare:")),
        ("kernel names in the middle", ["-c", "from gpuwhy.importers.kernel_names import short_kernel_name as s; print(s('sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas'))"], None),
        ("NVML not UTF-8", ["-c", _NVML], None),
        ("NVRTC missing", ["-c", _NVRTC], None),
        ("libcuda missing a symbol", ["-c", _LIBCUDA], None),
        ("Ctrl-C while parsing", ("interrupt", ["trace", str(big)], str(big)), None),
        ("Ctrl-C during NVRTC", ("interrupt", ["bench", "--compile-only", "--arch", "sm_90"], 3.0), None),
        ("input bounded, format", ["ncu", str(junk)], err_line),
        ("input bounded, format", ["check", "--recorded", str(junk)], err_line),
        ("ignored option", ["bench", "--compile-only", "--arch", "sm_90", "--csv", str(tmp / "x.csv")], err_line),
        ("ignored option", ["bench", "--compile-only", "--arch", "sm_90", "--kernel", "nope"], err_line),
        ("ignored option", ["classify", "--ncu", str(FIX / "ncu" / "raw_basic.csv"), "--measured"], err_line),
        ("ignored option", ["classify", "--example", "vecadd", *H, "--dtype", ""], first(r"^ceilings|error")),
        ("ignored option", ["check", "--recorded", str(rec), "--gpu", "H100"], err_line),
        ("flag names", ["check", "--recorded", str(rec), "--min-bandwidth", "1.5"], err_line),
        ("time units", ["check", "--recorded", str(rec), "--max-launch-overhead", "5us"], first(r"launch_overhead|error")),
        ("bytes vs bits", ["classify", *H, "--flops", "1T", "--bytes", "8Gb"], first(r"^workload|error")),
        ("FLOPs vs bytes", ["classify", *H, "--flops", "1TB", "--bytes", "1GB"], first(r"^workload|error")),
        ("tiny bytes", ["classify", *H, "--flops", "1T", "--bytes", "1e-300"], first(r"arithmetic intensity|error")),
        ("file vs folder", ["specs", "list", "--specs", str(afile)], err_line),
        ("occupancy 0 blocks", ["occupancy", "--block-size", "1024", "--registers", "255", "--arch", "sm_90"], err_line),
        ("GPU names", ["specs", "show", "rtx4090"], first(r"compute capability|error")),
        ("GPU names", ["specs", "show", "H200 141GB"], first(r"compute capability|error")),
        ("GPU names", ["specs", "show", "H100"], first(r"is the|compute capability|error")),
        ("new sheets", ["specs", "show", "B300"], first(r"compute capability|error")),
        ("bad profile", ["roofline", "--profile", str(badprof)], first(r"ridge|error")),
        ("profile of another GPU", ["roofline", "--gpu", "H100 SXM", "--profile", str(FIX / "profiles" / "h200-2026-11-29.json")], first(r"another GPU", "(no warning)")),
        ("check --json numbers", ["check", "--recorded", str(rec), "--json"], lambda rc, out, err: json.dumps(
            {k: v for k, v in json.loads(out)["devices"][0]["checks"][0].items() if k not in ("detail",)}) if rc in (0, 1) else err_line(rc, out, err)),
        ("compile-only sm_75", ["bench", "--compile-only", "--arch", "sm_75"], first(r"builds ok|error")),
        ("specs validate all", ["specs", "validate", *map(str, sorted((FIX / "bad_specs").glob("*.yaml"))[:3])], err_line),
        ("--no-tensor-cores words", ["classify", "--example", "vecadd", *H, "--dtype", "bf16", "--no-tensor-cores"], err_line),
        ("report guard", ("report-append", report), None),
    ]


def _report_append(src: Path, report: Path) -> tuple[int, str, str]:
    if report.exists():
        report.unlink()
    run(src, ["report", "--out", str(report), "--gpu", "H200 SXM"])
    with open(report, "a") as fh:
        fh.write("<p>my notes</p>\n")
    rc, out, err = run(src, ["report", "--out", str(report), "--gpu", "H200 SXM"])
    kept = "my notes" in report.read_text()
    return rc, out, (err.strip().splitlines() or [""])[-1] + f" [appended notes {'kept' if kept else 'LOST'}]"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="/work/main", help="checkout whose src/ is 'before'")
    a = ap.parse_args()
    trees = [("before", Path(a.before) / "src"), ("after", ROOT / "src")]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind, args, show in cases(tmp):
            cells = []
            for _, src in trees:
                if isinstance(args, tuple) and args[0] == "interrupt":
                    rc, out, err = interrupt(src, args[1], args[2])
                    text = err
                elif isinstance(args, tuple) and args[0] == "report-append":
                    rc, out, err = _report_append(src, args[1])
                    text = err
                elif args[0] in ("-c", "-m"):
                    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_env(src), timeout=300,
                                       cwd=str(src.parent))
                    lines = (p.stdout + "\n" + p.stderr).strip().splitlines()
                    rc, text = p.returncode, (lines[-1] if lines else "")
                else:
                    rc, out, err = run(src, args)
                    text = show(rc, out, err) if show else err_line(rc, out, err)
                cells.append(f"exit {rc}: {text[:230]}")
            if isinstance(args, tuple) and args[0] == "report-append":
                shown = "report --out r.html --gpu H200 SXM (twice, notes appended between)"
            elif args[0] == "-c":
                calls = re.findall(r"main\((\[.+?\])\)", args[1])
                shown = (f"(fake library, in-process) gpuwhy {' '.join(eval(calls[-1]))}" if calls
                         else "short_kernel_name(a 118-character cuBLAS kernel name)")
            else:
                argv = args[1] if isinstance(args, tuple) else args
                shown = "gpuwhy " + " ".join(x if len(x) < 40 else "…/" + Path(x).name for x in argv)
                shown += " + Ctrl-C" if isinstance(args, tuple) else ""
            rows.append((kind, shown, *cells))
    print("| kind | command | before | after |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
