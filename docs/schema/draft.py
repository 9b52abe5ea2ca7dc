"""Draft a JSON schema from --json documents of one kind: a starting point to review, never to
accept unread (a schema written from today's output agrees with today's output).

    python docs/schema/draft.py KIND DOC.json [DOC.json ...] > docs/schema/KIND.schema.json

Objects get their keys (required: the keys every document has; no others allowed), except
the maps in MAP_KEYS (keys are data: precisions, reasons); every scalar may be null (a value
gpuwhy could not read); descriptions name the unit a key's suffix gives (UNITS, NAMED).
OVERRIDES types fields that are null in every document at hand. Review: enums, the types of
fields no sample filled, descriptions. Then run tests/test_schema.py.
"""

import gzip
import json
import re
import sys

MAP_KEYS = {"peak_tflops", "ridge_points", "sources", "flops_by", "regime_time_s", "dropped", "n/a", "peak_tflops_measured",
            "figures", "reasons", "extra"}
UNITS = [  # (suffix, words)
    ("_gbs_per_gpu", "GB/s per GPU (1e9 bytes/s)"), ("_gbs", "GB/s (1e9 bytes/s)"), ("_tflops", "TFLOP/s (1e12 FLOP/s)"),
    ("_bytes_per_sm", "bytes per SM"), ("_bytes", "bytes"), ("_s", "seconds"), ("_us", "microseconds"), ("_ns", "nanoseconds"),
    ("_pct", "percent (0-100)"), ("_mhz", "MHz"), ("_khz", "kHz"), ("_w", "watts"), ("_c", "degrees Celsius"),
    ("_gb", "GB (1e9 bytes)"), ("_mib", "MiB (2^20 bytes)"), ("_kib", "KiB (1024 bytes)"), ("_bits", "bits"),
    ("_per_s", "per second"), ("_x", "times (a ratio: how many times faster)"), ("_fraction", "fraction (0-1)"),
    ("_per_token", "FLOP per token"), ("_elements", "elements (a count)"), ("_lanes", "PCIe lanes (a count)"), ("_usd", "US dollars"), ("usd_per_hour", "US dollars per hour"),
]
NAMED = {"arithmetic_intensity": "FLOP/byte", "intensity": "FLOP/byte", "ridge_point": "FLOP/byte", "ridge": "FLOP/byte",
         "batch_ridge": "sequences (the batch at which decode meets the ridge point)", "batch_ridge_with_kv": "sequences",
         "empirical_ridge": "FLOP/byte", "model_ridge": "FLOP/byte", "flops": "FLOP (a count)", "bytes": "bytes",
         "matmul_flops": "FLOP", "attention_flops": "FLOP", "flops_per_launch": "FLOP", "cv": "coefficient of variation (stddev / mean)",
         "speedup": "ratio to the baseline GPU", "bound_ratio": "ratio of the largest time term to the next",
         "fraction_of_sheet": "measured / sheet figure (0-1+)", "min_fraction_of_sheet": "the policy's fraction (0-1]",
         "throughput": "FLOP/s or tokens/s: see throughput_unit", "per_dollar": "see per_dollar_unit", "per_watt": "see per_watt_unit",
         "schema": "document schema version (see CHANGELOG.md)",
         "pct": "percent (0-100)", "seconds": "seconds", "gbs": "GB/s (1e9 bytes/s)", "efficiency": "fraction (0-1) of the work that is useful",
         "waves": "waves (thread blocks / blocks resident at once; may be fractional)", "fraction_of_limit": "fraction (0-1)",
         "fraction_of_roof": "fraction (0-1) of the level's roof", "fraction_of_l2": "working set / L2 size", "reps": "timed repetitions (a count)",
         "repeat": "passes over the working set per launch (a count)", "mads": "median absolute deviations from the median",
         "mad": "median absolute deviation, in the figure's unit", "median": "in the figure's unit", "low": "in the figure's unit",
         "high": "in the figure's unit", "value": "in the figure's unit (the key names it)", "params": "parameters (a count)",
         "exit_code": "the process exit status", "gpus": "GPUs (a count)", "count": "a count", "gaps": "idle gaps (a count)",
         "steps": "steps (a count)", "grid": "thread blocks per launch", "block": "threads per block", "index": "an index",
         "sm_count": "SMs (a count)", "max_threads_per_sm": "threads per SM", "bytes_per_thread": "bytes per thread",
         "threads_per_sm": "threads per SM", "bytes_in_flight": "bytes", "bytes_in_flight_per_sm": "bytes per SM",
         "achieved_occupancy": "fraction (0-1) of the SM's thread slots",
         "min_dram_bandwidth": "fraction of the sheet's DRAM bandwidth (0-1], the policy file's name",
         "min_fp32": "fraction of the sheet's FP32 peak (0-1], the policy file's name",
         "min_tensor": "fraction of the sheet's dense tensor peak (0-1], the policy file's name"}
