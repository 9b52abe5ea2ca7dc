"""The named example workloads of `gpuwhy classify --example` (``specs/workloads/examples.yaml``)."""

from __future__ import annotations

from ..errors import SpecError, UsageError
from ..model.roofline.classify import Workload
from ..resources import bundled_dir
from ..specs import load_yaml


def load_examples() -> dict[str, dict]:
    """The named example workloads (``specs/workloads/examples.yaml``).

    Raises:
        SpecError: if the file is malformed.
    """
    path = bundled_dir("specs") / "workloads" / "examples.yaml"
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(f"{path}: expected a mapping of example names")
    for name, ex in data.items():
        if not isinstance(ex, dict) or not all(k in ex for k in ("flops", "bytes", "dtype")):
            raise SpecError(f"{path}: example {name!r} needs flops, bytes and dtype")
    return data


def example_workload(name: str) -> tuple[Workload, str, str]:
    """``(workload, dtype, description)`` of a named example.

    Raises:
        UsageError: for an unknown example name (lists the known ones).
    """
    examples = load_examples()
    if name not in examples:
        raise UsageError(f"unknown example {name!r}; known: {', '.join(examples)}")
    ex = examples[name]
    wl = Workload(flops=float(ex["flops"]), bytes=float(ex["bytes"]), launches=int(ex.get("launches", 1)), name=name)
    return wl, ex["dtype"], ex.get("description", "")
