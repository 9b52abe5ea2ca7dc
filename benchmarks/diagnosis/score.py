"""The diagnosis benchmark's catalog and scoring: what each program plants, and how a verdict scores.

No torch, no GPU: run_all.py imports it to score the documents it collected, test_score.py
tests it on hand-made documents.

The verdict document (``gpuwhy run --json``) carries, once the new engine writes it::

    doc["diagnosis"] = {
      "window_s": float,
      "top_cause": "<cause key>",
      "shares": [{"cause": key, "seconds": s, "share_pct": p, "level": "DRAM"|"L2"|"L1"|None, ...}],
      "remedies": [{"key": "<remedy key>", "text": str, "ceiling_x": float, "removed_s": float,
                    "removes": [{"cause": key, "seconds": s}]}],
    }

A program scores ``ok`` when ``top_cause`` is its planted cause. Its ceiling is the
``ceiling_x`` of the remedy whose ``key`` is its planted remedy (None when not offered). The
achieved speed-up is the planted run's step time over the fixed twin's (``step_s_mean`` of
the measured stretch), measured two ways: under the same profiler the ceiling was computed
from (both variants under ``gpuwhy run``: like against like, the profiler's own cost in both)
and alone (plain runs, the mean over the runs of each). A twin faster than the ceiling either
way BEATS THE CEILING, a failure of the engine (the ceiling is meant to be an upper bound);
the ratio achieved/ceiling is taken with the profiled speed-up where there is one.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass

NO_DIAGNOSIS = "no diagnosis in the document (engine not built yet)"
BEATS = "BEATS THE CEILING"


@dataclass(frozen=True)
class Planted:
    name: str
    cause: str
    remedy: str
    kernels: bool = False       # also pass --kernels (an Nsight Compute pass): a kernel-regime cause
    level: str | None = None    # the memory level the top share should name (reported, not scored)
    est_s: float = 6.0          # wall seconds of one plain run on an H100 box (start-up included)
    calibrates: bool = False    # its first planted run reports calib_args that every later run gets


PROGRAMS: tuple[Planted, ...] = (
    Planted("python_work", "host_work", "move_host_work"),
    Planted("tiny_layers", "launch_overhead", "cuda_graph"),
    Planted("pageable_h2d", "pageable_copy", "pin_memory", est_s=7.0),
    Planted("d2h_sync", "host_sync", "remove_syncs", est_s=7.0, calibrates=True),
    Planted("dataloader", "data_loading", "more_loader_workers", est_s=7.0),
    Planted("item_gate", "host_sync", "remove_syncs", est_s=7.0, calibrates=True),
    Planted("stream_wait", "dependency_wait", "reorder_dependency", est_s=7.0),
    Planted("fp32_gemm", "compute_bound", "lower_precision", kernels=True, est_s=7.0),
    Planted("elementwise_chain", "memory_bound", "fuse", kernels=True),
    Planted("decode_b1", "launch_overhead", "cuda_graph"),
    Planted("few_blocks", "latency_bound", "more_parallelism", kernels=True),
    Planted("l2_resident", "memory_bound", "fuse", kernels=True, level="L2"),
)
BY_NAME = {p.name: p for p in PROGRAMS}


def parse_diag_result(text: str) -> dict | None:
    """The first ``DIAG_RESULT {json}`` line of a program's output, parsed (None when there is none): under
    ``gpuwhy run --kernels`` the program runs twice, traced and then under ncu (its steps many times
    slower while ncu replays kernels), and the traced run's line comes first."""
    for line in (text or "").splitlines():
        if line.startswith("DIAG_RESULT "):
            try:
                d = json.loads(line[len("DIAG_RESULT "):])
            except ValueError:
                return None
            return d if isinstance(d, dict) else None
    return None


def compare_checksums(planted: dict | None, fixed: dict | None) -> str:
    """``same (...)``, ``DIFFER (...)`` or ``not compared (...)``: the twin must compute what the planted run does."""
    if not planted or not fixed:
        return "not compared (a run is missing)"
    a, b = planted.get("checksum"), fixed.get("checksum")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "not compared (no checksum)"
    rtol = max(float(planted.get("checksum_rtol") or 0.0), float(fixed.get("checksum_rtol") or 0.0))
    scale = max(abs(a), abs(b))
    err = 0.0 if scale == 0 else abs(a - b) / scale
    if not (math.isfinite(a) and math.isfinite(b)) or err > rtol:
        return f"DIFFER (relative {err:.3g} > {rtol:g}: planted {a!r}, fixed {b!r})"
    return f"same (relative {err:.2g} <= {rtol:g})"


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def read_diagnosis(doc) -> tuple[dict | None, str | None]:
    """``(diagnosis, None)``, or ``(None, why)`` when the document has none or it is malformed."""
    if not isinstance(doc, dict):
        return None, "no gpuwhy document"
    diag = doc.get("diagnosis")
    if diag is None:
        return None, NO_DIAGNOSIS
    if not isinstance(diag, dict):
        return None, f"diagnosis is a {type(diag).__name__}, not an object"
    if not isinstance(diag.get("top_cause"), str):
        return None, "diagnosis has no top_cause"
    for key in ("shares", "remedies"):
        if not isinstance(diag.get(key, []), list):
            return None, f"diagnosis {key} is not a list"
    return diag, None


