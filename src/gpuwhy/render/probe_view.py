"""Rich rendering of a :class:`~gpuwhy.device.probe.ProbeReport`: one panel per GPU, then the software."""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Callable

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..na import is_na
from ..units import fmt_bytes, fmt_counted, fmt_g, fmt_num, fmt_si
from .console import out

#: A clock for the panel: ``1980 MHz``.
_in_mhz = partial(fmt_g, unit="MHz")


def _na(v: Any) -> Text:
    return Text(f"n/a: {v.reason}", style="dim")


def _val(v: Any, fmt: Callable[[Any], str] = str) -> Text:
    """A value formatted, or 'n/a (reason)' dimmed."""
    if is_na(v):
        return _na(v)
    if v is None:
        return Text("n/a", style="dim")
    return Text(fmt(v))


def _merge_reasons(reasons: list[str]) -> str:
    """'not supported (nvmlA)', 'not supported (nvmlB)' -> 'not supported (nvmlA, nvmlB)'."""
    groups: dict[str, list[str]] = {}
    for r in reasons:
        m = re.match(r"^(.*) \(((?:nvml|cu)\w+)\)$", r)
        words, fn = (m.group(1), m.group(2)) if m else (r, "")
        fns = groups.setdefault(words, [])
        if fn and fn not in fns:
            fns.append(fn)
    return "; ".join(f"{w} ({', '.join(f)})" if f else w for w, f in groups.items())


def _row(*parts: Any) -> Text:
    """Join literal strings and ``(value, fmt)`` pairs; when every value is NA, one 'n/a: reasons'."""
    values = [p[0] for p in parts if isinstance(p, tuple)]
    if values and all(is_na(v) for v in values):
        return Text("n/a: " + _merge_reasons([v.reason for v in values]), style="dim")
    t = Text()
    for p in parts:
        if isinstance(p, tuple):
            t.append_text(_val(p[0], p[1]))
        else:
            t.append(p)
    return t


def _kv(title: str) -> Table:
    t = Table(title=title, title_justify="left", title_style="bold", show_header=False, box=None, pad_edge=False)
    t.add_column(style="cyan", no_wrap=True)
    t.add_column()
    return t


def _onoff(v: Any) -> str:
    return "on" if v else "off"


def _identity(d) -> Table:
    i = d.identity
    t = _kv("identity")
    t.add_row("name", _val(i.name))
    t.add_row("UUID", _val(i.uuid))
    t.add_row("PCI", _row((i.pci_bus_id, str), ", device id ", (i.pci_device_id, str)))
    t.add_row("brand", _val(i.brand))
    t.add_row("architecture", _row((i.architecture, str), ", compute capability ", (i.compute_capability, str)))
    if i.mig is not None:
        m = i.mig
        share = _row(
            (m.profile, str), ": ", (m.sm_count, lambda v: f"{v} SMs"), " of ", (m.parent_sm_count, str),
            ", memory share ", (m.memory_share, lambda v: f"{100 * v:.1f}%"),
        )
        t.add_row("MIG slice", share)
    sheet = Text(d.sheet.note, style="green" if d.sheet.matched else "yellow")
    t.add_row("spec sheet", sheet)
    return t


def _shape(d) -> Table:
    s = d.shape
    t = _kv("shape")
    sm = _row((s.sm_count, lambda v: f"{v} SMs"), " x ", (s.fp32_lanes_per_sm, lambda v: f"{v} FP32 lanes"))
    if not is_na(s.cuda_cores):
        sm.append(f" ({s.cuda_cores} CUDA cores per NVML)")
    t.add_row("SMs", sm)
    per = _row((s.max_threads_per_sm, lambda v: f"{v} threads max"), ", shared memory ", (s.shared_mem_per_sm_bytes, fmt_bytes))
    t.add_row("per SM", per)
    t.add_row("L2", _val(s.l2_bytes, fmt_bytes))
    t.add_row("memory", _row("total ", (s.memory_total_bytes, fmt_bytes), ", free ", (s.memory_free_bytes, fmt_bytes)))
    t.add_row("memory type", _row((s.memory_type, str), ", ", (s.memory_bus_width_bits, lambda v: f"{v}-bit bus")))
    t.add_row("memory clock", _row("max ", (s.memory_clock_mhz, _in_mhz), ", now ", (s.memory_clock_current_mhz, _in_mhz)))
    t.add_row("SM clock", _row("max ", (s.sm_clock_max_mhz, _in_mhz), ", now ", (s.sm_clock_current_mhz, _in_mhz)))
    boost = _val(s.boost_clock_mhz, _in_mhz)
    if not is_na(s.boost_clock_mhz):
        boost.append(f" ({s.sources.get('boost_clock_mhz', '?')})", style="dim")
    t.add_row("boost clock", boost)
    return t


