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


# ------------------------------------------------------------ sample inputs --
# The sample files shipped in the wheel (the repository's ``examples/``, installed as
# ``gpuwhy/_examples``): one per importer, reached with ``--example NAME`` on the command
# that reads it (``trace``, ``ncu``, ``check``).

#: What ``--example`` takes to list the sample inputs of a command instead of reading one.
LIST = "list"


def sample_inputs(command: str | None = None) -> dict[str, dict]:
    """The sample inputs (``examples/examples.yaml``), by name, each a mapping with ``command``,
    ``file`` (its absolute path as text), ``description`` and ``source``; only ``command``'s when given.

    Raises:
        SpecError: the index is malformed or names a file that is not there (a broken install).
    """
    folder = bundled_dir("examples")
    path = folder / "examples.yaml"
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(f"{path}: expected a mapping of sample names")
    out: dict[str, dict] = {}
    for name, ex in data.items():
        if not isinstance(ex, dict) or not all(isinstance(ex.get(k), str) for k in ("command", "file", "description")):
            raise SpecError(f"{path}: sample {name!r} needs command, file and description")
        file = folder / ex["file"]
        if not file.is_file():
            raise SpecError(f"{path}: sample {name!r} names {ex['file']}, which is not in {folder}; reinstall gpuwhy")
        if command is None or ex["command"] == command:
            out[str(name)] = {**ex, "file": str(file)}
    return out


def sample_input(command: str, name: str) -> str:
    """The path of the sample input ``name`` of ``command`` (``trace``, ``ncu``, ``check``).

    Raises:
        UsageError: ``name`` is not a sample of ``command`` (the line lists the ones that are).
    """
    samples = sample_inputs(command)
    if name not in samples:
        known = ", ".join(samples) or "none"
        raise UsageError(f"unknown --example {name!r} for `gpuwhy {command}`; known: {known} "
                         f"(`gpuwhy {command} --example {LIST}` describes them)")
    return samples[name]["file"]
