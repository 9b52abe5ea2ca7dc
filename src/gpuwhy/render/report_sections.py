"""The sections of `gpuwhy report` as plain data for ``templates/report.html.j2``.

Pure: each function reads the parsed JSON documents (:class:`~gpuwhy.render.report_data.ReportInput`)
and returns dicts of strings, :class:`Cell`s and :class:`Table`s; the template holds the
markup and the sentences, and escapes every string. Figures are formatted here
(GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s, times with :func:`gpuwhy.units.fmt_time`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..units import finite, fmt_bytes, fmt_cell, fmt_pct, fmt_pow2, fmt_si, fmt_time, tera_unit
from .report_data import (PRECISION_WORDS, Measured, PlacedPoint, ReportInput, Spec, get, precision_order,
                          records)


def txt(v: Any) -> str:
    """``v`` as text; None is ``n/a``."""
    return "n/a" if v is None else str(v)


@dataclass(frozen=True)
class Cell:
    """A value the template draws with markup: ``dash`` (an en dash: nothing to show),
    ``code`` (``text`` in <code>), ``status`` (a pass/fail/skip/warn badge: ``text`` in
    the style ``extra``), ``unit`` (``text`` then the unit ``extra`` in grey),
    ``verdict`` (``text`` in bold, then ``extra``), ``range`` (``text`` – ``extra``).
    ``tail`` is plain text after it."""

    kind: str
    text: str = ""
    extra: str = ""
    tail: str = ""


DASH = Cell("dash")


def code(v: Any) -> Cell:
    return Cell("code", txt(v))


def status(s: Any, tail: str = "") -> Cell:
    """A badge for ``pass``/``fail``/``skip``/``warn`` (anything else is styled as skip)."""
    s = str(s or "").lower()
    return Cell("status", s or "n/a", s if s in ("pass", "fail", "skip", "warn") else "skip", tail)


@dataclass(frozen=True)
class Table:
    """A table in its own horizontal-scroll box: ``headers`` and ``rows`` of str or
    :class:`Cell`; ``numeric`` columns align right, ``wide`` ones wrap (at least 14rem),
    ``wrap`` ones wrap (at least 9rem); ``row_class`` styles rows (``fail``)."""

    headers: Sequence[Any]
    rows: Sequence[Sequence[Any]]
    numeric: frozenset = frozenset()
    wide: frozenset = frozenset()
    wrap: frozenset = frozenset()
    row_class: Sequence[str] | None = None

    def col_class(self, i: int) -> str:
        return "n" if i in self.numeric else ("w" if i in self.wide else ("m" if i in self.wrap else ""))


def table(headers: Sequence[Any], rows: Iterable[Sequence[Any]], numeric: Iterable[int] = (), wide: Iterable[int] = (),
          wrap: Iterable[int] = (), row_class: Sequence[str] | None = None) -> Table:
    return Table(list(headers), [list(r) for r in rows], frozenset(numeric), frozenset(wide), frozenset(wrap), row_class)


def _words(prec: str) -> str:
    return PRECISION_WORDS.get(prec, prec)


def _or_dash(ok: Any, text: str) -> Any:
    return text if ok else DASH


# ---------------------------------------------------------------------------
# Summary, roofline, ceilings, launch overhead
# ---------------------------------------------------------------------------


def summary(inp: ReportInput, spec: Spec | None, meas: Measured | None) -> dict:
    """The cards at the top: DRAM bandwidth, the dtype's peak and ridge, launch overhead, check."""
    cards = []
    if meas and meas.bandwidth_gbs:
        sp = f"{100 * meas.bandwidth_gbs / spec.bandwidth_gbs:.1f}% of the sheet's {fmt_cell(spec.bandwidth_gbs)} GB/s" \
            if spec and spec.bandwidth_gbs else ""
        cards.append(("DRAM bandwidth, sustained (GB/s)", fmt_cell(meas.bandwidth_gbs), sp))
    elif spec and spec.bandwidth_gbs:
        cards.append(("DRAM bandwidth, sheet (GB/s)", fmt_cell(spec.bandwidth_gbs), "not measured"))
    prec = inp.dtype
    unit = tera_unit(prec)
    if meas and prec in meas.peaks:
        t = meas.peaks[prec][0]
        sp = f"{100 * t / spec.peaks[prec]:.1f}% of the sheet's {fmt_cell(spec.peaks[prec])}" if spec and spec.peaks.get(prec) else ""
        cards.append((f"{prec} peak, measured ({unit})", fmt_cell(t), sp))
    elif spec and spec.peaks.get(prec):
        cards.append((f"{prec} peak, sheet ({unit})", fmt_cell(spec.peaks[prec]), "not measured"))
    if spec and spec.bandwidth_gbs and spec.peaks.get(prec):
        rp = spec.peaks[prec] * 1e12 / (spec.bandwidth_gbs * 1e9)
        extra = ""
        if meas and meas.bandwidth_gbs and prec in meas.peaks:
            extra = f"measured: {fmt_cell(meas.peaks[prec][0] * 1e12 / (meas.bandwidth_gbs * 1e9))}"
        cards.append((f"{prec} ridge point, sheet (FLOP/byte)", fmt_cell(rp), extra))
    if meas and meas.launch.get("event"):
        graph = meas.launch.get("graph")
        cards.append(("launch overhead, event-timed", fmt_time(meas.launch["event"]),
                      f"{fmt_time(graph)} per kernel in a CUDA graph" if graph else ""))
    if isinstance(inp.check, dict):
        checks = [c for d in records(inp.check.get("devices") or []) for c in records(d.get("checks") or [])]
        fails = [str(c.get("name")) for c in checks if c.get("status") == "fail"]
        passed = sum(1 for c in checks if c.get("status") == "pass")
        verdict = "passed" if inp.check.get("passed") else ("failed" if inp.check.get("passed") is False else "n/a")
        det = f"{passed} of {len(checks)} pass" + (f"; failed: {', '.join(fails)}" if fails else "")
        badge = "pass" if verdict == "passed" else "fail" if verdict == "failed" else "skip"
        cards.append(("gpuwhy check", status(badge, f" {verdict}"), det))
    return {"cards": [{"key": k, "value": v, "detail": d} for k, v, d in cards], "notes": list(inp.notes)}


