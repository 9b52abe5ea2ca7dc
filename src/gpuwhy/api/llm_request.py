"""The LLM options `gpuwhy llm`, `gpuwhy compare --llm` and :func:`gpuwhy.llm` share, as typed and parsed.

- The scaling options (``--active-params``, ``--num-gpus``, ``--bytes-per-param``,
  ``--quant-group``, ``--scale-bits``, ``--allreduce-latency``): :class:`ScalingText`,
  parsed into a :class:`~gpuwhy.model.llm.scaling.Scaling`.
- The speculative decoding and cost options: :class:`ServingText`, parsed into a
  :class:`ServingRequest`.
- The model, its shape and the counts (:class:`LlmText`): parsed in two steps,
  the text first (:meth:`LlmText.parse`), then the model shape
  (:meth:`LlmText.load_shape`), so each command keeps its order of checks.

Each field's flag is its name with dashes (``kv_heads`` -> ``--kv-heads``). Typer-free: the
CLI declares the options (:mod:`gpuwhy.cli.llm_options`); the model is imported only when parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from .options import flag_of


@dataclass(frozen=True)
class ScalingText:
    """What the user typed for the scaling options; None where an option was not given."""

    active_params: str | None = None
    num_gpus: str | None = None
    bytes_per_param: str | None = None
    quant_group: str | None = None
    scale_bits: str | None = None
    allreduce_latency: str | None = None

    def given(self) -> list[str]:
        """The flags of the options given, in the order they are listed."""
        return [flag_of(f.name) for f in fields(self) if getattr(self, f.name) is not None]

    def parse(self):
        """The :class:`~gpuwhy.model.llm.scaling.Scaling` the text asks for.

        Raises:
            UsageError: a value that is not a number of the right kind (a count,
                bytes, seconds), ``--scale-bits`` without ``--quant-group``, or what
                :class:`~gpuwhy.model.llm.scaling.Scaling` refuses.
        """
        from ..errors import UsageError
        from ..model.llm.dtypes import parse_params
        from ..model.llm.scaling import DEFAULT_SCALE_BITS, Scaling
        from ..units import parse_count, parse_quantity, parse_time

        kw: dict = {}
        if self.active_params is not None:
            kw["active_params"] = parse_params(self.active_params, "--active-params")
        if self.num_gpus is not None:
            kw["num_gpus"] = parse_count(self.num_gpus, "--num-gpus")
        if self.bytes_per_param is not None:
            kw["bytes_per_param"] = parse_quantity(self.bytes_per_param, "--bytes-per-param")
        if self.quant_group is not None:
            kw["quant_group"] = parse_count(self.quant_group, "--quant-group")
        if self.scale_bits is not None:
            if self.quant_group is None:
                raise UsageError("--scale-bits needs --quant-group G (the weights per scale)")
            kw["scale_bits"] = parse_quantity(self.scale_bits, "--scale-bits")
        else:
            kw["scale_bits"] = DEFAULT_SCALE_BITS
        if self.allreduce_latency is not None:
            t = self.allreduce_latency
            kw["allreduce_latency_s"] = 0.0 if t.strip() in ("0", "0s", "0us") else parse_time(t, "--allreduce-latency")
            kw["allreduce_source"] = f"--allreduce-latency {t}"
        return Scaling(**kw)


@dataclass(frozen=True)
class ServingRequest:
    """The serving options parsed: ``k`` drafted tokens (None: no speculation), ``acceptance``
    0-1, the draft's ``draft_params`` or ``draft_model`` name, ``usd_per_hour`` per GPU."""

    k: int | None = None
    acceptance: float | None = None
    draft_params: float | None = None
    draft_model: str | None = None
    usd_per_hour: float | None = None


