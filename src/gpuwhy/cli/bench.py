"""`gpuwhy bench`: measured memory bandwidth, launch overhead, compute ceilings, the roofline,
the memory hierarchy and the host link on this GPU, and NCCL's all-reduce across its GPUs.

The options are parsed here; which mode runs, what it refuses, how it runs and how its
result is printed are the registry's (:mod:`gpuwhy.bench.modes`).
"""

from __future__ import annotations

import importlib
from typing import List, Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt, refuse_unused
from .progress import progress_bar


@app.command("bench")
def bench_cmd(
    sweep: bool = typer.Option(False, "--sweep", help="Bandwidth sweep 1K..256M elements (x2 steps), the compute ceilings and the L2/shared-memory/L1 ceilings; about a minute."),
    compute: bool = typer.Option(False, "--compute", help="Compute ceilings only: FP32/FP64/half2 FMA and every tensor-core precision."),
    roofline: bool = typer.Option(False, "--roofline", help="Mixed-intensity sweep 1/8..1024 FLOP/byte (fp32; fp16/bf16 half pairs where the GPU has them): the measured roofline and its empirical ridge."),
    precision: Optional[List[str]] = typer.Option(None, "--precision", metavar="P", help="With --compute: fp64, fp32, fp16_nontensor, tf32, fp16, bf16, fp8, int8 (repeatable)."),
    quick: bool = typer.Option(False, "--quick", help="A few sizes and the summary (the default); seconds."),
    kernel: Optional[List[str]] = typer.Option(
        None, "--kernel", "-k", metavar="K",
        help="read|write|copy|vecadd (both variants), a case such as vecadd-naive or read-vec16, launch, or all. Repeatable.",
    ),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Element type: fp32 (default) or fp64; with --allreduce bf16 (default) or fp32."),
    device: DeviceOpt = None,
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    csv: Optional[str] = typer.Option(None, "--csv", metavar="FILE", help="Write every bandwidth row to FILE (CSV)."),
    compile_only: bool = typer.Option(False, "--compile-only", help="Compile every bundled kernel and report; needs no GPU with --arch."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XX", help="Target for --compile-only: sm_80, sm_89, sm_90, sm_100, sm_120, ..."),
    no_save: bool = typer.Option(False, "--no-save", help="Do not save a device profile in the cache folder."),
    latency: bool = typer.Option(False, "--latency", help="Memory latency ladder: a pointer chase over 4 KiB .. 4x L2 (L1, L2, far-L2 and DRAM steps) and Little's law."),
    link: bool = typer.Option(False, "--link", help="Host<->device copy bandwidth, pinned and pageable, 4 KiB .. 1 GiB, beside the PCIe/C2C link's rate."),
    l1_bypass: bool = typer.Option(False, "--cg", help="With --latency: chase with ld.global.cg loads (bypass L1)."),
    baseline: Optional[str] = typer.Option(None, "--baseline", metavar="FILE.json", help="With --quick/--sweep: fail on figures that regressed against a saved run of the same GPU model (bench/check --json or a profile)."),
    save_baseline: Optional[str] = typer.Option(None, "--save-baseline", metavar="FILE.json", help="With --quick/--sweep: write this run as a baseline (its --json document)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="With --save-baseline: replace an existing file."),
    policy: Optional[str] = typer.Option(None, "--policy", metavar="FILE.yaml", help="With --baseline: the policy whose baseline tolerances apply (default 5% bandwidth, 5% FLOP/s, 20% launch overhead)."),
    p2p: bool = typer.Option(False, "--p2p", help="GPU-to-GPU bandwidth (copy engine and SM kernel, one way and both ways) and pointer-chase latency for every pair of GPUs (-i, all by default), against each link's rate; one GPU: its own copies."),
    caches: bool = typer.Option(False, "--caches", help="L2 read and read+write, shared-memory and L1 bandwidth alone (part of --sweep); seconds."),
    allreduce: bool = typer.Option(False, "--allreduce", help="NCCL all-reduce over the GPUs -i names (default all) through torch.distributed, one process per GPU: algbw and busbw, 8 B .. --max-size (needs PyTorch)."),
    max_size: Optional[str] = typer.Option(None, "--max-size", metavar="BYTES", help="With --allreduce: the largest message, a power of two (default 1GiB)."),
    json_out: JsonOpt = False,
) -> None:
    """Measure DRAM bandwidth and launch overhead (kernels checked against numpy first)."""
    from ..bench.modes import BenchRequest, RunHooks, choose, failure

    req = BenchRequest(
        sweep=sweep, quick=quick, compute=compute, roofline=roofline, precision=precision, kernel=kernel, dtype=dtype,
        device=device, gpu=gpu, specs=specs, csv=csv, compile_only=compile_only, arch=arch, no_save=no_save,
        latency=latency, link=link, l1_bypass=l1_bypass, json_out=json_out, caches=caches, allreduce=allreduce,
        max_size=max_size, p2p=p2p,
    )
    mode = choose(req)
    several = _several_gpus(mode.name, req)
    if several is not None:
        refuse_unused("with several GPUs (one file per GPU would be needed; use -i N, or `gpuwhy check -i all --baseline`)",
                      csv=csv, baseline=baseline, save_baseline=save_baseline, overwrite=overwrite, policy=policy)
        return _bench_several(mode, req, several, json_out)
    against = _baseline_options(mode.name, baseline, save_baseline, overwrite, policy)
    result = mode.run(req, RunHooks(bar=progress_bar, writable=_writable, write_csv=_write_csv))
    document = mode.document(result)
    judged = _judge(against, document, kernel) if against is not None and against[0] is not None else None
    if json_out:
        from ..render.jsonout import emit

        if judged is not None:
            document = {**document, "baseline": {**judged[1].to_dict(), "status": judged[0].status}}
        emit(mode.json_kind, document)
    else:
        module, function = mode.view.split(":")
        getattr(importlib.import_module(f"gpuwhy.render.{module}"), function)(result)
        if judged is not None:
            from ..render.check_view import render_check

            render_check([judged[0]], against[1], [judged[1]])
    problem = failure(result)
    if problem is not None:
        raise problem
    _finish_baseline(judged, document, mode.json_kind, save_baseline, overwrite)


def _several_gpus(mode: str, req):
    """The devices ``-i`` names when it names several and ``mode`` runs on several GPUs, else None
    (``-i all`` on a one-GPU machine is a one-GPU run, as before)."""
    from ..bench.multi import SEVERAL

    text = (req.device or "").strip()
    if mode not in SEVERAL or not (text.lower() == "all" or "," in text):
        return None
    from ..device.select import resolve

    sel = resolve(text)
    return sel.devices if len(sel.devices) > 1 else None


def run_one_gpu(mode: str, fields: dict, device: str) -> dict:
    """One GPU's run of bench ``mode`` (a worker of :func:`gpuwhy.bench.multi.run_several`, run in a
    worker process): the request ``fields`` with ``-i`` set to ``device``; returns its ``--json``
    document (header included: what ``bench -i DEVICE --json`` prints) and the error its result
    carries for after printing (exit code and message; 0 and '' when none)."""
    from ..bench.modes import BenchRequest, RunHooks, failure
    from ..bench.modes import mode as mode_named
    from ..render.jsonout import document

    m = mode_named(mode)
    result = m.run(BenchRequest(**{**fields, "device": device}), RunHooks())
    doc = document(m.json_kind, m.document(result))
    problem = failure(result)
    return {"document": doc, "exit_code": problem.exit_code if problem else 0, "error": str(problem) if problem else ""}


def _bench_several(mode, req, devices, json_out: bool) -> None:
    """Run ``mode`` on ``devices`` (:func:`gpuwhy.bench.multi.run_several`), print one line per GPU
    (or the ``bench-multi`` document), then raise the first GPU's error, naming every GPU that failed."""
    import dataclasses

    from ..bench.fanout import Outcome, error_of
    from ..bench.multi import run_several
    from ..render.console import note

    fields = {f.name: getattr(req, f.name) for f in dataclasses.fields(req) if f.name not in ("device", "json_out")}
    note(f"bench --{mode.name} on {len(devices)} GPUs")
    result = run_several(mode.name, mode.json_kind, fields, devices, run_one_gpu)
    if json_out:
        from ..render.jsonout import emit

        emit("bench-multi", result)
    else:
        from ..render.multi_view import render_multi

        render_multi(result)
    bad = [(f"GPU {r.index} ({r.uuid})", Outcome(i, None, r.exit_code, r.error)) for i, r in enumerate(result.runs) if r.exit_code]
    if bad:
        raise error_of(bad)


def _baseline_options(mode: str, baseline, save_baseline, overwrite, policy):
    """``(Baseline or None, Policy)`` for --baseline/--save-baseline, checked before the GPU is
    touched; None when neither is given.

    Raises:
        UsageError: the options given to another mode, --overwrite or --policy alone, an
            unreadable baseline or policy, or a --save-baseline path that must not be written.
    """
    from ..errors import UsageError

    if overwrite and not save_baseline:
        raise UsageError("--overwrite applies to --save-baseline")
    if policy and not baseline:
        raise UsageError("--policy applies to --baseline (its tolerances); `gpuwhy check --policy` takes thresholds")
    if not (baseline or save_baseline):
        return None
    if mode not in ("quick", "sweep"):
        raise UsageError("--baseline and --save-baseline apply to bench --quick and --sweep (bandwidth, launch overhead "
                         "and, with --sweep, the compute ceilings); for the other figures use `gpuwhy check --baseline`")
    from ..check.baseline import check_writable, load_baseline
    from ..check.policy import load_policy

    if save_baseline:
        check_writable(save_baseline, overwrite)
    return (load_baseline(baseline) if baseline else None), load_policy(policy)


def _judge(against, document, kernel):
    """The run's ``baseline_*`` checks and the comparison (see :func:`gpuwhy.check.baseline.judge_bench`)."""
    from ..check.baseline import judge_bench
    from ..check.figures import DRAM, LAUNCH
    from ..render.jsonout import to_plain

    expected = () if kernel else (DRAM, LAUNCH)
    return judge_bench(against[0], to_plain(document), against[1], expected)


def _finish_baseline(judged, document, kind: str, save_baseline, overwrite) -> None:
    """Save the run as a baseline unless it regressed; exit 1 (CheckFailed) naming what regressed."""
    from ..errors import CheckFailed

    regressed = [c.name for c in judged[0].checks if c.status == "fail"] if judged is not None else []
    warned = [c.name for c in judged[0].checks if c.status == "warn"] if judged is not None else []
    if warned:
        from ..render.console import warn

        warn(f"{len(warned)} figure(s) regressed beyond the tolerance (a warning by the policy): {', '.join(warned)}")
    if save_baseline and not regressed:
        import socket

        from ..check.baseline import write_baseline
        from ..render.console import note
        from ..render.jsonout import SCHEMA_VERSION, to_plain
        from ..version import __version__

        body = {"gpuwhy": __version__, "schema": SCHEMA_VERSION, "kind": kind, "host": socket.gethostname(), **to_plain(document)}
        note(f"baseline saved to {write_baseline(save_baseline, body, overwrite)}")
    if regressed:
        tail = f"; baseline not saved to {save_baseline!r} (a baseline is a run that passed)" if save_baseline else ""
        raise CheckFailed(f"{len(regressed)} figure(s) regressed against the baseline: {', '.join(regressed)}{tail}")


def _writable(path: str, option: str) -> None:
    """No existing file is replaced (:func:`gpuwhy.render.outputs.writable_output`)."""
    from ..render.outputs import writable_output

    writable_output(path, option, marker=None)


def _write_csv(path: str, result) -> None:
    """Every bandwidth row to ``path`` through the one CSV writer (:mod:`gpuwhy.render.csv_out`)."""
    from ..render.csv_out import write_csv_file

    write_csv_file("bench.rows", result, path)
