"""Synthetic fleets of H200 nodes made from the figures `gpuwhy check` recorded on real H200s.

The recorded figures are the `gpuwhy check` results logged under docs/results/raw/ (four
different H200s, eight runs: the rows of each run folder's ``check.log``, which holds two
runs, or its ``check.json`` where no log was kept). One exception, with its reason: run 5's ``tensor_bf16`` (646 TFLOP/s) was
the mma.sync figure taken by a bug fixed before run 6 (docs/results/2026-11-29-h200.md), so
it is not an H200's tensor-core rate.

Each synthetic GPU draws each figure from those recorded values and adds a jitter of half
their standard deviation (a smoothed bootstrap: the synthetic spread is the recorded one).
Planted GPUs are then made slow (or failing) in the ways real fleets see: degraded HBM, a
clock held low, a power-braked tensor rate, a busy host, ECC errors, a PCIe link at x8. Every
node's result is a real ``gpuwhy check --json`` document, made by gpuwhy's own evaluate().
"""

from __future__ import annotations

import json
import random
import re
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from gpuwhy.check.document import check_document
from gpuwhy.check.policy import Observations, evaluate, load_policy

RAW = Path(__file__).resolve().parents[1] / "docs" / "results" / "raw"
FIELDS = {"dram_bandwidth": "dram_bandwidth_gbs", "fp32_fma": "fp32_tflops", "tensor_bf16": "tensor_tflops",
          "launch_overhead": "launch_overhead_us"}
_ROW = re.compile(r"│(dram_bandwidth|fp32_fma|tensor_bf16|launch_overhead)\s*│\s*\w+\s*│\s*([\d.]+) ")


def recorded_figures() -> dict[str, list[float]]:
    """Observations field -> every value recorded on the H200 (see the module docstring)."""
    out: dict[str, list[float]] = {f: [] for f in FIELDS.values()}
    for run in sorted(RAW.glob("2026-*-h200-*")):
        if not run.is_dir():
            continue
        bad_tensor = run.name == "2026-11-29-h200-run5"
        log = run / "check.log"
        rows = _ROW.findall(log.read_text()) if log.exists() else []
        if not rows and (run / "check.json").exists():  # a run whose table was not logged
            obs = json.loads((run / "check.json").read_text())["observations"][0]
            rows = [(k, str(obs[f])) for k, f in FIELDS.items()]
        for check, value in rows:
            if check == "tensor_bf16" and bad_tensor:
                continue
            out[FIELDS[check]].append(float(value))
    return out


def _template() -> Observations:
    doc = json.loads((RAW / "2026-12-01-h200-refactor" / "check.json").read_text())
    return Observations.from_dict(doc["observations"][0])


@dataclass(frozen=True)
class Plant:
    """A planted GPU: which node and GPU, what is multiplied, and whether it is a slow GPU
    (an outlier to find), a failing one, or a wobble (2% off: must not be flagged)."""

    node: int
    gpu: int
    change: dict
    kind: str  # "slow" | "fail" | "wobble"
    figures: tuple[str, ...] = ()  # figure keys expected to be flagged (for "slow")


#: The planted GPUs: (node, gpu) spread over the fleet.
PLANTS = (
    Plant(3, 5, {"dram_bandwidth_gbs": 0.88}, "slow", ("dram_bandwidth_gbs",)),           # a degraded HBM stack
    Plant(7, 0, {"dram_bandwidth_gbs": 0.93}, "slow", ("dram_bandwidth_gbs",)),           # 7% slow HBM
    Plant(11, 2, {"fp32_tflops": 0.78, "tensor_tflops": 0.78}, "slow", ("fp32_tflops", "bf16_tflops")),  # clock held low
    Plant(16, 7, {"tensor_tflops": 0.86}, "slow", ("bf16_tflops",)),                      # power brake on tensor cores
    Plant(20, 4, {"fp32_tflops": 0.91}, "slow", ("fp32_tflops",)),                        # 9% slow FP32
    Plant(24, 1, {"launch_overhead_us": 1.9}, "slow", ("launch_overhead_us",)),           # launches from a busy host
    Plant(29, 6, {"dram_bandwidth_gbs": 0.80, "tensor_tflops": 0.70}, "slow",
          ("dram_bandwidth_gbs", "bf16_tflops")),                                         # both: fails its check too
    Plant(33, 3, {"ecc_uncorrected": 2}, "fail"),                                         # ECC errors
    Plant(36, 2, {"pcie_width": (8, 16)}, "fail"),                                        # PCIe link at x8
    Plant(5, 4, {"dram_bandwidth_gbs": 0.98, "fp32_tflops": 0.98, "tensor_tflops": 0.98,
                 "launch_overhead_us": 1.02}, "wobble"),                                  # 2% off: not an outlier
)


def _uuid(seed: int, node: int, gpu: int) -> str:
    return f"GPU-{seed:04x}{node:04x}-0000-4000-8000-{gpu:012x}"


def make_fleet(folder: Path, seed: int, nodes: int = 40, gpus_per_node: int = 8, plants=PLANTS) -> dict:
    """Write one ``check --json`` document per node (``node-NNN.json``, 8 GPUs each) into ``folder``.

    Returns ``{"slow": {(uuid, figure key), ...}, "fail": {uuid, ...}, "wobble": {uuid, ...}}``:
    what a summary must find (and must not).
    """
    rng = random.Random(seed)
    rec = recorded_figures()
    stats = {f: (statistics.pstdev(v) if len(v) > 1 else 0.0) for f, v in rec.items()}
    base = _template()
    pol = load_policy()
    by_pos = {(p.node, p.gpu): p for p in plants}
    truth: dict = {"slow": set(), "fail": set(), "wobble": set()}
    for n in range(nodes):
        observations, reports = [], []
        for g in range(gpus_per_node):
            figs = {f: rng.choice(v) + rng.gauss(0.0, stats[f] / 2) for f, v in rec.items()}
            uuid = _uuid(seed, n, g)
            obs = replace(base, uuid=uuid, **figs, reasons={})
            plant = by_pos.get((n, g))
            if plant is not None:
                change = {k: (getattr(obs, k) * v if isinstance(v, float) else v) for k, v in plant.change.items()}
                obs = replace(obs, **change)
                if plant.kind == "slow":
                    truth["slow"].update((uuid, f) for f in plant.figures)
                else:
                    truth[plant.kind].add(uuid)
            observations.append(obs)
            reports.append(evaluate(obs, pol, 3.0))
        for r in reports:  # a planted slow GPU may also fail its own check (20% slow HBM is under 85% of the sheet)
            if r.failed and r.uuid not in truth["fail"]:
                truth.setdefault("also_failing", set()).add(r.uuid)
        doc = {"gpuwhy": "test", "schema": 1, "kind": "check",
               **check_document(reports, observations, pol, host=f"node-{n:03d}", date=f"2026-12-02T{n % 24:02d}:00:00+00:00")}
        (folder / f"node-{n:03d}.json").write_text(json.dumps(doc))
    return truth
