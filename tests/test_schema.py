"""Every ``--json`` document and the device profile against its published schema
(docs/schema/*.schema.json, checked by tests/schema_check.py), and the units rule:
every figure is a number with its unit in its key."""

from __future__ import annotations

import json
import re

import pytest

from json_documents import (
    COMMITTED_DIRS, NO_GPU, PROFILES, RECORDED, ROOT, SCHEMAS, claimed_schema, committed_documents, load, schema_path,
)
from schema_check import SchemaError, Validator

VALIDATOR = Validator(SCHEMAS)


def check_document(doc: dict) -> None:
    """Validate ``doc`` against the schema of its ``kind`` and apply the units rule."""
    kind = doc.get("kind")
    assert kind, f"a --json document without a kind: {list(doc)[:5]}"
    assert schema_path(kind).is_file(), f"no schema for --json kind {kind!r}: add docs/schema/{kind}.schema.json"
    VALIDATOR.validate(doc, schema_path(kind, doc.get("schema")).name)
    if kind == "main":
        for part, sub in (("probe", "probe"), ("bench", "bench")):
            VALIDATOR.validate({"gpuwhy": doc["gpuwhy"], "schema": doc["schema"], "kind": sub, **doc[part]}, schema_path(sub).name)
    assert not unitless_figures(doc), unitless_figures(doc)


# --------------------------------------------------------------------------- the units rule

#: Words that name a unit in a key (``dram_bandwidth_gbs``, ``t_memory_s``, ``pct_of_spec``,
#: ``tokens_per_s_total``); FLOP/byte is the unit of ``intensity`` and ``ridge`` figures.
UNIT_WORDS = {"s", "us", "ns", "ms", "seconds", "gbs", "tflops", "flops", "bytes", "pct", "mhz", "khz", "w", "c", "gb", "mib",
              "kib", "bits", "usd", "intensity", "ridge", "cycles", "x"}  # x: times, a speed-up ratio (``ceiling_x``)
#: Dimensionless figures: counts, indices, versions, fractions and ratios.
COUNT_WORDS = {"count", "elements", "launches", "kernels", "gaps", "streams", "reps", "warmup", "iters", "steps", "nodes",
               "points", "sizes", "memcpys", "memsets", "events", "calls", "batch", "context", "len", "params", "layers",
               "heads", "dim", "split", "gpus", "rank", "index", "ordinal", "version", "gen", "width", "cores", "grid",
               "block", "blocks", "warps", "threads", "registers", "unit", "partitions", "size", "sets", "processes",
               "errors", "uncorrected", "fraction", "ratio", "factor", "efficiency", "speedup", "cv", "knee", "seed",
               "words", "vector", "samples", "wave", "waves", "occupancy", "lanes", "top", "step", "spread", "log10", "dropped", "id", "share",
               "counts", "tolerances", "major", "minor", "hidden", "repeat", "code", "workers", "stages", "exit",
               "level"}  # code, exit: an exit status; level: check's level (1 or 2, as dcgmi diag -r)
# (check: checks per state, baseline tolerances as fractions, nvrtc version parts, the schedule's workers and stages
#  (counts, positions) and a failed GPU's exit code; mfu: model width; bench-caches: passes)
#: Figures whose unit is a sibling key (``unit``; compare's ``throughput_unit``; an occupancy
#: suggestion's ``kind``) rather than their own name.
UNIT_BESIDE = {"derived", "sheet", "throughput", "per_dollar", "per_watt", "value",
               # check's slowest GPU: its figure's value and the GPUs' median, in the unit its `figure` key names
               "median",
               # the policy's thresholds, fractions of the sheet's figure (the policy file's own names)
               "min_dram_bandwidth", "min_fp32", "min_tensor"}
_WORD = re.compile(r"[a-z0-9]+")


def _named(key: str) -> bool:
    words = set(_WORD.findall(key.lower()))
    return bool(words & (UNIT_WORDS | COUNT_WORDS)) or key in UNIT_BESIDE


