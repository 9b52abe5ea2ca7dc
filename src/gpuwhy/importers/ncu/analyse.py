"""Judging an Nsight Compute export on the roofline: launches grouped by GPU and kernel
name, each group's time, FLOPs and bytes added up and classified (:func:`analyze`).

Reuses :func:`gpuwhy.model.roofline.classify`, :func:`gpuwhy.model.ceilings.ceilings_from_sheet`
and :func:`gpuwhy.model.remedies.remedies_for`; the sheet of each GPU comes from
:func:`gpuwhy.device.sheet.sheet_for`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError
from ..kernel_names import display_names
from .counters import LaunchFigures, launch_figures, precision_of
from .read import Launch, NcuTable, read_ncu_csv


@dataclass(frozen=True)
class NcuKernel:
    """One kernel name on one GPU: its launches added up and judged on the roofline.

    Times in seconds, FLOPs, bytes, intensity in FLOP/byte, ``achieved_tflops``
    1e12 FLOP/s, ``achieved_gbs`` 1e9 B/s, ``roof_pct`` the achieved share of
    the roofline at this intensity (0-100, above 100 when the inputs disagree).
    ``regime`` is None for a kernel that is not classifiable (``reason`` says why).
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
    remedies: object | None = None  # gpuwhy.model.remedies.Remedies
    reason: str = ""
    notes: tuple[str, ...] = ()

    @property
    def classifiable(self) -> bool:
        return self.regime is not None

    def to_dict(self) -> dict:
        """Plain data for ``--json``: the fields in order, then ``classifiable`` and ``remedies``."""
        d = _fields_dict(self, notes=list(self.notes))
        del d["remedies"]
        d.update(classifiable=self.classifiable, remedies=self.remedies.to_dict() if self.remedies is not None else None)
        return d


@dataclass(frozen=True)
class NcuDevice:
    """The kernels of one GPU in the export.

    ``kernels`` are the top ``top`` by total time; ``other_kernels``/``other_time_s``
    what is left out; ``regime_time_s`` the time per regime over all kernels
    (``"not classifiable"`` included); ``total_time_s`` the sum of kernel durations.
    """

    device: str
    name: str | None
    sheet: str
    ceilings: dict
    kernels: tuple[NcuKernel, ...]
    other_kernels: int
    other_time_s: float
    regime_time_s: dict[str, float]
    total_time_s: float
    launches: int
    verdict: str

    def to_dict(self) -> dict:
        """Plain data for ``--json``: the fields in order, each kernel as its dict."""
        return _fields_dict(
            self, ceilings=dict(self.ceilings), kernels=[k.to_dict() for k in self.kernels], regime_time_s=dict(self.regime_time_s)
        )


@dataclass(frozen=True)
class NcuReport:
    """`gpuwhy ncu`: per GPU in the file, the kernels and where their time goes."""

    source: str
    page: str
    top: int
    devices: tuple[NcuDevice, ...]
    dropped: dict[str, int]
    messages: tuple[str, ...]
    notes: tuple[str, ...]

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
    from ...model.roofline import Workload, attainable_flops, classify

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


def _sheet_for(device_name: str | None, gpu, spec_dirs):
    """The sheet for ``gpu`` (given), else the export's GPU name, else this machine's GPU:
    a :class:`~gpuwhy.device.sheet.SheetChoice`.

    Raises:
        UsageError: an unknown --gpu; an export GPU no sheet matches; no name and no GPU here.
    """
    from ...device.probe import gpu_sheet
    from ...device.sheet import sheet_for

    if gpu is not None or device_name:
        choice = sheet_for(gpu, nvml_name=device_name, fuzzy=True, spec_dirs=spec_dirs)
        if choice.sheet is None:
            raise UsageError(
                f"the export's GPU {device_name!r} matches no spec sheet; pass --gpu NAME (see `gpuwhy specs list`)"
            )
        return choice
    try:
        return gpu_sheet(None, spec_dirs)
    except UsageError:
        raise UsageError(
            "the export does not name its GPU (add device__attribute_display_name to --metrics) and no --gpu was given; "
            "pass --gpu NAME (see `gpuwhy specs list`)"
        ) from None


