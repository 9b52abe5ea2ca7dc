"""Issue-bound: the SM's instruction issue and pipes, not memory or the FLOP peak, limit a
kernel. Pure functions, no I/O.

The FLOP roofline counts floating-point adds, multiplies and FMAs (and tensor-core
MMAs). A kernel whose time goes to other instructions - integer arithmetic on the ALU
pipe (a counter-based RNG such as Philox), special functions on the XU pipe (``exp``,
``rsqrt``), address and index arithmetic, shuffles, branches - has few counted FLOPs,
so its intensity is low and the FLOP roofline puts it on the memory side even when
DRAM and L2 are far from their roofs. A profiler that says how busy the SM was
(Nsight Compute's ``sm__throughput``: the busiest of the SM's issue stage and pipes)
tells the two apart: when the SM is busy and clearly busier than every memory unit,
the SM is the limit. Moving fewer bytes does not help such a kernel; fewer or cheaper
instructions do.

:func:`issue_diagnosis` says so (regime ``issue``, the SM variant of
:data:`gpuwhy.model.roofline.hierarchy.REGIME_TEXT`'s ``issue``), from the side and roof share the
FLOP roofline gives and the profiler's utilisations (percent of peak), when all of:

- **memory side, well below the roof**: the nearest memory roof's share is below
  :data:`MEMORY_ROOF_BELOW` (60%): at the roof's bandwidth its bytes would take under
  60% of the measured time, so memory leaves at least 40% of the time unexplained;
  (**compute side**: below :data:`COMPUTE_ROOF_BELOW` of the FLOP roof, the share under
  which :mod:`gpuwhy.model.roofline.hierarchy` calls a tensor-core kernel issue-bound, and the
  work is not on tensor cores, whose own case that module handles);
- **the SM is busy**: the SM utilisation (the larger of ncu's SM throughput and the
  busiest pipe) is at least :data:`BUSY_PCT` (60%), the line below which Nsight
  Compute's SOLBottleneck rule calls a unit not busy (it reports "latency issues" when
  both compute and memory throughput are under 60%);
- **clearly busier than memory**: the SM utilisation exceeds every memory figure known
  (ncu's memory throughput, DRAM, L2 and L1/TEX throughput, and the share of each
  memory roof the bytes reach) by at least :data:`ISSUE_MARGIN_PCT` (10 points). The
  same kernel profiled in four separate runs on the H200 (tests/fixtures/real/) gives
  SM and memory throughputs within a point of each other, so 10 points is a real
  difference, not noise; and a memory unit within 10 points of the SM is left to the
  memory verdict.

:func:`refine_regime` applies this to a regime from the roofline (or from
utilisations): ``memory`` (or ``compute`` far below its roof) becomes ``issue``;
``latency`` (memory latency-bound, :mod:`gpuwhy.model.roofline.hierarchy`) stands only where the
SM is known to be idle (under :data:`BUSY_PCT`) and no memory unit is busy: a busy SM
is not waiting on loads, a busy memory unit (an L2 whose roof is unknown) is the limit
itself, and without an SM utilisation latency and issue cannot be told apart, so the
regime stays ``memory`` with a note.

Why the rule holds on the H200 exports (tests/fixtures/real/, made with ncu 2025.3):

- ``cunn_SoftMaxForwardReg`` (PyTorch softmax, 8192x4096 fp32, ``--set full``):
  4.98 FLOP/byte, 38% of the DRAM roof; ``sm__throughput`` 73.6% equals
  ``sm__issue_active`` 73.6% (the issue stage is what makes the SM busy), while no
  pipe is near its peak (ADU 35%, ALU 32%, XU 31% - the ``exp`` - FMA 29%) and the
  busiest memory unit is the L2 at 49% (DRAM 38%, L1/TEX 28%). The schedulers issue
  an instruction on 75% of active cycles with 94% achieved occupancy: the
  instruction stream, not memory, sets the time. In the end-to-end run at normal
  clocks (docs/results/raw/2026-12-02-h200/ncu/mix.csv.gz) the same kernel: DRAM 48%
  of its roof, L2 61%, SM 72%.
- ``distribution_elementwise_grid_stride_kernel`` (``torch.randn``: Philox, then
  Box-Muller; the end-to-end run): 7.2 FLOP/byte, 27% of the DRAM roof; SM 74%, ALU
  pipe 55% (Philox's integer rounds), L2 38%, DRAM 27%. Its
  integer work is invisible to the FLOP counters. Its sibling instantiation (46.8
  FLOP/byte, on the compute side at 14% of the FP32 roof, SM 73%, ALU 56%) is the
  compute-side case.
- Not issue-bound, by the same figures: GELU (SM 63%, L2 91%, DRAM 84% of its roof),
  layer norm (SM 43%), the bf16 GEMM (98% of the tensor roof) and the flash
  attention (59% of it, SM 54%).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .hierarchy import ISSUE_FRACTION
from ...units import fmt_pct

#: A unit at or above this percent of its peak is busy (Nsight Compute's SOLBottleneck rule:
#: under 60% on both compute and memory throughput it reports latency issues).
BUSY_PCT = 60.0
#: Points by which the SM utilisation must exceed every memory figure.
ISSUE_MARGIN_PCT = 10.0
#: Memory side: the nearest memory roof's share (0-1) must be below this.
MEMORY_ROOF_BELOW = 0.60
#: Compute side (CUDA-core work): the FLOP roof's share must be below this
#: (:data:`gpuwhy.model.roofline.hierarchy.ISSUE_FRACTION`, the tensor-core issue threshold).
COMPUTE_ROOF_BELOW = ISSUE_FRACTION

#: The verdict's words.
ISSUE_TEXT = "issue-bound: the SM's instruction issue and pipes are the limit"
#: Utilisation keys that are memory units, and how they are written.
MEMORY_UNITS = {"memory": "ncu's memory throughput", "dram": "DRAM", "l2": "L2", "l1": "L1/TEX"}


def thresholds() -> dict:
    """The rule's thresholds, for ``--json``."""
    return {"busy_pct": BUSY_PCT, "margin_pct": ISSUE_MARGIN_PCT, "memory_roof_below_pct": 100 * MEMORY_ROOF_BELOW,
            "compute_roof_below_pct": 100 * COMPUTE_ROOF_BELOW}


