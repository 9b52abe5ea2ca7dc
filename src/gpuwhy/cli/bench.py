"""`gpuwhy bench`: measured memory bandwidth, launch overhead, compute ceilings, the roofline,
the memory hierarchy and the host link on this GPU, and NCCL's all-reduce across its GPUs.

The options are parsed here; which mode runs, what it refuses, how it runs and how its
result is printed are the registry's (:mod:`gpuwhy.bench.modes`).
"""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .completion import complete_dtype
from typer.core import TyperCommand

from .common import CsvOpt, DeviceOpt, GpuOpt, JsonOpt, SpecsOpt
from .progress import progress_bar


class _OldCsvSpelling(TyperCommand):
    """`bench --csv FILE` (the spelling before `--csv` meant CSV on stdout on every command) still
    writes FILE: bench takes no argument, so a word after ``--csv`` that is not an option is its
    old FILE; it becomes ``--csv-file FILE`` with a note saying so."""

    def parse_args(self, ctx, args):
        out, i, old = [], 0, None
        while i < len(args):
            a = args[i]
            if a == "--":
                out += args[i:]
                break
            if a.startswith("--csv="):
                old = a.split("=", 1)[1]
                out += ["--csv-file", old]
            elif a == "--csv" and i + 1 < len(args) and not args[i + 1].startswith("-"):
                old = args[i + 1]
                out += ["--csv-file", old]
                i += 1
            else:
                out.append(a)
            i += 1
        if old is not None and not ctx.resilient_parsing:
            from ..render.console import note_later as note

            note(f"`bench --csv FILE` is now `bench --csv-file FILE` ({old} is written as before); "
                 "`--csv` alone prints CSV on stdout, as on every command")
        return super().parse_args(ctx, out)


@app.command("bench", cls=_OldCsvSpelling)
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
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Element type: fp32 (default) or fp64; with --allreduce bf16 (default) or fp32.", autocompletion=complete_dtype),
    device: DeviceOpt = None,
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    csv: Optional[str] = typer.Option(None, "--csv-file", metavar="FILE", help="Also write every bandwidth row to FILE (CSV; `--csv FILE` before)."),
    csv_out: CsvOpt = False,
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
    textfile: Optional[str] = typer.Option(None, "--textfile", metavar="FILE.prom", help="With --quick/--sweep: write node_exporter textfile metrics (atomically; dcgm-exporter's labels): each figure and, with --baseline, each comparison's state."),
    json_out: JsonOpt = False,
) -> None:
    """Measure DRAM bandwidth and launch overhead (kernels checked against numpy first)."""
    from ..api.bench import BenchHooks, BenchJob, BenchOutcome, bench, several_failure
    from ..render.bench_view import render_bench_outcome
    from ..render.output import FileOut, Format, save_baseline as save, show

    fmt = Format(json=json_out, csv=csv_out)
    fmt.check()
    options = dict(
        sweep=sweep, quick=quick, compute=compute, roofline=roofline, precision=precision, kernel=kernel, dtype=dtype,
        device=device, gpu=gpu, specs=specs, csv=csv, compile_only=compile_only, arch=arch, no_save=no_save,
        latency=latency, link=link, l1_bypass=l1_bypass, json_out=json_out, caches=caches, allreduce=allreduce,
        max_size=max_size, p2p=p2p,
    )
    hooks = BenchHooks(bar=progress_bar, writable=_writable, write_csv=_write_csv, one_gpu=run_one_gpu)
    outcome = bench(BenchJob(options, baseline, save_baseline, overwrite, policy, textfile), hooks)
    files = ()
    if textfile:
        from ..render import textfile as tf

        metrics = tf.bench_outcome_metrics if isinstance(outcome, BenchOutcome) else tf.multi_metrics
        files = (FileOut(lambda: tf.write_textfile(textfile, metrics(outcome)), f"metrics written to {textfile}"),)
    if not isinstance(outcome, BenchOutcome):  # several GPUs: one line each, then the first GPU's error
        from ..render.multi_view import render_multi

        show("bench-multi", outcome, fmt, render_multi, files=files)
        error = several_failure(outcome)
        if error is not None:
            raise error
        return
    show(outcome.kind, outcome, fmt, render_bench_outcome, files=files)
    problem = outcome.failure()
    if problem is not None:
        raise problem
    from ..render.check_view import warn_warned

    warn_warned(outcome.regressed("warn"), "figure", "regressed beyond the tolerance (a warning by the policy)")
    regression = outcome.regression(save_baseline)
    if save_baseline and regression is None:
        save(outcome.kind, outcome.baseline_body(with_comparison=json_out), save_baseline, overwrite)
    if regression is not None:
        raise regression


def run_one_gpu(mode: str, fields: dict, device: str) -> dict:
    """One GPU's run of bench ``mode`` (a worker of :func:`gpuwhy.bench.multi.run_several`, run in a
    worker process; :func:`gpuwhy.api.bench.one_gpu`): returns its ``--json`` document (header
    included: what ``bench -i DEVICE --json`` prints) and the error its result carries for after
    printing (exit code and message; 0 and '' when none)."""
    from ..api.bench import one_gpu
    from ..render.jsonout import document

    kind, body, problem = one_gpu(mode, fields, device)
    return {"document": document(kind, body), "exit_code": problem.exit_code if problem else 0, "error": str(problem) if problem else ""}


def _writable(path: str, option: str) -> None:
    """No existing file is replaced (:func:`gpuwhy.render.outputs.writable_output`)."""
    from ..render.outputs import writable_output

    writable_output(path, option, marker=None)


def _write_csv(path: str, result) -> None:
    """Every bandwidth row to ``path`` through the one CSV writer (:mod:`gpuwhy.render.csv_out`)."""
    from ..render.csv_out import write_csv_file

    write_csv_file("bench.rows", result, path)
