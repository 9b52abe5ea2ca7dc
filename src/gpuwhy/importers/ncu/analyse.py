"""Judging an Nsight Compute export: launches grouped by GPU and kernel name, each group's
time, FLOPs and bytes added up and given a regime (:func:`analyze`).

A kernel is judged on the roofline (:func:`gpuwhy.model.roofline.classify.classify`) when its
time, DRAM bytes and FLOPs are known, counted or estimated
(:mod:`~gpuwhy.importers.ncu.figures` says how each was derived), and with its L2 and
L1 bytes where the export has them on the hierarchical roofline
(:mod:`~gpuwhy.importers.ncu.levels`: the level whose roof is nearest decides; a level
without a roof is shown, not judged); else from its utilisations
(:func:`gpuwhy.model.roofline.utilisation.classify_utilisation`: the busiest arithmetic pipe, or
ncu's SM throughput, against DRAM) as Nsight Compute's Speed-of-Light section does;
else it is "not classifiable" with the metric that is missing. Either way the regime is
then checked against the SM (:func:`gpuwhy.model.roofline.issue_bound.refine_regime`): a kernel on
the memory side far below its roof while ncu's SM utilisation is high and clearly above
every memory unit's is ``issue``-bound; ``latency`` (memory latency-bound, Little's law)
is kept only where the SM is idle. ``overhead`` (the launch costs more than the work) is
kept only for launch-sized kernels (mean duration below
:data:`~gpuwhy.model.roofline.classify.SHORT_KERNEL_S`, 10 us): a longer kernel is bound by its own
work, however little of it there is. The compute peak is scaled to the SM clock the
kernel ran at when the export gives it (ncu locks clocks to base unless
``--clock-control none``). The sheet of each GPU comes from
:func:`~gpuwhy.importers.ncu.identify.sheet_for_export`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UsageError
from ...model.roofline.classify import launch_sized
from ..kernel_names import display_names
from .diagnosis import diagnose_kernels, sheet_peaks
from .figures import LaunchFigures, launch_figures, precision_of
from .identify import ExportGpu, export_gpu, local_choice, sheet_for_export
from .read import Launch, NcuTable, read_ncu_csv
from .partial import PARTIAL_PREFIX, partial_from_pipes
from .sol import NcuSol, agreement, sol_of
from ...units import fmt_g, fmt_num, fmt_pct

#: Regime sources (:attr:`NcuKernel.basis`).
BASES = ("counters", "estimate", "utilisation")
_CLOCK_SCALE_BELOW = 0.97


@dataclass(frozen=True)
class NcuKernel:
    """One kernel name on one GPU: its launches added up and given a regime.

    Times in seconds, FLOPs, bytes (DRAM), intensity in FLOP/byte, ``achieved_tflops``
    1e12 FLOP/s, ``achieved_gbs`` 1e9 B/s, ``roof_pct`` the achieved share of the
    roofline at this intensity (0-100, above 100 when the inputs disagree; from
    utilisations: the busier unit's share of its peak). ``regime`` is None for a
    kernel that is not classifiable (``reason`` says why). ``basis`` says what the
    regime rests on: ``counters`` (time, bytes and FLOPs counted), ``estimate`` (one of
    them estimated: ``estimated`` names which), ``utilisation`` (no FLOPs: pipe or SM
    throughput against DRAM). ``how`` maps each figure to how it was derived.
    ``memory_levels`` maps ``dram``/``l2``/``l1`` to ``bytes``, ``pct_of_peak`` and
    ``how`` (None where the export lacks them). ``utilisation_pct`` holds the
    time-weighted utilisations in percent (``pipe``, ``sm``, ``memory``, ``dram``,
    ``l2``, ``l1``, ``issue``, ``occupancy``), ``busiest_pipe`` the pipe behind ``pipe``;
    ``sm_clock_hz`` the SM clock and ``compute_peak_scale`` the factor applied to the
    sheet's compute peak (None when not scaled). ``ncu_sol`` is ncu's own verdict from
    the same run. ``hierarchy`` is the :class:`~gpuwhy.model.roofline.hierarchy.HierarchyVerdict`
    (each level's intensity and share of its roof) and ``deciding_level`` its nearest roof
    (``DRAM``, ``L2``, ``L1`` or ``compute``), None without FLOPs; ``issue`` the
    :class:`~gpuwhy.model.roofline.issue_bound.IssueDiagnosis` of an SM-issue-bound kernel;
    ``waves`` ncu's waves per SM.
    """

    name: str
    full_name: str
    device: str
    launches: int
    total_time_s: float | None
    mean_time_s: float | None
    flops: float | None
    bytes: float | None
    flops_by: dict[str, float]
    precision: str | None
    intensity: float | None
    achieved_tflops: float | None
    achieved_gbs: float | None
    roof_pct: float | None
    regime: str | None
    bound_ratio: float | None
    top_remedy: str | None
    remedies: object | None = None  # gpuwhy.model.roofline.remedies.Remedies
    reason: str = ""
    notes: tuple[str, ...] = ()
    basis: str = ""
    estimated: tuple[str, ...] = ()
    how: dict[str, str] = field(default_factory=dict)
    memory_levels: dict[str, dict] = field(default_factory=dict)
    utilisation_pct: dict[str, float] = field(default_factory=dict)
    busiest_pipe: str | None = None
    sm_clock_hz: float | None = None
    compute_peak_scale: float | None = None
    ncu_sol: NcuSol | None = None
    deciding_level: str | None = None
    hierarchy: object | None = None  # gpuwhy.model.roofline.hierarchy.HierarchyVerdict
    issue: object | None = None  # gpuwhy.model.roofline.issue_bound.IssueDiagnosis
    waves: float | None = None

    @property
    def classifiable(self) -> bool:
        return self.regime is not None

    def to_dict(self) -> dict:
        """Plain data for ``--json``: the fields in order, then ``classifiable`` and ``remedies``."""
        d = _fields_dict(self, notes=list(self.notes), estimated=list(self.estimated),
                         ncu_sol=self.ncu_sol.to_dict(self.regime) if self.ncu_sol is not None else None,
                         hierarchy=self.hierarchy.to_dict() if self.hierarchy is not None else None,
                         issue=self.issue.to_dict() if self.issue is not None else None)
        del d["remedies"]
        d.update(classifiable=self.classifiable, remedies=self.remedies.to_dict() if self.remedies is not None else None)
        return d


@dataclass(frozen=True)
class NcuDevice:
    """The kernels of one GPU in the export.

    ``kernels`` are the top ``top`` by total time; ``other_kernels``/``other_time_s``
    what is left out; ``regime_time_s`` the time per regime over all kernels
    (``"not classifiable"`` included); ``total_time_s`` the sum of kernel durations
    (None when no launch has one); ``classified_time_s`` the part with a regime;
    ``basis_time_s`` the time per :data:`BASES`; ``derivations`` per figure, the
    time of the kernels derived each way (``derivation_time_s`` in ``--json``);
    ``ncu_agreement`` the time where gpuwhy's regime and ncu's Speed-of-Light verdict agree (:func:`~gpuwhy.importers.ncu.sol.agreement`);
    ``export_gpu`` what the export says about the GPU, ``sheet_rule``/``sheet_note``
    how its sheet was chosen.
    """

    device: str
    name: str | None
    sheet: str
    ceilings: dict
    kernels: tuple[NcuKernel, ...]
    other_kernels: int
    other_time_s: float
    regime_time_s: dict[str, float]
    total_time_s: float | None
    launches: int
    verdict: str
    classified_time_s: float = 0.0
    basis_time_s: dict[str, float] = field(default_factory=dict)
    derivations: dict[str, dict[str, float]] = field(default_factory=dict)
    ncu_agreement: dict = field(default_factory=dict)
    export_gpu: dict = field(default_factory=dict)
    sheet_rule: str = ""
    sheet_note: str = ""
    #: The verdict engine's time budget of every kernel's time (:mod:`.diagnosis`); None without kernel time.
    diagnosis: object | None = None

    @property
    def classified_fraction(self) -> float | None:
        """The share of kernel time with a regime (None without kernel time)."""
        return self.classified_time_s / self.total_time_s if self.total_time_s else None

    def to_dict(self) -> dict:
        """Plain data for ``--json``: the fields in order, each kernel as its dict."""
        d = _fields_dict(
            self, ceilings=dict(self.ceilings), kernels=[k.to_dict() for k in self.kernels], regime_time_s=dict(self.regime_time_s),
            classified_fraction=self.classified_fraction,
            diagnosis=self.diagnosis.to_dict() if self.diagnosis is not None else None,
        )
        return {("derivation_time_s" if k == "derivations" else k): v for k, v in d.items()}


@dataclass(frozen=True)
class NcuReport:
    """`gpuwhy ncu`: per GPU in the file, the kernels and where their time goes.

    ``reader`` says how the file was read (``csv``, ``ncu_report``, ``ncu --import``).
    """

    source: str
    page: str
    top: int
    devices: tuple[NcuDevice, ...]
    dropped: dict[str, int]
    messages: tuple[str, ...]
    notes: tuple[str, ...]
    reader: str = "csv"

    def to_dict(self) -> dict:
        """Plain data for ``--json``: the fields in order, each GPU as its dict."""
        return _fields_dict(
            self, devices=[d.to_dict() for d in self.devices], dropped=dict(self.dropped), messages=list(self.messages), notes=list(self.notes)
        )


def _fields_dict(obj, **plain) -> dict:
    """A dataclass's fields by name, in order, with the plain-data form of some of them given in ``plain``."""
    d = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    d.update(plain)
    return d


def _verdict(flops: float, bytes_: float, launches: int, time_s: float, ceilings):
    """roofline.classify that also takes zero FLOPs (a copy) or zero DRAM bytes (data in cache).

    A zero is replaced by one FLOP/byte for the model (negligible next to the
    other term) and the reported intensity and rates are put back to the true values.
    """
    from ...model.roofline.classify import Workload, attainable_flops, classify

    f = flops if flops > 0 else 1.0
    b = bytes_ if bytes_ > 0 else 1.0
    v = classify(Workload(flops=f, bytes=b, launches=launches, time_s=time_s), ceilings)
    if f == flops and b == bytes_:
        return v
    ai = flops / bytes_ if bytes_ > 0 else math.inf
    return dataclasses.replace(
        v,
        workload=Workload(flops=flops, bytes=bytes_, launches=launches, time_s=time_s),
        arithmetic_intensity=ai,
        attainable_flops=attainable_flops(ceilings.peak_flops, ceilings.bandwidth, ai) if math.isfinite(ai) else ceilings.peak_flops,
        achieved_flops=flops / time_s,
        achieved_bandwidth=bytes_ / time_s,
        compute_sol_pct=100.0 * flops / time_s / ceilings.peak_flops,
        memory_sol_pct=100.0 * bytes_ / time_s / ceilings.bandwidth,
    )


def _top_remedy(rem, on_tensor_cores: bool) -> str:
    """The first number-specific hint, else the first general remedy that is not already done
    (a tensor-core kernel is not told to use tensor cores)."""
    if rem.hints:
        return rem.hints[0]
    helps = [h for h in rem.helps if not (on_tensor_cores and "tensor core" in h.lower() and h.lower().startswith("use"))]
    return (helps or list(rem.helps) or [""])[0]


def analyze(
    table: NcuTable,
    gpu=None,
    dtype: str | None = None,
    top: int = 10,
    spec_dirs: Iterable[str] = (),
    device: str | None = None,
    local_gpu: bool | Callable[[], object] = True,
    measured: bool = False,
    measured_peaks: bool = False,
    measured_optional: bool = False,
) -> NcuReport:
    """Group ``table``'s launches by GPU and kernel name and give each group a regime.

    Args:
        gpu: a sheet name or :class:`~gpuwhy.specs.Sheet` used for every GPU in
            the file; by default each GPU's name, PCI id or attributes pick its sheet
            (:mod:`~gpuwhy.importers.ncu.identify`).
        dtype: force the ceiling precision (default: per kernel, the precision
            of its largest FLOP source: tensor bf16 -> ``bf16``, CUDA-core fp32
            -> ``fp32``, CUDA-core fp16 -> ``fp16_nontensor``, ...).
        top: kernels listed per GPU (sorted by total time); all kernels count
            in the regime summary.
        device: keep only the GPU whose ``Device`` index or name contains this.
        local_gpu: when the export says too little about its GPU, whether this
            machine's GPU may stand in for it (True: probe it; a callable returning a
            sheet choice; False: never).
        measured: take the L2 and L1/shared roofs from the newest ``gpuwhy bench``
            profile of each GPU's sheet (:func:`gpuwhy.profiles.find_profile`); DRAM and
            compute roofs stay the sheet's, unless ``measured_peaks``:
        measured_peaks: with ``measured``, the DRAM bandwidth and the compute peak of each
            precision from that profile too (the whole measured roofline, as
            ``classify --measured`` has it: :func:`gpuwhy.model.roofline.ceilings.ceilings_from_profile`;
            a precision the profile did not measure keeps the sheet's peak, said in the notes).
        measured_optional: with ``measured``, a GPU with no profile is judged against its
            sheet instead of refused (`gpuwhy run --kernels`: the measured roofline where there is one).

    Raises:
        UsageError: unknown sheet or dtype; a GPU the export does not identify and
            no --gpu (:class:`~gpuwhy.importers.ncu.identify.GpuNotIdentified`);
            ``device`` matching nothing; ``measured`` and no profile for a GPU (unless
            ``measured_optional``).
    """
    from ...model.roofline.remedies import load_remedies

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    groups = _launches_by_gpu(table, device)
    if local_gpu is True:
        local = lambda: local_choice(spec_dirs)  # noqa: E731
    else:
        local = local_gpu or None
    remedies_data = load_remedies()
    notes: list[str] = list(table.notes)
    devices = [
        _judge_gpu(dev_key, groups[dev_key], notes, gpu=gpu, dtype=dtype, top=top, spec_dirs=spec_dirs, local=local,
                   measured=measured, measured_peaks=measured_peaks, measured_optional=measured_optional,
                   remedies_data=remedies_data)
        for dev_key in sorted(groups, key=lambda k: (len(k), k))
    ]
    return NcuReport(
        table.source, table.page, top, tuple(devices), dict(table.dropped), table.messages, tuple(dict.fromkeys(notes))
    )


def _launches_by_gpu(table: NcuTable, device: str | None) -> dict[str, list[Launch]]:
    """``table``'s launches by their ``Device`` key (file order within each), only the GPU whose key
    is ``device`` or whose name contains it when given.

    Raises:
        UsageError: ``device`` matches no GPU of the export.
    """
    groups: dict[str, list[Launch]] = {}
    for la in table.launches:
        groups.setdefault(la.device, []).append(la)
    if device is not None:
        want = device.strip().lower()
        groups = {
            k: v for k, v in groups.items()
            if k.lower() == want or (v[0].device_name or "").lower().find(want) >= 0
        }
        if not groups:
            have = ", ".join(sorted({f"{la.device} ({la.device_name or 'unnamed'})" for la in table.launches}))
            raise UsageError(f"--device {device!r} matches no GPU in the export; it has: {have}")
    return groups


def _judge_gpu(dev_key: str, launches: list[Launch], notes: list[str], *, gpu, dtype, top, spec_dirs, local,
               measured, measured_peaks, measured_optional, remedies_data) -> NcuDevice:
    """One GPU of the export: its sheet picked (:func:`sheet_for_export`), each kernel name's
    launches judged (:func:`_judge`), the kernels sorted by total time (s, longest first) and
    summed into an :class:`NcuDevice`; what the reader should know is appended to ``notes``.
    The other arguments are :func:`analyze`'s (``local``: its ``local_gpu`` as a callable or None).
    """
    info = export_gpu(launches)
    choice = sheet_for_export(info, gpu, spec_dirs, local)
    sheet = choice.sheet
    if choice.conflict:
        notes.append(f"device {dev_key}: {choice.conflict}")
    if gpu is not None and info.name and not _same_gpu(sheet, info.name):
        notes.append(f"device {dev_key} is a {info.name}, judged against the {sheet.name} sheet (--gpu)")
    profile = _profile_for(sheet, spec_dirs, required=not measured_optional) if measured else None
    ceilings = _ceilings_of(dev_key, sheet, dtype, profile if measured_peaks else None, notes)
    by_name: dict[str, list[tuple[Launch, LaunchFigures]]] = {}
    for la in launches:
        by_name.setdefault(la.name, []).append((la, launch_figures(la, sheet)))
    names = display_names(list(by_name))
    kernels = [_judge(full, names[full], dev_key, [f for _, f in items], dtype, ceilings, sheet, remedies_data, profile)
               for full, items in by_name.items()]
    kernels.sort(key=lambda k: -(k.total_time_s or 0.0))
    notes.extend(_gpu_notes(dev_key, sheet, kernels, profile, measured_peaks))
    return _device(dev_key, info, choice, sheet, kernels, launches, top, ceilings(dtype or "fp32"))


def _ceilings_of(dev_key: str, sheet, dtype: str | None, profile, notes: list[str]) -> Callable[[str], object]:
    """The roofline ceilings of one GPU by precision name (each made once): the ``profile``'s
    measured roofline when it has a DRAM bandwidth (give it only for ``measured_peaks``), else
    ``sheet``'s; fp16 without a forced ``dtype`` is the CUDA-core (non-tensor) peak, fp32's where
    the sheet has none. What each choice means is appended to ``notes`` when it is made.

    Raises (from the returned callable):
        UsageError: a precision the sheet has no peak for (other than fp16).
    """
    from ...model.roofline.ceilings import ceilings_from_profile, ceilings_from_sheet

    ceil_cache: dict[str, object] = {}

    def ceilings(prec: str):
        if prec not in ceil_cache:
            d, tc = prec, True
            if prec == "fp16" and dtype is None:
                d, tc = "fp16", False  # CUDA-core half: the non-tensor peak
            try:
                if profile is not None and profile.dram_bandwidth_gbs is not None:
                    ceil_cache[prec], said = ceilings_from_profile(profile, sheet, d, tensor_cores=tc)
                    notes.extend(f"GPU {dev_key}: {x}" for x in said)
                else:
                    ceil_cache[prec] = ceilings_from_sheet(sheet, d, tensor_cores=tc)
            except UsageError:
                if prec == "fp16":
                    ceil_cache[prec] = ceilings_from_sheet(sheet, "fp32")
                    notes.append(f"the {sheet.name} sheet has no CUDA-core fp16 peak; fp16 CUDA-core kernels judged against fp32")
                else:
                    raise
        return ceil_cache[prec]

    return ceilings


def _gpu_notes(dev_key: str, sheet, kernels: list[NcuKernel], profile, measured_peaks: bool) -> list[str]:
    """The notes on one judged GPU: kernels whose compute peak was scaled to a lower SM clock (GHz),
    L2 bytes shown but not judged (no L2 roof), and where the roofs came from."""
    notes = []
    clocks = [k.sm_clock_hz for k in kernels if k.compute_peak_scale is not None]
    if clocks:
        lo, hi = min(clocks) / 1e9, max(clocks) / 1e9
        span = f"{lo:.2f} GHz" if round(lo, 2) == round(hi, 2) else f"{lo:.2f}-{hi:.2f} GHz"
        notes.append(f"GPU {dev_key}: {len(clocks)} kernels ran at a {span} SM clock, below the {sheet.name} sheet's "
                     f"{fmt_g(sheet.boost_clock_mhz)} MHz boost (ncu locks clocks to base unless --clock-control none): "
                     "their compute peaks are scaled to it")
    if any(k.hierarchy is not None and k.hierarchy.point("L2") is not None and k.hierarchy.point("L2").roof is None
           for k in kernels):
        from ...model.roofline.hierarchy import how_to_measure_l2

        notes.append(f"GPU {dev_key}: {how_to_measure_l2(sheet.name)}; the L2 bytes and intensities are shown, "
                     "not judged")
    if profile is not None and measured_peaks and profile.dram_bandwidth_gbs is not None:
        notes.append(f"GPU {dev_key}: the measured roofline of the bench profile of {profile.date} (DRAM, L2, "
                     "L1/shared and compute roofs)")
    elif profile is not None:
        notes.append(f"GPU {dev_key}: L2 and L1/shared roofs from the bench profile of {profile.date}; DRAM and "
                     f"compute roofs from the {sheet.name} sheet")
    return notes


def _device(dev_key, info: ExportGpu, choice, sheet, kernels: list[NcuKernel], launches, top, c_default) -> NcuDevice:
    regime_time: dict[str, float] = {}
    basis_time: dict[str, float] = {}
    derivations: dict[str, dict[str, float]] = {}
    any_time = False
    for k in kernels:
        any_time = any_time or k.total_time_s is not None
        key = k.regime or "not classifiable"
        regime_time[key] = regime_time.get(key, 0.0) + (k.total_time_s or 0.0)
        if k.regime:
            basis_time[k.basis] = basis_time.get(k.basis, 0.0) + (k.total_time_s or 0.0)
        for fig, how in k.how.items():
            derivations.setdefault(fig, {})
            derivations[fig][how] = derivations[fig].get(how, 0.0) + (k.total_time_s or 0.0)
    total = sum(regime_time.values()) if any_time else None
    classified = sum(v for r, v in regime_time.items() if r != "not classifiable")
    dev_name = info.name
    return NcuDevice(
        device=dev_key,
        name=dev_name,
        sheet=sheet.name,
        ceilings={
            "memory_bandwidth_gbs": c_default.bandwidth / 1e9,
            "peak_tflops": {p: sheet.peak_tflops[p] for p in sheet.peak_tflops},
            "launch_overhead_s": c_default.launch_overhead_s,
            "source": c_default.source,
        },
        kernels=tuple(kernels[:top]),
        other_kernels=len(kernels[top:]),
        other_time_s=sum(k.total_time_s or 0.0 for k in kernels[top:]),
        regime_time_s=regime_time,
        total_time_s=total,
        launches=len(launches),
        verdict=_device_verdict(regime_time, total, kernels),
        classified_time_s=classified,
        basis_time_s=basis_time,
        derivations=derivations,
        ncu_agreement=agreement(kernels),
        export_gpu=info.to_dict(),
        sheet_rule=choice.rule,
        sheet_note=choice.note,
        diagnosis=diagnose_kernels(kernels, sheet_peaks(sheet)),
    )


def _profile_for(sheet, spec_dirs, required: bool = True):
    """The newest bench profile of ``sheet``'s GPU (for ``measured``); None when there is none and
    it is not ``required``.

    Raises:
        UsageError: no profile of a GPU of that sheet, and ``required``.
    """
    from ...profiles import find_profile

    prof = find_profile(sheet, spec_dirs=spec_dirs)
    if prof is None and required:
        raise UsageError(f"no bench profile for the {sheet.name}; run `gpuwhy bench --sweep` on that GPU first, "
                         "or drop --measured")
    return prof


def _same_gpu(sheet, dev_name: str) -> bool:
    n = " ".join(dev_name.split()).lower()
    return n in (x.lower() for x in sheet.all_names())


def _device_verdict(regime_time: dict[str, float], total: float | None, kernels) -> str:
    if total is None:
        if any("are n/a" in k.reason for k in kernels):
            return ("no kernel time (every duration is n/a: counters not collected; see ERR_NVGPUCTRPERM "
                    "or the metric names)")
        return "no kernel time (the export has no duration metric: add gpu__time_duration.sum or the SpeedOfLight section)"
    if total <= 0:
        return "no kernel time (every duration is zero)"
    known = {k: v for k, v in regime_time.items() if k != "not classifiable"}
    if not known:
        return "no kernel is classifiable"
    top = max(known.items(), key=lambda kv: kv[1])
    parts = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(regime_time.items(), key=lambda kv: -kv[1]))
    unknown = regime_time.get("not classifiable", 0.0)
    if unknown > 0:
        return f"of the classifiable kernel time, most is {top[0]}-bound ({parts} of all kernel time)"
    return f"most kernel time is {top[0]}-bound ({parts})"


# --------------------------------------------------------------------------- one kernel


def _weighted(figs: list[LaunchFigures], key: str) -> float | None:
    """The time-weighted mean of ``pct[key]`` over the launches that have it and a duration."""
    num = den = 0.0
    for f in figs:
        if f.time_s and key in f.pct:
            num += f.pct[key] * f.time_s
            den += f.time_s
    return num / den if den > 0 else None


def _weighted_attr(figs: list[LaunchFigures], attr: str) -> float | None:
    """The time-weighted mean of a figure (``waves``) over the launches that have it and a duration."""
    num = den = 0.0
    for f in figs:
        v = getattr(f, attr)
        if f.time_s and v is not None:
            num += v * f.time_s
            den += f.time_s
    return num / den if den > 0 else None


def _how(figs: list[LaunchFigures]) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for f in figs:
        for k, v in f.how.items():
            out.setdefault(k, [])
            if v not in out[k]:
                out[k].append(v)
    return {k: "; ".join(v) for k, v in out.items()}


def _levels(figs: list[LaunchFigures], how: dict[str, str], dram_bytes: float | None) -> dict[str, dict]:
    def total(attr):
        vals = [getattr(f, attr) for f in figs if f.time_s]
        return sum(vals) if vals and all(v is not None for v in vals) else None

    return {
        "dram": {"bytes": dram_bytes, "pct_of_peak": _weighted(figs, "dram"), "how": how.get("dram_bytes")},
        "l2": {"bytes": total("l2_bytes"), "pct_of_peak": _weighted(figs, "l2"), "how": how.get("l2_bytes")},
        "l1": {"bytes": total("l1_bytes"), "pct_of_peak": _weighted(figs, "l1"), "how": how.get("l1_bytes")},
    }


def _clock_scale(figs: list[LaunchFigures], sheet) -> tuple[float | None, float | None]:
    """(time-weighted SM clock in Hz, factor for the sheet's compute peak or None)."""
    num = den = 0.0
    for f in figs:
        if f.time_s and f.sm_clock_hz:
            num += f.sm_clock_hz * f.time_s
            den += f.time_s
    if den <= 0:
        return None, None
    clock = num / den
    boost = getattr(sheet, "boost_clock_mhz", None)
    if not boost:
        return clock, None
    scale = clock / (boost * 1e6)
    return clock, scale if 0.2 < scale < _CLOCK_SCALE_BELOW else None


def _judge(full, name, dev_key, figs: list[LaunchFigures], dtype, ceilings, sheet, remedies_data, profile=None) -> NcuKernel:
    n = len(figs)
    times = [f.time_s for f in figs if f.time_s is not None]
    total_all = sum(times) if times else None
    notes: list[str] = []
    for f in figs:
        for x in f.notes:
            if x not in notes:
                notes.append(x)
    base = dict(name=name, full_name=full, device=dev_key, launches=n, total_time_s=total_all,
                mean_time_s=(total_all / len(times)) if times else None)
    timed = [f for f in figs if f.time_s]
    util = {k: v for k in ("pipe", "sm", "memory", "dram", "l2", "l1", "issue", "occupancy")
            if (v := _weighted(timed, k)) is not None}
    sol = sol_of(util)
    clock, scale = _clock_scale(timed, sheet)
    pipe = next((f.pipe for f in timed if f.pipe), None)
    extra = dict(utilisation_pct=util, busiest_pipe=pipe, sm_clock_hz=clock, ncu_sol=sol, waves=_weighted_attr(timed, "waves"))

    ok = [f for f in figs if f.roofline_ready]
    if ok:
        return _judge_roofline(base, extra, ok, figs, notes, dtype, ceilings, sheet, remedies_data, scale, profile)
    usable = [f for f in timed if ("pipe" in f.pct or "sm" in f.pct) and f.bytes is not None]
    if usable:
        return _judge_utilisation(base, extra, usable, figs, notes, ceilings, remedies_data)
    reason = figs[0].reason
    partial = partial_from_pipes(util, pipe) if timed and all(f.bytes is None for f in timed) else None
    if partial:
        reason = partial[1]
    elif timed and not usable and ("sm" in figs[0].pct or "pipe" in figs[0].pct):
        reason += "; the pipe utilisation alone does not decide it without a DRAM figure"
    elif timed and "pipe" not in figs[0].pct and "sm" not in figs[0].pct and "FLOP" in reason:
        reason += " (no pipe utilisation either)"
    how = _how(figs)
    if partial:
        how["regime"] = f"{PARTIAL_PREFIX}{partial[0]} (the busiest pipe or SM throughput, no memory figure)"
    return NcuKernel(
        **base, flops=None, bytes=None, flops_by={}, precision=None, intensity=None, achieved_tflops=None,
        achieved_gbs=None, roof_pct=None, regime=None, bound_ratio=None, top_remedy=None, reason=reason,
        notes=tuple(notes), how=how, memory_levels=_levels(figs, how, None), **extra,
    )


#: A memory-side kernel whose L2 bytes are at least this many times its DRAM bytes, with no
#: L2 roof, gets a note that the L2 may bound it: a kernel that streams each byte through
#: the L2 once moves 1-2x its DRAM bytes there (the H200 exports: softmax 1.6x, GELU 1.6x,
#: layer norm 1.9x).
L2_HEAVY_RATIO = 3.0


def _judge_roofline(base, extra, ok, figs, notes, dtype, ceilings, sheet, remedies_data, scale, profile=None) -> NcuKernel:
    from ...model.roofline.hierarchy import LEVEL_TEXT, hierarchy_remedy_hint, regime_text
    from ...model.roofline.issue_bound import refine_regime, sm_utilisation
    from ...model.roofline.remedies import remedies_for
    from .levels import judge_kernel_levels, level_roofs_for

    n = len(figs)
    if len(ok) < n:
        why = next(f.reason for f in figs if f.reason)
        notes.append(f"{n - len(ok)} of {n} launches lack counters ({why}); judged on the other {len(ok)}")
    t = sum(f.time_s for f in ok)
    flops = sum(f.flops or 0.0 for f in ok)
    b = sum(f.bytes for f in ok)
    flops_by: dict[str, float] = {}
    for f in ok:
        for k, v in f.flops_by.items():
            flops_by[k] = flops_by.get(k, 0.0) + v
    flops_by = {k: x for k, x in flops_by.items() if x > 0}
    prec = dtype if dtype is not None else precision_of(flops_by)
    c = ceilings(prec)
    if c.source.startswith("measured"):
        scale = None  # a sheet's peak is at the boost clock; a measured peak at the clock the GPU sustained
    if scale is not None:
        c = dataclasses.replace(c, peak_flops=c.peak_flops * scale,
                                source=f"{c.source}, compute peak scaled to the {extra['sm_clock_hz'] / 1e9:.2f} GHz SM clock")
    v = _verdict(flops, b, len(ok), t, c)
    if v.regime == "overhead" and not launch_sized(t / len(ok)):
        # a kernel that runs longer than launch size is not bound by launching it: its work decides
        lo, hi = sorted((v.t_compute_s, v.t_memory_s))
        v = dataclasses.replace(v, regime="compute" if v.t_compute_s >= v.t_memory_s else "memory",
                                bound_ratio=hi / lo if lo > 0 else math.inf,
                                warnings=tuple(w for w in v.warnings if "treat it as overhead-bound" not in w))
    tensor = bool(flops_by) and max(flops_by, key=flops_by.get).startswith("tensor_")
    how = _how(ok)
    levels = _levels(ok, how, b)
    util = extra["utilisation_pct"]
    roofs = level_roofs_for(sheet, c, profile, extra["sm_clock_hz"])
    h = judge_kernel_levels(levels, flops, t, roofs, c.peak_flops, sheet, tensor=tensor, waves=extra["waves"],
                            occupancy_pct=util.get("occupancy"))
    regime, roof_pct = v.regime, v.sol_pct
    fractions = {"DRAM": v.memory_sol_pct / 100}
    memory_level = "DRAM"
    if h is not None:
        fractions = {p.level: p.fraction_of_roof for p in h.points if p.fraction_of_roof is not None}
        if h.deciding != "compute":
            memory_level = h.deciding
        if v.regime != "overhead":
            regime = h.regime
            p = h.point(h.deciding)
            if p is not None and p.level != "DRAM" and p.fraction_of_roof is not None:
                roof_pct = 100 * p.fraction_of_roof
    if regime in ("compute", "issue"):
        side_fraction, side_roof = v.compute_sol_pct / 100, c.precision
    else:
        side_fraction, side_roof = fractions.get(memory_level, v.memory_sol_pct / 100), memory_level
    refined = refine_regime(regime, side_fraction, util, busiest_pipe=extra["busiest_pipe"], roof=side_roof,
                            level_fractions=fractions, tensor=tensor)
    regime = refined.regime
    why: list[str] = [*refined.notes]
    if refined.notes and sm_utilisation(util) is None:
        why[-1] += ("; add sm__throughput.avg.pct_of_peak_sustained_elapsed to the metrics (or --section SpeedOfLight, "
                    "or let `gpuwhy ncu -- CMD` choose them)")
    if "L2" not in roofs and levels["l2"]["bytes"] and b > 0 and regime in ("memory", "latency") \
            and levels["l2"]["bytes"] >= L2_HEAVY_RATIO * b:
        why.append(f"its L2 traffic is {fmt_num(levels['l2']['bytes'] / b)}x its DRAM traffic and the L2 roof is unknown: "
                   "the L2 may bound it rather than DRAM")
    block = None
    if refined.issue is not None:
        block = "issue_sm"
        why.insert(0, f"{refined.issue.text}: {refined.issue.reason}")
    elif regime == "latency" and h is not None and h.latency is not None:
        why.insert(0, f"{regime_text('latency')}: {h.latency.reason}")
    elif regime == "issue":
        why.insert(0, f"{regime_text('issue')}: {v.compute_sol_pct:.0f}% of the {c.precision} tensor-core roof")
    elif regime == "memory" and memory_level in ("L2", "L1"):
        why.insert(0, f"the {LEVEL_TEXT[memory_level]} roof is nearer than the DRAM roof: judged against "
                      f"{LEVEL_TEXT[memory_level]} at {roof_pct:.0f}% of its roof")
    rem = remedies_for(dataclasses.replace(v, regime=regime), c.precision, sheet.peak_tflops, remedies_data, block=block)
    top = _top_remedy(rem, tensor)
    if regime == "memory" and memory_level in ("L2", "L1") and h is not None:
        top = hierarchy_remedy_hint(h)
    if any(f.how.get("dram_bytes", "").endswith("a lower bound") for f in ok):
        dram_pct = v.memory_sol_pct
        if regime in ("memory", "latency") and memory_level == "DRAM":
            why.append(f"its DRAM bytes are a lower bound, so it is at least {fmt_pct(dram_pct, 0)} of the DRAM roof: "
                       "the bytes not counted can only make it more memory-bound")
        else:
            why.append(f"its DRAM bytes are a lower bound ({fmt_pct(dram_pct, 0)} of the DRAM roof or more): the bytes not "
                       f"counted could bring it nearer the DRAM roof than this {regime}-bound verdict says")
    notes = [*why, *notes]
    if flops == 0:
        notes.append("no floating-point work counted: judged on its DRAM bytes alone")
    if "tensor_unknown" in flops_by and dtype is None:
        notes.append(f"tensor FLOPs of unknown type judged against the {c.precision} tensor peak")
    estimated = sorted({e for f in ok for e in f.estimated})
    sol = extra["ncu_sol"]
    if sol is not None and not sol.agrees(regime):
        notes.append(f"ncu's Speed-of-Light leans {sol.verdict} (SM {sol.compute_pct:.0f}%, memory {sol.memory_pct:.0f}%); "
                     f"on the roofline it is {regime}-bound at {roof_pct:.0f}% of its roof")
    how["regime"] = ("roofline, then ncu's SM utilisation vs memory (issue-bound)" if refined.issue is not None else
                     "roofline: FLOPs / peak vs bytes / bandwidth (DRAM; L2, L1 where their roofs are known) vs launch "
                     "overhead")
    return NcuKernel(
        **base, flops=flops, bytes=b, flops_by=flops_by, precision=c.precision, intensity=v.arithmetic_intensity,
        achieved_tflops=v.achieved_flops / 1e12, achieved_gbs=v.achieved_bandwidth / 1e9, roof_pct=roof_pct,
        regime=regime, bound_ratio=v.bound_ratio, top_remedy=top, remedies=rem,
        notes=tuple(dict.fromkeys([*notes, *v.warnings])), basis="estimate" if estimated else "counters",
        estimated=tuple(estimated), how=how, memory_levels=levels,
        compute_peak_scale=scale, deciding_level=h.deciding if h is not None else None, hierarchy=h,
        issue=refined.issue, **extra,
    )


def _judge_utilisation(base, extra, usable, figs, notes, ceilings, remedies_data) -> NcuKernel:
    from ...model.roofline.issue_bound import refine_regime
    from ...model.roofline.remedies import Remedies, regime_block
    from ...model.roofline.utilisation import classify_utilisation

    n = len(figs)
    if len(usable) < n:
        notes.append(f"{n - len(usable)} of {n} launches lack utilisations; judged on the other {len(usable)}")
    t = sum(f.time_s for f in usable)
    b = sum(f.bytes for f in usable)
    c = ceilings("fp32")
    pipe = _weighted(usable, "pipe")
    what = f"the busiest arithmetic pipe ({extra['busiest_pipe']})" if pipe is not None else "ncu's SM throughput"
    compute = pipe if pipe is not None else _weighted(usable, "sm")
    memory_frac = b / t / c.bandwidth
    launch_s = c.launch_overhead_s if launch_sized(t / len(usable)) else 0.0  # see _judge_roofline
    v = classify_utilisation(compute / 100.0, memory_frac, t, len(usable), launch_s)
    side_fraction = memory_frac if v.regime == "memory" else compute / 100.0
    side_roof = "DRAM" if v.regime == "memory" else (f"{extra['busiest_pipe']} pipe" if pipe is not None else "SM")
    refined = refine_regime(v.regime, side_fraction, extra["utilisation_pct"], busiest_pipe=extra["busiest_pipe"],
                            roof=side_roof, tensor=(extra["busiest_pipe"] or "").startswith("tensor"), flops_counted=False)
    regime = refined.regime
    block = regime_block("issue_sm" if refined.issue is not None else regime, remedies_data)
    # No FLOPs, so no roofline gains: only the remedies that need no figure (plain sentences, or items without a gain or fields).
    plain = tuple(h if isinstance(h, str) else h["text"] for h in block["helps"]
                  if isinstance(h, str) or ("gain" not in h and "{" not in h["text"] and not h.get("when")))
    rem = Remedies(regime, plain, tuple(block["does_not_help"]), ())
    top = _top_remedy(rem, (extra["busiest_pipe"] or "").startswith("tensor"))
    if pipe is None and regime == "compute":
        top = (f"ncu's SM throughput is {compute:.0f}% but no pipe or FLOP counter says which unit is busy: profile with "
               "--section ComputeWorkloadAnalysis (or `gpuwhy ncu -- CMD`) to tell maths from instruction issue")
    if refined.issue is not None:
        notes.insert(0, f"{refined.issue.text}: {refined.issue.reason}")
    if pipe is None:
        notes.append("no FLOP or pipe counters: compute judged by ncu's SM throughput, an upper bound on pipe use "
                     "(add --section ComputeWorkloadAnalysis for the pipes)")
    else:
        notes.append(f"no FLOP counters: judged by {what} at {compute:.0f}% against DRAM at {100 * memory_frac:.0f}% of peak")
    estimated = sorted({e for f in usable for e in f.estimated} | {"flops"})
    how = _how(usable)
    how["regime"] = ("utilisation: the busiest arithmetic pipe" if pipe is not None else "utilisation: ncu's SM throughput") + \
        " vs DRAM throughput vs launch overhead" + ("; then ncu's SM utilisation vs memory (issue-bound)"
                                                    if refined.issue is not None else "")
    sol = extra["ncu_sol"]
    if sol is not None and not sol.agrees(regime):
        notes.append(f"ncu's Speed-of-Light leans {sol.verdict} (SM {sol.compute_pct:.0f}%, memory {sol.memory_pct:.0f}%)")
    return NcuKernel(
        **base, flops=None, bytes=b, flops_by={}, precision=None, intensity=None, achieved_tflops=None,
        achieved_gbs=b / t / 1e9, roof_pct=v.sol_pct, regime=regime, bound_ratio=v.bound_ratio,
        top_remedy=top, remedies=rem,
        notes=tuple(dict.fromkeys(notes)), basis="utilisation", estimated=tuple(estimated), how=how,
        memory_levels=_levels(usable, how, b), issue=refined.issue, **extra,
    )


def load_ncu_report(path: str | Path, *args, **options) -> NcuReport:
    """Read ``path`` (an ``ncu --csv`` export, or a ``.ncu-rep`` report: see
    :func:`~gpuwhy.importers.ncu.rep.read_export`) and judge it: ``args`` and ``options``
    are :func:`analyze`'s (``gpu``, ``dtype``, ``top``, ``spec_dirs``, ``device``, ``local_gpu``).

    Raises:
        UsageError: see :func:`~gpuwhy.importers.ncu.read.read_ncu_csv` and :func:`analyze`.
        NoDeviceError: a ``.ncu-rep`` and neither ``ncu_report`` nor ``ncu`` to read it.
    """
    from .rep import read_export

    table, reader = read_export(path)
    report = analyze(table, *args, **options)
    return dataclasses.replace(report, reader=reader)


__all__ = ["BASES", "NcuDevice", "NcuKernel", "NcuReport", "analyze", "load_ncu_report", "read_ncu_csv"]
