"""Rich rendering of `gpuwhy llm`: the decode step, its ceiling, the batch ridge, KV cache, prefill, the sweep,
and the arithmetic of the scaling options."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text

from ..units import fmt_count_words, fmt_g, fmt_num, fmt_rate, fmt_si, fmt_time, fmt_usd
from .console import out

_REGIME_STYLE = {"compute": "bold magenta", "memory": "bold cyan"}


def _kv_table(title: str | None = None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    return t


def _regime(regime: str, ratio: float) -> Text:
    t = Text(f"{regime}-bound", style=_REGIME_STYLE.get(regime, "bold"))
    if math.isfinite(ratio):
        t.append(f" ({ratio:.0f}x the other term)" if ratio >= 10 else f" ({fmt_num(ratio, 2)}x the other term)")
    return t


def render_llm(e) -> None:
    """Print a :class:`~gpuwhy.model.llm.result.LlmEstimate`: the decode step and its
    ceiling, the batch ridge and the largest batch that fits, the KV cache, the
    prefill, the optional batch sweep, then notes, warnings and what the model
    leaves out."""
    con = out()
    g, d = e.gpu, e.decode
    who = e.model or f"{fmt_count_words(e.params)} parameters"
    title = f"LLM inference roofline: {who}, {e.weight_dtype} weights, on the {g.name}"
    t = _kv_table(title)
    mem = f", {fmt_si(g.memory_bytes, 'B')} memory" if g.memory_bytes else ""
    t.add_row("GPU", f"{fmt_g(g.bandwidth / 1e9)} GB/s DRAM, "
              f"{fmt_g(g.peak_flops / 1e12)} TFLOP/s {g.precision} dense peak{mem}; {g.source}")
    if e.model:
        t.add_row("model", f"{e.model}: {fmt_count_words(e.params)} parameters ({e.params:,.0f})")
    if e.shape is not None:
        s = e.shape
        t.add_row("shape", f"{s.layers} layers, {s.query_heads} query heads, {s.kv_heads} KV heads of {s.head_dim}")
    t.add_row("weights", f"{fmt_si(e.weight_bytes, 'B')} ({fmt_count_words(e.params)} parameters x {fmt_g(e.bytes_per_weight)} bytes per {e.weight_dtype} weight)")
    con.print(t)

    ctx = f", context {d.context:,} tokens" if e.shape is not None else ""
    step = _kv_table(f"decode step: batch {d.batch}{ctx}")
    kv_part = f" + KV read {fmt_si(d.kv_read_bytes, 'B')}" if e.shape is not None else ""
    step.add_row("bytes", f"{fmt_si(d.bytes, 'B')} (weights {fmt_si(d.weight_bytes, 'B')}{kv_part})")
    attn_part = f" + attention {fmt_si(d.attention_flops, 'FLOP')}" if e.shape is not None else ""
    step.add_row("FLOPs", f"{fmt_si(d.flops, 'FLOP')} (2 x params x batch = {fmt_si(d.matmul_flops, 'FLOP')}{attn_part})")
    step.add_row("t_memory", f"{fmt_time(d.t_memory_s)} (bytes / {fmt_g(g.bandwidth / 1e9)} GB/s)")
    step.add_row("t_compute", f"{fmt_time(d.t_compute_s)} (FLOPs / {fmt_g(g.peak_flops / 1e12)} TFLOP/s)")
    step.add_row("step time", Text(f"{fmt_time(d.step_time_s)}, ") + _regime(d.regime, d.bound_ratio))
    step.add_row("tokens/s", f"{fmt_rate(d.tokens_per_s_per_seq, 'n/a')} per sequence, {fmt_rate(d.tokens_per_s_total, 'n/a')} in total")
    con.print(step)
    con.print(Text("ceiling: ", style="bold") + Text(e.ceiling))

    b = _kv_table("batching")
    b.add_row(
        "batch ridge",
        f"{fmt_num(e.batch_ridge)} = peak x bytes per weight / (2 x bandwidth) = "
        f"{fmt_g(g.peak_flops / 1e12)}e12 x {fmt_g(e.bytes_per_weight)} / (2 x {fmt_g(g.bandwidth / 1e9)}e9); "
        "below it a bigger batch barely moves the step time, above it decode is compute-bound",
    )
    if e.batch_ridge_with_kv is not None:
        if math.isfinite(e.batch_ridge_with_kv):
            rk = f"{fmt_num(e.batch_ridge_with_kv)}, counting each sequence's KV read and attention at context {d.context:,}"
        else:
            rk = f"never at context {d.context:,}: each sequence's KV read costs more time than its FLOPs, so decode stays memory-bound"
        b.add_row("ridge with KV", rk)
    if e.max_batch_reason is not None:
        b.add_row("largest batch", e.max_batch_reason)
    con.print(b)

    if e.kv is not None:
        k = e.kv
        kt = _kv_table(f"KV cache ({k.dtype})")
        s = e.shape
        kt.add_row(
            "per token",
            f"{fmt_si(k.bytes_per_token, 'B')} ({k.bytes_per_token:,.0f} B = 2 x {s.layers} layers x {s.kv_heads} KV heads x {s.head_dim} x {fmt_g(k.bytes_per_element)} B)",
        )
        if k.bytes_per_seq is not None:
            kt.add_row("per sequence", f"{fmt_si(k.bytes_per_seq, 'B')} at {k.seq_len:,} tokens")
            kt.add_row("for the batch", f"{fmt_si(k.bytes_total, 'B')} ({k.batch} sequence{'' if k.batch == 1 else 's'})")
        con.print(kt)

    if e.prefill is not None:
        p = e.prefill
        pt = _kv_table(f"prefill: {p.prompt_len:,}-token prompt, batch {p.batch}")
        attn = f" + attention {fmt_si(p.attention_flops, 'FLOP')}" if e.shape is not None else ""
        pt.add_row("FLOPs", f"{fmt_si(p.flops, 'FLOP')} (2 x params x tokens = {fmt_si(p.matmul_flops, 'FLOP')}{attn})")
        pt.add_row("t_compute", fmt_time(p.t_compute_s))
        pt.add_row("t_memory", f"{fmt_time(p.t_memory_s)} ({fmt_si(p.bytes, 'B')})")
        pt.add_row("time to first token", Text(f"{fmt_time(p.ttft_s)}, ") + Text(f"{p.regime}-bound", style=_REGIME_STYLE.get(p.regime, "bold")))
        pt.add_row("prompt tokens/s", fmt_rate(p.tokens_per_s, "n/a"))
        con.print(pt)

    if e.sweep:
        sw = Table(title="batch sweep (decode step)", title_justify="left")
        first = e.sweep[0].step_time_s
        for col in ("batch", "step time", "vs smallest", "t_memory", "t_compute", "regime", "tokens/s per seq", "tokens/s total"):
            sw.add_column(col, justify="left" if col == "regime" else "right")
        fits = any(r.fits_in_memory is not None for r in e.sweep)
        if fits:
            sw.add_column("KV cache", justify="right")
            sw.add_column("fits", justify="left")
        for r in e.sweep:
            row = [
                f"{r.batch:,}",
                fmt_time(r.step_time_s),
                f"{r.step_time_s / first:.2f}x",
                fmt_time(r.t_memory_s),
                fmt_time(r.t_compute_s),
                Text(r.regime, style=_REGIME_STYLE.get(r.regime, "")),
                fmt_rate(r.tokens_per_s_per_seq, "n/a"),
                fmt_rate(r.tokens_per_s_total, "n/a"),
            ]
            if fits:
                row += [fmt_si(r.kv_cache_bytes, "B"), "n/a" if r.fits_in_memory is None else ("yes" if r.fits_in_memory else Text("no", style="red"))]
            sw.add_row(*row)
        con.print(sw)

    for n in e.notes:
        con.print(Text("note: ", style="bold") + Text(n))
    for w in e.warnings:
        con.print(Text("warning: ", style="bold yellow") + Text(w))
    lo, hi = e.engine_efficiency
    con.print(
        Text("left out: ", style="bold")
        + Text("; ".join(e.leaves_out) + f". These are ceilings: real engines reach about {lo * 100:.0f}-{hi * 100:.0f}% of them.")
    )


def render_llm_scaling(rep) -> None:
    """Print a :class:`~gpuwhy.model.llm.result.ScalingReport`: the arithmetic of
    mixture-of-experts, several GPUs and quantization scales, line by line."""
    t = _kv_table("the arithmetic (active params, GPUs, scales)")
    for line in rep.lines:
        head, sep, rest = line.partition(": ")
        if sep and len(head) < 28:
            t.add_row(head, Text(rest))
        else:
            t.add_row("", Text(line))
    out().print(t)


def render_speculative(sp) -> None:
    """Print a :class:`~gpuwhy.model.llm.speculative.Speculative`: tokens per step, the
    draft's cost, the speed-up and the ceiling with speculation, with its arithmetic."""
    con = out()
    t = _kv_table(f"speculative decoding: K = {sp.k} drafted tokens, acceptance {fmt_g(sp.acceptance)}")
    for line in sp.lines:
        head, sep, rest = line.partition(": ")
        t.add_row(head if sep else "", Text(rest if sep else line))
    con.print(t)
    for n in sp.notes:
        con.print(Text("note: ", style="bold") + Text(n))


