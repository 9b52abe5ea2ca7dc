"""The roofline model and the three-term time model. Pure functions, no I/O.

Definitions (Williams, Waterman & Patterson, "Roofline: an insightful visual
performance model for multicore architectures", CACM 52(4), 2009):

- arithmetic intensity I = FLOPs / bytes moved through DRAM (FLOP/byte)
- ridge point = peak FLOP/s / DRAM bandwidth (FLOP/byte)
- attainable FLOP/s = min(peak, bandwidth x I)

Time model used by gpuwhy:

- t_compute = FLOPs / peak, t_memory = bytes / bandwidth,
  t_overhead = launches x launch overhead
- predicted time = max(t_compute, t_memory) + t_overhead
- the regime is the term that dominates: ``compute``, ``memory`` or ``overhead``
  (equal terms go to the first in that order: at the ridge point, compute).

Units: FLOP, bytes, seconds, FLOP/s, B/s throughout.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ...units import fmt_pct

#: Launch overhead used when neither ``--launch-overhead`` nor a measured profile
#: gives one: 5 us per launch, a round figure for the cost a short kernel pays per
#: launch on current drivers. NVIDIA's "Getting Started with CUDA Graphs"
#: (https://developer.nvidia.com/blog/cuda-graphs/) shows a few microseconds per
#: launch for short kernels; `gpuwhy bench` measures the real figure per GPU.
DEFAULT_LAUNCH_OVERHEAD_S = 5e-6
DEFAULT_LAUNCH_OVERHEAD_SOURCE = "default 5 us (https://developer.nvidia.com/blog/cuda-graphs/)"

#: A measured time more than this many times the model's on a workload shorter
#: than SHORT_WORKLOAD_S points to overhead the model does not capture.
UNEXPLAINED_FACTOR = 2.0
#: Kernels shorter than this (10 us) are launch-sized: overhead matters (the
#: figure of gpuwhy.verdict.figures.LAUNCH_SIZED_S).
SHORT_KERNEL_S = 10e-6


def launch_sized(mean_s: float) -> bool:
    """True when a kernel's mean duration (s) is below :data:`SHORT_KERNEL_S`; a mean equal to it up to
    float rounding (ten 1 us steps summed and divided: 9.999999999999999e-06) is not below it."""
    return mean_s < SHORT_KERNEL_S and not math.isclose(mean_s, SHORT_KERNEL_S, rel_tol=1e-9, abs_tol=0.0)
#: The "treat it as overhead-bound" rule of :func:`classify` covers workloads
#: measured below this: 100 us, 10 x SHORT_KERNEL_S. With the default 5 us launch
#: overhead the model predicts at least 5 us per launch, so a time more than 2x
#: the model is at least 10 us and a 10 us cutoff could never be met; below
#: 100 us such an excess is the size of a few launches and host gaps. A longer
#: workload far above the model is slow, not overhead-bound: it keeps its
#: memory or compute verdict and its low speed of light says so.
SHORT_WORKLOAD_S = 100e-6
#: The warning of a verdict whose FLOPs were not counted (``Workload.flops`` None).
FLOPS_NOT_COUNTED = ("FLOPs were not counted: judged by bytes and time against the memory roofs only; the compute "
                     "roof was not checked, so an operator doing much arithmetic per byte may be compute-bound "
                     "instead (pass flops=N to judge it)")


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOP per byte. Both arguments must be > 0.

    Raises:
        ValueError: if ``bytes_moved`` <= 0 or ``flops`` < 0.
    """
    if bytes_moved <= 0 or flops < 0:
        raise ValueError("flops must be >= 0 and bytes > 0")
    return flops / bytes_moved


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """Ridge point in FLOP/byte: ``peak_flops`` (FLOP/s) / ``bandwidth`` (B/s).

    Raises:
        ValueError: if either argument is <= 0.
    """
    if peak_flops <= 0 or bandwidth <= 0:
        raise ValueError("peak and bandwidth must be > 0")
    return peak_flops / bandwidth


def attainable_flops(peak_flops: float, bandwidth: float, intensity: float) -> float:
    """Roofline ceiling at ``intensity`` (FLOP/byte): min(peak, bandwidth x intensity), in FLOP/s."""
    return min(peak_flops, bandwidth * intensity)