def _derived(d) -> Table:
    dv = d.derived
    t = Table(title="derived peaks vs sheet", title_justify="left", title_style="bold", box=None, pad_edge=False)
    for col, just in (("", "left"), ("derived", "right"), ("formula", "left"), ("sheet", "right"), ("diff", "right")):
        t.add_column(col, justify=just)
    by = {c.quantity: c for c in dv.comparisons}
    sheet = d.sheet.sheet
    rows = (
        ("DRAM bandwidth", dv.dram_bandwidth_gbs, dv.dram_formula, lambda v: fmt_si(v * 1e9, "B/s"),
         sheet.memory_bandwidth_gbs if sheet is not None else None),
        ("FP32 peak", dv.fp32_tflops, dv.fp32_formula, lambda v: fmt_si(v * 1e12, "FLOP/s"),
         sheet.peak_tflops.get("fp32") if sheet is not None else None),
    )
    for label, v, formula, fmt, sheet_v in rows:
        c = by.get(label)
        diff = Text("")
        if c is not None:
            diff = Text(f"{100 * c.diff:+.1f}%", style="green" if c.ok else "bold red")
        t.add_row(
            Text(label, style="cyan"),
            _val(v, fmt),
            Text(formula, style="dim"),
            Text("n/a" if sheet_v is None else fmt(sheet_v)),
            diff,
        )
    return t


def _health(h) -> Table:
    t = _kv("health")
    t.add_row("temperature", _val(h.temperature_c, lambda v: f"{v} C"))
    t.add_row("power", _row("draw ", (h.power_draw_w, lambda v: f"{v:.0f} W"), ", limit ", (h.power_limit_w, lambda v: f"{v:.0f} W")))
    reasons = h.clock_event_reasons
    t.add_row("clock events", _val(reasons, lambda v: ", ".join(v) if v else "none"))
    t.add_row("utilization", _val(h.utilization_gpu_pct, lambda v: f"{v}%"))
    t.add_row("ECC", _row((h.ecc_enabled, _onoff), ", volatile uncorrected errors ", (h.ecc_volatile_uncorrected, str)))
    yn = lambda v: "yes" if v else "no"  # noqa: E731
    t.add_row("memory rows", _row("retired pages pending ", (h.retired_pages_pending, yn), ", row remap pending ", (h.remapped_rows_pending, yn)))
    t.add_row("modes", _row((h.persistence_mode, lambda v: f"persistence {_onoff(v)}"), ", compute mode ", (h.compute_mode, str)))
    t.add_row(
        "PCIe",
        _row(
            (h.pcie_gen_current, lambda v: f"gen {v}"), " ", (h.pcie_width_current, lambda v: f"x{v}"),
            " (link max ", (h.pcie_gen_max, lambda v: f"gen {v}"), " ", (h.pcie_width_max, lambda v: f"x{v}"), ")",
        ),
    )
    mig = _val(h.mig_mode, _onoff)
    if not is_na(h.mig_instances) and h.mig_instances:
        mig.append(": " + ", ".join(f"{m.profile if not is_na(m.profile) else '?'} ({m.sm_count if not is_na(m.sm_count) else '?'} SMs)" for m in h.mig_instances))
    t.add_row("MIG", mig)
    procs = h.processes
    if is_na(procs):
        t.add_row("processes", _na(procs))
    elif not procs:
        t.add_row("processes", Text("none besides this one", style="green"))
    else:
        t.add_row(
            "processes",
            Text(", ".join(f"{p.pid} {p.name if not is_na(p.name) else '?'} ({fmt_bytes(p.used_memory_bytes)})" for p in procs), style="yellow"),
        )
    return t