def unitless_figures(doc, keys=()) -> list[str]:
    """Paths of numbers whose key names no unit (nor a count); a map entry (``peak_tflops.fp32``,
    ``regime_time_s.memory``, ``pinned_pageable_ratio.h2d.small``) takes its unit from the map's key."""
    found = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += unitless_figures(v, (*keys, str(k)))
    elif isinstance(doc, list):
        for v in doc:
            found += unitless_figures(v, keys)
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool) and keys:
        if keys[-1] != "schema" and not any(_named(k) for k in keys[-3:]):
            found.append(".".join(keys))
    return found


def test_the_units_rule_catches_a_bare_figure():
    assert unitless_figures({"dram_bandwidth_gbs": 4598.0, "launches": 3, "peak_tflops": {"bf16": 989.5}}) == []
    assert unitless_figures({"device": {"bandwidth_now": 4598.0}}) == ["device.bandwidth_now"]
    assert unitless_figures({"check": {"value_of_it": 1.5}}) == ["check.value_of_it"]


# --------------------------------------------------------------------------- every kind has a schema


def _kinds_in_source() -> set[str]:
    from gpuwhy.bench.modes import MODES

    kinds = {m.json_kind for m in MODES}  # the bench modes' documents (their declarations)
    for p in (ROOT / "src" / "gpuwhy").rglob("*.py"):
        kinds |= set(re.findall(r'\b(?:emit|show)\("([a-z.\-]+)"', p.read_text()))  # emit: jsonout; show: render/output
    return kinds


def test_every_json_kind_has_a_schema():
    kinds = _kinds_in_source()
    assert {"classify", "probe", "check", "bench", "bench-compute", "ncu", "trace", "specs.list"} <= kinds  # the scan works
    missing = sorted(k for k in kinds if not schema_path(k).is_file())
    assert not missing, f"--json kinds without a schema in docs/schema/: {missing}"
    assert (SCHEMAS / "profile.schema.json").is_file()


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_schemas_are_well_formed(path):
    s = json.loads(path.read_text())
    assert s["$schema"].startswith("https://json-schema.org/") and s["type"] == "object" and s.get("title")
    VALIDATOR.validate({}, path.name) if False else None  # noqa: B018  (validated by use below)
    if path.name != "profile.schema.json":
        assert s["properties"]["kind"]["const"] == re.sub(r"\.v\d+$", "", path.name.removesuffix(".schema.json"))
        assert {"gpuwhy", "schema", "kind"} <= set(s["required"])


def test_a_document_that_breaks_its_schema_is_caught():
    code = {"gpuwhy": "0.1.0", "schema": 1, "kind": "specs.validate", "ok": True, "files": ["a.yaml"]}
    VALIDATOR.validate(code, "specs.validate.schema.json")
    for bad, words in [({**code, "ok": "yes"}, "is not boolean"), ({**code, "extra": 1}, "not in the schema"),
                       ({k: v for k, v in code.items() if k != "files"}, "required key 'files'"), ({**code, "schema": 3}, "is not one of")]:
        with pytest.raises(SchemaError, match=words):
            VALIDATOR.validate(bad, "specs.validate.schema.json")


# --------------------------------------------------------------------------- the documents


@pytest.mark.parametrize("args", NO_GPU, ids=lambda a: " ".join(a)[:50] or "main job")
def test_no_gpu_commands(cli, args, kernel_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(kernel_cache))  # bench --compile-only: the session's cubins, built once
    code, out, err = cli(*args, "--json")
    assert code in (0, 1), err
    check_document(json.loads(out))


def test_report(cli, tmp_path):
    run = ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor"
    for args in (["--gpu", "H200", "--point", "gemm:2.2T:400MB"],
                 ["--probe", str(run / "probe.json"), "--check", str(run / "check.json"), "--latency", str(run / "latency.json"),
                  "--link", str(run / "link.json"), "--bench", str(run / "bench_sweep.json.gz")]):
        code, out, err = cli("report", "--out", str(tmp_path / "r.html"), *args, "--json")
        assert code == 0, err
        check_document(json.loads(out))