def top_share(diag: dict) -> dict | None:
    """The largest share whose cause is the top cause (None when the shares do not list it)."""
    best = None
    for s in diag.get("shares") or []:
        if isinstance(s, dict) and s.get("cause") == diag.get("top_cause"):
            if best is None or (_num(s.get("seconds")) or 0.0) > (_num(best.get("seconds")) or 0.0):
                best = s
    return best


def ceiling_for(diag: dict, remedy: str) -> float | None:
    """The ``ceiling_x`` of the remedy with this key (the largest, if listed twice); None if not offered."""
    found = [_num(r.get("ceiling_x")) for r in diag.get("remedies") or []
             if isinstance(r, dict) and r.get("key") == remedy]
    found = [c for c in found if c is not None]
    return max(found) if found else None


def achieved(planted_s: list[float], fixed_s: list[float]) -> dict | None:
    """The achieved speed-up from each variant's step times: the ratio of means, and the spread over run pairs."""
    p = [x for x in (_num(v) for v in planted_s) if x is not None and x > 0]
    f = [x for x in (_num(v) for v in fixed_s) if x is not None and x > 0]
    if not p or not f:
        return None

    def spread(xs):
        m = statistics.fmean(xs)
        return (max(xs) - min(xs)) / m * 100.0 if len(xs) > 1 else 0.0

    return {
        "x": statistics.fmean(p) / statistics.fmean(f),
        "x_low": min(p) / max(f),
        "x_high": max(p) / min(f),
        "planted_step_s": p,
        "fixed_step_s": f,
        "planted_spread_pct": spread(p),
        "fixed_spread_pct": spread(f),
    }


def score_program(entry: Planted, doc, planted_runs: list[dict], fixed_runs: list[dict],
                  doc_error: str | None = None, profiled: tuple | None = None) -> dict:
    """One program's row: the verdict against the planted cause, the ceiling against the achieved speed-up.

    ``planted_runs``/``fixed_runs`` are the parsed DIAG_RESULT lines of the plain runs (no gpuwhy);
    ``doc`` the gpuwhy document (or None, with ``doc_error`` saying why); ``profiled`` the DIAG_RESULT
    lines of the planted program and of its twin under ``gpuwhy run`` (either None when missing).
    """
    row = {
        "program": entry.name,
        "planted_cause": entry.cause,
        "planted_remedy": entry.remedy,
        "expected_level": entry.level,
        "top_cause": None,
        "ok": None,
        "level": None,
        "level_ok": None,
        "ceiling_x": None,
        "achieved": None,
        "achieved_x": None,
        "achieved_profiled_x": None,
        "ach_over_ceiling": None,
        "beats_ceiling": False,
        "beats_beyond_spread": False,
        "checksums": compare_checksums(planted_runs[0] if planted_runs else None,
                                       fixed_runs[0] if fixed_runs else None),
        "notes": [],
    }
    ach = achieved([r.get("step_s_mean") for r in planted_runs], [r.get("step_s_mean") for r in fixed_runs])
    if ach is not None:
        row["achieved"] = ach
        row["achieved_x"] = ach["x"]
    prof = achieved(*([(p or {}).get("step_s_mean")] for p in (profiled or (None, None))))
    if prof is not None:
        row["achieved_profiled_x"] = prof["x"]
    if row["checksums"].startswith("DIFFER"):
        row["notes"].append("twin's result differs from the planted run's: " + row["checksums"])
    diag, why = (None, doc_error) if doc_error else read_diagnosis(doc)
    if diag is None:
        row["notes"].append(why or NO_DIAGNOSIS)
        return row
    row["top_cause"] = diag["top_cause"]
    row["ok"] = diag["top_cause"] == entry.cause
    share = top_share(diag)
    if share is not None:
        row["level"] = share.get("level")
    if entry.level is not None:
        if row["level"] is None:
            row["notes"].append(f"level: not given (expected {entry.level}; reported, not scored)")
        else:
            row["level_ok"] = row["level"] == entry.level
            if not row["level_ok"]:
                row["notes"].append(f"level: {row['level']} (expected {entry.level}; reported, not scored)")
    row["ceiling_x"] = ceiling_for(diag, entry.remedy)
    if row["ceiling_x"] is None:
        offered = [r.get("key") for r in diag.get("remedies") or [] if isinstance(r, dict)]
        row["notes"].append(f"remedy {entry.remedy} not offered (offered: {', '.join(map(str, offered)) or 'none'})")
    c = row["ceiling_x"]
    if c and (prof is not None or ach is not None):
        row["ach_over_ceiling"] = (prof if prof is not None else ach)["x"] / c
    if c and prof is not None and prof["x"] > c:
        row["beats_ceiling"] = row["beats_beyond_spread"] = True  # one pair of runs: no spread to hide in
        row["notes"].append(f"{BEATS}: achieved {prof['x']:.2f}x under the profiler > ceiling {c:.2f}x")
    if c and ach is not None and ach["x"] > c:
        row["beats_ceiling"] = True
        beyond = ach["x_low"] > c
        row["beats_beyond_spread"] = row["beats_beyond_spread"] or beyond
        where = "even the slowest pair of runs does" if beyond else "within the runs' spread"
        row["notes"].append(f"{BEATS}: achieved {ach['x']:.2f}x alone > ceiling {c:.2f}x ({where})")
    return row


