"""The shareable report of `gpuwhy report`: data in, one self-contained HTML string out.

Pure: no CUDA, no NVML, no files written. The inputs (:class:`~gpuwhy.render.report_data.ReportInput`)
are the JSON documents gpuwhy's commands print with ``--json``; every section whose input
is missing says "not measured" instead. The page is ``templates/report.html.j2`` (jinja2,
autoescape on, so every piece of text from the inputs is escaped); the roofline is an
inline SVG (:mod:`gpuwhy.render.report_svg`). The page needs no network: styles are
inline, there is no script, and nothing is loaded from a URL. jinja2 is imported on the
first render only, so other commands never load it.

Units: GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s (int8: TOPS), times in s formatted
with :func:`gpuwhy.units.fmt_time`, intensities in FLOP/byte.
"""

from __future__ import annotations

from .report_data import ReportInput
from .templates_env import environment

#: The start of the tag every gpuwhy report carries (every version so far); `gpuwhy report`
#: replaces an existing --out file only when it finds this in it.
GENERATOR_MARK = '<meta name="generator" content="gpuwhy'
#: How every report ends: a report that no longer ends so was added to, and is not replaced.
REPORT_END = "</main></body></html>"

_TOC = (("roofline", "Roofline"), ("ceilings", "Ceilings"), ("check", "Check"), ("device", "GPU"),
        ("sweep", "Memory sweep"), ("launch", "Launch"), ("latency", "Latency"), ("link", "Link"), ("made", "How made"))
#: The contents of a report that holds a `gpuwhy run` only.
_RUN_TOC = (("run", "Run"), ("timeline", "Timeline"), ("budget", "Budget"), ("fixes", "Fixes"), ("kernels", "Kernels"),
            ("made", "How made"))


def render_report(inp: ReportInput) -> str:
    """The whole report as one HTML document (UTF-8 text, self-contained).

    Sections: summary cards, the `gpuwhy run` section when ``inp.run`` is given (alone:
    a page of the run only, see :attr:`ReportInput.only_run`), the roofline with any points, ceilings measured vs
    sheet, the check results, the GPU (probe), the memory sweep, launch overhead,
    latency ladder, link, and how the report was made. Missing inputs give a
    "not measured" line in their section.

    Raises:
        ValueError: a point with non-positive FLOPs, bytes or time (see
            :func:`gpuwhy.model.roofline.classify.classify`).
    """
    from . import report_sections as S
    from .report_run import run_section

    run = run_section(inp.run) if inp.run is not None else None
    if inp.only_run:
        sub = [f"gpuwhy {inp.version}"] + ([f"written {inp.generated}"] if inp.generated else [])
        return environment().get_template("report.html.j2").render(
            version=inp.version, title=f"gpuwhy run: {run['title']}", subtitle=" · ".join(sub), toc=_RUN_TOC,
            code=S.code, only_run=True, run=run, made=S.provenance(inp),
        ) + "\n"
    from .report_data import (ceilings_by_precision, gpu_name, measured_of, place_points, roof_precisions, roofs_for,
                              slopes_for, spec_of, sweep_points)
    from .report_svg import roofline_svg

    spec = spec_of(inp)
    meas = measured_of(inp)
    ceilings = ceilings_by_precision(inp, spec, meas)
    known = {d: c for d, c in ceilings.items() if c is not None}
    placed = place_points([p for p in inp.points if (p.dtype or inp.dtype) in known], known, inp.dtype)
    roofs = roofs_for(inp, spec, meas)
    sweep = sweep_points(inp)
    title = f"gpuwhy report: {gpu_name(inp, spec)}"
    toc = ((("run", "Run"),) if run is not None else ()) + _TOC
    sub = [f"gpuwhy {inp.version}"]
    if inp.generated:
        sub.append(f"written {inp.generated}")
    if spec:
        sub.append(f"sheet {spec.name}")
    sub.append(f"roofline precision {inp.dtype}")
    plot_title = f"Roofline of the {spec.name if spec else 'GPU'}, {inp.dtype}"
    from markupsafe import Markup  # comes with jinja2

    slots = {p: i for i, p in enumerate(roof_precisions(inp))}
    # two drawings of the same plot: one for wide screens and print, one laid out for phones
    slopes = slopes_for(inp)
    svg_wide = Markup(roofline_svg(roofs, placed, sweep, title=plot_title, css_class="rl-wide", colour_slots=slots,
                                   slopes=slopes))
    svg_narrow = Markup(roofline_svg(roofs, placed, sweep, title=plot_title, size=(420, 420), uid="rln",
                                     css_class="rl-narrow", colour_slots=slots, slopes=slopes))
    return environment().get_template("report.html.j2").render(
        version=inp.version, title=title, subtitle=" · ".join(sub), toc=toc, code=S.code,
        summary=S.summary(inp, spec, meas), roofline=S.roofline(inp, roofs, placed, ceilings, sweep),
        svg_wide=svg_wide, svg_narrow=svg_narrow, ceilings=S.ceilings(inp, spec, meas), check=S.check(inp.check),
        device=S.device(inp.probe, spec), sweep=S.sweep(inp), launch=S.launch(meas), latency=S.latency(inp.latency),
        link=S.link(inp.link), made=S.provenance(inp), only_run=False, run=run,
    ) + "\n"


def is_gpuwhy_report(text: str) -> bool:
    """True when ``text`` (the start of a file is enough) carries :data:`GENERATOR_MARK`,
    as every report gpuwhy has written does."""
    return GENERATOR_MARK in text