@dataclass(frozen=True)
class ServingText:
    """What the user typed for the speculative decoding and cost options; None where not given."""

    speculative: str | None = None
    acceptance: str | None = None
    draft_params: str | None = None
    draft_model: str | None = None
    cost_per_hour: str | None = None

    def parse(self) -> ServingRequest:
        """Check the options go together and parse them; reads no file.

        Raises:
            UsageError: --acceptance or a draft without --speculative, --speculative
                without --acceptance, both --draft-params and --draft-model, K not a
                whole number >= 1, A outside 0-1, a bad parameter count or price.
        """
        from ..errors import UsageError
        from ..model.llm.dtypes import parse_params
        from ..model.llm.speculative import check_speculative
        from ..units import parse_count, parse_quantity

        if self.speculative is None:
            stray = [f for f, v in (("--acceptance", self.acceptance), ("--draft-params", self.draft_params),
                                    ("--draft-model", self.draft_model)) if v is not None]
            if stray:
                raise UsageError(f"{stray[0]} goes with --speculative K (the tokens drafted per step)")
        k = acceptance = None
        if self.speculative is not None:
            k = parse_count(self.speculative, "--speculative")
            if self.acceptance is None:
                raise UsageError("--speculative K needs --acceptance A, the chance each drafted token is accepted (e.g. 0.8)")
            acceptance = parse_quantity(self.acceptance, "--acceptance", allow_zero=True)
            check_speculative(k, acceptance)
            if self.draft_params is not None and self.draft_model is not None:
                raise UsageError("give the draft as --draft-params P or --draft-model NAME, not both")
        draft_params = None if self.draft_params is None else parse_params(self.draft_params, "--draft-params")
        usd = None if self.cost_per_hour is None else parse_quantity(self.cost_per_hour.strip().lstrip("$"), "--cost-per-hour")
        return ServingRequest(k, acceptance, draft_params, self.draft_model, usd)


@dataclass(frozen=True)
class LlmRequest:
    """The LLM options parsed: counts, dtypes and (after :meth:`LlmText.load_shape`)
    the model shape.

    ``params`` is a parameter count (None until the model's is known),
    ``weight_dtype`` None until defaulted; ``shape`` an
    :class:`~gpuwhy.model.llm.roofline.AttentionShape`, ``max_context`` tokens,
    ``model`` the model's name; ``notes`` sentences for the reader.
    """

    params: float | None
    weight_dtype: str | None
    batch: int
    prompt_len: int | None = None
    context: int | None = None
    kv_dtype: str | None = None
    shape: Any = None
    max_context: int | None = None
    model: str | None = None
    notes: tuple[str, ...] = ()

    def estimate_kwargs(self) -> dict[str, Any]:
        """The keywords of :func:`gpuwhy.model.llm.estimate.scaled_estimate` after ``scaling`` (without notes)."""
        return dict(batch=self.batch, shape=self.shape, kv_dtype=self.kv_dtype, context=self.context,
                    prompt_len=self.prompt_len, max_context=self.max_context, model=self.model)