def roofline(inp: ReportInput, roofs: Sequence, placed: Sequence[PlacedPoint], ceilings, sweep: Sequence) -> dict:
    """The roofline's legend, the table of the user's points (each with its precision), what they were
    classified against (``ceilings``: ``{precision: Ceilings or None}``, one line per precision) and the
    loud warnings of points above 100% of their roof (:attr:`PlacedPoint.above_roof`)."""
    from .report_data import roof_name, roof_precisions
    from .report_svg import COLORS

    slot = {p: i for i, p in enumerate(roof_precisions(inp))}
    legend = []
    for r in roofs:
        legend.append({"dashed": not r.measured, "color": COLORS[slot[r.precision] % len(COLORS)], "name": roof_name(r),
                       "bw": fmt_cell(r.bandwidth_gbs), "peak": fmt_cell(r.peak_tflops), "unit": tera_unit(r.precision),
                       "ridge": fmt_cell(r.ridge)})
    out = {"dtype": inp.dtype, "roofs": bool(roofs), "legend": legend, "points": bool(placed), "sweep": bool(sweep),
           "missing": "" if any(r.precision == inp.dtype for r in roofs) else ", ".join(sorted({r.precision for r in roofs}))}
    if placed:
        rows = []
        for pp in placed:
            v, p = pp.verdict, pp.point
            rows.append([
                p.name,
                Cell("verdict", f"{v.regime}-bound", f" ({fmt_cell(v.bound_ratio)}x)" if math.isfinite(v.bound_ratio) else ""),
                v.ceilings.precision,
                fmt_cell(v.arithmetic_intensity), fmt_cell(v.ridge_point),
                fmt_cell(v.attainable_flops / 1e12),
                fmt_cell(v.achieved_flops / 1e12) if v.achieved_flops else DASH,
                fmt_cell(v.sol_pct) + "%" if v.sol_pct is not None else DASH,
                fmt_time(p.time_s) if p.time_s else DASH,
                fmt_time(v.predicted_time_s),
                fmt_cell(v.achieved_bandwidth / 1e9) if v.achieved_bandwidth else DASH,
                fmt_si(p.flops, "FLOP"), fmt_si(p.bytes, "B"),
                "; ".join(v.warnings) if v.warnings else "",
            ])
        units = {tera_unit(pp.verdict.ceilings.precision) for pp in placed}
        u = units.pop() if len(units) == 1 else "T(FL)OP/s"
        out["table"] = table(
            ["point", "verdict", "precision", "FLOP/byte", "ridge", f"attainable {u}", f"achieved {u}", "speed of light",
             "measured time", "model time", "achieved GB/s", "FLOP", "bytes", "warnings"],
            rows, numeric=(3, 4, 5, 6, 7, 8, 9, 10, 11, 12), wide=(13,))
        out["against"] = [{"precision": d, "source": c.source, "bw": fmt_cell(c.bandwidth / 1e9),
                           "peak": fmt_cell(c.peak_flops / 1e12), "unit": tera_unit(d), "launch": fmt_time(c.launch_overhead_s),
                           "launch_source": c.launch_overhead_source}
                          for d, c in ceilings.items() if c is not None]
    out["above_roof"] = [pp.above_roof for pp in placed if pp.above_roof]
    out["precisions"] = ", ".join(sorted({pp.verdict.ceilings.precision for pp in placed})) or inp.dtype
    return out