def _lines(d) -> list[Text]:
    out_: list[Text] = []
    for w in d.warnings:
        out_.append(Text("warning: ", style="bold yellow") + Text(w))
    for n in d.notes:
        out_.append(Text("note: ", style="dim") + Text(n, style="dim"))
    return out_


def gpu_title(i) -> str:
    """``GPU 1: NVIDIA H200`` by nvidia-smi's index (what ``-i`` takes), with ``(cuda:0)`` when
    CUDA numbers it otherwise; ``GPU cuda:0: …`` without NVML."""
    name = i.name if not is_na(i.name) else "unknown GPU"
    ordinal = i.cuda_ordinal if not is_na(i.cuda_ordinal) else "?"
    if is_na(i.nvml_index):
        return f"GPU cuda:{ordinal}: {name}"
    return f"GPU {i.nvml_index}: {name}" + (f" (cuda:{ordinal})" if ordinal != i.nvml_index else "")


def device_panel(d) -> Panel:
    """One GPU's panel: identity, shape, derived peaks vs sheet, health, warnings."""
    parts: list[Any] = [_identity(d), Text(""), _shape(d), Text(""), _derived(d)]
    if d.health is not None:
        parts += [Text(""), _health(d.health)]
    lines = _lines(d)
    if lines:
        parts += [Text(""), *lines]
    style = "yellow" if d.warnings else "green"
    return Panel(Group(*parts), title=Text(gpu_title(d.identity), style="bold"), title_align="left", border_style=style)


def software_panel(s) -> Panel:
    """Driver/CUDA/NVRTC versions, profiler access and WSL2."""
    t = _kv("")
    t.add_row("driver", _val(s.driver_version))
    t.add_row("CUDA (driver's max)", _val(s.cuda_driver_version_text))
    lib = getattr(s, "nvrtc_library", None)
    t.add_row("NVRTC", _val(s.nvrtc_version) + (f" ({lib})" if isinstance(lib, str) else ""))
    t.add_row("NVML", Text(s.nvml))
    t.add_row("CUDA driver API", Text(s.cuda_driver))
    t.add_row("perf counters", _val(s.perf_counters))
    t.add_row("WSL2", Text("yes" if s.wsl2 else "no"))
    parts: list[Any] = [t]
    for lim in s.wsl2_limits:
        parts.append(Text("WSL2 limit: ", style="yellow") + Text(lim))
    for w in s.warnings:
        parts.append(Text("warning: ", style="bold yellow") + Text(w))
    return Panel(Group(*parts), title=Text("software", style="bold"), title_align="left")


def _short_bus(bus) -> str:
    """``00000000:18:00.0`` as ``0000:18:00.0`` (the same id; ``-i`` takes either)."""
    text = str(bus)
    return text[4:] if len(text) == 16 and text.startswith("0000") else text


def gpu_list(report) -> Table:
    """One row per GPU, as ``nvidia-smi -L``: nvidia-smi's index (what ``-i`` takes), the CUDA
    ordinal, name, UUID and PCI bus id (fits 80 columns)."""
    t = Table(title=f"{fmt_counted(len(report.devices), 'GPU')}, in nvidia-smi's order", title_justify="left", box=None, pad_edge=False)
    for col in ("-i", "cuda", "name", "UUID", "PCI bus"):
        t.add_column(col)
    for d in report.devices:
        i = d.identity
        cells = [i.nvml_index, i.cuda_ordinal, i.name, i.uuid]
        t.add_row(*(Text("n/a" if is_na(v) else str(v)) for v in cells), Text("n/a" if is_na(i.pci_bus_id) else _short_bus(i.pci_bus_id)))
    return t


def render_probe_list(report) -> None:
    """Print one line per GPU (``probe --list``), then the notes."""
    con = out()
    con.print(gpu_list(report))
    for n in report.notes:
        con.print(Text("note: ", style="dim") + Text(n, style="dim"))


def render_probe(report) -> None:
    """Print the report: with several GPUs one line each first, then one panel per GPU,
    the software panel and notes."""
    con = out()
    if len(report.devices) > 1:
        con.print(gpu_list(report))
    for d in report.devices:
        con.print(device_panel(d))
    if report.software is not None:
        con.print(software_panel(report.software))
    for n in report.notes:
        con.print(Text("note: ", style="dim") + Text(n, style="dim"))