def analyze(
    table: NcuTable,
    gpu=None,
    dtype: str | None = None,
    top: int = 10,
    spec_dirs: Iterable[str] = (),
    device: str | None = None,
) -> NcuReport:
    """Group ``table``'s launches by GPU and kernel name and judge each group on the roofline.

    Args:
        gpu: a sheet name or :class:`~gpuwhy.specs.Sheet` used for every GPU in
            the file; by default each GPU's ``device__attribute_display_name``
            picks its sheet (else the local GPU's sheet).
        dtype: force the ceiling precision (default: per kernel, the precision
            of its largest FLOP source: tensor bf16 -> ``bf16``, CUDA-core fp32
            -> ``fp32``, CUDA-core fp16 -> ``fp16_nontensor``, ...).
        top: kernels listed per GPU (sorted by total time); all kernels count
            in the regime summary.
        device: keep only the GPU whose ``Device`` index or name contains this.

    Raises:
        UsageError: unknown sheet or dtype; a GPU name that matches no sheet
            and no --gpu; ``device`` matching nothing.
    """
    from ...model.ceilings import ceilings_from_sheet
    from ...model.remedies import load_remedies, remedies_for

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
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
    remedies_data = load_remedies()
    notes: list[str] = list(table.notes)
    devices: list[NcuDevice] = []
    for dev_key in sorted(groups, key=lambda k: (len(k), k)):
        launches = groups[dev_key]
        dev_name = next((la.device_name for la in launches if la.device_name), None)
        choice = _sheet_for(dev_name, gpu, spec_dirs)
        sheet = choice.sheet
        if choice.conflict:
            notes.append(f"device {dev_key}: {choice.conflict}")
        if gpu is not None and dev_name and not _same_gpu(sheet, dev_name):
            notes.append(f"device {dev_key} is a {dev_name}, judged against the {sheet.name} sheet (--gpu)")
        ceil_cache: dict[str, object] = {}

        def ceilings(prec: str):
            if prec not in ceil_cache:
                d, tc = prec, True
                if prec == "fp16" and dtype is None:
                    d, tc = "fp16", False  # CUDA-core half: the non-tensor peak
                try:
                    ceil_cache[prec] = ceilings_from_sheet(sheet, d, tensor_cores=tc)
                except UsageError:
                    if prec == "fp16":
                        ceil_cache[prec] = ceilings_from_sheet(sheet, "fp32")
                        notes.append(f"the {sheet.name} sheet has no CUDA-core fp16 peak; fp16 CUDA-core kernels judged against fp32")
                    else:
                        raise
            return ceil_cache[prec]

        by_name: dict[str, list[tuple[Launch, LaunchFigures]]] = {}
        for la in launches:
            by_name.setdefault(la.name, []).append((la, launch_figures(la)))
        names = display_names(list(by_name))
        kernels: list[NcuKernel] = []
        for full, items in by_name.items():
            kernels.append(_judge(full, names[full], dev_key, items, dtype, ceilings, sheet, remedies_data, remedies_for))
        kernels.sort(key=lambda k: -(k.total_time_s or 0.0))
        regime_time: dict[str, float] = {}
        for k in kernels:
            key = k.regime or "not classifiable"
            regime_time[key] = regime_time.get(key, 0.0) + (k.total_time_s or 0.0)
        total = sum(regime_time.values())
        shown = kernels[:top]
        rest = kernels[top:]
        c_default = ceilings(dtype or "fp32")
        verdict = _device_verdict(regime_time, total)
        devices.append(
            NcuDevice(
                device=dev_key,
                name=dev_name,
                sheet=sheet.name,
                ceilings={
                    "memory_bandwidth_gbs": c_default.bandwidth / 1e9,
                    "peak_tflops": {p: sheet.peak_tflops[p] for p in sheet.peak_tflops},
                    "launch_overhead_s": c_default.launch_overhead_s,
                    "source": c_default.source,
                },
                kernels=tuple(shown),
                other_kernels=len(rest),
                other_time_s=sum(k.total_time_s or 0.0 for k in rest),
                regime_time_s=regime_time,
                total_time_s=total,
                launches=len(launches),
                verdict=verdict,
            )
        )
    return NcuReport(
        table.source, table.page, top, tuple(devices), dict(table.dropped), table.messages, tuple(dict.fromkeys(notes))
    )