@pytest.mark.parametrize("trace", ["trace_dataloader.json", "trace_decode.json.gz", "trace_one_kernel.json"])
def test_run_with_a_fake_profiler(cli, tmp_path, monkeypatch, trace):
    from gpuwhy.api import run_program as rp
    from test_run_program import FakeProfiler

    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(ROOT / "tests" / "fixtures" / "real" / trace))
    code, out, err = cli("run", "--json", "--out", str(tmp_path / "o"), "--", "python", str(script))
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert doc["timeline"]["bins"] and doc["kernels"]
    saved = tmp_path / "run.json"
    saved.write_text(out)
    code, out, err = cli("report", "--out", str(tmp_path / "r.html"), "--run", str(saved), "--json")
    assert code == 0, err
    check_document(json.loads(out))


@pytest.mark.parametrize("path, made_by", RECORDED, ids=lambda x: x.parent.name[-8:] + "/" + x.name if hasattr(x, "name") else "")
def test_documents_recorded_on_the_h200(path, made_by):
    check_document(load(path))


COMMITTED = committed_documents()


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_document_fits_the_schema_it_claims(path):
    # every JSON under docs/results/ and tests/fixtures/ that names a gpuwhy schema, not one folder's list
    doc = load(path)
    if claimed_schema(doc) == "profile.schema.json":
        VALIDATOR.validate(doc, "profile.schema.json")
        assert not unitless_figures(doc)
    else:
        check_document(doc)


def test_the_committed_documents_are_found_in_every_folder():
    found = {p.relative_to(ROOT).parts[:2] for p in COMMITTED}
    assert {("docs", "results"), ("tests", "fixtures")} <= found and all(d.is_dir() for d in COMMITTED_DIRS)
    assert set(RECORDED_PATHS) <= set(COMMITTED) and set(PROFILES) <= set(COMMITTED)
    # the run documents of 2026-12-02 (the shape before 2026-12-06) are among them, under schema 0
    old_run = [p for p in COMMITTED if "2026-12-02-h200" in str(p) and p.parent.name == "run"]
    assert len(old_run) == 4 and {load(p)["schema"] for p in old_run} == {0}


RECORDED_PATHS = [p for p, _ in RECORDED]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_recorded_device_profile(path):
    VALIDATOR.validate(load(path), "profile.schema.json")
    assert not unitless_figures(load(path))


# --------------------------------------------------------------------------- made on the fakes


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    from fakes import install_quick
    from gpuwhy.bench import latency, link, memory

    gpu = install_quick(monkeypatch, tmp_path)
    monkeypatch.setattr(memory, "sweep_sizes", lambda *a, **k: [2**10, 2**14, 2**18])
    # short runs: the fake moves every byte and follows every pointer in Python
    monkeypatch.setattr(link, "link_sizes", lambda *a, **k: [4096, 65536, 1 << 20])
    for name, value in (("TIMED_STEPS", 256), ("WARM_CAP", 64), ("PRIME_CAP", 512), ("CLOCK_RAMP_NS", 1000)):
        monkeypatch.setattr(latency, name, value)
    monkeypatch.setattr(latency, "latency_sizes", lambda l2, *a, **k: [k * 1024 for k in (4, 8, 16, 64, 128, 256, 512, 1024)])
    return gpu


@pytest.mark.parametrize("args", [["bench", "--quick"], ["bench", "--sweep", "--kernel", "copy"], ["bench", "--kernel", "launch"],
                                  ["bench", "--latency"], ["bench", "--link"], []], ids=lambda a: " ".join(a) or "main job")
