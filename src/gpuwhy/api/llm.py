"""The LLM inference use case: `gpuwhy llm` and :func:`gpuwhy.llm`. Decode and prefill on the
roofline of a GPU's sheet (the tokens/s ceiling, the batch ridge, the KV cache), scaled over
experts, GPUs and quantization, with speculative decoding and the cost per token."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .llm_request import LlmRequest, LlmText, ScalingText, ServingRequest, ServingText


@dataclass(frozen=True)
class LlmOptions:
    """What `gpuwhy llm` was given, as typed: the model and counts (``model``), the scaling and
    serving options, ``gpu`` (None: this machine's), the ``--specs`` folders, ``measured``
    (refused: not built for llm), ``sweep_batch``; ``estimate_only`` asks for the estimate alone,
    what ``--csv`` tabulates (the serving options are checked, their figures not computed)."""

    model: LlmText = field(default_factory=LlmText)
    scaling: ScalingText = field(default_factory=ScalingText)
    serving: ServingText = field(default_factory=ServingText)
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()
    measured: bool = False
    sweep_batch: bool = False
    estimate_only: bool = False

    def parse(self) -> "LlmEstimateRequest":
        """Everything typed checked and parsed before any GPU sheet is read: the counts and dtypes,
        the scaling and serving options, then the model's shape (its files read).

        Raises:
            UsageError: ``--measured``; what :meth:`LlmText.parse`, :meth:`ScalingText.parse`,
                :meth:`ServingText.parse` and :meth:`LlmText.load_shape` refuse; ``--heads`` that is
                no multiple of ``--kv-heads``; a bad ``--models`` folder.
            SpecError: a malformed model file.
        """
        from ..errors import UsageError

        if self.measured:
            raise UsageError("llm --measured is not built yet (classify, compare and roofline read bench profiles; "
                             "llm uses the sheet): drop --measured and use --gpu NAME")
        req = self.model.parse("llm needs --params P (e.g. --params 3B) or --model NAME (e.g. --model llama-3-8b)")
        plan = self.scaling.parse()  # mixture of experts, several GPUs, quantization scales (model/llm/scaling.py)
        serve = self.serving.parse()  # speculative decoding and the cost per token
        req = self.model.load_shape(req)
        if self.model.heads is not None and (req.shape.heads < req.shape.kv_heads or req.shape.heads % req.shape.kv_heads):
            raise UsageError(f"--heads {req.shape.heads} must be a multiple of --kv-heads {req.shape.kv_heads}")
        if req.shape is None and self.model.models:
            # Still validate the folders the user named, so a typo does not pass silently.
            from ..model.llm.models import load_models

            load_models(list(self.model.models))
        return LlmEstimateRequest(req, plan, serve, self.scaling.allreduce_latency is not None, self.gpu, self.spec_dirs,
                        self.sweep_batch, self.model.models, not self.estimate_only)


@dataclass(frozen=True)
class LlmEstimateRequest:
    """`gpuwhy llm` parsed (:meth:`LlmOptions.parse`): the model request, the scaling ``plan``,
    the serving request ``serve``, whether the all-reduce latency was given, the GPU, the
    folders, the batch sweep, and whether to add the serving figures (``serving``)."""

    request: LlmRequest
    plan: Any
    serve: ServingRequest
    allreduce_given: bool = False
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()
    sweep_batch: bool = False
    models: tuple[str, ...] = ()
    serving: bool = True


@dataclass(frozen=True)
class LlmOutcome:
    """What `gpuwhy llm` found: the ``scaled`` estimate (:class:`~gpuwhy.model.llm.estimate.ScaledEstimate`),
    whether it is the plain model (``plain``: no scaling option given), and the ``report``
    (:class:`~gpuwhy.model.llm.report.LlmReport`, the ``--json`` document; None for the estimate alone)."""

    scaled: Any
    plain: bool
    report: Any = None

    @property
    def estimate(self):
        """The estimate at the batch asked for (what ``--csv`` tabulates)."""
        return self.scaled.estimate


def llm(query: LlmEstimateRequest) -> LlmOutcome:
    """Estimate ``query`` on its GPU's sheet (None: this machine's GPU); with several GPUs and no
    all-reduce latency given, this host's measured all-reduce where `bench --allreduce` saved one.

    Raises:
        UsageError: an unknown GPU, or none named and none to probe; a draft model not found;
            what the model refuses (a dtype the sheet lacks).
    """
    from ..model.llm.estimate import scaled_estimate
    from ..model.llm.roofline import gpu_from_sheet
    from ..device.probe import gpu_sheet
    from .sheets import noted

    req, plan = query.request, query.plan
    sheet = noted(gpu_sheet(query.gpu, tuple(query.spec_dirs or ()))).sheet
    if plan.num_gpus > 1 and not query.allreduce_given:
        plan = _measured_allreduce(plan, sheet, query.spec_dirs)
    g = gpu_from_sheet(sheet, req.weight_dtype)
    plain = plan.is_default  # without scaling options the plain model's document and wording (no "scaling" key)
    scaled = scaled_estimate(req.params, req.weight_dtype, g, plan, sweep=query.sweep_batch, notes=req.notes,
                             plain_wording=plain, **req.estimate_kwargs())
    report = _serving_report(query.serve, scaled, req, plan, sheet, query.models) if query.serving else None
    return LlmOutcome(scaled, plain, report)


def _measured_allreduce(plan, sheet, specs):
    """``plan`` with this host's measured all-reduce (`bench --allreduce`, saved in a profile of a GPU
    of ``sheet``'s model; the GPU count nearest ``plan.num_gpus``): the small message's time as the
    all-reduce latency and the largest one's bus bandwidth for the transfer term, its
    ``allreduce_source`` naming the profile; ``plan`` unchanged when none was measured."""
    from ..profiles import find_allreduce

    found = find_allreduce(sheet, plan.num_gpus, spec_dirs=specs)
    if found is None:
        return plan
    latency, busbw, source = found
    return replace(plan, allreduce_latency_s=latency, allreduce_busbw_gbs=busbw, allreduce_source=source)


def _serving_report(serve, scaled, req, plan, sheet, models):
    """The :class:`~gpuwhy.model.llm.report.LlmReport` of the estimate with the speculative
    decoding and cost the options ask for (the plain estimate's document without scaling options)."""
    from ..model.llm.report import LlmReport, cost_for

    spec = cost = None
    e = scaled.estimate
    if serve.k is not None:
        from ..model.llm.speculative import speculative

        draft_params, draft_shape, name = serve.draft_params, None, None
        if serve.draft_model is not None:
            from ..model.llm.models import load_model

            m = load_model(serve.draft_model, models)
            draft_params, draft_shape, name = m.params, m.attention(), m.name
        spec = speculative(e.decode, serve.k, serve.acceptance, e.gpu, e.weight_dtype, draft_params, name, draft_shape,
                           e.kv_dtype, target_params=req.params)
    if serve.usd_per_hour is not None:
        kw = req.estimate_kwargs()
        batch, kvd = kw.pop("batch"), kw.pop("kv_dtype")
        cost = cost_for(serve.usd_per_hour, req.params, req.weight_dtype, sheet, plan, batch, kvd, **kw)
    return LlmReport(e if plan.is_default else scaled, spec, cost)


def _text(v):
    """An argument as the command line would give it (None stays None)."""
    return None if v is None else str(v)


def estimate_values(params=None, gpu=None, *, model=None, weight_dtype=None, batch=1, context=None, prompt_len=None,
                    kv_dtype=None, layers=None, kv_heads=None, head_dim=None, heads=None, sweep_batch=False, spec_dirs=(),
                    models=()):
    """:func:`gpuwhy.llm`: the plain model's :class:`~gpuwhy.model.llm.result.LlmEstimate` (no scaling,
    no serving figures) of numbers or text as the command line takes them.

    Raises:
        UsageError: what `gpuwhy llm` refuses (the same one-line messages).
    """
    from ..model.llm.estimate import scaled_estimate
    from ..model.llm.roofline import gpu_from_sheet
    from ..device.probe import gpu_sheet
    from ..model.llm.scaling import Scaling
    from .sheets import noted

    text = LlmText(params=_text(params), weight_dtype=weight_dtype, context=_text(context), prompt_len=_text(prompt_len),
                   model=model, layers=_text(layers), kv_heads=_text(kv_heads), head_dim=_text(head_dim), heads=_text(heads),
                   kv_dtype=kv_dtype, batch=str(batch), models=tuple(models))
    req = text.load_shape(text.parse("gpuwhy.llm needs params (e.g. params='8B') or model (e.g. model='llama-3-8b')"))
    sheet = noted(gpu_sheet(gpu, tuple(spec_dirs))).sheet
    g = gpu_from_sheet(sheet, req.weight_dtype)
    return scaled_estimate(req.params, req.weight_dtype, g, Scaling(), sweep=sweep_batch, notes=req.notes, plain_wording=True,
                           **req.estimate_kwargs()).estimate
