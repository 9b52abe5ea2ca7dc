"""The planted regressions, the cause `gpuwhy diff` should name for each, and how a diff scores.

No torch, no GPU: run_regressions.py imports it to score the diffs it ran; the tests
(tests/test_regressions_bench.py) score hand-made documents with it.

A regression scores **ok** when the top contributor of ``gpuwhy diff BASELINE REGRESSED --json``
(``change.top_contributor``: the cause that rose most in a slower run) is its planted cause, and
**explains** when the named contributors (those moving with the change, each at least 5% of it,
three at most: docs/diff.md) hold at least :data:`EXPLAINED_MIN_PCT` % of the change
(``change.explained_pct``). The issue's bar (issue 30): the planted cause first in at least 9 of
10, the named contributors explaining at least 80% of the change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The named contributors must hold at least this share (%) of the change (issue 30).
EXPLAINED_MIN_PCT = 80.0
#: The issue's bar: the planted cause first in at least this many of ten.
OK_MIN_OF_TEN = 9


@dataclass(frozen=True)
class Regression:
    """One planted regression: ``name`` (program.py's ``--regress``), ``cause`` (the cause key of
    src/gpuwhy/verdict/causes.py the diff should name first), ``why`` (in words, README's table);
    ``remedy`` is empty (a regression's document is the run *after*: no prediction is scored);
    ``est_s``: wall seconds of one plain run on an H100 box (start-up included)."""

    name: str
    cause: str
    why: str
    est_s: float = 6.0
    remedy: str = ""


REGRESSIONS: tuple[Regression, ...] = (
    Regression("sync_item", "host_sync",
               "loss.item() blocks until the step's work is done; the log write, the next step's bookkeeping, "
               "batch fetch and first launches then run with the GPU idle, gated by the sync"),
    Regression("pageable", "pageable_copy",
               "the host stages each 20 MB batch through a pinned buffer (after a stream sync the driver makes), the GPU "
               "idles; the pinned copies' exposed time (copy) goes away"),
    Regression("no_bf16", "kernels",
               "fp32 (TF32) GEMMs and twice the bytes: the kernels take longer; a trace does not measure "
               "their regime (an ncu pass would name compute-bound)"),
    Regression("no_tf32", "kernels",
               "the fp32 tail's matmuls on the FP32 cores, several times slower: kernel time, regime not "
               "measured from a trace"),
    Regression("loader_workers", "data_loading",
               "every sample made by numpy on the main process inside DataLoader.__next__, the GPU waiting",
               est_s=7.0),
    Regression("split_fused", "kernels",
               "the T x T scores written, softmaxed in fp32 and read back, forward and backward: more kernel "
               "time (memory-bound softmax, batched GEMMs), regime not measured from a trace"),
    Regression("side_stream_wait", "dependency_wait",
               "each step's work is queued ahead but its stream waits on the logger's event, whose host "
               "function takes 3 ms: GPU idle with work queued"),
    Regression("host_work", "host_work",
               "Python that issues no GPU work makes the host slower than the GPU: gaps in which the host "
               "launched nothing"),
    Regression("micro_batches", "launch_overhead",
               "8x the launches, each kernel an eighth of the size: the host's launch and dispatch time per "
               "step exceeds the GPU's, which waits for each launch"),
    Regression("cpu_op", "host_work",
               "CPU-tensor ops (per image and channel: standardise, jitter; 1,152 a step) on the main process "
               "launch nothing: host work, long enough that the GPU waits"),
)
BY_NAME = {r.name: r for r in REGRESSIONS}


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def slowdown_pct(base_s, reg_s) -> float | None:
    """How much slower the regressed step is (%, ``(reg - base) / base x 100``); None without both."""
    b, r = _num(base_s), _num(reg_s)
    return None if b is None or r is None or b <= 0 else 100.0 * (r - b) / b


def score(entry: Regression, diff_row: dict | None) -> dict:
    """One regression's scores from its diff row (``diff_pairs.diff_one``'s: ``top_contributor``,
    ``named``, ``explained_pct``, ``speedup_x``, ``line``, or ``error``): ``ok``, ``explains``,
    ``change_pct`` (the diff's change per step, %: positive when slower) and notes."""
    row = {"regression": entry.name, "planted": entry.cause, "top_contributor": None, "ok": None, "named": None,
           "explained_pct": None, "explains": None, "change_pct": None, "line": None, "notes": []}
    if diff_row is None:
        row["notes"].append("no diff (a document is missing)")
        return row
    if diff_row.get("error"):
        row["notes"].append("diff failed: " + str(diff_row["error"]))
        return row
    top = diff_row.get("top_contributor")
    row["top_contributor"] = top
    row["ok"] = top == entry.cause
    row["named"] = list(diff_row.get("named") or [])
    row["line"] = diff_row.get("line")
    expl = _num(diff_row.get("explained_pct"))
    row["explained_pct"] = expl
    row["explains"] = expl is not None and expl >= EXPLAINED_MIN_PCT
    sp = _num(diff_row.get("speedup_x"))
    if sp is not None and sp > 0:
        row["change_pct"] = 100.0 * (1.0 / sp - 1.0)
        if sp >= 1.0:
            row["notes"].append("NOT SLOWER: the regressed run is not slower per step than the baseline "
                                "(the top contributor is then what moved in the other direction)")
    if top is not None and not row["ok"]:
        row["notes"].append(f"top contributor {top}, planted {entry.cause}" +
                            (f" (named: {', '.join(row['named'])})" if row["named"] else ""))
    if row["explains"] is False:
        row["notes"].append(f"the named contributors hold {expl:.0f}% of the change (< {EXPLAINED_MIN_PCT:.0f}%)")
    return row


def summarize(rows: list[dict]) -> dict:
    """The counts the table ends with."""
    judged = [r for r in rows if r.get("ok") is not None]
    return {
        "regressions": len(rows),
        "judged": len(judged),
        "top_right": sum(1 for r in judged if r["ok"]),
        "explained": sum(1 for r in judged if r["explains"]),
        "both": sum(1 for r in judged if r["ok"] and r["explains"]),
        "not_slower": sum(1 for r in judged if _num(r.get("change_pct")) is not None and r["change_pct"] <= 0),
        "checksums_differ": sum(1 for r in rows if str(r.get("checksums", "")).startswith("DIFFER")),
        "errors": sum(1 for r in rows if r.get("error")),
    }


def _cut(s, n: int) -> str:
    s = "-" if s is None else str(s)
    return s if len(s) <= n else s[: n - 1] + "~"


def _pct(x) -> str:
    x = _num(x)
    return "-" if x is None else f"{x:+.0f}%"


def wrap(text: str, width: int = 78, indent: str = "  ") -> list[str]:
    """``text`` in lines of at most ``width`` columns (continuations indented further); a word longer
    than a line (a path, a command) is split across lines."""
    room = width - len(indent) - 2
    words = [w[i:i + room] for w in text.split() for i in range(0, len(w), room)]
    lines, cur = [], indent
    for w in words:
        if cur.strip() and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = indent + "  "
        cur += ("" if not cur.strip() else " ") + w
    if cur.strip():
        lines.append(cur)
    return lines


#: regression, planted cause, top contributor, ok, named contributors' share of the change,
#: the change per step (the diff's, under the profiler), the slowdown alone, checksums
COLUMNS = (("regression", 16), ("planted", 15), ("top contributor", 15), ("ok", 3), ("expl", 5),
           ("change", 7), ("alone", 7), ("sum", 4))


def format_table(rows: list[dict], summary: dict) -> str:
    """The table (at most 80 columns) and the summary lines: printed last by run_regressions.py."""
    def line(cells):
        return "|".join(f"{_cut(c, w):<{w}}" if i < 3 else f"{_cut(c, w):>{w}}"
                        for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS)))

    head = line([c for c, _ in COLUMNS])
    out = [head, "-" * len(head)]
    for r in rows:
        ok = "-" if r.get("ok") is None else ("yes" if r["ok"] else "NO")
        expl = _num(r.get("explained_pct"))
        sums = str(r.get("checksums") or "")
        out.append(line([r["regression"], r["planted"], r.get("top_contributor") or "-", ok,
                         "-" if expl is None else f"{expl:.0f}%", _pct(r.get("change_pct")),
                         _pct(r.get("alone_pct")), "ok" if sums.startswith("same") else
                         ("DIFF" if sums.startswith("DIFFER") else "-")]))
        if r.get("error"):
            out += wrap("error: " + str(r["error"]))
        for n in r.get("notes") or []:
            out += wrap(n)
    s = summary
    out += ["", f"planted cause top contributor in {s['top_right']} of {s['judged']}"
            + (f" ({s['regressions'] - s['judged']} of {s['regressions']} not judged)" if s["judged"] < s["regressions"]
               else ""),
            f"named contributors explain >= {EXPLAINED_MIN_PCT:.0f}% of the change in {s['explained']} of {s['judged']}",
            f"both in {s['both']} of {s['judged']}"]
    if s["not_slower"]:
        out.append(f"regressions not slower than the baseline: {s['not_slower']}")
    if s["checksums_differ"]:
        out.append(f"checksums differing from the baseline's: {s['checksums_differ']}")
    if s["errors"]:
        out.append(f"regressions with an error: {s['errors']}")
    return "\n".join(out)