def test_fake_gpu_documents_and_profile(cli, fake_gpu, tmp_path, args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    check_document(json.loads(out))
    for p in (tmp_path / "cache").rglob("*.json"):  # the device profile the run saved
        VALIDATOR.validate(json.loads(p.read_text()), "profile.schema.json")


@pytest.mark.parametrize("n,torch", [(1, True), (1, False), (2, True)])
def test_fake_allreduce_documents_and_profiles(cli, monkeypatch, tmp_path, n, torch):
    import tempfile

    from fake_ranks import FakeRanks
    from fakes import Machine, h200_node
    from gpuwhy.bench import allreduce
    from gpuwhy.engine import ranks

    h200_node(Machine(monkeypatch, tmp_path), n)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(ranks, "popen", FakeRanks())
    monkeypatch.setattr(allreduce, "torch_missing", lambda: None if torch else "PyTorch is not importable here")
    code, out, err = cli("bench", "--allreduce", "--max-size", "4KiB", "--json")
    assert code == 0, err
    check_document(json.loads(out))
    saved = list((tmp_path / "cache").rglob("*.json"))
    assert len(saved) == (n if n > 1 else 0)  # one per GPU; a one-GPU smoke test saves nothing
    for p in saved:
        VALIDATOR.validate(json.loads(p.read_text()), "profile.schema.json")


@pytest.mark.parametrize("n", [1, 2, 8])
def test_fake_probe_documents(cli, monkeypatch, tmp_path, n):
    from fakes import Machine, h200_node

    h200_node(Machine(monkeypatch, tmp_path), n, cuda_order=list(reversed(range(n))))
    for args in (["probe"], ["probe", "-L"], ["probe", "-i", "0"]):
        code, out, err = cli(*args, "--json")
        assert code == 0, err
        check_document(json.loads(out))


@pytest.mark.parametrize("fixture", ["a100-sxm4-40gb", "rtx4090", "rtx5090"])
def test_fake_probe_other_gpus(cli, monkeypatch, tmp_path, fixture):
    from fakes import Machine

    Machine(monkeypatch, tmp_path).fixture(fixture)
    code, out, err = cli("probe", "--json")
    assert code == 0, err
    check_document(json.loads(out))


@pytest.mark.parametrize("case", ["mig", "no nvml", "no cuda driver"])
def test_fake_probe_partial_machines(cli, monkeypatch, tmp_path, case):
    """A MIG slice, a machine without NVML, one without the CUDA driver: the n/a fields fit the schema too."""
    import sys

    from fakes import Machine, load_fixture, make_pynvml
    from test_probe_nvml import HEALTHY, _mig_h200

    m = Machine(monkeypatch, tmp_path)
    if case == "mig":
        _mig_h200(m)
    elif case == "no nvml":
        m.fixture("h200")
        monkeypatch.setitem(sys.modules, "pynvml", None)
    else:
        fx = load_fixture("h200")
        m.nvml(make_pynvml([{**fx["nvml"], **HEALTHY}], fx["nvml_system"]))
        m.no_driver_library()
    code, out, err = cli("probe", "--json")
    assert code == 0, err
    check_document(json.loads(out))


def test_a_figure_given_as_a_string_breaks_the_schema():
    """What dashboards need: a figure that turns into "4598 GB/s" fails validation."""
    doc = load(RECORDED[0][0])
    check_document(doc)
    doc["devices"][0]["derived"]["dram_bandwidth_gbs"] = "4814 GB/s"
    with pytest.raises(SchemaError, match=r"devices\[0\]\.derived\.dram_bandwidth_gbs: str '4814 GB/s' is not number or null"):
        check_document(doc)


def test_fake_bench_caches_document(cli, monkeypatch, tmp_path):
    """bench --caches on the cache fake of test_cache_bandwidth.py (the L2, L1 and shared-memory kernels)."""
    from fakes import install
    from test_cache_bandwidth import CacheFake

    install(monkeypatch, CacheFake(), tmp_path)
    code, out, err = cli("bench", "--caches", "--json")
    assert code == 0, err
    check_document(json.loads(out))
    for p in (tmp_path / "cache").rglob("*.json"):
        VALIDATOR.validate(json.loads(p.read_text()), "profile.schema.json")
