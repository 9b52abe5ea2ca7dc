"""Every ``--json`` document gpuwhy prints, as the schema tests see them (tests/test_schema.py).

- :data:`NO_GPU` -- commands that run anywhere, on recorded inputs (tests/fixtures/real
  and others); each is run with ``--json``.
- :data:`RECORDED` -- documents recorded on the H200 (docs/results/raw) for the commands
  that measure: they are what a GPU prints.
- :data:`PROFILES` -- device profiles (the ``gpuwhy bench`` cache), recorded.
The documents of probe, bench and check made on the fake devices of tests/fakes.py are
produced in test_schema.py itself (they need its fixtures).
"""

from __future__ import annotations

import gzip
import zlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"
NCU = ROOT / "tests" / "fixtures" / "ncu"
TRACE = ROOT / "tests" / "fixtures" / "trace"
RAW = ROOT / "docs" / "results" / "raw"
DIFF = ROOT / "tests" / "fixtures" / "diff"
SCHEMAS = ROOT / "docs" / "schema"

_CHECK = str(RAW / "2026-12-01-h200-refactor" / "check.json")

NO_GPU: list[list[str]] = [
    ["classify", "--flops", "2.7e8", "--bytes", "3.2GB", "--gpu", "H200"],
    ["classify", "--flops", "2.2T", "--bytes", "400MB", "--time", "3.1ms", "--launches", "4", "--gpu", "H100", "--dtype", "bf16"],
    ["classify", "--example", "gemm-bf16-8192", "--gpu", "rtx 5070"],
    ["classify", "--ncu", str(REAL / "ncu_details.csv")],
    ["specs", "list"],
    ["specs", "show", "H200"],
    ["specs", "show", "rtx 5070"],
    ["specs", "validate"],
    ["compare", "H100", "H200", "B200", "--intensity", "0.33"],
    ["compare", "H100", "H200", "--flops", "2T", "--bytes", "1GB", "--cost", "H100=2.49,H200=3.5", "--per-watt"],
    ["compare", "H100", "H200", "--llm", "--model", "llama-3-70b", "--batch", "8", "--context", "4096"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200"],
    ["llm", "--params", "70B", "--weight-dtype", "fp8", "--gpu", "H100", "--prompt-len", "2048", "--batch", "16", "--sweep-batch"],
    ["llm", "--params", "47B", "--active-params", "13B", "--num-gpus", "2", "--gpu", "H100", "--layers", "32", "--kv-heads", "8",
     "--head-dim", "128", "--quant-group", "32", "--weight-dtype", "int4", "--context", "8192"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200", "--cost-per-hour", "3.5"],
    ["llm", "--model", "llama-3-70b", "--gpu", "H200", "--num-gpus", "2", "--speculative", "4", "--acceptance", "0.8",
     "--draft-model", "llama-3-8b", "--cost-per-hour", "3.5", "--sweep-batch"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200", "--speculative", "3", "--acceptance", "0.7"],
    ["occupancy", "--block-size", "256", "--registers", "64", "--gpu", "H200"],
    ["occupancy", "--block-size", "128", "--registers", "32", "--shared-mem", "48KiB", "--arch", "sm_80", "--carveout", "100"],
    ["ncu", str(REAL / "ncu_raw.csv")],
    ["ncu", str(REAL / "ncu_default_details.csv"), "--gpu", "H200"],
    ["ncu", str(REAL / "ncu_nersc.csv"), "--gpu", "H200"],
    ["ncu", str(REAL / "ncu_pct_raw.csv")],
    ["ncu", str(REAL / "ncu_full_raw.csv")],
    ["ncu", str(NCU / "raw_multi_gpu.csv"), "--gpu", "H100"],
    ["ncu", str(NCU / "raw_na.csv"), "--gpu", "H100"],
    ["trace", str(REAL / "trace_dataloader.json")],
    ["trace", str(REAL / "trace_streams.json")],
    ["trace", str(REAL / "trace_decode.json.gz")],
    ["trace", str(REAL / "trace_one_kernel.json")],
    ["trace", str(TRACE / "multi_gpu.json")],
    ["trace", str(TRACE / "with_flops.json")],
    ["trace", str(ROOT / "tests" / "fixtures" / "nsys" / "extrap_concurrent_s16.sqlite.gz")],
    ["trace", str(ROOT / "tests" / "fixtures" / "nsys" / "nvfuser_report1.sqlite.gz")],
    ["trace", str(ROOT / "tests" / "fixtures" / "nsys" / "nsysai_mfu_2gpu_before.sqlite.gz")],  # NCCL: communication
    ["roofline", "--gpu", "H200"],
    ["roofline", "--gpu", "H100", "--dtype", "bf16", "--point", "gemm:2.2T:400MB:3.1ms", "--point", "add:1G:12GB"],
    ["check", "--recorded", _CHECK],
    ["check", "--recorded", _CHECK, "--min-bandwidth", "0.99"],
    ["bench", "--compile-only", "--arch", "sm_90"],
    ["mfu", "--params", "8B", "--tokens-per-s", "12k", "--gpu", "H100"],
    ["mfu", "--params", "70B", "--tokens-per-s", "3000", "--gpus", "8", "--infer", "--dtype", "fp8", "--gpu", "H200", "--seq-len", "4096",
     "--layers", "80", "--hidden", "8192"],
    ["diff", str(REAL / "trace_dataloader.json"), str(REAL / "trace_workers_pinned.json.gz")],
    ["diff", str(DIFF / "pageable_h2d.planted.json.gz"), str(DIFF / "pageable_h2d.fixed.json.gz")],
    ["diff", str(REAL / "ncu_raw.csv"), str(REAL / "ncu_raw_base.csv")],
    ["diff", _CHECK, str(DIFF / "check_h100.json"), "--fail-if-slower", "3"],
    [],  # the main job: with no GPU, a spec-sheet classify example
]

_RUN = RAW / "2026-12-01-h200-refactor"
#: (file recorded on the H200, what made it); ``.gz`` files are gzipped.
RECORDED: list[tuple[Path, str]] = [
    (_RUN / "probe.json", "gpuwhy probe --json"),
    (_RUN / "bench_sweep.json.gz", "gpuwhy bench --sweep --json"),
    (_RUN / "bench_compute.json.gz", "gpuwhy bench --compute --json"),
    (_RUN / "roofline_sweep.json.gz", "gpuwhy bench --roofline --json"),
    (_RUN / "latency.json", "gpuwhy bench --latency --json"),
    (_RUN / "link.json", "gpuwhy bench --link --json"),
    (_RUN / "check.json", "gpuwhy check --json"),
    (_RUN / "classify_measured.json", "gpuwhy classify --measured --json"),
    (RAW / "2026-11-29-h200-run6" / "probe.json", "gpuwhy probe --json"),
    (RAW / "2026-11-29-h200-run6" / "latency.json", "gpuwhy bench --latency --json"),
    (RAW / "2026-11-29-h200-run6" / "link.json", "gpuwhy bench --link --json"),
]

PROFILES: list[Path] = [ROOT / "tests" / "fixtures" / "profiles" / "h200-2026-11-29.json"]

#: The folders whose committed JSON documents are checked against the schema they claim.
COMMITTED_DIRS = (ROOT / "docs" / "results", ROOT / "tests" / "fixtures")


def claimed_schema(doc) -> str | None:
    """The schema file a committed document claims (``kind`` + ``schema``: :func:`schema_path`'s; a device
    profile, which has no kind: profile.schema.json), or None for JSON that claims no gpuwhy schema
    (traces, ncu exports, manifests)."""
    if not isinstance(doc, dict) or "schema" not in doc:
        return None
    if "kind" in doc and "gpuwhy" in doc:
        return schema_path(str(doc["kind"]), doc.get("schema")).name
    profile = json.loads((SCHEMAS / "profile.schema.json").read_text())
    return "profile.schema.json" if set(profile["required"]) <= set(doc) else None


def committed_documents() -> list[Path]:
    """Every ``*.json`` / ``*.json.gz`` file under :data:`COMMITTED_DIRS` that claims a gpuwhy schema."""
    out = []
    for base in COMMITTED_DIRS:
        for p in sorted(base.rglob("*")):
            if not (p.is_file() and p.name.endswith((".json", ".json.gz"))):
                continue
            try:
                doc = load(p)
            except (ValueError, OSError, EOFError, zlib.error):
                continue  # not JSON (a fixture of a broken file): nothing claimed
            if claimed_schema(doc):
                out.append(p)
    return out


def load(path: Path) -> dict:
    """A JSON file, gzipped or not."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def schema_path(kind: str, version: int | None = None) -> Path:
    """docs/schema/<kind>.schema.json (``specs.list`` -> ``specs.list.schema.json``); for a document of an
    older ``version`` whose kind changed shape since, docs/schema/<kind>.v<version>.schema.json."""
    old = SCHEMAS / f"{kind}.v{version}.schema.json"
    return old if version is not None and old.is_file() else SCHEMAS / f"{kind}.schema.json"
