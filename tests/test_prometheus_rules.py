"""The Prometheus rules and the Grafana dashboard in docs/fleet/: generated from the sheets and the
policy (render/prometheus_rules.py), every expression parsed by a PromQL parser, and evaluated
(tests/promql_eval.py) on numbers: the recording rules' verdict against `classify` on the same
figures, the alerts against gpuwhy's own textfile output."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

pytest.importorskip("promql_parser", reason="promql-parser (a PromQL parser) is not installed")

from promql_eval import Evaluator, metric_names  # noqa: E402

from gpuwhy.model.roofline.classify import Ceilings, Workload, classify  # noqa: E402
from gpuwhy.render.prometheus_rules import PIPES, REGIMES, rules_yaml  # noqa: E402
from gpuwhy.render.textfile import METRICS  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "fleet"
RECORDING = DOCS / "gpuwhy-recording-rules.yaml"
ALERTS = DOCS / "gpuwhy-alert-rules.yaml"
DASHBOARD = DOCS / "gpuwhy-grafana-dashboard.json"
DCGM_FIELDS = {*PIPES.values(), "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE"}


def _rules(path: Path) -> list[dict]:
    return [r for g in yaml.safe_load(path.read_text())["groups"] for r in g["rules"]]


@pytest.mark.parametrize("kind, path", [("recording", RECORDING), ("alerts", ALERTS)])
def test_the_committed_rules_are_the_generators(kind, path):
    assert path.read_text() == rules_yaml(kind), f"regenerate: python -m gpuwhy.render.prometheus_rules {kind} > {path}"


def test_every_rule_parses_and_names_only_metrics_that_exist():
    recorded = {r["record"] for r in _rules(RECORDING)}
    written = {m.name for m in METRICS}
    for rule in _rules(RECORDING) + _rules(ALERTS):
        names = metric_names(rule["expr"])
        constant = rule.get("record", "").startswith("gpuwhy:sheet_") and rule["expr"].startswith("vector(")
        assert (names or constant) and names <= recorded | written | DCGM_FIELDS, (rule.get("record") or rule.get("alert"), names)


def _gpu(uuid: str, job: str, *, tensor=0.0, fp32=0.0, dram=0.0, sm=1.0, model="NVIDIA H200", fp16_pipe=True):
    lab = {"gpu": uuid[-1], "UUID": uuid, "modelName": model, "Hostname": "n1", "hpc_job": job}
    fields = {PIPES["tensor"]: tensor, PIPES["fp64"]: 0.0, PIPES["fp32"]: fp32, "DCGM_FI_PROF_DRAM_ACTIVE": dram,
              "DCGM_FI_PROF_SM_ACTIVE": sm}
    if fp16_pipe:
        fields[PIPES["fp16"]] = 0.0
    return [({**lab, "__name__": k}, v) for k, v in fields.items()]


def _record_all(samples) -> Evaluator:
    ev = Evaluator(samples)
    for rule in _rules(RECORDING):
        ev.record(rule)
    return ev


def _one(ev: Evaluator, name: str, **labels) -> float:
    hits = [v for lab, v in ev.samples if lab["__name__"] == name and all(lab.get(k) == x for k, x in labels.items())]
    assert len(hits) == 1, (name, labels, hits)
    return hits[0]


def _sheet():
    from gpuwhy.specs import library

    return next(s for s in library() if "NVIDIA H200" in s.nvml_names)


# (tensor, fp32, dram, sm): tensor-bound, memory-bound, idle/launch-bound, a three-way tie (compute wins,
# as in classify), memory and overhead tied (memory wins), and an FP32 job (the busiest pipe is fp32)
POINTS = [(0.80, 0.05, 0.30, 0.95), (0.10, 0.02, 0.85, 0.90), (0.05, 0.01, 0.10, 0.20), (0.5, 0.0, 0.5, 0.5),
          (0.1, 0.0, 0.6, 0.4), (0.02, 0.70, 0.35, 0.97)]


@pytest.mark.parametrize("tensor, fp32, dram, sm", POINTS)
def test_recording_rules_give_classify_s_verdict(tensor, fp32, dram, sm):
    ev = _record_all(_gpu("GPU-a1", "42", tensor=tensor, fp32=fp32, dram=dram, sm=sm))
    sheet = _sheet()
    busiest = "tensor" if tensor >= fp32 else "fp32"
    prec = "fp16" if busiest == "tensor" else "fp32"
    share = max(tensor, fp32)
    peak, bw, t = sheet.peak_flops(prec), sheet.bandwidth_bytes_per_s, 1.0
    # the same window as classify sees it: the busiest pipe's FLOPs at its peak, DRAM bytes at the sheet's
    # bandwidth, and the SM time with no warp as the launch term
    v = classify(Workload(flops=share * peak * t, bytes=dram * bw * t, launches=1),
                 Ceilings(peak_flops=peak, bandwidth=bw, launch_overhead_s=(1 - sm) * t, precision=prec, gpu=sheet.name))
    assert _one(ev, "gpuwhy:dcgm_compute_share:ratio_avg5m") == pytest.approx(v.t_compute_s / t)
    assert _one(ev, "gpuwhy:dcgm_memory_share:ratio_avg5m") == pytest.approx(v.t_memory_s / t)
    assert _one(ev, "gpuwhy:dcgm_overhead_share:ratio_avg5m") == pytest.approx(v.t_overhead_s / t)
    bound = {r: _one(ev, "gpuwhy:dcgm_bound", regime=r) for r in REGIMES}
    assert bound == {r: float(r == v.regime) for r in REGIMES}
    # the job's verdict (one GPU): the same
    assert {r: _one(ev, "gpuwhy:job_slurm_bound", regime=r, hpc_job="42") for r in REGIMES} == bound
    if busiest == "tensor" and tensor > 0 and dram > 0:
        # the place on the tensor roofline: classify's intensity and ridge point, and the side of the ridge
        assert _one(ev, "gpuwhy:sheet_tensor_ridge_point_flops_per_byte", modelName="NVIDIA H200") == pytest.approx(v.ridge_point)
        assert _one(ev, "gpuwhy:dcgm_tensor_arithmetic_intensity_flops_per_byte") == pytest.approx(v.arithmetic_intensity)
        ratio = _one(ev, "gpuwhy:dcgm_tensor_ridge_ratio")
        assert ratio == pytest.approx(v.arithmetic_intensity / v.ridge_point)
        assert (ratio >= 1) == (v.t_compute_s >= v.t_memory_s)


def test_a_job_is_judged_on_its_gpus_averaged_and_a_missing_pipe_drops_out():
    a = dict(tensor=0.70, dram=0.20, sm=0.90)
    b = dict(tensor=0.20, dram=0.60, sm=0.90, fp16_pipe=False)  # this exporter does not send the FP16 pipe
    ev = _record_all(_gpu("GPU-a1", "7", **a) + _gpu("GPU-a2", "7", **b) + _gpu("GPU-a3", "", dram=0.9))
    c, m, o = (a["tensor"] + b["tensor"]) / 2, (a["dram"] + b["dram"]) / 2, 1 - (a["sm"] + b["sm"]) / 2
    assert _one(ev, "gpuwhy:job_slurm_compute_share:ratio_avg5m", hpc_job="7") == pytest.approx(c)
    assert _one(ev, "gpuwhy:job_slurm_memory_share:ratio_avg5m", hpc_job="7") == pytest.approx(m)
    v = classify(Workload(flops=c * 1e15, bytes=m * 1e12, launches=1), Ceilings(1e15, 1e12, o, "fp16", "x"))
    assert _one(ev, "gpuwhy:job_slurm_bound", hpc_job="7", regime=v.regime) == 1.0 and v.regime == "compute"
    assert _one(ev, "gpuwhy:dcgm_bound", UUID="GPU-a2", regime="memory") == 1.0
    jobs = {lab.get("hpc_job") for lab, _ in ev.samples if lab["__name__"] == "gpuwhy:job_slurm_bound"}
    assert jobs == {"7"}  # a GPU without a job is no job


def test_a_model_without_a_sheet_gets_its_verdict_but_no_roofline_place():
    ev = _record_all(_gpu("GPU-x1", "9", tensor=0.6, dram=0.3, sm=0.9, model="NVIDIA Future GPU"))
    assert _one(ev, "gpuwhy:dcgm_bound", regime="compute") == 1.0
    assert not [s for s in ev.samples if s[0]["__name__"] == "gpuwhy:dcgm_tensor_ridge_ratio"]


# ----------------------------------------------------------------------------- alerts


def _alert(name: str) -> str:
    return next(r["expr"] for r in _rules(ALERTS) if r["alert"] == name)


def _textfile_samples(cli, tmp_path, observations) -> list:
    from prometheus_client.parser import text_string_to_metric_families

    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps({"kind": "check", "host": "n1", "date": "2026-12-01T10:00:00+00:00",
                               "observations": [o.to_dict() for o in observations]}))
    prom = tmp_path / "g.prom"
    cli("check", "--recorded", str(rec), "--textfile", str(prom))
    return [({**s.labels, "__name__": s.name}, s.value) for f in text_string_to_metric_families(prom.read_text())
            for s in f.samples]


def test_the_failing_check_alert_fires_on_gpuwhy_s_own_output(cli, tmp_path):
    pytest.importorskip("prometheus_client")
    from test_check import H200

    obs = [replace(H200, uuid="GPU-1", nvml_index=0), replace(H200, uuid="GPU-2", nvml_index=1, other_processes=3)]
    ev = Evaluator(_textfile_samples(cli, tmp_path, obs))
    fired = ev.eval(_alert("GpuwhyCheckFailed"))
    assert [(lab["UUID"], lab["check"]) for lab, _ in fired] == [("GPU-2", "other_processes")]
    assert ev.eval(_alert("GpuwhyGpuNotMeasured")) == []
    stale = Evaluator(ev.samples, now=1796119200.0 + 27 * 3600).eval(_alert("GpuwhyCheckStale"))
    assert len(stale) == 1 and Evaluator(ev.samples, now=1796119200.0 + 3600).eval(_alert("GpuwhyCheckStale")) == []


@pytest.mark.parametrize("n", [3, 6])
def test_the_fleet_median_alert_calls_what_the_policy_tolerance_calls(cli, tmp_path, n):
    pytest.importorskip("prometheus_client")
    from gpuwhy.check.fleet import MIN_GPUS
    from gpuwhy.check.policy import DEFAULT_TOLERANCES
    from test_check import H200

    bw = [4450.0, 4460.0, 4440.0, 4300.0, 4000.0, 4455.0][:n]
    obs = [replace(H200, uuid=f"GPU-{i}", nvml_index=i, dram_bandwidth_gbs=b) for i, b in enumerate(bw)]
    fired = Evaluator(_textfile_samples(cli, tmp_path, obs)).eval(_alert("GpuwhyDramBandwidthBelowFleetMedian"))
    med = statistics.median(bw)
    want = {f"GPU-{i}" for i, b in enumerate(bw) if b < (1 - DEFAULT_TOLERANCES["dram_bandwidth"]) * med} if n >= MIN_GPUS else set()
    assert {lab["UUID"] for lab, _ in fired} == want
    assert want == ({"GPU-4"} if n == 6 else set())  # 4000 is 10% below; 4300 is 3.3% below: noise, not called


# ----------------------------------------------------------------------------- the dashboard


def test_the_dashboard_loads_and_every_panel_queries_what_exists():
    dash = json.loads(DASHBOARD.read_text())
    recorded = {r["record"] for r in _rules(RECORDING)}
    written = {m.name for m in METRICS}
    panels = [p for p in dash["panels"] if p.get("type") != "row"]
    assert len(panels) >= 6
    used = set()
    for p in panels:
        assert p.get("title") and p.get("targets"), p.get("title")
        for t in p["targets"]:
            expr = t["expr"].replace("$__rate_interval", "5m")
            names = metric_names(expr)
            assert names and names <= written | recorded | DCGM_FIELDS, (p["title"], names)
            used |= names
    assert {"gpuwhy_check_state", "gpuwhy_dram_bandwidth_bytes_per_second", "gpuwhy:dcgm_bound"} <= used
    for var in dash["templating"]["list"]:
        if var.get("type") == "query":
            q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            inner = q[q.index("(") + 1: q.rindex(")")].split(",")[0]
            assert metric_names(inner) <= written | recorded | DCGM_FIELDS


# ----------------------------------------------------------------------------- the recipes


def test_the_slurm_and_kubernetes_recipes_use_options_that_exist(cli):
    import re
    import subprocess

    code, help_text, _ = cli("check", "--help")
    assert code == 0
    script = (DOCS / "slurm" / "gpuwhy-health.sh").read_text()
    assert subprocess.run(["bash", "-n", str(DOCS / "slurm" / "gpuwhy-health.sh")]).returncode == 0
    (cron,) = yaml.safe_load_all((DOCS / "kubernetes" / "gpuwhy-check-cronjob.yaml").read_text())
    args = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", script)) | {a for a in args if a.startswith("--")}
    assert {"--level", "--drain-reason", "--textfile"} <= flags
    for flag in flags:
        assert flag in help_text, flag
    docker = (DOCS / "Dockerfile").read_text()
    assert "pip install --no-index --find-links /wheels \"gpuwhy[${GPU_EXTRA}]\"" in docker  # no index, no pip at start
