"""The `gpuwhy run` section of the HTML report, as plain data for ``templates/report.html.j2``.

Pure: reads one `gpuwhy run --json` document (a dict, defensively: a saved file may be
old or hand-edited) and returns strings, :class:`~gpuwhy.render.report_sections.Cell`s,
:class:`~gpuwhy.render.report_sections.Table`s and the geometry of the timeline strip;
the template holds the markup and escapes every string.

The strip is one row of ``n`` columns, one per bin of the window's ``timeline``; each
column is stacked bottom-up, GPU busy first, then the idle causes in the legend's
order, each segment's height its share of the bin. Its coordinates are in a
``STRIP_W`` x ``STRIP_H`` viewBox, stretched to the page's width.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..units import finite, fmt_cell, fmt_pct, fmt_time
from .cells import kernel_regime
from .report_data import get, records
from .report_sections import Table, code, table, txt

#: The strip's viewBox (user units); the page stretches it to its width at a fixed height.
STRIP_W, STRIP_H = 1000.0, 100.0
#: GPU busy time's colour (Okabe-Ito blue).
BUSY_COLOR = "#0072b2"
#: Each idle share's colour, by the budget's names (api/run.py, importers/timeline/results.py CAUSE_LABELS);
#: Okabe-Ito hues for the causes, greys for what is not the GPU's to fix.
CAUSE_COLORS = {
    "launch overhead (launch calls, dispatch)": "#e69f00",
    "host work issuing no GPU work (Python, I/O)": "#d0a060",
    "host blocked in a sync": "#d55e00",
    "data loading (DataLoader)": "#cc79a7",
    "copies from pageable memory": "#f0e442",
    "queued work waiting on a dependency": "#009e73",
    "GPU-side launch latency between queued work": "#56b4e9",
    "warm-up (first calls)": "#8c8c8c",
    "unexplained (no launch linked)": "#6e4b3a",
}
#: Colours for a cause this version does not know (a newer document).
_SPARE = ("#7b3294", "#a6611a", "#018571", "#5e3c99")


def cause_color(name: str, others: list[str]) -> str:
    """The colour of idle share ``name``; an unknown name takes the next spare colour (``others``: the unknown names seen)."""
    if name in CAUSE_COLORS:
        return CAUSE_COLORS[name]
    if name not in others:
        others.append(name)
    return _SPARE[others.index(name) % len(_SPARE)]


def _speedup(x: Any) -> str:
    v = finite(x)
    return "nothing would be left of the window" if v is None else f"the window runs at most {fmt_cell(v)}x faster"


def _g(v: float) -> str:
    """A coordinate for an SVG attribute: 4 decimals, trailing zeros cut."""
    s = f"{v:.4f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def strip(tl: dict) -> dict | None:
    """The strip's geometry from a document's ``timeline``: per bin its x, width, hover title and
    segments (y, height, colour, name); the legend (name, colour, seconds, % of the window);
    the axis ticks. None when the timeline has no bins."""
    bins = records(get(tl, "bins", default=[]))
    if not bins:
        return None
    causes = [c for c in get(tl, "causes", default=[]) if isinstance(c, str)]
    others: list[str] = []
    colors = {c: cause_color(c, others) for c in causes}
    n = len(bins)
    window = finite(get(tl, "window_s")) or (finite(bins[-1].get("end_s")) or 0.0) - (finite(bins[0].get("start_s")) or 0.0)
    totals = {"GPU busy": 0.0, **{c: 0.0 for c in causes}}
    cols = []
    for i, b in enumerate(bins):
        a, e = finite(b.get("start_s")) or 0.0, finite(b.get("end_s")) or 0.0
        length = e - a
        parts = [("GPU busy", finite(b.get("busy_s")) or 0.0, BUSY_COLOR)]
        idle = b.get("idle_s") if isinstance(b.get("idle_s"), dict) else {}
        parts += [(c, finite(idle.get(c)) or 0.0, colors[c]) for c in causes]
        segs, y, lines = [], STRIP_H, []
        for name, sec, color in parts:
            if sec <= 0:
                continue
            totals[name] += sec
            h = STRIP_H * sec / length if length > 0 else 0.0
            y -= h
            segs.append({"y": _g(max(y, 0.0)), "h": _g(h), "color": color, "name": name})
            lines.append(f"{name} {fmt_time(sec)} ({100 * sec / length:.0f}%)" if length > 0 else name)
        title = f"{fmt_time(a)} to {fmt_time(e)}: " + ("; ".join(lines) if lines else "nothing recorded")
        cols.append({"x": _g(STRIP_W * i / n), "w": _g(STRIP_W / n), "title": title, "segs": segs})
    legend = [{"name": name, "color": BUSY_COLOR if name == "GPU busy" else colors[name], "time": fmt_time(sec),
               "pct": f"{100 * sec / window:.1f}%" if window > 0 else "n/a"}
              for name, sec in totals.items() if sec > 0]
    ticks = []
    if window > 0:
        for k in range(5):
            ticks.append({"pct": 25 * k, "label": "0" if k == 0 else fmt_time(window * k / 4),
                          "align": "start" if k == 0 else ("end" if k == 4 else "mid")})
    width = finite(get(tl, "bin_s")) or (window / n if n else 0.0)
    return {"cols": cols, "legend": legend, "ticks": ticks, "n": n, "bin": fmt_time(width), "window": fmt_time(window),
            "view": f"0 0 {_g(STRIP_W)} {_g(STRIP_H)}", "segments": sum(len(c["segs"]) for c in cols)}


def _budget_table(b: dict) -> Table:
    rows = []
    for s in records(b.get("shares")):
        side = "busy" if s.get("side") == "busy" else "idle"
        rows.append([f"GPU {side}: {txt(s.get('label'))}", fmt_time(finite(s.get("seconds"))), fmt_pct(finite(s.get("share_pct")), compact=False)])
    total = sum(finite(s.get("share_pct")) or 0.0 for s in records(b.get("shares")))
    rows.append(["total", fmt_time(finite(b.get("window_s"))), fmt_pct(finite(total), compact=False)])
    return table(["share of the window", "time", "% of the window"], rows, numeric=(1, 2), wrap=(0,))


def _fixes(b: dict) -> list[dict]:
    """The remedies offered: what, the shares each removes, its ceiling over the judged window."""
    out = []
    for f in records(b.get("remedies")):
        what = ", ".join(f"{txt(x.get('cause')).replace('_', ' ')} {fmt_time(finite(x.get('seconds')))}"
                         for x in records(f.get("removes")))
        out.append({"detail": f"{txt(f.get('key')).replace('_', ' ')}: removes {what}",
                    "removes": fmt_pct(finite(f.get("share_pct")), compact=False), "speedup": _speedup(f.get("ceiling_x")),
                    "remedies": [str(f.get("text"))] if isinstance(f.get("text"), str) else []})
    return out


def _kernels_table(ks: list[dict], window_s: float | None) -> Table | None:
    """The top kernels of the document's ``kernels``: launches, time, % of the window, and the regime and
    % of its roof where ncu measured it (``gpuwhy run --kernels``), "not measured" otherwise."""
    rows = []
    for k in ks:
        regime, roof, level = k.get("regime"), finite(k.get("roof_pct")), k.get("deciding_level")
        total = finite(k.get("total_s"))
        n = finite(k.get("launches"))
        shown = kernel_regime(regime, level, bool(k.get("measured_launches")), missing="not measured")
        rows.append([code(k.get("name")), f"{int(n):,}" if n is not None else "n/a", fmt_time(total),
                     fmt_time(finite(k.get("mean_s"))),
                     fmt_pct(finite(100.0 * total / window_s if total is not None and window_s else None), compact=False),
                     shown, f"{roof:.0f}%" if roof is not None else "not measured"])
    if not rows:
        return None
    return table(["kernel", "launches", "total", "mean", "% of the window", "regime", "% of its roof"], rows,
                 numeric=(1, 2, 3, 4, 6), wide=(0,))


#: The most timeline bins a document may hold (`gpuwhy run` writes 160): more is not its output.
MAX_BINS = 10_000


def run_document_problem(doc: dict) -> str | None:
    """What makes ``doc`` no `gpuwhy run --json` document this gpuwhy can draw, in a few words
    (None when it is one): the schema version, the keys every such document has, and the
    figures the page prints (finite, not negative, shares within their window). Older documents
    without ``timeline``, ``kernels`` or ``mode`` pass."""
    import math

    from .jsonout import SCHEMA_VERSION

    def bad(x, *, positive=False, none_ok=True) -> bool:
        if x is None:
            return not none_ok
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
            return True
        return positive and x == 0

    if doc.get("schema") != SCHEMA_VERSION:
        return f"schema {doc.get('schema')!r}, and this gpuwhy reads schema {SCHEMA_VERSION}"
    for key, kind in (("argv", list), ("notes", list)):
        if not isinstance(doc.get(key), kind):
            return f"no {key!r} list"
    if "exit_code" not in doc:
        return "no 'exit_code'"
    for key in ("window", "diagnosis", "timeline", "kernel_pass"):
        if doc.get(key) is not None and not isinstance(doc.get(key), dict):
            return f"{key!r} is a {type(doc.get(key)).__name__}, not an object"
    if "kernels" in doc and not isinstance(doc["kernels"], list):
        return "'kernels' is not a list"
    b = doc.get("diagnosis")
    if b is not None:
        w = b.get("window_s")
        if bad(w, positive=True, none_ok=False):
            return f"diagnosis.window_s {w!r} is not a positive number of seconds"
        for key in ("busy_s", "idle_s", "judged_s"):
            if bad(b.get(key)):
                return f"diagnosis.{key} {b.get(key)!r} is not a number of seconds >= 0"
        for part in ("shares", "remedies"):
            if not isinstance(b.get(part, []), list) or not all(isinstance(x, dict) for x in b.get(part, [])):
                return f"diagnosis.{part} is not a list of objects"
        for x in b.get("shares", []):
            if bad(x.get("seconds"), none_ok=False) or x["seconds"] > w * (1 + 1e-6):
                return f"a share of {x.get('seconds')!r} s in a window of {w} s"
        total = sum(x.get("share_pct") or 0.0 for x in b.get("shares", []) if not bad(x.get("share_pct")))
        if total > 100.0 + 1e-3:
            return f"the shares add up to {fmt_cell(total)}%, more than the window"
    for k in doc.get("kernels") or []:
        if not isinstance(k, dict) or bad(k.get("total_s")) or bad(k.get("mean_s")) or bad(k.get("launches")):
            return "a kernel with a time or launch count that is not a number >= 0"
    t = doc.get("timeline")
    if t is not None and (not isinstance(t.get("bins"), list) or len(t["bins"]) > MAX_BINS):
        return f"a timeline of more than {MAX_BINS:,} bins, or none"
    return None


def run_section(doc: dict) -> dict:
    """The section's data from a `gpuwhy run --json` document (see the module docstring)."""
    argv = [str(a) for a in (doc.get("argv") or []) if a is not None]
    prog = shlex.join(argv) if argv else "n/a"
    w = doc.get("window") if isinstance(doc.get("window"), dict) else {}
    exit_code = doc.get("exit_code")
    facts = [
        ("program", code(prog)),
        ("exit code", txt(exit_code)),
        ("wall time under the profiler", fmt_time(finite(doc.get("program_wall_s")))),
        ("GPU (device in the trace)", txt(doc.get("gpu"))),
        ("window", f"{txt(w.get('how'))}, {fmt_time(finite(w.get('seconds')))}"),
    ]
    trace = doc.get("trace")
    b = doc.get("diagnosis") if isinstance(doc.get("diagnosis"), dict) else None
    out: dict = {"facts": facts, "trace": trace if isinstance(trace, str) and trace else None,
                 # the window's note is in the facts already
                 "notes": [str(n) for n in (doc.get("notes") or []) if isinstance(n, str) and not n.startswith("window: ")],
                 "title": prog, "ncu_alone": doc.get("mode") == "ncu",
                 "budget": None, "strip": None, "fixes": [], "kernels": None, "verdict": None}
    if b is None:
        return out
    out["budget"] = _budget_table(b)
    out["strip"] = strip(doc.get("timeline")) if isinstance(doc.get("timeline"), dict) else None
    out["fixes"] = _fixes(b)
    out["kernels"] = _kernels_table(records(doc.get("kernels")), finite(b.get("window_s")))
    line = b.get("line") if isinstance(b.get("line"), str) else None
    if doc.get("mode") == "ncu" and line:
        line += " (of the profiled kernel time; GPU idle time not measured: ncu alone)"
    out["verdict"] = line
    return out


__all__ = ["BUSY_COLOR", "CAUSE_COLORS", "STRIP_H", "STRIP_W", "cause_color", "run_section", "strip"]
