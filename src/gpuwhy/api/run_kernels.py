"""`gpuwhy run --kernels`: the regimes of a program's top kernels, measured by Nsight Compute.

Two uses:

- on top of a trace run (:func:`measure_top_kernels`): the program runs again
  under ncu with a filter that profiles a few launches of each of the trace's
  top kernels in the window (:mod:`gpuwhy.importers.ncu.kernel_pass` plans it
  and matches ncu's launches back to the trace's kernels);
- alone (:func:`profile_kernels`), for a program that is not Python or where
  PyTorch is missing: the first ``launch_count`` launches under ncu, with no
  timeline (ncu serialises kernels, so no idle time is seen).

Either way the launches are judged by :func:`gpuwhy.importers.ncu.analyse.analyze`
against this GPU's measured roofline when a `gpuwhy bench` profile of it exists
(DRAM, L2, L1 and compute roofs), else against its spec sheet, and the result
says which (:func:`judge`).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Sequence

from ..errors import UsageError
from ..importers.ncu.analyse import NcuKernel, NcuReport, analyze
from ..importers.ncu.kernel_pass import PER_KERNEL, LaunchMatch, PassPlan, match_launches, plan_pass
from ..importers.ncu.read import NcuTable
from ..importers.ncu.runner import NcuRun, profile_command
from ..importers.timeline.launches import KernelLaunch, dim3


@dataclass(frozen=True)
class KernelPass:
    """What the ncu pass measured: ``kernels`` by the trace's full kernel name (or ncu's, for a pass
    with no trace); ``roofline`` says what they were judged against; ``plan``/``match`` are None for a
    pass with no trace; ``run`` the ncu files and command lines."""

    kernels: dict[str, NcuKernel]
    report: NcuReport
    run: NcuRun
    roofline: str
    plan: PassPlan | None = None
    match: LaunchMatch | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = {
            "roofline": self.roofline,
            "ncu": self.run.to_dict(),
            "launches_profiled": sum(k.launches for k in self.kernels.values()),
            "notes": list(self.notes),
        }
        if self.plan is not None:
            d["plan"] = {"functions": list(self.plan.functions), "kernel_name": self.plan.kernel_name,
                         "launches_skipped": self.plan.skip, "launches": self.plan.count,
                         "not_covered": list(self.plan.not_covered)}
        if self.match is not None:
            d["match"] = {"launches_by_order": self.match.by_order, "launches_by_shape": self.match.by_shape,
                          "launches_unmatched": self.match.unmatched}
        return d


def judge(table: NcuTable, spec_dirs: Sequence[str] = ()) -> tuple[NcuReport, str]:
    """Judge ``table``'s launches against the measured roofline of this GPU when a bench profile of
    it exists, else against its sheet: ``(report, what the roofline was)``.

    Raises:
        UsageError: see :func:`~gpuwhy.importers.ncu.analyse.analyze`.
    """
    report = analyze(table, top=10**6, spec_dirs=spec_dirs, measured=True, measured_peaks=True, measured_optional=True)
    dev = report.devices[0] if report.devices else None
    src = dev.ceilings.get("source", "") if dev is not None else ""
    if src.startswith("measured"):
        return report, f"the measured roofline ({src})"
    return report, (f"the {dev.sheet if dev else 'GPU'} spec sheet (no `gpuwhy bench --sweep` profile of this GPU: run it "
                    "to judge against the measured roofline)")


def _kernels(report: NcuReport) -> dict[str, NcuKernel]:
    return {k.full_name: k for d in report.devices for k in d.kernels}


def measure_top_kernels(
    argv: Sequence[str],
    launches: Sequence[KernelLaunch],
    targets: Sequence[str],
    window_start_us: float,
    *,
    per_kernel: int = PER_KERNEL,
    export: str | None = None,
    ncu: str | None = None,
    spec_dirs: Sequence[str] = (),
) -> KernelPass | None:
    """Run ``argv`` under ncu over a few launches of each of ``targets`` (the trace's full kernel names)
    launched at or after ``window_start_us``; judge them. None when no target is launched there.

    ``launches`` are the whole trace's kernel launches in launch order (the plan counts those before
    the window, which ncu skips).

    Raises:
        NoDeviceError: no ncu, or no GPU.
        UsageError, MeasurementError: see :func:`~gpuwhy.importers.ncu.runner.profile_command`.
    """
    from ..importers.ncu.rep import read_export

    plan = plan_pass(launches, targets, window_start_us, per_kernel=per_kernel)
    if plan is None:
        return None
    run = profile_command(list(argv), kernel_name=plan.kernel_name, launch_skip=plan.skip, launch_count=plan.count,
                          export=export, ncu=ncu, stream=sys.stderr)
    table, _ = read_export(run.csv_path)
    profiled = [(la.id, la.name, dim3(la.grid), dim3(la.block)) for la in table.launches]
    in_window = [la for la in launches if la.ts_us >= window_start_us]
    match = match_launches(plan, profiled, in_window)
    kept = tuple(dataclasses.replace(la, name=match.names[la.id]) for la in table.launches if la.id in match.names)
    notes = []
    if plan.not_covered:
        notes.append(f"{len(plan.not_covered)} of the top kernels fell outside the {plan.count} launches profiled "
                     "and are not measured")
    if match.unmatched or match.by_shape:
        notes.append(f"ncu's launches placed on the trace's kernels: {match.how} (the program's launches under ncu "
                     "differed from the trace's)")
    if not kept:
        raise UsageError(f"none of the {len(profiled)} launches ncu profiled matched a kernel of the trace "
                         f"({match.how}); is the program deterministic? `gpuwhy ncu -- CMD` profiles it alone")
    report, roofline = judge(dataclasses.replace(table, launches=kept), spec_dirs)
    return KernelPass(_kernels(report), report, run, roofline, plan, match, tuple(notes))


def profile_kernels(argv: Sequence[str], *, launch_count: int, export: str | None = None, ncu: str | None = None,
                    spec_dirs: Sequence[str] = ()) -> KernelPass:
    """Run ``argv`` (any program) under ncu for its first ``launch_count`` kernel launches and judge them.

    Raises:
        NoDeviceError: no ncu, or no GPU.
        UsageError, MeasurementError: see :func:`~gpuwhy.importers.ncu.runner.profile_command`.
    """
    from ..importers.ncu.rep import read_export

    run = profile_command(list(argv), launch_count=launch_count, export=export, ncu=ncu, stream=sys.stderr)
    table, _ = read_export(run.csv_path)
    report, roofline = judge(table, spec_dirs)
    return KernelPass(_kernels(report), report, run, roofline)


__all__ = ["KernelPass", "judge", "measure_top_kernels", "profile_kernels"]