def ceilings(inp: ReportInput, spec: Spec | None, meas: Measured | None) -> dict:
    """Measured vs sheet per ceiling (the bench's compute rows, else the peaks known), the
    notes of those rows as numbered footnotes, the ridge points."""
    if meas is None and spec is None:
        return {"none": True}
    sbw = spec.bandwidth_gbs if spec else None
    mbw = meas.bandwidth_gbs if meas else None
    rows: list[list] = [[Cell("unit", "DRAM bandwidth", "GB/s"), fmt_cell(mbw) if mbw else "not measured",
                         fmt_pct(finite(100 * mbw / sbw), compact=False) if mbw and sbw else "n/a", fmt_cell(sbw), meas.bandwidth_kernel if meas else "", ""]]
    footnotes: list[str] = []

    def refs(note: Any) -> str:
        """The note's clauses as footnote numbers (the bench repeats the same clauses on many rows)."""
        nums = []
        for part in (p.strip() for p in str(note or "").split("; ")):
            if not part:
                continue
            if part not in footnotes:
                footnotes.append(part)
            nums.append(str(footnotes.index(part) + 1))
        return ", ".join(nums)

    compute_rows = records(get(inp.bench, "compute", default=[]) or [])
    if compute_rows:
        for r in compute_rows:
            prec = str(r.get("precision", ""))
            measured = r.get("status") == "measured" and finite(r.get("tflops"))
            sheet_v = finite(r.get("sheet_peak_tflops")) or (spec.peaks.get(prec) if spec else None)
            rows.append([
                Cell("unit", _words(prec), tera_unit(prec)),
                fmt_cell(r.get("tflops")) if measured else txt(r.get("status") or "not measured"),
                fmt_pct(finite(r.get("pct_of_sheet")), compact=False) if measured and finite(r.get("pct_of_sheet")) else DASH,
                fmt_cell(sheet_v) if sheet_v else DASH,
                f"{r.get('kernel', '')} ({r.get('unit', '')})",
                refs(r.get("note")),
            ])
    else:
        precs = sorted(set((spec.peaks if spec else {})) | set(meas.peaks if meas else {}), key=precision_order)
        for prec in precs:
            m = meas.peaks.get(prec) if meas else None
            s = spec.peaks.get(prec) if spec else None
            rows.append([Cell("unit", _words(prec), tera_unit(prec)), fmt_cell(m[0]) if m else "not measured",
                         fmt_pct(finite(100 * m[0] / s), compact=False) if m and s else DASH, fmt_cell(s) if s else DASH, txt(m[1]) if m else "", ""])
    out = {"none": False, "meas": meas.source if meas else None, "sheet": txt(spec.name if spec else "none"),
           "table": table(["ceiling", "measured", "% of sheet", "sheet", "kernel", "notes"], rows, numeric=(1, 2, 3)),
           "footnotes": footnotes, "ridges": None}
    if spec and spec.peaks and spec.bandwidth_gbs:
        ridge_rows = []
        for prec in sorted(spec.peaks, key=precision_order):
            m = meas.peaks.get(prec) if meas else None
            mr = m[0] * 1e12 / (mbw * 1e9) if m and mbw else None
            ridge_rows.append([_words(prec), fmt_cell(spec.peaks[prec] * 1e12 / (spec.bandwidth_gbs * 1e9)), fmt_cell(mr) if mr else DASH])
        out["ridges"] = table(["precision", "sheet", "measured"], ridge_rows, numeric=(1, 2))
    return out


