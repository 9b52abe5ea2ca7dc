"""Prometheus rules for a fleet that runs dcgm-exporter and gpuwhy's textfile metrics
(docs/fleet/gpuwhy-recording-rules.yaml and docs/fleet/gpuwhy-alert-rules.yaml are this module's output).

**Recording rules** turn DCGM's profiling fields into the roofline's verdict per GPU and per job,
the three terms of :func:`gpuwhy.model.roofline.classify.classify` read as shares of the window
(:mod:`gpuwhy.model.roofline.utilisation`: a pipe busy a fraction ``p`` of the cycles spent
``p x t`` of the window at its peak):

- compute: the busiest arithmetic pipe, ``DCGM_FI_PROF_PIPE_{TENSOR,FP64,FP32,FP16}_ACTIVE``;
- memory: ``DCGM_FI_PROF_DRAM_ACTIVE``;
- overhead: ``1 - DCGM_FI_PROF_SM_ACTIVE``, the SM time with no warp resident (the GPU idle
  between kernels, or kernels too small to fill it: launch and host time, as ``classify``'s
  launch term is);

the regime is the largest (ties: compute, then memory, then overhead, as ``classify`` orders them),
written as a state set ``gpuwhy:dcgm_bound{regime=...}``. Against the tensor pipe's roofline of
the GPU's spec sheet (one constant series per NVML name, generated from the sheets: the dense fp16
tensor peak, the DRAM bandwidth and their ridge point) the rules also place the GPU: achieved
FLOP/s ``= TENSOR_ACTIVE x peak``, bytes/s ``= DRAM_ACTIVE x bandwidth``, their arithmetic
intensity, and ``gpuwhy:dcgm_tensor_ridge_ratio`` (intensity / ridge point; >= 1 is the compute
side of the ridge, the same verdict as a tensor share >= the DRAM share). Field meanings:
NVIDIA DCGM's profiling metrics, https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html#profiling-metrics
(``PIPE_TENSOR_ACTIVE`` counts the HMMA pipe: an fp8 job on Hopper reaches twice the fp16 peak,
so its FLOP/s read half).

**Alert rules**: a failing check (critical) or a warning, a GPU that could not be measured, a check
that stopped reporting, and figures that regressed against the fleet's median of the same GPU
model by more than the policy's baseline tolerance (:data:`gpuwhy.check.policy.DEFAULT_TOLERANCES`),
once the model has :data:`gpuwhy.check.fleet.MIN_GPUS` GPUs reporting (as `gpuwhy fleet summarize`
calls outliers).

Run ``python -m gpuwhy.render.prometheus_rules recording|alerts [--specs DIR ...]`` to write them
for your own sheets.
"""

from __future__ import annotations

import sys
from typing import Iterable