@dataclass(frozen=True)
class IssueDiagnosis:
    """Why a kernel is issue-bound.

    Attributes:
        side: the side the FLOP roofline put it on (``memory`` or ``compute``).
        roof: the roof that side was judged against (``DRAM``, ``L2``, ``L1``, or a
            precision such as ``fp32``).
        roof_fraction: the share of that roof reached (0-1).
        sm_pct: the SM utilisation used (percent): the larger of ``sm_throughput_pct``
            and ``pipe_pct``.
        sm_throughput_pct: ncu's SM throughput (percent), or None.
        issue_pct: the share of cycles an instruction was issued (percent), or None.
        busiest_pipe, pipe_pct: the busiest arithmetic pipe and its utilisation, or None.
        memory_pct: the largest memory figure (percent); ``memory_unit`` which one.
        reason: one line with the numbers.
    """

    side: str
    roof: str
    roof_fraction: float
    sm_pct: float
    sm_throughput_pct: float | None
    issue_pct: float | None
    busiest_pipe: str | None
    pipe_pct: float | None
    memory_pct: float
    memory_unit: str
    reason: str

    @property
    def text(self) -> str:
        return ISSUE_TEXT

    def to_dict(self) -> dict:
        return {"variant": "sm", "verdict": ISSUE_TEXT, "side": self.side, "roof": self.roof,
                "roof_pct": 100 * self.roof_fraction, "sm_pct": self.sm_pct,
                "sm_throughput_pct": self.sm_throughput_pct, "issue_pct": self.issue_pct,
                "busiest_pipe": self.busiest_pipe, "pipe_pct": self.pipe_pct, "memory_pct": self.memory_pct,
                "memory_unit": self.memory_unit, "reason": self.reason, "thresholds": thresholds()}