def launch(meas: Measured | None) -> dict:
    """Launch overhead four ways (µs), or nothing when none is known."""
    lo = meas.launch if meas else {}
    if not any(lo.values()):
        return {"absent": True}
    what = [
        ("event", "event-timed", "CUDA events around an empty kernel on the GPU's clock: the figure classify uses"),
        ("submit", "host submission", "back-to-back launches from Python, host time per launch"),
        ("round_trip", "round trip", "launch + synchronize, host wall time"),
        ("graph", "per kernel in a CUDA graph", "one graph of many launches, time per kernel"),
    ]
    rows = [[name, fmt_cell(lo[k] * 1e6) if lo.get(k) else "n/a", meaning] for k, name, meaning in what]
    return {"absent": False, "table": table(["how", "\u00b5s", "what it measures"], rows, numeric=(1,), wide=(2,)),
            "source": meas.source}


# ---------------------------------------------------------------------------
# Memory sweep, latency, link
# ---------------------------------------------------------------------------


def sweep(inp: ReportInput) -> dict:
    """The bench's sweep rows: per kernel the largest size of each regime, then every row."""
    b = inp.bench if isinstance(inp.bench, dict) else None
    rows = records(get(b, "rows", default=[]) or [])
    if not rows:
        return {"rows": False, "profile": txt(b.get("date")) if b is not None and b.get("kind") == "profile" else None}
    headers = ["kernel", "elements", "bytes", "median time", "GB/s", "% spec", "regime"]

    def cells(r: dict) -> list:
        return [txt(r.get("kernel")), fmt_pow2(r.get("elements")), fmt_bytes(finite(r.get("bytes_moved"))),
                fmt_time(finite(r.get("median_s"))), fmt_cell(r.get("gbs")),
                fmt_pct(finite(r.get("pct_of_spec")), compact=False) if finite(r.get("pct_of_spec")) is not None else DASH, txt(r.get("regime"))]

    best: dict = {}
    order: list = []
    for r in rows:
        key = (str(r.get("kernel")), str(r.get("regime")))
        if key not in best:
            order.append(key)
        if key not in best or (finite(r.get("elements")) or 0) >= (finite(best[key].get("elements")) or 0):
            best[key] = r
    kernels = list(dict.fromkeys(k[0] for k in order))
    order.sort(key=lambda k: (0 if "L2" in k[1] else 1, kernels.index(k[0])))
    out = {"rows": True, "n": len(rows), "summary": b.get("summary"), "convention": b.get("convention"),
           "largest": table(headers, [cells(best[k]) for k in order], numeric=(1, 2, 3, 4, 5)),
           "all": table(headers, [cells(r) for r in rows], numeric=(1, 2, 3, 4, 5)), "cpu": None,
           "warnings": [txt(w) for key in ("warnings", "notes") for w in (b.get(key) or [])], "health": None}
    cpu = b.get("cpu_vecadd")
    if isinstance(cpu, dict) and finite(cpu.get("cpu_gbs")):
        out["cpu"] = {"elements": fmt_pow2(cpu.get("elements")), "dtype": txt(cpu.get("dtype", "")), "gbs": fmt_cell(cpu.get("cpu_gbs")),
                      "kernel": txt(cpu.get("gpu_kernel", "")), "speedup": fmt_cell(cpu.get("speedup"))}
    hb, ha = b.get("health_before"), b.get("health_after")
    if isinstance(hb, dict) or isinstance(ha, dict):
        def h(d):
            if not isinstance(d, dict):
                return "n/a"
            r = ", ".join(map(str, d.get("reasons") or [])) or "no clock events"
            return (f"SM {d.get('sm_clock_mhz', 'n/a')}/{d.get('max_sm_clock_mhz', 'n/a')} MHz, memory "
                    f"{d.get('mem_clock_mhz', 'n/a')}/{d.get('max_mem_clock_mhz', 'n/a')} MHz, {d.get('temperature_c', 'n/a')} C, "
                    f"{fmt_cell(d.get('power_w'))} W, {r}")
        out["health"] = (h(hb), h(ha))
    return out


