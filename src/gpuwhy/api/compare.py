"""The GPU comparison use case: `gpuwhy compare` and :func:`gpuwhy.compare`. One workload (an
arithmetic intensity, FLOPs and bytes, or an LLM's decode step) on several GPUs' rooflines,
ranked, with the speed-up over the first, throughput per dollar and per watt."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .llm_request import LlmText, ScalingText


@dataclass(frozen=True)
class CompareOptions:
    """What `gpuwhy compare` was given, as typed: the GPU names (the first is the baseline), the
    workload (``intensity``, or ``flops`` and ``bytes_``, or ``llm`` with the ``model`` and
    ``scaling`` options), ``dtype``, ``cost`` (``"GPU=USD,..."``), ``per_watt``, ``measured``
    (each GPU's newest bench profile's bandwidth), ``out`` (a plot file) and the ``--specs`` folders."""

    gpus: tuple[str, ...] = ()
    intensity: str | None = None
    flops: str | None = None
    bytes_: str | None = None
    llm: bool = False
    dtype: str | None = None
    cost: str | None = None
    per_watt: bool = False
    measured: bool = False
    out: str | None = None
    model: LlmText = field(default_factory=LlmText)
    scaling: ScalingText = field(default_factory=ScalingText)
    spec_dirs: tuple[str, ...] = ()

    def parse(self) -> "CompareRequest":
        """The options checked and parsed before any sheet is read, so bad numbers fail first.

        Raises:
            UsageError: no GPU; the workload given twice, not at all, or in part; LLM options
                without ``--llm`` or ``--dtype`` with it; an ``--out`` that is not ``.png``/``.svg``;
                a bad number, model or cost list.
        """
        from ..errors import UsageError
        from ..model.roofline.compare import parse_cost_list
        from ..units import parse_quantity

        if not self.gpus:
            raise UsageError("compare needs one or more GPU names, e.g. gpuwhy compare H100 H200 B200 --intensity 0.33")
        self._check_workload()
        if self.out is not None and not self.out.lower().endswith((".png", ".svg")):
            raise UsageError(f"--out {self.out!r} must end in .png or .svg")
        i = f = b = plan = req = None
        if not self.llm:
            if self.intensity is not None:
                i = parse_quantity(self.intensity, "--intensity")
            else:
                f, b = parse_quantity(self.flops, "--flops", unit="FLOP"), parse_quantity(self.bytes_, "--bytes", unit="B")
        else:
            plan = self.scaling.parse()
            req = self.model.parse("compare --llm needs --params P (e.g. --params 8B) or --model NAME (e.g. --model llama-3-8b)")
            req = self.model.load_shape(req)
        pairs = parse_cost_list(self.cost) if self.cost is not None else []
        return CompareRequest(tuple(self.gpus), self.dtype or "fp32", i, f, b, req, plan, tuple(pairs), self.per_watt,
                            self.measured, self.spec_dirs, self.out)

    def _check_workload(self) -> None:
        from ..errors import UsageError

        if self.llm:
            if self.intensity is not None or self.flops is not None or self.bytes_ is not None:
                raise UsageError("--llm sets the workload; drop --intensity/--flops/--bytes or drop --llm")
            if self.dtype is not None:
                raise UsageError("with --llm the weights' dtype picks the peak: use --weight-dtype, not --dtype")
            return
        m = self.model
        stray = m.given() + self.scaling.given() + (["--batch"] if m.batch != "1" else []) + (["--models"] if m.models else [])
        if stray:
            raise UsageError(f"{stray[0]} is an LLM option; add --llm (with --params or --model)")
        if self.intensity is not None and (self.flops is not None or self.bytes_ is not None):
            raise UsageError("give either --intensity I or --flops F --bytes B, not both")
        if self.intensity is None and self.flops is None and self.bytes_ is None:
            raise UsageError("compare needs a workload: --intensity I, or --flops F --bytes B, or --llm --params P")
        if self.intensity is None and (self.flops is None or self.bytes_ is None):
            raise UsageError("--flops and --bytes go together; give both, or --intensity I")


@dataclass(frozen=True)
class CompareRequest:
    """`gpuwhy compare` parsed (:meth:`CompareOptions.parse`): the GPU names, the precision, the
    workload (FLOP/byte ``intensity``, or ``flops`` and ``bytes``; or the LLM ``request`` and
    its scaling ``plan``), ``costs`` as ``(name, USD per hour)`` pairs, ``per_watt``, ``measured``,
    the folders, and the plot file ``out``."""

    gpus: tuple[str, ...]
    dtype: str = "fp32"
    intensity: float | None = None
    flops: float | None = None
    bytes: float | None = None
    request: Any = None
    plan: Any = None
    costs: tuple[tuple[str, float], ...] = ()
    per_watt: bool = False
    measured: bool = False
    spec_dirs: tuple[str, ...] = ()
    out: str | None = None


def compare(query: CompareRequest):
    """The :class:`~gpuwhy.model.roofline.compare.GpuComparison` of ``query``'s workload on its GPUs
    (each name's sheet noted as matched); with ``measured``, the DRAM bandwidth of each GPU's newest
    bench profile where one exists (a note for each that has none).

    Raises:
        UsageError: an unknown GPU, one listed twice, a price for a GPU not compared.
    """
    from ..errors import UsageError
    from ..model.roofline.compare import assign_costs, compare_llm, compare_roofline
    from ..device.sheet import sheet_for
    from .sheets import noted

    def match(name: str):
        return noted(sheet_for(name, spec_dirs=query.spec_dirs)).sheet

    sheets = []
    for g in query.gpus:
        s = match(g)
        if s in sheets:
            raise UsageError(f"the {s.name} is listed twice ({g!r}); list each GPU once")
        sheets.append(s)
    costs = assign_costs(list(query.costs), [s.name for s in sheets], match)
    bws, extra_notes = ({}, [])
    if query.measured:
        bws, extra_notes = _measured_bandwidths(sheets, query.spec_dirs)
    if query.request is not None:
        req = query.request
        result = compare_llm(sheets, req.params, req.weight_dtype, query.plan, costs, query.per_watt, bws,
                             **req.estimate_kwargs())
    else:
        result = compare_roofline(sheets, query.dtype, query.intensity, query.flops, query.bytes, costs, query.per_watt, bws)
    if extra_notes:
        result = replace(result, notes=result.notes + tuple(extra_notes))
    return result


def _measured_bandwidths(sheets, spec_dirs) -> tuple[dict, list[str]]:
    """``({sheet name: (B/s, source)}, notes)`` from the newest bench profile of each GPU compared
    (a profile recorded against the sheet, or from a GPU whose NVML name matches it)."""
    from ..profiles import find_profile

    out = {}
    for s in sheets:
        p = find_profile(s, need="dram_bandwidth_gbs", spec_dirs=spec_dirs)
        if p is not None:
            out[s.name] = (p.dram_bandwidth_gbs * 1e9, f"measured {p.date} by gpuwhy bench ({p.name})")
    notes = [f"no bench profile for the {s.name}: its sheet's bandwidth is used" for s in sheets if s.name not in out]
    return out, notes


def compare_values(gpus, intensity=None, *, flops=None, bytes_=None, dtype="fp32", costs=None, per_watt=False, spec_dirs=()):
    """:func:`gpuwhy.compare`: sheet names, the workload as numbers or text, ``costs`` as
    ``{"H100": 2.49}`` (USD per hour).

    Raises:
        UsageError: no list of GPUs, unknown GPUs or dtype, a GPU listed twice, a bad or missing workload.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..model.roofline.compare import assign_costs, compare_roofline
    from ..units import parse_quantity

    if isinstance(gpus, str) or not gpus:
        raise UsageError("gpuwhy.compare needs a list of GPU names, e.g. ['H100', 'H200']")
    i = None if intensity is None else parse_quantity(intensity, "intensity")
    f = None if flops is None else parse_quantity(flops, "flops")
    b = None if bytes_ is None else parse_quantity(bytes_, "bytes")
    dirs = tuple(spec_dirs)
    sheets = []
    for g in gpus:
        s = sheet_for(g, spec_dirs=dirs).sheet
        if s in sheets:
            raise UsageError(f"the {s.name} is listed twice ({g!r}); list each GPU once")
        sheets.append(s)
    priced = assign_costs(list((costs or {}).items()), [s.name for s in sheets], lambda n: sheet_for(n, spec_dirs=dirs).sheet)
    return compare_roofline(sheets, dtype, i, f, b, priced, per_watt)