def _same_gpu(sheet, dev_name: str) -> bool:
    n = " ".join(dev_name.split()).lower()
    return n in (x.lower() for x in sheet.all_names())


def _device_verdict(regime_time: dict[str, float], total: float) -> str:
    if total <= 0:
        return "no kernel time in the export"
    known = {k: v for k, v in regime_time.items() if k != "not classifiable"}
    if not known:
        return "no kernel is classifiable"
    top = max(known.items(), key=lambda kv: kv[1])
    parts = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(regime_time.items(), key=lambda kv: -kv[1]))
    unknown = regime_time.get("not classifiable", 0.0)
    if unknown > 0:
        return f"of the classifiable kernel time, most is {top[0]}-bound ({parts} of all kernel time)"
    return f"most kernel time is {top[0]}-bound ({parts})"


def _judge(full, name, dev_key, items, dtype, ceilings, sheet, remedies_data, remedies_for) -> NcuKernel:
    n = len(items)
    times = [f.time_s for _, f in items if f.time_s is not None]
    total_all = sum(times) if times else None
    ok = [f for _, f in items if not f.reason]
    notes: list[str] = []
    for _, f in items:
        for x in f.notes:
            if x not in notes:
                notes.append(x)
    if not ok:
        reason = items[0][1].reason
        return NcuKernel(
            name=name, full_name=full, device=dev_key, launches=n, total_time_s=total_all,
            mean_time_s=(total_all / len(times)) if times else None, flops=None, bytes=None, flops_by={},
            precision=None, intensity=None, achieved_tflops=None, achieved_gbs=None, roof_pct=None,
            regime=None, bound_ratio=None, top_remedy=None, reason=reason, notes=tuple(notes),
        )
    if len(ok) < n:
        notes.append(f"{n - len(ok)} of {n} launches lack counters ({next(f.reason for _, f in items if f.reason)}); judged on the other {len(ok)}")
    t = sum(f.time_s for f in ok)
    flops = sum(f.flops or 0.0 for f in ok)
    b = sum(f.bytes for f in ok)
    flops_by: dict[str, float] = {}
    for f in ok:
        for k, v in f.flops_by.items():
            flops_by[k] = flops_by.get(k, 0.0) + v
    flops_by = {k: x for k, x in flops_by.items() if x > 0}
    c = ceilings(dtype if dtype is not None else precision_of(flops_by))
    v = _verdict(flops, b, len(ok), t, c)
    rem = remedies_for(v, c.precision, sheet.peak_tflops, remedies_data)
    if flops == 0:
        notes.append("no floating-point work counted: judged on its DRAM bytes alone")
    return NcuKernel(
        name=name, full_name=full, device=dev_key, launches=n, total_time_s=total_all if total_all is not None else t,
        mean_time_s=(total_all / len(times)) if times else t / len(ok), flops=flops, bytes=b, flops_by=flops_by,
        precision=c.precision, intensity=v.arithmetic_intensity, achieved_tflops=v.achieved_flops / 1e12,
        achieved_gbs=v.achieved_bandwidth / 1e9, roof_pct=v.sol_pct, regime=v.regime, bound_ratio=v.bound_ratio,
        top_remedy=_top_remedy(rem, any(k.startswith("tensor_") and x > 0 for k, x in flops_by.items())), remedies=rem, notes=tuple(notes) + tuple(v.warnings),
    )


def load_ncu_report(path: str | Path, *args, **options) -> NcuReport:
    """Read ``path`` (:func:`~gpuwhy.importers.ncu.read.read_ncu_csv`) and judge it: ``args`` and
    ``options`` are :func:`analyze`'s (``gpu``, ``dtype``, ``top``, ``spec_dirs``, ``device``).

    Raises:
        UsageError: see :func:`~gpuwhy.importers.ncu.read.read_ncu_csv` and :func:`analyze`.
    """
    return analyze(read_ncu_csv(path), *args, **options)



__all__ = ["NcuDevice", "NcuKernel", "NcuReport", "analyze", "load_ncu_report"]
