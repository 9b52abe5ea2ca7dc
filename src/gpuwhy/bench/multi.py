"""`gpuwhy bench -i all` (or a list): one bench mode on several GPUs, merged into one result.

The GPUs run as :func:`gpuwhy.model.multi_gpu.schedule.plan_runs` plans the mode (all at once for the
DRAM bandwidth, compute, caches and latency; one after another for the host link), through
:mod:`gpuwhy.bench.fanout`; each GPU's run is the mode's own single-GPU run and its document
is kept whole (what ``bench -i N --json`` prints). From each document a few headline figures
(:data:`FIGURES`) make one line per GPU, and the slowest GPU is named
(:func:`gpuwhy.model.multi_gpu.schedule.slowest_gpu`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ..model.multi_gpu.schedule import Slowest, plan_runs, slowest_gpu


@dataclass(frozen=True)
class Figure:
    """One headline figure of a mode: its ``--json`` key (unit in the name), heading, and whether more is better."""

    key: str
    heading: str
    more_is_better: bool = True

    def to_dict(self) -> dict:
        return {"key": self.key, "heading": self.heading, "more_is_better": self.more_is_better}


def _best(doc: dict, precision: str) -> float | None:
    rows = [r for r in doc.get("compute") or () if r.get("precision") == precision and r.get("status") == "measured"]
    vals = [r["tflops"] for r in rows if r.get("tflops")]
    return max(vals) if vals else None


def _level(doc: dict, name: str) -> float | None:
    return next((lv.get("latency_s") for lv in doc.get("levels") or () if lv.get("name") == name), None)


def _plateau(doc: dict, direction: str) -> float | None:
    return next((c.get("plateau_gbs") for c in doc.get("curves") or ()
                 if c.get("direction") == direction and c.get("memory") == "pinned"), None)


def _launch_us(doc: dict) -> float | None:
    s = (doc.get("launch_overhead") or {}).get("event_s")
    return None if s is None else s * 1e6


def _cache(doc: dict, key: str) -> float | None:
    best = doc.get("best_gbs") or (doc.get("caches") or {}).get("best_gbs") or {}
    return best.get(key)


_MEMORY = (
    (Figure("dram_bandwidth_gbs", "DRAM GB/s"), lambda d: d.get("sustained_dram_gbs")),
    (Figure("launch_overhead_us", "launch us", False), _launch_us),
)
_COMPUTE = (
    (Figure("fp64_tflops", "FP64 TFLOP/s"), lambda d: _best(d, "fp64")),
    (Figure("fp32_tflops", "FP32 TFLOP/s"), lambda d: _best(d, "fp32")),
    (Figure("bf16_tflops", "BF16 TFLOP/s"), lambda d: _best(d, "bf16")),
    (Figure("fp8_tflops", "FP8 TFLOP/s"), lambda d: _best(d, "fp8")),
)
_CACHES = (
    (Figure("l2_read_gbs", "L2 read GB/s"), lambda d: _cache(d, "L2_read")),
    (Figure("shared_read_gbs", "shared GB/s"), lambda d: _cache(d, "shared_read")),
    (Figure("l1_read_gbs", "L1 GB/s"), lambda d: _cache(d, "L1_read")),
)
#: Per mode, its headline figures and how each is read from the mode's ``--json`` document.
FIGURES: dict[str, tuple[tuple[Figure, Callable[[dict], float | None]], ...]] = {
    "quick": _MEMORY,
    "sweep": _MEMORY + _COMPUTE[1:3] + _CACHES[:1],
    "compute": _COMPUTE,
    "caches": _CACHES,
    "latency": ((Figure("l2_latency_s", "L2 ns", False), lambda d: _level(d, "L2")),
                (Figure("dram_latency_s", "DRAM ns", False), lambda d: _level(d, "DRAM"))),
    "link": ((Figure("h2d_pinned_gbs", "H2D GB/s"), lambda d: _plateau(d, "h2d")),
             (Figure("d2h_pinned_gbs", "D2H GB/s"), lambda d: _plateau(d, "d2h")),
             (Figure("bidir_pinned_gbs", "both GB/s"), lambda d: _plateau(d, "bidir"))),
}
#: The modes that run on several GPUs (the others take one).
SEVERAL = tuple(FIGURES)


def headline(mode: str, doc: dict | None) -> dict[str, float | None]:
    """The mode's headline figures read from one GPU's ``--json`` document (None where absent).

    Raises:
        KeyError: a mode without headline figures.
    """
    return {f.key: (read(doc) if doc else None) for f, read in FIGURES[mode]}


@dataclass(frozen=True)
class GpuRun:
    """One GPU's run: who it is (nvidia-smi index, UUID, name), its headline figures, the time
    it took, its error (exit code and message; 0 and '' when none) and its whole document."""

    index: int | None
    uuid: str | None
    name: str | None
    figures: dict
    elapsed_s: float
    exit_code: int = 0
    error: str = ""
    document: dict | None = None

    def to_dict(self) -> dict:
        return {"index": self.index, "uuid": self.uuid, "name": self.name, "figures": dict(self.figures),
                "elapsed_s": self.elapsed_s, "exit_code": self.exit_code, "error": self.error, "document": self.document}


@dataclass(frozen=True)
class MultiRun:
    """One mode on several GPUs: the figures shown, one :class:`GpuRun` per GPU (in the order
    chosen), the slowest GPU (a position in ``runs``; None when fewer than two measured), how
    they were scheduled (:func:`gpuwhy.bench.fanout.schedule_record`)."""

    mode: str
    json_kind: str
    figures: tuple[Figure, ...]
    runs: tuple[GpuRun, ...]
    slowest: Slowest | None
    schedule: dict

    @property
    def failed(self) -> list[GpuRun]:
        return [r for r in self.runs if r.exit_code]

    def to_dict(self) -> dict:
        s = None
        if self.slowest is not None:
            r = self.runs[self.slowest.position]
            s = {"index": r.index, "uuid": r.uuid, "figure": self.slowest.figure, "value": self.slowest.value,
                 "median": self.slowest.median, "ratio": self.slowest.ratio}
        return {"mode": self.mode, "device_kind": self.json_kind, "gpus": len(self.runs),
                "figures": [f.to_dict() for f in self.figures], "devices": [r.to_dict() for r in self.runs],
                "slowest": s, "schedule": dict(self.schedule)}


def run_several(mode: str, json_kind: str, fields: dict, devices, worker: Callable[..., dict]) -> MultiRun:
    """Run bench ``mode`` on every device of ``devices`` (:class:`~gpuwhy.device.select.Listed`)
    through ``worker(mode, fields, device)`` (a module-level function that returns
    ``{"document", "exit_code", "error"}``: the CLI's, which renders the document), as planned.

    Raises:
        UsageError: a bad ``GPUWHY_WORKERS``.
    """
    from ..device.topology import close_cpus
    from .fanout import run_plan, schedule_record, usable_cpus

    targets = [d.uuid or f"cuda:{d.cuda_ordinal}" for d in devices]
    plan = plan_runs("link" if mode == "link" else mode, len(targets), cpus=len(usable_cpus()))
    cpus = close_cpus([d.uuid for d in devices])
    t0 = time.perf_counter()
    outs = run_plan(plan, worker, [(mode, fields, t) for t in targets], cpus)
    wall = time.perf_counter() - t0
    runs = []
    for d, o in zip(devices, outs):
        got: dict[str, Any] = o.value or {}
        doc = got.get("document")
        code, err = (o.exit_code, o.error) if not o.ok else (got.get("exit_code", 0), got.get("error", ""))
        runs.append(GpuRun(d.nvml_index, d.uuid, d.name, headline(mode, doc), o.elapsed_s, code, err, doc))
    figs = tuple(f for f, _ in FIGURES[mode])
    more = {f.key: f.more_is_better for f in figs}
    slow = slowest_gpu([r.figures if not r.exit_code else {} for r in runs], more)
    return MultiRun(mode, json_kind, figs, tuple(runs), slow, schedule_record(plan, outs, wall))