def latency(doc: dict | None) -> dict:
    """`bench --latency`: the levels (ns, cycles, working-set span, where the step
    falls), Little's law for DRAM, every working set (folded)."""
    if not isinstance(doc, dict):
        return {"absent": True}
    out: dict = {"absent": False, "summary": doc.get("summary"), "load": doc.get("load"), "levels": None, "littles": None,
                 "notes": [txt(n) for n in doc.get("notes") or []], "warnings": [txt(w) for w in doc.get("warnings") or []]}
    levels = records(doc.get("levels") or [])
    if levels:
        rows = []
        for lv in levels:
            lat = finite(lv.get("latency_s"))
            rows.append([txt(lv.get("name")), fmt_cell(lat * 1e9) if lat else "n/a", fmt_cell(lv.get("cycles")),
                         Cell("range", fmt_bytes(finite(lv.get("first_bytes"))), fmt_bytes(finite(lv.get("last_bytes")))),
                         fmt_bytes(finite(lv.get("edge_bytes"))) if finite(lv.get("edge_bytes")) else DASH])
        out["levels"] = table(["level", "ns", "SM cycles", "working sets", "step at"], rows, numeric=(1, 2))
    ll = doc.get("littles_law")
    if isinstance(ll, dict) and finite(ll.get("bandwidth_gbs")) and finite(ll.get("latency_s")):
        per_sm = finite(ll.get("bytes_in_flight_per_sm"))
        needs = records(ll.get("needs") or [])
        srcs = [f"{w}: {ll[k]}" for w, k in (("bandwidth", "bandwidth_source"), ("latency", "latency_source")) if ll.get(k)]
        out["littles"] = {
            "bw": fmt_cell(ll["bandwidth_gbs"]), "ns": fmt_cell(ll["latency_s"] * 1e9), "bytes": fmt_si(finite(ll.get("bytes_in_flight")), "B"),
            "per_sm": fmt_si(per_sm, "B") if per_sm else "",
            "needs": table(["bytes in flight per thread", "threads per SM needed", "of the SM's limit"],
                           [[txt(n.get("bytes_per_thread")), fmt_cell(n.get("threads_per_sm")),
                             fmt_pct(finite(100 * finite(n.get("fraction_of_limit"))), compact=False) if finite(n.get("fraction_of_limit")) is not None else "n/a"]
                            for n in needs], numeric=(0, 1, 2)) if needs else None,
            "sources": "; ".join(srcs)}
    points = records(doc.get("points") or [])
    out["n_points"] = len(points)
    out["points"] = table(["working set", "ns per load", "SM cycles", "level"],
                          [[fmt_bytes(finite(p.get("working_set_bytes"))),
                            fmt_cell(finite(p.get("latency_s")) * 1e9) if finite(p.get("latency_s")) else "n/a",
                            fmt_cell(p.get("cycles")), txt(p.get("level") or "")] for p in points], numeric=(0, 1, 2))
    return out


def _flat_records(doc: dict) -> list[tuple[str, list[dict]]]:
    """Lists of flat dicts (scalar values) anywhere one level down in ``doc``."""
    out = []
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            flat = [{kk: vv for kk, vv in x.items() if not isinstance(vv, (dict, list))} for x in v]
            if any(flat):
                out.append((str(k), flat))
    return out


def _cell(k: str, v: Any) -> Any:
    """A value of an unknown shape: a time for ``*_s``, a size for ``*bytes``, else a figure or the text."""
    x = finite(v)
    if x is None:
        return txt(v) if v is not None else DASH
    if k.endswith("_s"):
        return fmt_time(x)
    if k == "bytes" or k.endswith("_bytes"):
        return fmt_bytes(x)
    return fmt_cell(x)


def _heading(k: str) -> str:
    """A column title from a JSON key: units spelled out (``gbs`` -> ``GB/s``, ``median_s`` -> ``median``)."""
    for suffix, unit in (("_gbs", " GB/s"), ("gbs", "GB/s"), ("_bytes", ""), ("_s", ""), ("_pct", " %"), ("_us", " (us)")):
        if k.endswith(suffix):
            k = k[: -len(suffix)] + unit
            break
    return k.replace("_", " ").strip()


_DIRECTIONS = {"h2d": "host to device", "d2h": "device to host", "bidir": "both ways at once"}