def sm_utilisation(utilisation_pct: Mapping[str, float]) -> float | None:
    """The SM's utilisation in percent: the larger of ``sm`` (ncu's SM throughput) and ``pipe``
    (the busiest arithmetic pipe), or None when neither is known."""
    vals = [utilisation_pct[k] for k in ("sm", "pipe") if utilisation_pct.get(k) is not None]
    return max(vals) if vals else None


def _busiest_memory(utilisation_pct: Mapping[str, float], level_fractions: Mapping[str, float]) -> tuple[float, str] | None:
    figs = [(utilisation_pct[k], MEMORY_UNITS[k]) for k in MEMORY_UNITS if utilisation_pct.get(k) is not None]
    figs += [(100 * f, f"the {lv} roof") for lv, f in level_fractions.items() if f is not None]
    return max(figs, key=lambda x: x[0]) if figs else None


def issue_diagnosis(
    side: str,
    roof_fraction: float,
    utilisation_pct: Mapping[str, float],
    *,
    busiest_pipe: str | None = None,
    roof: str = "DRAM",
    level_fractions: Mapping[str, float] | None = None,
    tensor: bool = False,
    flops_counted: bool = True,
) -> IssueDiagnosis | None:
    """The issue-bound diagnosis of a kernel, or None when the rule (module docstring) does not hold.

    Args:
        side: ``memory`` or ``compute``: where the FLOP roofline (or the utilisation
            fallback) puts the kernel.
        roof_fraction: the share of that side's roof reached, 0-1 (memory: the nearest
            memory level's; compute: the FLOP roof's).
        utilisation_pct: the profiler's utilisations in percent of peak: ``sm`` (ncu's
            SM throughput), ``pipe`` (busiest arithmetic pipe), ``issue`` (issue slots
            busy), ``memory``, ``dram``, ``l2``, ``l1``; any may be missing.
        busiest_pipe: the name of the pipe behind ``pipe`` (``alu``, ``xu``, ...).
        roof: the name of the roof ``roof_fraction`` refers to (for the text).
        level_fractions: the share (0-1) of each memory level's roof the bytes reach,
            where the roof is known (``{"DRAM": 0.38, "L1": 0.08}``).
        tensor: the work runs on tensor cores (compute side: never this variant).
        flops_counted: the side was decided from counted FLOPs (False: from utilisations);
            only then does the reason say what the FLOP counters miss.

    Raises:
        ValueError: an unknown side or a negative share.
    """
    if side not in ("memory", "compute"):
        raise ValueError(f"side {side!r} must be memory or compute")
    if not roof_fraction >= 0:
        raise ValueError(f"roof_fraction={roof_fraction!r} must be >= 0")
    fractions = dict(level_fractions or {})
    if side == "memory":
        if roof_fraction >= MEMORY_ROOF_BELOW:
            return None
        fractions.setdefault(roof, roof_fraction)
    elif tensor or roof_fraction >= COMPUTE_ROOF_BELOW:
        return None
    sm = sm_utilisation(utilisation_pct)
    if sm is None or sm < BUSY_PCT:
        return None
    mem = _busiest_memory(utilisation_pct, fractions)
    if mem is None or sm - mem[0] < ISSUE_MARGIN_PCT:
        return None
    sm_tp, pipe, issue = (utilisation_pct.get(k) for k in ("sm", "pipe", "issue"))
    busy = [f"ncu's SM throughput is {fmt_pct(sm_tp, 0, compact=False)}" if sm_tp is not None else f"the {busiest_pipe or 'busiest'} pipe is at {fmt_pct(pipe, 0, compact=False)}"]
    if issue is not None:
        busy.append(f"an instruction issued on {fmt_pct(issue, 0, compact=False)} of cycles")
    if sm_tp is not None and pipe is not None:
        busy.append(f"busiest pipe {busiest_pipe or '?'} at {fmt_pct(pipe, 0, compact=False)}")
    unit = mem[1]
    if side == "memory":
        head = (f"{', '.join(busy)}, while the busiest memory figure ({unit}) is {fmt_pct(mem[0], 0, compact=False)} and the bytes reach "
                f"{fmt_pct(100 * roof_fraction, 0, compact=False)} of the {roof} roof")
    else:
        head = (f"{', '.join(busy)} and the busiest memory figure ({unit}) is {fmt_pct(mem[0], 0, compact=False)}, but the work reaches "
                f"only {fmt_pct(100 * roof_fraction, 0, compact=False)} of the {roof} roof")
    tail = []
    if pipe is not None and sm - pipe >= ISSUE_MARGIN_PCT:
        tail.append("no arithmetic pipe is near its peak: issuing the whole instruction mix (integer, special-function, "
                    "address and load/store instructions) sets the time, not one unit")
    if flops_counted:
        tail.append("the FLOP counters see only floating-point adds, multiplies and FMAs: integer (ALU), special-function "
                    "(XU: exp, rsqrt) and address instructions are not in the FLOP count")
    reason = "; ".join([head, *tail])
    return IssueDiagnosis(side, roof, float(roof_fraction), float(sm), sm_tp, issue, busiest_pipe, pipe,
                          float(mem[0]), unit, reason)