ROOT_DESC = {}
N = {"type": ["number", "null"]}; I = {"type": ["integer", "null"]}; B = {"type": ["boolean", "null"]}; S = {"type": ["string", "null"]}
OVERRIDES = {
    "check.observations[].retired_pages_pending": B, "compare.gpus[].missing": S, "compare.llm[].gpu.precision_note": S,
    "compare.llm[].batch_ridge_with_kv": N, "compare.llm[].prefill": {"type": ["object", "null"], "description": "as llm.schema.json's prefill"},
    "compare.llm[].scaling.batch_ridge_spread": N, "llm.batch_ridge_with_kv": N, "llm.sweep[].kv_cache_bytes": N,
    "llm.sweep[].fits_in_memory": B, "probe.devices[].health.retired_pages_pending": B,
    "probe.devices[].health.mig_instances[].parent_sm_count": I, "probe.devices[].health.mig_instances[].parent_memory_bytes": I,
    "probe.devices[].health.mig_instances[].sm_share": N, "probe.devices[].health.mig_instances[].memory_share": N,
    "probe.devices[].health.processes[].name": S, "probe.devices[].sheet.conflict": S, "probe.cuda_visible_devices": S,
    "profile.roofline_ridge": N, "profile.roofline_points": {"type": ["array", "null"]}, "profile.roofline_date": S,
    "report.points[].workload.time_s": N, "report.points[].measured_time_s": N, "report.points[].achieved_tflops": N,
    "report.points[].achieved_bandwidth_gbs": N, "report.points[].sol_pct": N, "report.points[].compute_sol_pct": N,
    "report.points[].memory_sol_pct": N, "report.points[].unexplained_fraction": N,
}
NA_MAP = {"type": "object", "additionalProperties": {"type": "string"},
          "description": "why each value given as null is missing: {field: reason} (NVML not supported, no permission, ...)"}

def unit_of(key):
    if key in NAMED: return NAMED[key]
    for sfx, words in UNITS:
        if key.endswith(sfx): return words
    return None

def tname(v):
    if v is None: return "null"
    if isinstance(v, bool): return "boolean"
    if isinstance(v, int): return "integer"
    if isinstance(v, float): return "number"
    if isinstance(v, str): return "string"
    if isinstance(v, list): return "array"
    return "object"

def infer(values, key="", path="", is_map=False):
    types = {tname(v) for v in values}
    s = {}
    objs = [v for v in values if isinstance(v, dict)]
    arrs = [v for v in values if isinstance(v, list)]
    scal = types - {"object", "array", "null"}
    tl = set(types)
    if "integer" in tl and "number" in tl: tl.discard("integer")
    if objs:
        if key in MAP_KEYS or path.endswith("policy.health"):
            vals = [x for o in objs for x in o.values()]
            s["additionalProperties"] = infer(vals, "", path + ".*") if vals else {}
        else:
            ks = list(dict.fromkeys(k for o in objs for k in o))
            s["properties"] = {k: infer([o[k] for o in objs if k in o], k, path + "." + k) for k in ks}
            s["required"] = [k for k in ks if all(k in o for o in objs)]
            s["additionalProperties"] = False
            if path.startswith("probe.") and "n/a" not in s["properties"]:
                s["properties"]["n/a"] = NA_MAP
            if "n/a" in s["properties"]:
                s["properties"]["n/a"] = NA_MAP
    if arrs:
        items = [x for a in arrs for x in a]
        s["items"] = infer(items, key, path + "[]") if items else {}
    # scalars may be null (a value gpuwhy could not read or that does not apply)
    if scal or not (objs or arrs):
        tl.add("null")
    if tl == {"null"}:
        tl = {"null", "number", "string", "boolean"} if not (objs or arrs) else tl
    order = ["object", "array", "string", "number", "integer", "boolean", "null"]
    t = [x for x in order if x in tl]
    s = {"type": t[0] if len(t) == 1 else t, **s}
    u = unit_of(key)
    if u and (scal & {"number", "integer"} or tl >= {"number"}):
        s["description"] = u
    if path in OVERRIDES:
        s = {**OVERRIDES[path], **({"description": s["description"]} if "description" in s and "description" not in OVERRIDES[path] else {})}
    if key == "status" and path.startswith("check."):
        s = {"enum": ["pass", "warn", "fail", "skip"], "description": "DCGM's four states"}
    return s



def draft(kind: str, docs: list) -> str:
    """The schema of ``kind`` from ``docs``, as the text of a docs/schema file."""
    sch = infer(docs, "", kind)
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"urn:gpuwhy:schema:{kind}",
           "title": f"gpuwhy {kind} --json" if kind != "profile" else "gpuwhy device profile", **sch}
    if kind != "profile":
        out["properties"]["kind"] = {"const": kind}
        out["properties"]["schema"] = {"const": 1, "description": NAMED["schema"]}
        out["properties"]["gpuwhy"] = {"type": "string", "description": "the gpuwhy version that wrote it"}
    text = json.dumps(out, indent=2)
    return re.sub(r'\[\s+("[^"\[\]]*"(?:,\s+"[^"\[\]]*")*)\s+\]', lambda m: "[" + ", ".join(re.findall(r'"[^"]*"', m.group(1))) + "]", text) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    def _load(path):
        raw = open(path, "rb").read()
        return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    sys.stdout.write(draft(sys.argv[1], [_load(p) for p in sys.argv[2:]]))