def _generic_tables(doc: dict, skip: set) -> list[tuple[str, Table]]:
    """Every list of flat records in ``doc`` (not under ``skip``) as a table: for a shape this report does not know."""
    out = []
    for k, recs in _flat_records(doc):
        if k in skip:
            continue
        keys: list[str] = []
        for r in recs:
            for kk in r:
                if kk not in keys:
                    keys.append(kk)
        keys = keys[:10]
        out.append((_heading(k), table([_heading(kk) for kk in keys], [[_cell(kk, r.get(kk)) for kk in keys] for r in recs],
                                       numeric=[i for i, kk in enumerate(keys) if any(finite(r.get(kk)) is not None for r in recs)])))
    return out


def link(doc: dict | None) -> dict:
    """`bench --link`: the link and its theoretical rate, per direction x memory the
    plateau, small-copy floor and half-bandwidth size, pinned vs pageable, every row
    (folded); any other shape is tabulated as it comes."""
    if not isinstance(doc, dict):
        return {"absent": True}
    lk = doc.get("link") if isinstance(doc.get("link"), dict) else {}
    curves = records(doc.get("curves") or [])
    rows = records(doc.get("rows") or [])
    out: dict = {"absent": False, "summary": doc.get("summary"), "link": None, "curves": None, "pinned": "", "rows": None,
                 "n_rows": len(rows), "generic": [], "kv": None, "empty": False,
                 "checks": [c for c in (doc.get("checks") or []) if isinstance(c, str)],
                 "notes": [txt(n) for n in doc.get("notes") or []], "warnings": [txt(w) for w in doc.get("warnings") or []]}
    if lk:
        theo = finite(lk.get("theoretical_gbs"))
        out["link"] = {"label": txt(lk.get("label") or lk.get("kind") or "n/a"), "theo": fmt_cell(theo) if theo else "",
                       "note": txt(lk["note"]) if lk.get("note") else ""}
    if curves:
        out["curves"] = table(
            ["direction", "memory", "plateau GB/s", "% of theoretical", "small-copy floor", "half bandwidth at", "timing"],
            [[txt(_DIRECTIONS.get(str(c.get("direction")), c.get("direction"))), txt(c.get("memory")),
              fmt_cell(c.get("plateau_gbs")), fmt_pct(finite(c.get("pct_of_theoretical")), compact=False) if finite(c.get("pct_of_theoretical")) else DASH,
              f"{fmt_time(finite(c.get('floor_s')))} at {fmt_bytes(finite(c.get('floor_bytes')))}" if finite(c.get("floor_s")) else "n/a",
              fmt_bytes(finite(c.get("half_bytes"))) if finite(c.get("half_bytes")) else DASH,
              txt(c.get("timing") or "")] for c in curves],
            numeric=(2, 3, 4, 5), wrap=(6,))
    ratio = doc.get("pinned_pageable_ratio") if isinstance(doc.get("pinned_pageable_ratio"), dict) else {}
    said = []
    for d, r in ratio.items():
        if isinstance(r, dict) and finite(r.get("plateau")):
            small = f" ({fmt_cell(r['small'])}x at the smallest size)" if finite(r.get("small")) else ""
            said.append(f"{_DIRECTIONS.get(d, d)}: pinned {fmt_cell(r['plateau'])}x pageable on large copies{small}")
    out["pinned"] = "; ".join(said)
    if rows:
        out["rows"] = table(["direction", "memory", "size", "GB/s", "median time", "host-clock GB/s"],
                            [[txt(_DIRECTIONS.get(str(r.get("direction")), r.get("direction"))), txt(r.get("memory")),
                              fmt_bytes(finite(r.get("size_bytes"))), fmt_cell(r.get("gbs")), fmt_time(finite(r.get("median_s"))),
                              fmt_cell(r.get("host_gbs")) if finite(r.get("host_gbs")) else DASH] for r in rows],
                            numeric=(2, 3, 4, 5))
    if not curves and not rows:
        out["generic"] = _generic_tables(doc, {"checks", "devices", "warnings", "notes"})
        if not out["generic"] and not doc.get("summary"):
            scal = [(k, v) for k, v in doc.items() if not isinstance(v, (dict, list)) and k not in ("gpuwhy", "schema", "kind")]
            out["kv"] = [(k, _cell(k, v)) for k, v in scal]
            out["empty"] = not scal
    return out