@dataclass(frozen=True)
class Refined:
    """A regime after the SM check: ``regime``, the :class:`IssueDiagnosis` when it became
    ``issue`` this way, and ``notes`` (e.g. why a latency verdict was not kept)."""

    regime: str
    issue: IssueDiagnosis | None = None
    notes: tuple[str, ...] = ()


def refine_regime(
    regime: str,
    roof_fraction: float | None,
    utilisation_pct: Mapping[str, float],
    *,
    busiest_pipe: str | None = None,
    roof: str = "DRAM",
    level_fractions: Mapping[str, float] | None = None,
    tensor: bool = False,
    flops_counted: bool = True,
) -> Refined:
    """``regime`` (``compute``, ``memory``, ``latency``, ``issue``, ``overhead``) checked against the SM.

    ``memory`` or ``latency`` (memory side) and ``compute`` (compute side) become ``issue``
    when :func:`issue_diagnosis` holds; ``latency`` is kept only when the SM utilisation is
    known and under :data:`BUSY_PCT` and no memory unit's utilisation is at or above it
    (latency-bound means no unit is busy: ncu's "latency issues"), else it becomes
    ``memory`` with a note. ``overhead``
    and ``issue`` are returned as they are. ``roof_fraction`` None: no check (returned as is).
    The other arguments are :func:`issue_diagnosis`'s.
    """
    if regime in ("overhead", "issue") or roof_fraction is None:
        return Refined(regime)
    side = "compute" if regime == "compute" else "memory"
    diag = issue_diagnosis(side, roof_fraction, utilisation_pct, busiest_pipe=busiest_pipe, roof=roof,
                           level_fractions=level_fractions, tensor=tensor, flops_counted=flops_counted)
    if diag is not None:
        return Refined("issue", diag)
    if regime != "latency":
        return Refined(regime)
    sm = sm_utilisation(utilisation_pct)
    if sm is None:
        return Refined("memory", None, (
            f"at {fmt_pct(100 * roof_fraction, 0, compact=False)} of the {roof} roof it is latency-bound (too few bytes in flight) if the SM "
            "is idle, issue-bound if the SM is busy; without an SM utilisation the two cannot be told apart",))
    if sm >= BUSY_PCT:
        return Refined("memory", None, (
            f"at {fmt_pct(100 * roof_fraction, 0, compact=False)} of the {roof} roof but the SM is busy ({fmt_pct(sm, 0, compact=False)}, not clearly busier "
            "than memory): not latency-bound (a busy SM is not waiting on loads)",))
    busy = _busiest_memory(utilisation_pct, {})
    if busy is not None and busy[0] >= BUSY_PCT:
        return Refined("memory", None, (
            f"at {fmt_pct(100 * roof_fraction, 0, compact=False)} of the {roof} roof but {busy[1]} is {fmt_pct(busy[0], 0, compact=False)} busy: bound by that "
            "unit, not by latency",))
    return Refined("latency")


__all__ = ["BUSY_PCT", "COMPUTE_ROOF_BELOW", "ISSUE_MARGIN_PCT", "ISSUE_TEXT", "IssueDiagnosis", "MEMORY_ROOF_BELOW",
           "Refined", "issue_diagnosis", "refine_regime", "sm_utilisation", "thresholds"]