#: The DCGM profiling fields of the arithmetic pipes (the busiest is the compute term), by pipe.
PIPES = {"tensor": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "fp64": "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
         "fp32": "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "fp16": "DCGM_FI_PROF_PIPE_FP16_ACTIVE"}
#: The sheet precision of the tensor pipe's roofline: DCGM's tensor pipe is the HMMA (fp16/bf16) pipe.
TENSOR_PRECISION = "fp16"
#: The window the shares are averaged over.
WINDOW = "5m"
#: The jobs a verdict is given for: the labels dcgm-exporter adds to a GPU's series (Slurm's job id
#: with its HPC job mapping, the pod under Kubernetes).
JOB_KEYS = {"slurm": ("hpc_job",), "kubernetes": ("namespace", "pod")}
#: The regimes, in classify's order (a tie goes to the first).
REGIMES = ("compute", "memory", "overhead")
#: How long a check may stay silent before its node is called stale (a daily check and 2 h of slack).
STALE_S = 26 * 3600


def _term_record(scope: str, term: str) -> str:
    return f"gpuwhy:{scope}_{term}_share:ratio_avg{WINDOW}"


def _bound_rules(scope: str) -> list[dict]:
    """The state set of the regime from the three shares of ``scope`` (``dcgm``: per GPU; ``job_*``)."""
    c, m, o = (_term_record(scope, t) for t in REGIMES)
    exprs = {"compute": f"({c} >= bool {m}) * ({c} >= bool {o})",
             "memory": f"({m} > bool {c}) * ({m} >= bool {o})",
             "overhead": f"({o} > bool {c}) * ({o} > bool {m})"}
    return [{"record": f"gpuwhy:{scope}_bound", "expr": exprs[r], "labels": {"regime": r}} for r in REGIMES]


def _sheet_rules(sheets) -> list[dict]:
    """One constant series per NVML name of each sheet with a tensor peak: the tensor pipe's peak, the
    DRAM bandwidth and the ridge point between them (what :meth:`gpuwhy.specs.Sheet.ridge_point` gives)."""
    rules = []
    for sheet in sheets:
        if TENSOR_PRECISION not in sheet.peak_tflops:
            continue
        peak, bw = sheet.peak_flops(TENSOR_PRECISION), sheet.bandwidth_bytes_per_s
        for name in sheet.nvml_names:
            ridge = sheet.ridge_point(TENSOR_PRECISION)
            for record, value in (("gpuwhy:sheet_tensor_flops_per_second", peak),
                                  ("gpuwhy:sheet_dram_bandwidth_bytes_per_second", bw),
                                  ("gpuwhy:sheet_tensor_ridge_point_flops_per_byte", ridge)):
                rules.append({"record": record, "expr": f"vector({value!r})", "labels": {"modelName": name, "sheet": sheet.name}})
    return rules


def _gpu_rules() -> list[dict]:
    """Per GPU: the three shares over :data:`WINDOW`, the regime, and the place on the tensor roofline."""
    # each pipe labelled apart before the max (a function over several metric names at once would give
    # series of one label set, which Prometheus refuses); a pipe dcgm-exporter does not export drops out
    pipes = " or ".join(f'label_replace(avg_over_time({f}[{WINDOW}]), "pipe", "{p}", "", "")' for p, f in PIPES.items())
    on = "on (modelName) group_left ()"
    return [
        {"record": _term_record("dcgm", "compute"), "expr": f"max without (pipe) ({pipes})"},
        {"record": _term_record("dcgm", "memory"), "expr": f"avg_over_time(DCGM_FI_PROF_DRAM_ACTIVE[{WINDOW}])"},
        {"record": _term_record("dcgm", "overhead"), "expr": f"1 - avg_over_time(DCGM_FI_PROF_SM_ACTIVE[{WINDOW}])"},
        *_bound_rules("dcgm"),
        {"record": "gpuwhy:dcgm_tensor_flops_per_second",
         "expr": f"avg_over_time({PIPES['tensor']}[{WINDOW}]) * {on} gpuwhy:sheet_tensor_flops_per_second"},
        {"record": "gpuwhy:dcgm_dram_bytes_per_second",
         "expr": f"{_term_record('dcgm', 'memory')} * {on} gpuwhy:sheet_dram_bandwidth_bytes_per_second"},
        {"record": "gpuwhy:dcgm_tensor_arithmetic_intensity_flops_per_byte",
         "expr": "gpuwhy:dcgm_tensor_flops_per_second / gpuwhy:dcgm_dram_bytes_per_second"},
        {"record": "gpuwhy:dcgm_tensor_ridge_ratio",
         "expr": f"gpuwhy:dcgm_tensor_arithmetic_intensity_flops_per_byte / {on} gpuwhy:sheet_tensor_ridge_point_flops_per_byte"},
    ]


def _job_rules(kind: str, keys: tuple[str, ...]) -> list[dict]:
    """Per job: each share averaged over the job's GPUs (those carrying the job's labels), then the regime."""
    scope = f"job_{kind}"
    by = ", ".join(keys)
    having = ", ".join(f'{k}!=""' for k in keys)
    rules = [{"record": _term_record(scope, t), "expr": f"avg by ({by}) ({_term_record('dcgm', t)}{{{having}}})"} for t in REGIMES]
    return rules + _bound_rules(scope)


def recording_rules(sheets: Iterable) -> dict:
    """The recording rules (a Prometheus rule file as plain data) for ``sheets`` (:class:`gpuwhy.specs.Sheet`)."""
    groups = [{"name": "gpuwhy-sheets", "rules": _sheet_rules(sheets)},
              {"name": "gpuwhy-dcgm-verdict", "rules": _gpu_rules()}]
    groups += [{"name": f"gpuwhy-dcgm-verdict-{kind}-jobs", "rules": _job_rules(kind, keys)} for kind, keys in JOB_KEYS.items()]
    return {"groups": groups}


def _regression(alert: str, metric: str, by: tuple[str, ...], worse: str, tolerance: float, what: str) -> dict:
    """An alert on ``metric`` worse than its fleet median (per GPU model, method and ``by``) by more than ``tolerance``."""
    from ..check.fleet import MIN_GPUS

    keys = ", ".join(("modelName", "command", *by))
    factor = 1 - tolerance if worse == "<" else 1 + tolerance
    expr = (f"({metric} {worse} on ({keys}) group_left () ({factor!r} * quantile by ({keys}) (0.5, {metric}))) "
            f"and on ({keys}) (count by ({keys}) ({metric}) >= {MIN_GPUS})")
    return {"alert": alert, "expr": expr, "for": "0m", "labels": {"severity": "warning"},
            "annotations": {"summary": f"{what} of GPU {{{{ $labels.gpu }}}} on {{{{ $labels.Hostname }}}} is "
                                       f"{'below' if worse == '<' else 'above'} its fleet median by more than {tolerance:.0%}",
                            "description": f"{{{{ $labels.modelName }}}} {{{{ $labels.UUID }}}}: {{{{ $value }}}}, against the median "
                                           f"of the fleet's {{{{ $labels.modelName }}}} GPUs measured by gpuwhy {{{{ $labels.command }}}}; "
                                           "`gpuwhy fleet summarize` on the saved --json files names the outliers"}}


def alert_rules() -> dict:
    """The alert rules (a Prometheus rule file as plain data)."""
    from ..check.policy import DEFAULT_TOLERANCES as TOL

    who = "{{ $labels.Hostname }} GPU {{ $labels.gpu }} ({{ $labels.modelName }} {{ $labels.UUID }})"
    rules = [
        {"alert": "GpuwhyCheckFailed", "expr": 'gpuwhy_check_state{state="fail"} == 1', "for": "0m",
         "labels": {"severity": "critical"},
         "annotations": {"summary": f"gpuwhy check {{{{ $labels.check }}}} failed on {who}",
                         "description": "drain the node (`gpuwhy check --drain-reason` gives the reason line) and run "
                                        "`gpuwhy check -i {{ $labels.gpu }}` there for the value and the threshold"}},
        {"alert": "GpuwhyCheckWarned", "expr": 'gpuwhy_check_state{state="warn"} == 1', "for": "0m",
         "labels": {"severity": "warning"},
         "annotations": {"summary": f"gpuwhy check {{{{ $labels.check }}}} warned on {who}"}},
        {"alert": "GpuwhyGpuNotMeasured", "expr": "gpuwhy_unmeasured_gpus > 0", "for": "0m",
         "labels": {"severity": "critical"},
         "annotations": {"summary": "gpuwhy {{ $labels.command }} could not measure {{ $value }} GPU(s) on {{ $labels.Hostname }}"}},
        {"alert": "GpuwhyCheckStale", "expr": f'time() - gpuwhy_last_run_timestamp_seconds{{command="check"}} > {STALE_S}',
         "for": "0m", "labels": {"severity": "warning"},
         "annotations": {"summary": "gpuwhy check (level {{ $labels.level }}) has not run on {{ $labels.Hostname }} "
                                    f"for more than {STALE_S // 3600} h"}},
        _regression("GpuwhyDramBandwidthBelowFleetMedian", "gpuwhy_dram_bandwidth_bytes_per_second", (), "<",
                    TOL["dram_bandwidth"], "DRAM bandwidth"),
        _regression("GpuwhyComputeRateBelowFleetMedian", "gpuwhy_compute_ops_per_second", ("precision",), "<",
                    TOL["flops"], "the {{ $labels.precision }} rate"),
        _regression("GpuwhyLaunchOverheadAboveFleetMedian", "gpuwhy_launch_overhead_seconds", (), ">",
                    TOL["launch_overhead"], "launch overhead"),
    ]
    return {"groups": [{"name": "gpuwhy-alerts", "rules": rules}]}


HEADER = ("# Generated by `python -m gpuwhy.render.prometheus_rules {kind}` from gpuwhy's spec sheets and policy;\n"
          "# do not edit (tests/test_prometheus_rules.py checks this file against the generator). See docs/fleet.md.\n")


def rules_yaml(kind: str, spec_dirs: Iterable[str] = ()) -> str:
    """The rule file ``kind`` (``recording`` or ``alerts``) as YAML text.

    Raises:
        ValueError: another ``kind``.
    """
    import yaml

    if kind == "recording":
        from ..specs import library

        data = recording_rules(s for s in library(tuple(spec_dirs)) if s.vendor == "NVIDIA")
    elif kind == "alerts":
        data = alert_rules()
    else:
        raise ValueError(f"kind must be recording or alerts, got {kind!r}")
    return HEADER.format(kind=kind) + yaml.safe_dump(data, sort_keys=False, width=1000, allow_unicode=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m gpuwhy.render.prometheus_rules recording|alerts [--specs DIR ...]``: the rules on stdout."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("recording", "alerts"):
        sys.stderr.write("usage: python -m gpuwhy.render.prometheus_rules recording|alerts [--specs DIR ...]\n")
        return 2
    dirs = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--specs"]
    sys.stdout.write(rules_yaml(args[0], dirs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
