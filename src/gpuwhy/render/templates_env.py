"""The jinja2 environment of ``render/templates/`` (the HTML report and its SVG roofline).

jinja2 is imported on the first call only, so commands other than `gpuwhy report` never load it.
"""

from __future__ import annotations

from functools import lru_cache

from ..units import fmt_cell


@lru_cache(maxsize=1)
def environment():
    """The jinja2 environment of ``templates/`` (autoescape on, undefined names are errors)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("gpuwhy.render", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["f1"] = lambda v: f"{v:.1f}"  # SVG coordinates (machine text)
    env.filters["g"] = lambda v: f"{v:g}"  # SVG attribute values (machine text)
    env.filters["num"] = fmt_cell
    return env