@dataclass(frozen=True)
class Ceilings:
    """The three numbers a roofline needs, with where they came from.

    Attributes:
        peak_flops: compute ceiling in FLOP/s for ``precision``.
        bandwidth: DRAM bandwidth in B/s.
        launch_overhead_s: seconds per kernel launch.
        precision: e.g. ``"fp32"``, ``"bf16"``.
        gpu: the GPU's name.
        source: where the ceilings came from (``"spec sheet"`` or a profile).
        launch_overhead_source: where the launch overhead came from.
        level: the memory level ``bandwidth`` belongs to (``DRAM``; ``L2`` for a working
            set judged L2-resident, :mod:`gpuwhy.model.roofline.hierarchy`).
    """

    peak_flops: float
    bandwidth: float
    launch_overhead_s: float
    precision: str
    gpu: str
    source: str = "spec sheet"
    launch_overhead_source: str = DEFAULT_LAUNCH_OVERHEAD_SOURCE
    level: str = "DRAM"

    @property
    def ridge_point(self) -> float:
        """FLOP/byte at which the two roofs meet."""
        return ridge_point(self.peak_flops, self.bandwidth)


@dataclass(frozen=True)
class Workload:
    """What a kernel (or a group of launches) does.

    Attributes:
        flops: floating-point (or integer) operations, > 0; None when they were not counted
            (``gpuwhy.measure`` of an operator no FLOP formula covers): then only the memory
            roofs judge it (:func:`classify`).
        bytes: bytes moved through DRAM, reads plus writes, > 0.
        launches: kernel launches the work takes, >= 1.
        time_s: measured wall time of the whole workload in seconds, if known.
        name: a label for tables and plots.
    """

    flops: float | None
    bytes: float
    launches: int = 1
    time_s: float | None = None
    name: str = "workload"


@dataclass(frozen=True)
class Verdict:
    """The roofline verdict for one workload against one set of ceilings.

    Times in seconds, rates in FLOP/s and B/s, intensity and ridge in FLOP/byte,
    percentages 0-100 (may exceed 100 when the inputs are inconsistent; then
    ``warnings`` says so). With the FLOPs not counted (``workload.flops`` None) the
    intensity, attainable and achieved FLOP/s and compute share are None and
    ``t_compute_s`` is 0 (no compute term is known; ``--json`` writes None).
    """

    workload: Workload
    ceilings: Ceilings
    arithmetic_intensity: float | None
    ridge_point: float
    attainable_flops: float | None
    t_compute_s: float
    t_memory_s: float
    t_overhead_s: float
    predicted_time_s: float
    regime: str
    bound_ratio: float
    achieved_flops: float | None = None
    achieved_bandwidth: float | None = None
    sol_pct: float | None = None
    compute_sol_pct: float | None = None
    memory_sol_pct: float | None = None
    unexplained_fraction: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def flops_counted(self) -> bool:
        """False when the workload's FLOPs were not counted (judged against the memory roofs only)."""
        return self.workload.flops is not None

    @property
    def attainable_tflops(self) -> float | None:
        """Attainable TFLOP/s at this intensity (None: the FLOPs were not counted)."""
        return None if self.attainable_flops is None else self.attainable_flops / 1e12

    def to_dict(self) -> dict:
        """Plain data for ``--json`` (SI units; ``*_s`` seconds, ``*_tflops`` 1e12 FLOP/s, ``*_gbs`` 1e9 B/s)."""
        w, c = self.workload, self.ceilings
        return {
            "gpu": c.gpu,
            "precision": c.precision,
            "ceilings_source": c.source,
            "peak_tflops": c.peak_flops / 1e12,
            "memory_bandwidth_gbs": c.bandwidth / 1e9,
            "memory_level": c.level,
            "launch_overhead_s": c.launch_overhead_s,
            "launch_overhead_source": c.launch_overhead_source,
            "workload": asdict(w),
            "arithmetic_intensity": self.arithmetic_intensity,
            "ridge_point": self.ridge_point,
            "regime": self.regime,
            "bound_ratio": self.bound_ratio,
            "attainable_tflops": self.attainable_tflops,
            "predicted_time_s": self.predicted_time_s,
            "t_compute_s": self.t_compute_s if self.flops_counted else None,
            "t_memory_s": self.t_memory_s,
            "t_overhead_s": self.t_overhead_s,
            "measured_time_s": w.time_s,
            "achieved_tflops": None if self.achieved_flops is None else self.achieved_flops / 1e12,
            "achieved_bandwidth_gbs": None if self.achieved_bandwidth is None else self.achieved_bandwidth / 1e9,
            "sol_pct": self.sol_pct,
            "compute_sol_pct": self.compute_sol_pct,
            "memory_sol_pct": self.memory_sol_pct,
            "unexplained_fraction": self.unexplained_fraction,
            "warnings": list(self.warnings),
        }