def summarize(rows: list[dict]) -> dict:
    """The counts the table ends with."""
    judged = [r for r in rows if r.get("ok") is not None]
    ratios = [r["ach_over_ceiling"] for r in rows if _num(r.get("ach_over_ceiling")) is not None]
    return {
        "programs": len(rows),
        "judged": len(judged),
        "top_cause_right": sum(1 for r in judged if r["ok"]),
        "without_diagnosis": len(rows) - len(judged),
        "beating_ceiling": sum(1 for r in rows if r.get("beats_ceiling")),
        "beating_ceiling_beyond_spread": sum(1 for r in rows if r.get("beats_beyond_spread")),
        "median_achieved_over_ceiling": statistics.median(ratios) if ratios else None,
        "with_ratio": len(ratios),
        "errors": sum(1 for r in rows if r.get("error")),
    }


def _fmt_x(x) -> str:
    x = _num(x)
    return "-" if x is None else (f"{x:.1f}x" if x >= 100 else f"{x:.2f}x")


def _cut(s, n: int) -> str:
    s = "-" if s is None else str(s)
    return s if len(s) <= n else s[: n - 1] + "~"


def _wrap(text: str, width: int = 78, indent: str = "  ") -> list[str]:
    words, lines, cur = text.split(), [], indent
    for w in words:
        if len(cur) + len(w) + (0 if cur == indent else 1) > width and cur != indent:
            lines.append(cur)
            cur = indent + "  "
        cur += ("" if cur.strip() == "" else " ") + w
    if cur.strip():
        lines.append(cur)
    return lines


#: achieved under the profiler (prof) and alone; a/c: the profiled one over the ceiling
COLUMNS = (("program", 17), ("planted", 15), ("top cause", 15), ("ok", 3), ("ceil", 6), ("prof", 7),
           ("alone", 6), ("a/c", 4))


def format_table(rows: list[dict], summary: dict) -> str:
    """The table (at most 80 columns) and the summary lines: printed last by run_all.py."""
    def line(cells):
        return "|".join(f"{_cut(c, w):<{w}}" if i < 3 else f"{_cut(c, w):>{w}}"
                        for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS)))

    out = [line([c for c, _ in COLUMNS]), "-" * len(line([c for c, _ in COLUMNS]))]
    for r in rows:
        ok = "-" if r.get("ok") is None else ("yes" if r["ok"] else "NO")
        ratio = _num(r.get("ach_over_ceiling"))
        out.append(line([r["program"], r["planted_cause"], r.get("top_cause") or "-", ok, _fmt_x(r.get("ceiling_x")),
                         _fmt_x(r.get("achieved_profiled_x")), _fmt_x(r.get("achieved_x")),
                         "-" if ratio is None else f"{ratio:.2f}"]))
        if r.get("error"):
            out += _wrap("error: " + str(r["error"]))
        for n in r.get("notes") or []:
            out += _wrap(n)
    s = summary
    right = f"top cause right in {s['top_cause_right']} of {s['judged']}"
    if s["without_diagnosis"]:
        right += f" ({s['without_diagnosis']} of {s['programs']} without a diagnosis)"
    med = s["median_achieved_over_ceiling"]
    beats = f"twins beating their ceiling: {s['beating_ceiling']}"
    if s["beating_ceiling"]:
        beats += f" ({s['beating_ceiling_beyond_spread']} beyond the runs' spread)"
    out += ["", right, beats, f"median achieved/ceiling: {'-' if med is None else f'{med:.2f}'}"
            + (f" (over {s['with_ratio']} program{'s' if s['with_ratio'] != 1 else ''})" if med is not None else "")]
    if s["errors"]:
        out.append(f"programs with an error: {s['errors']}")
    return "\n".join(out)