# ---------------------------------------------------------------------------
# Check, device, provenance
# ---------------------------------------------------------------------------


def check(doc: dict | None) -> dict:
    """Per device its checks (value, threshold, detail) and the policy they were judged by."""
    if not isinstance(doc, dict):
        return {"absent": True}
    devices = []
    for dev in records(doc.get("devices") or []):
        ok = dev.get("passed")
        checks = records(dev.get("checks") or [])
        rows = [[txt(c.get("name")), status(c.get("status")), txt(c.get("value_text", c.get("value"))),
                 txt(c.get("threshold_text", c.get("threshold"))),
                 txt(c.get("detail") or "")] for c in checks]
        devices.append({
            "head": f"{dev.get('device', 'GPU')} ({dev.get('sheet', 'no sheet')})",
            "status": status(dev.get("status") or ("pass" if ok else "fail" if ok is False else "skip")),
            "table": table(["check", "status", "value", "threshold", "detail"], rows, wrap=(2, 3), wide=(4,),
                           row_class=["fail" if c.get("status") == "fail" else "" for c in checks]),
            "took": fmt_time(finite(dev["elapsed_s"])) if finite(dev.get("elapsed_s")) else "",
        })
    pol = doc.get("policy") if isinstance(doc.get("policy"), dict) else {}
    policy = None
    if pol:
        policy = {"source": txt(pol.get("source", "n/a")), "dram": txt(pol.get("min_dram_bandwidth")), "fp32": txt(pol.get("min_fp32")),
                  "tensor_precision": txt(pol.get("tensor_precision", "tensor")), "tensor": txt(pol.get("min_tensor")),
                  "launch": txt(pol.get("max_launch_overhead_us"))}
    return {"absent": False, "devices": devices, "policy": policy}


def _device(d: dict, several: bool) -> dict:
    ident, shape, der, hl, sh = (d.get(k) if isinstance(d.get(k), dict) else {} for k in
                                 ("identity", "shape", "derived", "health", "sheet"))
    mig = ident.get("mig")
    mig_txt = "off" if not mig else (mig.get("profile") if isinstance(mig, dict) and mig.get("profile") else "MIG slice")
    mem, l2 = finite(shape.get("memory_total_bytes")), finite(shape.get("l2_bytes"))
    comps = records(der.get("comparisons") or [])
    formulas = {"DRAM bandwidth": der.get("dram_formula"), "FP32 peak": der.get("fp32_formula")}
    reasons, procs = hl.get("clock_event_reasons"), hl.get("processes")
    na = hl.get("n/a") if isinstance(hl.get("n/a"), dict) else {}
    retired = hl.get("retired_pages_pending") if hl.get("retired_pages_pending") is not None else na.get("retired_pages_pending", "n/a")
    ecc = "on" if hl.get("ecc_enabled") else "off" if hl.get("ecc_enabled") is False else "n/a"
    return {
        "title": f"{txt(ident.get('name'))} (#{txt(ident.get('cuda_ordinal'))})" if several else "",
        "identity": [
            ("name", txt(ident.get("name"))),
            ("UUID", code(ident.get("uuid"))),
            ("architecture", f"{ident.get('architecture', 'n/a')}, compute capability {ident.get('compute_capability', 'n/a')}"),
            ("PCI", f"bus {ident.get('pci_bus_id', 'n/a')}, device id {ident.get('pci_device_id', 'n/a')}"),
            ("MIG", txt(mig_txt)),
            ("spec sheet", txt(sh.get("note") or sh.get("name") or "no sheet matched")),
        ],
        "shape": [
            ("SMs", f"{shape.get('sm_count', 'n/a')} x {shape.get('fp32_lanes_per_sm', 'n/a')} FP32 lanes "
                    f"({fmt_pow2(shape.get('cuda_cores'))} CUDA cores)"),
            ("memory", f"{fmt_si(mem, 'B')} {shape.get('memory_type') or ''}, {shape.get('memory_bus_width_bits', 'n/a')}-bit bus, "
                       f"{shape.get('memory_clock_mhz', 'n/a')} MHz" if mem else "n/a"),
            ("L2", fmt_bytes(l2) if l2 else "n/a"),
            ("SM clock", f"{shape.get('sm_clock_current_mhz', 'n/a')} MHz now, {shape.get('sm_clock_max_mhz', 'n/a')} MHz max"),
        ],
        "derived": table(["quantity", "unit", "derived", "sheet", "diff", "", "formula"],
                         [[txt(c.get("quantity")), txt(c.get("unit")), fmt_cell(c.get("derived")), fmt_cell(c.get("sheet")),
                           f"{finite(c.get('diff_pct')):+.1f}%" if finite(c.get("diff_pct")) is not None else "n/a",
                           status("pass" if c.get("ok") else "warn"), code(formulas.get(c.get("quantity")) or "")]
                          for c in comps], numeric=(2, 3, 4)) if comps else None,
        "health": [
            ("temperature, power", f"{hl.get('temperature_c', 'n/a')} C, {fmt_cell(hl.get('power_draw_w'))} W of "
                                   f"{fmt_cell(hl.get('power_limit_w'))} W"),
            ("clock events", ", ".join(map(str, reasons)) if reasons else ("none" if isinstance(reasons, list) else "n/a")),
            ("ECC", f"{ecc}, {hl.get('ecc_volatile_uncorrected', 'n/a')} volatile uncorrected errors"),
            ("memory repair", f"row remap pending: {hl.get('remapped_rows_pending', 'n/a')}, failed: "
                              f"{hl.get('remapped_rows_failure', 'n/a')}, retired pages pending: {retired}"),
            ("PCIe", f"gen {hl.get('pcie_gen_current', 'n/a')} x{hl.get('pcie_width_current', 'n/a')} "
                     f"(max gen {hl.get('pcie_gen_max', 'n/a')} x{hl.get('pcie_width_max', 'n/a')})"),
            ("modes", f"persistence {'on' if hl.get('persistence_mode') else 'off'}, compute mode "
                      f"{hl.get('compute_mode', 'n/a')}, utilisation {hl.get('utilization_gpu_pct', 'n/a')}%"),
            ("other processes", str(len(procs)) if isinstance(procs, list) else "n/a"),
        ],
        "warnings": [txt(w) for w in (d.get("warnings") or [])],
    }