@dataclass(frozen=True)
class LlmText:
    """What the user typed for the model, its shape and the counts; None where not
    given (``batch`` defaults to ``"1"``, ``models`` are extra model folders)."""

    params: str | None = None
    weight_dtype: str | None = None
    context: str | None = None
    prompt_len: str | None = None
    model: str | None = None
    layers: str | None = None
    kv_heads: str | None = None
    head_dim: str | None = None
    heads: str | None = None
    kv_dtype: str | None = None
    batch: str = "1"
    models: tuple[str, ...] = ()

    def given(self) -> list[str]:
        """The flags given among ``--params`` ... ``--kv-dtype`` (not ``--batch``, ``--models``), in field order."""
        return ["--" + f.name.replace("_", "-") for f in fields(self) if f.name not in ("batch", "models") and getattr(self, f.name) is not None]

    def _shape_given(self) -> list[str]:
        shape_opts = {"--layers": self.layers, "--kv-heads": self.kv_heads, "--head-dim": self.head_dim}
        return [k for k, v in shape_opts.items() if v is not None]

    def parse(self, needs: str) -> LlmRequest:
        """Check the options go together and parse the counts and dtypes; reads no file.

        ``needs`` is the error when neither ``--params`` nor ``--model`` is given.

        Raises:
            UsageError: ``--model`` with shape options, part of the shape, ``--heads``
                without the shape, neither params nor model, or a bad number or dtype
                (checked in the order batch, prompt length, context, weight dtype, KV dtype, params).
        """
        from ..errors import UsageError
        from ..model.llm.dtypes import normalize_dtype, parse_params
        from ..units import parse_count, parse_quantity

        given = self._shape_given()
        if self.model is not None and (given or self.heads is not None):
            raise UsageError("--model sets the shape; drop --layers/--kv-heads/--head-dim/--heads or drop --model")
        if given and len(given) < 3:
            missing = [k for k in ("--layers", "--kv-heads", "--head-dim") if k not in given]
            raise UsageError(f"the shape needs --layers, --kv-heads and --head-dim together; missing {', '.join(missing)}")
        if self.heads is not None and not given:
            raise UsageError("--heads needs the shape: --layers N --kv-heads H --head-dim D")
        if self.params is None and self.model is None:
            raise UsageError(needs)
        batch = parse_count(self.batch, "--batch")
        prompt_len = None if self.prompt_len is None else parse_count(self.prompt_len, "--prompt-len")
        context = None
        if self.context is not None:
            c = parse_quantity(self.context, "--context", allow_zero=True)
            if c != int(c):
                raise UsageError(f"--context {self.context!r} must be a whole number of tokens")
            context = int(c)
        wd = None if self.weight_dtype is None else normalize_dtype(self.weight_dtype, "--weight-dtype")
        kvd = None if self.kv_dtype is None else normalize_dtype(self.kv_dtype, "--kv-dtype")
        params = None if self.params is None else parse_params(self.params, "--params")
        return LlmRequest(params, wd, batch, prompt_len, context, kvd)

    def load_shape(self, req: LlmRequest) -> LlmRequest:
        """``req`` with the shape of ``--model`` (read from the bundled or ``--models``
        files) or of ``--layers/--kv-heads/--head-dim/--heads``, the model's parameter
        count and dtype where not given, the weight dtype defaulted to fp16, and
        notes on what was taken from where.

        Raises:
            UsageError, SpecError: an unknown model or a bad model file; ``--params``
                that contradicts the model's count (by more than 0.5%); a shape
                count that is not a whole number above zero.
        """
        from ..errors import UsageError
        from ..model.llm.roofline import AttentionShape
        from ..units import parse_count

        notes = list(req.notes)
        params, wd = req.params, req.weight_dtype
        if self.model is not None:
            from ..model.llm.models import load_model

            m = load_model(self.model, self.models)
            req = replace(req, shape=m.attention(), max_context=m.max_context, model=m.name)
            if params is None:
                params = m.params
            elif abs(params - m.params) > 0.005 * m.params:
                raise UsageError(f"--params {self.params} contradicts {m.name}, which has {m.params:,.0f} parameters; "
                                 "drop --params (the model sets it) or drop --model")
            if wd is None and m.dtype:
                wd = m.dtype
                notes.append(f"weights in {wd}, the dtype {m.name} is published in (--weight-dtype to change)")
        elif self._shape_given():
            shape = AttentionShape(
                layers=parse_count(self.layers, "--layers"),
                kv_heads=parse_count(self.kv_heads, "--kv-heads"),
                head_dim=parse_count(self.head_dim, "--head-dim"),
                heads=None if self.heads is None else parse_count(self.heads, "--heads"),
            )
            if shape.heads is None:
                notes.append("no --heads: attention FLOPs assume as many query heads as KV heads (undercounts grouped-query models)")
            req = replace(req, shape=shape)
        return replace(req, params=params, weight_dtype=wd or "fp16", notes=tuple(notes))