def classify(workload: Workload, ceilings: Ceilings) -> Verdict:
    """Place ``workload`` on the roofline of ``ceilings`` and name the regime.

    ``bound_ratio`` is how many times the dominant term exceeds the next one
    (e.g. 92 for a decode step that is 92x memory-bound).

    With ``workload.time_s`` set it also reports achieved FLOP/s and B/s, the
    speed-of-light % against the attainable roofline (max(t_compute, t_memory) /
    measured time x 100), and the share of the measured time the model does not
    explain; it warns when the measurement beats the roofline (a wrong FLOP or
    byte count, unit, sparsity convention or sheet; above 100%, not at it) and
    when a workload measured below :data:`SHORT_WORKLOAD_S` takes more than
    :data:`UNEXPLAINED_FACTOR` x the model (launch overhead or host gaps: the
    regime becomes ``overhead``).

    With ``workload.flops`` None (not counted) the compute term is left out: the regime is
    the larger of memory and overhead, the speed of light the memory roof's, and a warning
    says that the FLOPs were not counted (the compute roof was not checked).

    Raises:
        ValueError: if flops (when given), bytes, launches or a ceiling is not positive,
            or time_s is given and not positive.
    """
    counted = workload.flops is not None
    if (counted and workload.flops <= 0) or workload.bytes <= 0 or workload.launches < 1:
        raise ValueError("flops and bytes must be > 0 and launches >= 1")
    if ceilings.peak_flops <= 0 or ceilings.bandwidth <= 0 or ceilings.launch_overhead_s < 0:
        raise ValueError("ceilings must be positive")
    if workload.time_s is not None and not (workload.time_s > 0 and math.isfinite(workload.time_s)):
        raise ValueError("time_s must be > 0")

    ai = arithmetic_intensity(workload.flops, workload.bytes) if counted else None
    rp = ceilings.ridge_point
    t_c = workload.flops / ceilings.peak_flops if counted else 0.0
    t_m = workload.bytes / ceilings.bandwidth
    t_o = workload.launches * ceilings.launch_overhead_s
    predicted = max(t_c, t_m) + t_o
    terms = sorted(((("compute", t_c),) if counted else ()) + (("memory", t_m), ("overhead", t_o)),
                   key=lambda kv: kv[1], reverse=True)
    regime = terms[0][0]
    bound_ratio = terms[0][1] / terms[1][1] if terms[1][1] > 0 else math.inf

    warnings: list[str] = []
    if not counted:
        warnings.append(FLOPS_NOT_COUNTED)
    achieved_flops = achieved_bw = sol = c_sol = m_sol = unexplained = None
    t = workload.time_s
    if t is not None:
        achieved_flops = workload.flops / t if counted else None
        achieved_bw = workload.bytes / t
        roof_time = max(t_c, t_m)
        sol = 100.0 * roof_time / t
        c_sol = 100.0 * achieved_flops / ceilings.peak_flops if counted else None
        m_sol = 100.0 * achieved_bw / ceilings.bandwidth
        unexplained = max(0.0, (t - predicted) / t)
        if sol > 100.0:
            warnings.append(
                f"the measured time is faster than the roofline allows ({fmt_pct(sol, 0)} of speed of light): "
                "check the FLOP and byte counts, their units, the sparsity convention (sheets hold dense peaks) "
                "and that the right GPU sheet is used"
            )
        if t > UNEXPLAINED_FACTOR * predicted and t < SHORT_WORKLOAD_S:
            warnings.append(
                f"the measured time is {t / predicted:.1f}x the model's on a short workload: "
                "launch overhead, host gaps or synchronization dominate; treat it as overhead-bound"
            )
            if regime != "overhead":
                regime = "overhead"
                bound_ratio = t / predicted
    return Verdict(
        workload=workload,
        ceilings=ceilings,
        arithmetic_intensity=ai,
        ridge_point=rp,
        attainable_flops=attainable_flops(ceilings.peak_flops, ceilings.bandwidth, ai) if counted else None,
        t_compute_s=t_c,
        t_memory_s=t_m,
        t_overhead_s=t_o,
        predicted_time_s=predicted,
        regime=regime,
        bound_ratio=bound_ratio,
        achieved_flops=achieved_flops,
        achieved_bandwidth=achieved_bw,
        sol_pct=sol,
        compute_sol_pct=c_sol,
        memory_sol_pct=m_sol,
        unexplained_fraction=unexplained,
        warnings=tuple(warnings),
    )
