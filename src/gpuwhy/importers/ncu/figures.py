"""One launch's roofline inputs from whatever counters its export holds, each with how it was found.

:func:`launch_figures` derives, in this order of preference (the first that the
export has wins; ``how`` names it, ``estimated`` marks the estimates):

- **time** (s): ``gpu__time_duration.sum``; else the details page's ``Duration``
  (any unit); else elapsed cycles / cycle rate (``smsp__cycles_elapsed.avg`` /
  ``.avg.per_second``, the same for ``sm__``, ``gpc__cycles_elapsed.max`` /
  ``gpc__cycles_elapsed.avg.per_second``, details ``Elapsed Cycles`` / ``SM Frequency``).
- **DRAM bytes**: ``dram__bytes_read.sum + dram__bytes_write.sum``; else
  ``dram__bytes.sum``; else a byte rate x time (``dram__bytes.sum.per_second``,
  details ``Memory Throughput``/``DRAM Throughput`` in byte/second); else a
  percentage of peak x the sheet's bandwidth x time (an **estimate**:
  ``dram__throughput``, ``gpu__dram_throughput``, details ``DRAM Throughput [%]``,
  ``SOL FB``/``SOL DRAM``; last ``gpu__compute_memory_throughput`` / ``Memory [%]``,
  an upper bound, since ncu's memory throughput is the busiest of L1, L2 and DRAM).
- **FLOPs**: the SASS thread-instruction counters
  ``(sm|smsp)__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on`` (add
  and mul 1 FLOP, fma 2, as Nsight Compute's roofline counts them) as ``.sum``,
  else ``.sum.per_cycle_elapsed`` x ``<unit>__cycles_elapsed.avg`` (``--set full``
  collects only the rate), else ``.sum.per_second`` x time; tensor cores from
  ``sm__ops_path_tensor_*.sum`` (each op one FLOP), else (an **estimate**) the
  tensor-pipe warp instructions ``sm__inst_executed_pipe_tensor.sum`` less the
  ``HFMA2.MMA`` moves the compiler also issues to that pipe, times the FLOPs of
  one instruction of the GPU's MMA shape (:data:`TENSOR_INST_FLOPS`).
- **L2 / L1 bytes** (kept for the memory-hierarchy roofline): ``lts__t_bytes.sum``
  (else ``lts__t_sectors.sum`` x 32 B, else a rate x time) and ``l1tex__t_bytes.sum``
  (likewise); their throughput percentages (``lts__throughput``, ``SOL L2``,
  ``l1tex__throughput``, ``SOL TEX``...) where present.
- **utilisations** (0-100 % of peak): the busiest arithmetic pipe
  (``sm__inst_executed_pipe_{tensor,fma,alu,fp64,xu,...}`` and
  ``sm__pipe_*_cycles_active`` ``.avg.pct_of_peak_sustained_elapsed`` or ``_active``),
  ncu's SM throughput (``sm__throughput``, ``Compute (SM) Throughput``, ``SM [%]``,
  ``SOL SM``) and memory throughput (``gpu__compute_memory_throughput``,
  ``Memory Throughput [%]``, ``Memory [%]``), DRAM throughput, issue slots busy
  (``sm__issue_active``, ``Issue Slots Busy``) and achieved occupancy
  (``sm__warps_active...pct_of_peak_sustained_active``, ``Achieved Occupancy``); and
  the waves per SM (``launch__waves_per_multiprocessor``, ``Waves Per SM``).
- **SM clock** (Hz): ``sm__cycles_elapsed.avg.per_second`` (or ``smsp__``,
  ``gpc__``, details ``SM Frequency``): ncu locks clocks to base unless
  ``--clock-control none``, so peaks are scaled to it by the analysis.

Missing values stay None (never 0); ``reason`` says what the roofline lacks and
the ncu option that would supply it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .read import Launch
from ...units import fmt_g, fmt_num

# --------------------------------------------------------------------------- names

TIME_METRICS = ("gpu__time_duration.sum", "gpu__time_duration", "gpu__time_duration.avg", "Duration")
#: (elapsed cycles, cycles per second) pairs whose ratio is the launch's duration.
CYCLE_TIME_PAIRS = (
    ("smsp__cycles_elapsed.avg", "smsp__cycles_elapsed.avg.per_second"),
    ("sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
    ("gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second"),
    ("gpc__cycles_elapsed.max", "gpc__cycles_elapsed.max.per_second"),
    ("Elapsed Cycles", "SM Frequency"),
)
DRAM_READ = ("dram__bytes_read.sum",)
DRAM_WRITE = ("dram__bytes_write.sum",)
DRAM_TOTAL = ("dram__bytes.sum",)
DRAM_RATE = ("dram__bytes.sum.per_second", "Memory Throughput", "DRAM Throughput")
DRAM_PCT = (
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput",
    "SOL FB",
    "SOL DRAM",
)
MEMORY_PCT = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory Throughput", "Memory [%]")
SM_PCT = ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput", "Compute (SM) [%]", "SM [%]", "SOL SM")
L2_PCT = ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 Cache Throughput", "SOL L2", "SOL L2 Cache")
L1_PCT = (
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "L1/TEX Cache Throughput",
    "SOL TEX",
    "SOL L1/TEX Cache",
)
#: Issue slots busy (the share of cycles an SM sub-partition issued an instruction).
ISSUE_PCT = (
    "sm__issue_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_issued.avg.pct_of_peak_sustained_elapsed",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "Issue Slots Busy",
)
#: Achieved occupancy (resident warps as a share of the SM's limit).
OCCUPANCY_PCT = ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy")
#: Waves of blocks per SM.
WAVES = ("launch__waves_per_multiprocessor", "Waves Per SM")
SM_CLOCK = (
    "sm__cycles_elapsed.avg.per_second",
    "smsp__cycles_elapsed.avg.per_second",
    "gpc__cycles_elapsed.avg.per_second",
    "SM Frequency",
)
#: Bytes per L2 / L1TEX sector.
SECTOR_BYTES = 32
#: (level, bytes counter, sectors counter, byte rate) for the cache levels.
CACHE_BYTES = (
    ("l2", "lts__t_bytes.sum", "lts__t_sectors.sum", "lts__t_bytes.sum.per_second"),
    ("l1", "l1tex__t_bytes.sum", "l1tex__t_sectors.sum", "l1tex__t_bytes.sum.per_second"),
)

#: (precision of the ceiling, SASS op, FLOPs per counted thread instruction).
SASS_OPS: tuple[tuple[str, str, int], ...] = (
    ("fp32", "fadd", 1), ("fp32", "fmul", 1), ("fp32", "ffma", 2),
    ("fp64", "dadd", 1), ("fp64", "dmul", 1), ("fp64", "dfma", 2),
    ("fp16", "hadd", 1), ("fp16", "hmul", 1), ("fp16", "hfma", 2),
)
#: (precision, metric, FLOPs per counted thread instruction): the per-launch counters gpuwhy asks for.
SASS_FLOP_METRICS: tuple[tuple[str, str, int], ...] = tuple(
    (p, f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", w) for p, op, w in SASS_OPS
)

#: FLOPs of one tensor-pipe warp instruction, by compute capability major (an estimate:
#: the export does not say which MMA shape ran). Sources:
#: 7 (Volta HMMA.884): 512, the factor Nsight Compute's own tensor roofline section uses
#: (``derived__sm__inst_executed_pipe_tensor_x512``) and NERSC's V100 roofline recipe;
#: 8 (Ampere/Ada HMMA.16816): 2*16*8*16 = 4096 (PTX ISA, ``mma.m16n8k16``);
#: 9 (Hopper HGMMA m64n128k16, counted once per warp of the 4-warp group):
#: 2*64*128*16/4 = 65536, which the H200 exports in tests/fixtures/real/ confirm
#: (2 x 4096^3 FLOPs / 2,097,152 instructions). Later generations (tcgen05 MMA,
#: issued by one thread) have no factor: their tensor FLOPs need ``sm__ops_path_tensor_*``.
TENSOR_INST_FLOPS = {7: 512, 8: 4096, 9: 65536}
#: The smaller shape tried when the first factor gives more FLOP/s than the peak
#: (an ``mma.sync`` m16n8k16 kernel on Hopper).
TENSOR_INST_FLOPS_SMALL = 4096

_TENSOR_OPS_RE = re.compile(
    r"^sm__ops_path_tensor_(?:op_(?P<op>[a-z0-9]+?)_)?src_(?P<src>[a-z0-9]+?)(?:_dst_(?P<dst>[a-z0-9]+?))?"
    r"(?:_sparsity_(?P<sp>on|off))?\.sum$"
)
TENSOR_INST = ("sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum")
TENSOR_INST_HFMA2 = ("sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum", "smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum")
_TENSOR_INST_RE = re.compile(r"^(?:sm|smsp)__inst_executed_pipe_tensor[a-z0-9_]*\.sum$")
#: Tensor-path source type -> the sheet precision whose peak bounds it.
_TENSOR_PRECISION = {
    "fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64_tensor", "fp8": "fp8", "e4m3": "fp8",
    "e5m2": "fp8", "fp6": "fp8", "fp4": "fp4", "int8": "int8", "int4": "int8", "int1": "int8", "unknown": "bf16",
}
_PIPE_RE = re.compile(
    r"^(?:sm|smsp)__(?:inst_executed_pipe_(?P<a>[a-z0-9_]+?)|pipe_(?P<b>[a-z0-9_]+?)_cycles_active)"
    r"\.avg\.pct_of_peak_sustained_(?P<w>elapsed|active)$"
)
#: Pipes that do arithmetic (a kernel with one of them near its peak is compute-bound).
ARITHMETIC_PIPES = ("tensor", "fma", "fmaheavy", "fmalite", "alu", "fp64", "fp16", "xu")


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class LaunchFigures:
    """The roofline inputs of one launch, how each was found, or why it is missing.

    ``time_s`` seconds; ``bytes`` DRAM bytes (read + write); ``flops`` total FLOPs and
    ``flops_by`` per source (``fp32``, ``fp64``, ``fp16``, ``tensor_bf16_fp32``,
    ``tensor_unknown``, ...); ``precision`` the sheet precision of the largest source.
    ``reason`` is empty when time, DRAM bytes and FLOPs are all known (the roofline
    applies), else it names what is missing and the ncu option that adds it.
    ``how`` maps ``time``/``dram_bytes``/``flops``/``l2_bytes``/``l1_bytes`` to how each
    was derived; ``estimated`` names those that are estimates. ``pct`` holds
    utilisations in percent of peak (``pipe``, ``sm``, ``memory``, ``dram``, ``l2``,
    ``l1``, ``issue``, ``occupancy``); ``pipe`` names the busiest arithmetic pipe;
    ``sm_clock_hz`` the SM clock; ``waves`` the waves of blocks per SM.
    ``flops_complete`` is False when a FLOP source is not counted at all (tensor work
    in an export without tensor counters), so ``flops`` is a lower bound.
    """

    time_s: float | None
    bytes: float | None
    flops: float | None
    flops_by: dict[str, float]
    precision: str
    tensor_inst: float | None
    reason: str
    notes: tuple[str, ...] = ()
    how: dict[str, str] = field(default_factory=dict)
    estimated: frozenset[str] = frozenset()
    l2_bytes: float | None = None
    l1_bytes: float | None = None
    pct: dict[str, float] = field(default_factory=dict)
    pipe: str | None = None
    sm_clock_hz: float | None = None
    flops_complete: bool = True
    waves: float | None = None

    @property
    def roofline_ready(self) -> bool:
        """Time, DRAM bytes and FLOPs are known: the roofline verdict applies."""
        return not self.reason


# --------------------------------------------------------------------------- lookups


def _dims_ok(dim: str | None, want: tuple[str, ...] | None) -> bool:
    return want is None or dim is None or dim in want


def lookup(la: Launch, names: Iterable[str], want: tuple[str, ...] | None = None) -> tuple[float | None, str | None, bool]:
    """``(SI value, metric name, present)`` of the first of ``names`` that the launch has with a
    dimension in ``want`` (a value of unknown dimension is accepted); ``present`` is True when
    one of them is there but n/a. A details-page alternate (``name|dim``) counts as the name."""
    present = False
    for n in names:
        for key in (n, *(f"{n}|{d}" for d in (want or ()))):
            if key not in la.metrics:
                continue
            v, dim = la.metrics[key]
            if not _dims_ok(dim, want):
                continue
            if v is None:
                present = True
                continue
            return v, n, True
    return None, None, present


_RATE = ("rate", "count/time")
_PCT = ("percent",)


def _time(la: Launch) -> tuple[float | None, str, bool, list[str]]:
    """(seconds, how, present, notes)."""
    notes: list[str] = []
    for n in TIME_METRICS:
        v, name, present = lookup(la, (n,), ("time",))
        if v is not None:
            dim = la.metrics.get(name, (None, None))[1]
            if dim is None:
                # ncu's base time unit is the nanosecond (--print-units base).
                notes.append(f"{name} has no unit; read as nanoseconds (ncu's base unit)")
                return v * 1e-9, name, True, notes
            return v, name, True, notes
    present = any(lookup(la, (n,), ("time",))[2] for n in TIME_METRICS)
    for n in TIME_METRICS:
        v, dim = la.metrics.get(n, (None, None))
        if v is not None and not _dims_ok(dim, ("time",)):
            notes.append(f"{n} has unit dimension {dim}, expected time; ignored")
    for cyc, rate in CYCLE_TIME_PAIRS:
        c, _, _ = lookup(la, (cyc,), ("count",))
        r, _, _ = lookup(la, (rate,), _RATE)
        if c is not None and r:
            return c / r, f"{cyc} / {rate}", True, notes
    return None, "", present, notes


def _sass_flops(la: Launch, t: float | None) -> tuple[dict[str, float], list[str], list[str], str]:
    """(FLOPs per precision, ops seen, ops n/a, how)."""
    flops: dict[str, float] = {}
    seen: list[str] = []
    na: list[str] = []
    hows: set[str] = set()
    for prec, op, weight in SASS_OPS:
        got, how, present = None, "", False
        for unit in ("smsp", "sm"):
            base = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on"
            v, _, p1 = lookup(la, (f"{base}.sum",), ("count",))
            if v is not None:
                got, how = v, f"{unit}__sass_thread_inst_executed_op_*_pred_on.sum"
                break
            rate, _, p2 = lookup(la, (f"{base}.sum.per_cycle_elapsed",))
            cyc, _, _ = lookup(la, (f"{unit}__cycles_elapsed.avg",), ("count",))
            if rate is not None and cyc is not None:
                got = rate * cyc
                how = f"{unit}__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed x {unit}__cycles_elapsed.avg"
                break
            ps, _, p3 = lookup(la, (f"{base}.sum.per_second",), _RATE)
            if ps is not None and t is not None:
                got, how = ps * t, f"{unit}__sass_thread_inst_executed_op_*_pred_on.sum.per_second x time"
                break
            present = present or p1 or p2 or p3
        if got is not None:
            seen.append(op)
            hows.add(how)
            flops[prec] = flops.get(prec, 0.0) + weight * got
        elif present:
            na.append(op)
    return flops, seen, na, "; ".join(sorted(hows))


def _tensor_ops(la: Launch) -> tuple[dict[str, float], bool]:
    """Tensor FLOPs per ``tensor_<src>[_<dst>]`` from ``sm__ops_path_tensor_*.sum``, and whether any such counter is there.

    Per (instruction family or None, src, dst): the plain counter, else sparsity on +
    off. Per (src, dst): the generic counter (no op_ family) when present, else the
    families summed.
    """
    parts: dict[tuple[str | None, str, str], dict[str, float]] = {}
    present = False
    for name, (v, _dim) in la.metrics.items():
        m = _TENSOR_OPS_RE.match(name)
        if not m:
            continue
        present = True
        if v is not None:
            key = (m.group("op"), m.group("src"), m.group("dst") or "")
            parts.setdefault(key, {})[m.group("sp") or "plain"] = v
    generic: dict[tuple[str, str], float] = {}
    family: dict[tuple[str, str], float] = {}
    for (op, src, dst), got in parts.items():
        val = got["plain"] if "plain" in got else got.get("on", 0.0) + got.get("off", 0.0)
        target = family if op else generic
        target[(src, dst)] = target.get((src, dst), 0.0) + val
    tensor: dict[tuple[str, str], float] = dict(family)
    tensor.update(generic)
    return {f"tensor_{src}" + (f"_{dst}" if dst else ""): v for (src, dst), v in tensor.items()}, present


def _tensor_inst(la: Launch) -> float | None:
    v, _, _ = lookup(la, TENSOR_INST, ("count",))
    if v is not None:
        return v
    best = None
    for name, (x, _d) in la.metrics.items():
        if _TENSOR_INST_RE.match(name) and x is not None and "hfma2" not in name:
            best = max(best or 0.0, x)
    return best


def _pipes(la: Launch) -> tuple[float | None, str | None, str]:
    """(busiest arithmetic pipe %, its name, the metric)."""
    best: dict[str, tuple[float, str, str]] = {}
    for name, (v, _d) in la.metrics.items():
        m = _PIPE_RE.match(name)
        if not m or v is None:
            continue
        pipe = m.group("a") or m.group("b")
        if "realtime" in pipe or not pipe.startswith(ARITHMETIC_PIPES) or pipe.startswith(("fma_type", "tensor_op_dmma")):
            continue
        w = m.group("w")
        cur = best.get(w)
        if cur is None or v > cur[0]:
            best[w] = (v, pipe, name)
    got = best.get("elapsed") or best.get("active")
    return (got[0], got[1], got[2]) if got else (None, None, "")


def _triage(la: Launch, counter: str) -> tuple[float | None, str | None]:
    """A counter ``--set full`` collects only in a prefixed triage pass (``SM_B.TriageCompute.l1tex__t_sectors.sum``)."""
    for name, (v, _d) in la.metrics.items():
        if v is not None and name.endswith("." + counter) and ".Triage" in name:
            return v, name
    return None, None


def _pct(la: Launch, names: tuple[str, ...]) -> tuple[float | None, str | None]:
    v, name, _ = lookup(la, names, _PCT)
    return v, name


# --------------------------------------------------------------------------- the figures


def launch_figures(la: Launch, sheet=None) -> LaunchFigures:
    """Time, DRAM bytes, FLOPs, cache bytes and utilisations of one launch (see the module docstring).

    ``sheet`` (a :class:`~gpuwhy.specs.Sheet`) supplies the bandwidth that turns a
    DRAM percentage into bytes and the compute capability that picks the FLOPs of a
    tensor instruction; without it those estimates are not made.
    """
    notes: list[str] = []
    how: dict[str, str] = {}
    estimated: set[str] = set()

    t, t_how, t_present, tn = _time(la)
    notes += tn
    if t is not None:
        how["time"] = t_how

    pct: dict[str, float] = {}
    for key, names in (("sm", SM_PCT), ("memory", MEMORY_PCT), ("dram", DRAM_PCT), ("l2", L2_PCT), ("l1", L1_PCT),
                       ("issue", ISSUE_PCT), ("occupancy", OCCUPANCY_PCT)):
        v, _ = _pct(la, names)
        if v is not None:
            pct[key] = v
    pipe_v, pipe, pipe_metric = _pipes(la)
    if pipe_v is not None:
        pct["pipe"] = pipe_v
        how["pipe"] = pipe_metric
    clock, _, _ = lookup(la, SM_CLOCK, _RATE)
    waves, _, _ = lookup(la, WAVES)

    # DRAM bytes
    b, dram_missing = _dram_bytes(la, t, sheet, how, estimated, notes)

    # cache levels
    cache: dict[str, float | None] = {}
    for level, counter, sectors, rate in CACHE_BYTES:
        v, _, _ = lookup(la, (counter,), ("bytes",))
        if v is not None:
            cache[level], how[f"{level}_bytes"] = v, counter
            continue
        s, _, _ = lookup(la, (sectors,), ("count",))
        if s is not None:
            cache[level], how[f"{level}_bytes"] = s * SECTOR_BYTES, f"{sectors} x {SECTOR_BYTES} B"
            continue
        r, _, _ = lookup(la, (rate,), ("bytes/time",))
        if r is not None and t is not None:
            cache[level], how[f"{level}_bytes"] = r * t, f"{rate} x time"
            continue
        s, name = _triage(la, sectors)
        if s is not None:
            cache[level], how[f"{level}_bytes"] = s * SECTOR_BYTES, f"{name} x {SECTOR_BYTES} B"
            continue
        cache[level] = None

    # FLOPs
    flops_by, sass_seen, sass_na, sass_how = _sass_flops(la, t)
    tensor, ops_present = _tensor_ops(la)
    flop_hows = [sass_how] if sass_how else []
    tensor_inst = _tensor_inst(la)
    tensor_estimated = False
    if tensor:
        flops_by.update(tensor)
        flop_hows.append("sm__ops_path_tensor_*.sum")
    elif tensor_inst:
        est = _tensor_inst_flops(la, tensor_inst, sheet, t, notes)
        if est is not None:
            flops_by["tensor_unknown"] = est[0]
            flop_hows.append(est[1])
            tensor_estimated = True
    flops_complete = True
    tensor_busy = _tensor_pipe_busy(la)
    if not tensor and not tensor_estimated and (tensor_inst or tensor_busy):
        flops_complete = False
    elif not ops_present and tensor_inst is None and tensor_busy is None and flops_by:
        notes.append("the export has no tensor-core counters (sm__ops_path_tensor_*, sm__inst_executed_pipe_tensor): "
                     "tensor-core FLOPs, if any, are not counted")
    if tensor_estimated:
        estimated.add("flops")
    if flop_hows and flops_by:
        how["flops"] = "; ".join(flop_hows)

    reason = _reason(t, t_present, b, dram_missing, flops_by, sass_seen, sass_na, ops_present, tensor, tensor_inst,
                     flops_complete, sheet)
    if not reason:
        if sass_na:
            notes.append(f"FLOPs are a lower bound: the {', '.join(sass_na)} counters are n/a")
        if not sass_seen and tensor:
            notes.append("no CUDA-core FLOP counters in the export: FLOPs are tensor-core work only")
        if ops_present and not tensor:
            notes.append("the tensor-core FLOP counters are n/a")
    flops = sum(flops_by.values()) if flops_by else None
    return LaunchFigures(
        t, b, flops, flops_by, precision_of(flops_by), tensor_inst, reason, tuple(dict.fromkeys(notes)), how,
        frozenset(estimated), cache.get("l2"), cache.get("l1"), pct, pipe, clock, flops_complete, waves,
    )


def _na_names(la: Launch, names: Iterable[str], want: tuple[str, ...] | None) -> list[str]:
    """Those of ``names`` the launch has (in a dimension in ``want``) but n/a."""
    out = []
    for n in names:
        for key in (n, *(f"{n}|{d}" for d in (want or ()))):
            if key in la.metrics and la.metrics[key][0] is None and _dims_ok(la.metrics[key][1], want) and n not in out:
                out.append(n)
    return out


def _dram_bytes(la, t, sheet, how, estimated, notes) -> tuple[float | None, str]:
    """(DRAM bytes or None, what is missing in words: empty when the export has no DRAM metric at all).

    In order: read + write counted; ``dram__bytes.sum``; a byte rate x time; one direction
    counted with the other missing (a lower bound: ``estimated`` gets ``dram_bytes``, ``how``
    and ``notes`` name the missing counter); a DRAM (else memory) percentage x the sheet's
    bandwidth x time (an estimate, an upper bound from the memory percentage).
    """
    rd, _, rd_p = lookup(la, DRAM_READ, ("bytes",))
    wr, _, wr_p = lookup(la, DRAM_WRITE, ("bytes",))
    tot, _, tot_p = lookup(la, DRAM_TOTAL, ("bytes",))
    na = [*_na_names(la, DRAM_READ, ("bytes",)), *_na_names(la, DRAM_WRITE, ("bytes",)), *_na_names(la, DRAM_TOTAL, ("bytes",))]
    if rd is not None and wr is not None:
        how["dram_bytes"] = "dram__bytes_read.sum + dram__bytes_write.sum"
        return rd + wr, ""
    if tot is not None:
        how["dram_bytes"] = "dram__bytes.sum"
        if rd_p or wr_p:
            notes.append("dram__bytes_read/write incomplete; used dram__bytes.sum")
        return tot, ""
    if t is not None:
        rate, name, _ = lookup(la, DRAM_RATE, ("bytes/time",))
        na += _na_names(la, DRAM_RATE, ("bytes/time",))
        if rate is not None:
            how["dram_bytes"] = f"{name} (byte/s) x time"
            return rate * t, ""
    if (rd is None) != (wr is None):
        have, miss, miss_p = (DRAM_READ[0], DRAM_WRITE[0], wr_p) if rd is not None else (DRAM_WRITE[0], DRAM_READ[0], rd_p)
        state = "is n/a" if miss_p else "is not in the export"
        how["dram_bytes"] = f"{have} only ({miss} {state}): a lower bound"
        estimated.add("dram_bytes")
        notes.append(f"DRAM bytes are a lower bound: {miss} {state}, so only {have} is counted; "
                     f"add --metrics {miss} for the whole traffic")
        return rd if rd is not None else wr, ""
    if t is not None and sheet is not None:
        bw = sheet.bandwidth_bytes_per_s
        for names, bound in ((DRAM_PCT, False), (MEMORY_PCT, True)):
            v, name, _ = lookup(la, names, _PCT)
            na += _na_names(la, names, _PCT)
            if v is not None:
                how["dram_bytes"] = (f"{name} % x {fmt_g(sheet.memory_bandwidth_gbs)} GB/s ({sheet.name} sheet) x time, "
                                     + ("an upper bound (ncu's memory throughput is the busiest of L1, L2 and DRAM)"
                                        if bound else "an estimate"))
                estimated.add("dram_bytes")
                return v / 100.0 * bw * t, ""
    if not na:
        return None, ""
    absent = [n for n, v, p in ((DRAM_READ[0], rd, rd_p), (DRAM_WRITE[0], wr, wr_p)) if v is None and not p]
    missing = f"{', '.join(dict.fromkeys(na))} {'is' if len(set(na)) == 1 else 'are'} n/a"
    if absent:
        missing += f"; {'/'.join(absent)} {'is' if len(absent) == 1 else 'are'} not in the export"
    return None, missing


def _tensor_pipe_busy(la: Launch) -> float | None:
    best = None
    for name, (v, _d) in la.metrics.items():
        m = _PIPE_RE.match(name)
        if m and v is not None and (m.group("a") or m.group("b")).startswith("tensor"):
            best = max(best or 0.0, v)
    return best


def _tensor_inst_flops(la, inst: float, sheet, t, notes) -> tuple[float, str] | None:
    """(estimated tensor FLOPs, how) from the tensor-pipe instruction count, or None with a note."""
    if sheet is None:
        return None
    if sheet.arch is None:
        return None
    per = TENSOR_INST_FLOPS.get(sheet.arch.major_minor[0])
    if per is None:
        notes.append(f"tensor-pipe instructions cannot be turned into FLOPs on compute capability {sheet.compute_capability} "
                     "(no fixed MMA shape); add sm__ops_path_tensor_* metrics")
        return None
    moves, _, _ = lookup(la, TENSOR_INST_HFMA2, ("count",))
    moves_how = "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"
    if moves is None:
        hfma, _, _ = lookup(la, ("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"), ("count",))
        moves = hfma / 32.0 if hfma is not None else 0.0
        moves_how = "HFMA thread instructions / 32"
    mma = max(0.0, inst - moves)
    if moves > 0:
        notes.append(f"{fmt_num(min(moves, inst))} of {fmt_num(inst)} tensor-pipe instructions are HFMA2.MMA register moves "
                     f"({moves_how}), not MMAs")
    flops = mma * per
    shape = f"{per} FLOP/instruction (compute capability {sheet.compute_capability})"
    peak = sheet.peak_tflops.get("bf16") or sheet.peak_tflops.get("fp16")
    if peak and t and per > TENSOR_INST_FLOPS_SMALL and flops / t > 1.05 * peak * 1e12:
        flops = mma * TENSOR_INST_FLOPS_SMALL
        shape = (f"{TENSOR_INST_FLOPS_SMALL} FLOP/instruction (mma.sync m16n8k16: {per} would exceed the "
                 f"{fmt_g(peak)} TFLOP/s peak)")
    notes.append("tensor FLOPs are an estimate from the tensor-pipe instruction count (the MMA shape and type are "
                 "not in the export); add sm__ops_path_tensor_* metrics for a count")
    return flops, f"(sm__inst_executed_pipe_tensor.sum - HFMA2.MMA) x {shape}, an estimate"


_ADD_TIME = "add --metrics gpu__time_duration.sum (or the SpeedOfLight section)"
_ADD_DRAM = "add --metrics dram__bytes_read.sum,dram__bytes_write.sum (or the SpeedOfLight section for an estimate)"
_ADD_FLOPS = ("add --metrics smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum and sm__ops_path_tensor_*, "
              "or --section ComputeWorkloadAnalysis for pipe utilisation (or let `gpuwhy ncu -- CMD` choose)")


def _reason(t, t_present, b, dram_missing, flops_by, sass_seen, sass_na, ops_present, tensor, tensor_inst, complete, sheet) -> str:
    if t is None:
        state = "n/a" if t_present else "not in the export"
        return f"no duration (gpu__time_duration.sum / Duration / elapsed cycles are {state}); {_ADD_TIME}"
    if t <= 0:
        return "duration is zero"
    if b is None:
        if dram_missing:
            return f"no DRAM bytes ({dram_missing})"
        if sheet is None:
            return f"no DRAM bytes (no dram__bytes counter; a DRAM percentage needs a sheet); {_ADD_DRAM}"
        return f"no DRAM bytes (dram__bytes_read.sum/dram__bytes_write.sum are not in the export); {_ADD_DRAM}"
    if not sass_seen and not sass_na and not ops_present and not tensor_inst:
        return f"no FLOP counters (smsp__sass_thread_inst_executed_op_* or sm__ops_path_tensor_*) in the export; {_ADD_FLOPS}"
    if sass_na and not sass_seen and not any(v > 0 for v in tensor.values()):
        return "the CUDA-core FLOP counters (smsp__sass_thread_inst_executed_op_*) are n/a"
    if not complete:
        n = f"{fmt_num(tensor_inst)} tensor-core instructions executed" if tensor_inst else "the tensor pipe was busy"
        return (f"{n} but the export has no sm__ops_path_tensor_* counter, so its FLOPs are unknown; "
                "add those metrics (see docs/diagnose.md)")
    if not flops_by:
        return "every FLOP counter is n/a"
    if b == 0 and sum(flops_by.values()) == 0:
        return "no FLOPs and no DRAM bytes counted (data stayed in cache, or the kernel does neither)"
    return ""


def precision_of(flops_by: dict[str, float]) -> str:
    """The sheet precision of the largest FLOP source (``tensor_bf16`` -> ``bf16``, ``fp32`` -> ``fp32``);
    ``fp32`` when no source counted any FLOP."""
    if not flops_by:
        return "fp32"
    label, most = max(flops_by.items(), key=lambda kv: kv[1])
    if most <= 0:
        return "fp32"
    return _TENSOR_PRECISION.get(label.split("_")[1], "fp16") if label.startswith("tensor_") else label


__all__ = [
    "ARITHMETIC_PIPES",
    "CACHE_BYTES",
    "CYCLE_TIME_PAIRS",
    "DRAM_PCT",
    "DRAM_RATE",
    "DRAM_READ",
    "DRAM_TOTAL",
    "DRAM_WRITE",
    "L1_PCT",
    "L2_PCT",
    "MEMORY_PCT",
    "SASS_FLOP_METRICS",
    "SASS_OPS",
    "SM_CLOCK",
    "SM_PCT",
    "TENSOR_INST",
    "TENSOR_INST_FLOPS",
    "TIME_METRICS",
    "LaunchFigures",
    "launch_figures",
    "lookup",
    "precision_of",
]