def render_llm_cost(c) -> None:
    """Print a :class:`~gpuwhy.model.llm.cost.CostTable`: USD per 1M generated tokens per
    weight dtype and batch, at the ceiling and at what real engines reach."""
    lo, hi = c.efficiency
    gpus = f"{c.num_gpus} x {fmt_g(c.usd_per_hour)}" if c.num_gpus > 1 else f"{fmt_g(c.usd_per_hour)}"
    t = Table(title=f"cost per 1M generated tokens at {gpus} USD/hour", title_justify="left")
    for col in ("weights", "batch", "tokens/s ceiling", "USD at ceiling", f"USD at {hi * 100:.0f}%", f"USD at {lo * 100:.0f}%"):
        t.add_column(col, justify="left" if col == "weights" else "right")
    for r in c.rows:
        t.add_row(r.weight_dtype, f"{r.batch:,}", fmt_rate(r.tokens_per_s, "n/a"), fmt_usd(r.usd_per_m_tokens), fmt_usd(r.usd_per_m_tokens_at_hi),
                  fmt_usd(r.usd_per_m_tokens_at_lo))
    out().print(t)
    for n in c.notes:
        out().print(Text("note: ", style="bold") + Text(n))


def render_llm_outcome(o) -> None:
    """`gpuwhy llm` (a :class:`~gpuwhy.api.llm.LlmOutcome`): the estimate, the scaling when an option
    asked for it, the speculative decoding and the cost when asked for."""
    render_llm(o.scaled.estimate)
    if not o.plain:
        render_llm_scaling(o.scaled.scaling)
    if o.report.speculative is not None:
        render_speculative(o.report.speculative)
    if o.report.cost is not None:
        render_llm_cost(o.report.cost)