def device(doc: dict | None, spec: Spec | None) -> dict:
    """`gpuwhy probe`: per device identity, shape, derived vs sheet, health; the software."""
    devs = records(get(doc, "devices", default=[]) or [])
    if not devs:
        return {"devices": [], "spec": spec.name if spec else None}
    sw = doc.get("software") if isinstance(doc.get("software"), dict) else None
    software = None
    if sw:
        software = [
            ("driver", f"{sw.get('driver_version', 'n/a')} (CUDA {sw.get('cuda_driver_version_text', 'n/a')})"),
            ("NVRTC", txt(sw.get("nvrtc_version"))),
            ("performance counters", txt(sw.get("perf_counters"))),
        ]
    return {"devices": [_device(d, len(devs) > 1) for d in devs], "software": software}


def wrap_command(cmd: str) -> str:
    """``cmd`` with a shell line continuation before each ``--option`` (the same command
    to a shell; returned unchanged when that would not hold, e.g. " --" inside quotes)."""
    import shlex

    wrapped = cmd.replace(" --", " \\\n    --")
    try:
        same = shlex.split(wrapped.replace("\\\n", "")) == shlex.split(cmd)  # a shell drops backslash-newline
    except ValueError:
        same = False
    return wrapped if same and wrapped != cmd else cmd


def provenance(inp: ReportInput) -> dict:
    """The gpuwhy version, when, the commands, and where each input came from."""
    where = dict(inp.inputs)
    rows = []
    for what, doc in (("probe", inp.probe), ("bench", inp.bench), ("check", inp.check), ("latency", inp.latency),
                      ("link", inp.link), ("run", inp.run)):
        if not isinstance(doc, dict):
            continue
        mode = doc.get("mode") if isinstance(doc.get("mode"), str) else ""
        rows.append([what, code(where.get(what, "n/a")), f"{doc.get('kind') or ''}{' ' + mode if mode else ''}",
                     txt(doc.get("gpuwhy") or "n/a"), txt(doc.get("date") or "n/a")])
    return {"version": inp.version, "generated": inp.generated or "n/a",
            "commands": "\n".join(wrap_command(c) for c in inp.commands),
            "inputs": table(["section", "from", "kind", "gpuwhy version", "date"], rows) if rows else None}
