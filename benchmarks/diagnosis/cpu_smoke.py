#!/usr/bin/env python3
"""Run every diagnosis program, planted and fixed, on the CPU with tiny sizes: a smoke test, no timing.

It catches what a machine without a GPU can catch before the one GPU call: shape errors, API
misuse, a twin whose numbers differ from its planted run's, a broken in-process check. It
says nothing about speed or about which cause dominates.

Needs PyTorch (a CPU build is enough) and, for the programs with Triton kernels, Triton (its
interpreter runs them on the CPU: ``TRITON_INTERPRET=1``; numpy older than 2.3 for it). The
CUDA calls are stood in for, in the child process only:

- ``device="cuda"`` and ``.to("cuda")`` become the CPU (a TorchFunctionMode);
  ``.cuda()`` and ``.pin_memory()`` return the tensor; ``pin_memory=True`` is dropped;
- ``torch.cuda.synchronize``, streams and events do nothing (the CPU runs in program order);
- ``torch.cuda.CUDAGraph``: the capture runs the body under a TorchDispatchMode that records
  every op and then puts back every tensor the body wrote (a capture does not run the work);
  ``replay()`` runs the recorded ops again on the same tensors, writing each op's result
  into the tensor the capture produced (the graph's fixed addresses);
- ``get_device_properties(0).multi_processor_count`` is 1 (``--sms``), so grids stay small.

Usage: python3 benchmarks/diagnosis/cpu_smoke.py [--only a,b] [--python PY]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"

SMALL = {
    "python_work": ["--n", "128", "--rows", "200"],
    "tiny_layers": ["--layers", "6", "--width", "32"],
    "pageable_h2d": ["--mib", "1", "--cols", "256", "--out-features", "64"],
    "d2h_sync": ["--n", "256"],
    "dataloader": ["--batch", "4", "--passes", "2", "--workers", "2"],
    "item_gate": ["--d", "64", "--hidden", "128", "--batch", "32"],
    "stream_wait": ["--n", "256", "--chain", "2"],
    "fp32_gemm": ["--n", "256"],
    "elementwise_chain": ["--elements", "100000"],
    "decode_b1": ["--layers", "2", "--d-model", "64", "--heads", "4", "--vocab", "500"],
    "few_blocks": ["--elements", "100000"],
    "l2_resident": [],
}


def _is_cuda(d) -> bool:
    import torch

    if isinstance(d, str):
        return d.split(":")[0] == "cuda"
    return isinstance(d, torch.device) and d.type == "cuda"


def install_shims(sms: int) -> None:
    """Stand in for the CUDA calls the programs make (see the module docstring)."""
    os.environ["TRITON_INTERPRET"] = "1"
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class CpuDevices(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs and _is_cuda(kwargs["device"]):
                kwargs["device"] = "cpu"
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            if getattr(func, "__name__", "") == "to":
                args = tuple("cpu" if _is_cuda(x) else x for x in args)
            return func(*args, **kwargs)

    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.Tensor.pin_memory = lambda self, *a, **k: self

    class FakeStream:
        def __init__(self, *a, **k):
            pass

        def wait_stream(self, other):
            pass

        def wait_event(self, event):
            pass

        def synchronize(self):
            pass

    class FakeEvent:
        def __init__(self, *a, **k):
            pass

        def record(self, stream=None):
            pass

        def synchronize(self):
            pass

        def query(self):
            return True

    def _key(t):
        return (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()))

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.saved = [], {}

        def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            for i, arg in enumerate(func._schema.arguments):
                if arg.alias_info is not None and arg.alias_info.is_write:
                    t = args[i] if i < len(args) else kwargs.get(arg.name)
                    if isinstance(t, torch.Tensor) and _key(t) not in self.saved:
                        self.saved[_key(t)] = (t, t.clone())
            out = func(*args, **kwargs)
            self.ops.append((func, args, kwargs, out))
            return out

    class FakeGraph:
        def __init__(self, *a, **k):
            self.ops = []

        def replay(self):
            for func, args, kwargs, out in self.ops:
                new = func(*args, **kwargs)
                olds = out if isinstance(out, (list, tuple)) else [out]
                news = new if isinstance(new, (list, tuple)) else [new]
                for o, n in zip(olds, news):
                    if isinstance(o, torch.Tensor) and isinstance(n, torch.Tensor) and n is not o:
                        if _key(o) != _key(n):
                            o.copy_(n)

    @contextlib.contextmanager
    def fake_graph(g, *a, **k):
        rec = Recorder()
        with rec:
            yield g
        for t, before in reversed(list(rec.saved.values())):
            t.copy_(before)  # a capture records the work, it does not run it
        g.ops = rec.ops

    default = FakeStream()
    cuda = torch.cuda
    cuda.synchronize = lambda *a, **k: None
    cuda.Stream = FakeStream
    cuda.Event = FakeEvent
    cuda.current_stream = lambda *a, **k: default
    cuda.stream = lambda s=None: contextlib.nullcontext()
    cuda.CUDAGraph = FakeGraph
    cuda.graph = fake_graph
    cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(multi_processor_count=sms, name="CPU shim")
    cuda.get_device_name = lambda *a, **k: "CPU shim"
    CpuDevices().__enter__()


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", type=int, default=1)
    ap.add_argument("program")
    a, rest = ap.parse_known_args(argv)
    install_shims(a.sms)
    sys.path.insert(0, str(PROGRAMS))
    sys.argv = [a.program, *rest]
    runpy.run_path(a.program, run_name="__main__")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--python", default=sys.executable, help="the Python with torch (and triton) to run them")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import score

    names = [n for n in SMALL if not a.only or n in a.only.split(",")]
    bad = 0
    for name in names:
        prog = PROGRAMS / f"{name}.py"
        res = {}
        calib: list[str] = []
        for fixed in (False, True):
            cmd = [a.python, str(Path(__file__).resolve()), "--child", str(prog), "--steps", str(a.steps),
                   "--warmup", str(a.warmup), *SMALL[name], *calib, *(["--fixed"] if fixed else [])]
            t = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            wall = time.perf_counter() - t
            d = score.parse_diag_result(p.stdout)
            tag = "fixed" if fixed else "planted"
            if p.returncode != 0 or d is None:
                bad += 1
                tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
                print(f"{name:18} {tag:7} FAILED rc={p.returncode} ({wall:.1f} s): {tail}")
                continue
            res[tag] = d
            calib = [str(x) for x in d.get("calib_args") or []]  # as run_all.py does: the same work in every run
            print(f"{name:18} {tag:7} ok ({wall:.1f} s) {d.get('check')}")
        if len(res) == 2:
            same = score.compare_checksums(res["planted"], res["fixed"])
            print(f"{name:18} checksums: {same}")
            if same.startswith("DIFFER"):
                bad += 1
    print(json.dumps({"programs": len(names), "failures": bad}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
