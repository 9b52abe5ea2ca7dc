"""The LLM options `gpuwhy llm` and `gpuwhy compare --llm` share, declared once for typer.

- The scaling options (``--active-params``, ``--num-gpus``, ``--bytes-per-param``,
  ``--quant-group``, ``--scale-bits``, ``--allreduce-latency``): given to a command by
  :func:`scaling_options`; what the user typed arrives as one
  :class:`~gpuwhy.api.llm_request.ScalingText`.
- The speculative decoding and cost options of `gpuwhy llm`: :func:`serving_options`, arriving
  as one :class:`~gpuwhy.api.llm_request.ServingText`.

The text is parsed in :mod:`gpuwhy.api.llm_request`. Import-light: typer (through option_groups).
"""

from __future__ import annotations

from typing import Any, Callable

from ..api.llm_request import ScalingText, ServingText
from .option_groups import option_group

# (parameter name, flag, metavar, help), in the order the options are listed.
_SCALING_OPTIONS = (
    ("active_params", "--active-params", "P",
     "Mixture of experts: parameters each token uses (e.g. 12.9B); all --params must fit, each token reads only these."),
    ("num_gpus", "--num-gpus", "N",
     "Split the model over N GPUs (tensor parallel): weights and bandwidth N ways, plus an all-reduce allowance."),
    ("bytes_per_param", "--bytes-per-param", "X", "Bytes per stored weight, overriding the dtype (e.g. 0.5625 for 4.5 bits)."),
    ("quant_group", "--quant-group", "G",
     "Quantized weights: one scale per G weights, counted in the size (4-bit + 16-bit scale per 32 = 4.5 bits)."),
    ("scale_bits", "--scale-bits", "S", "Bits per scale with --quant-group (default 16; 8 for MXFP4/NVFP4)."),
    ("allreduce_latency", "--allreduce-latency", "T",
     "Time of one all-reduce with --num-gpus (default: this host's, measured by bench --allreduce, else 10us assumed)."),
)


def scaling_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command the scaling options in place of its ``scaling`` parameter
    (:func:`~gpuwhy.cli.option_groups.option_group`); the command is called with what
    the user typed as ``scaling``, a :class:`ScalingText`.

    Raises:
        ValueError: if ``command`` has no ``scaling`` parameter.
    """
    return option_group("scaling", _SCALING_OPTIONS, ScalingText)(command)


# (parameter name, flag, metavar, help) of `gpuwhy llm`'s speculative decoding and cost options.
_SERVING_OPTIONS = (
    ("speculative", "--speculative", "K", "Speculative decoding: K tokens drafted per target step (with --acceptance)."),
    ("acceptance", "--acceptance", "A", "With --speculative: the chance each drafted token is accepted, 0-1 (e.g. 0.8)."),
    ("draft_params", "--draft-params", "P", "With --speculative: the draft model's parameters (e.g. 1B), for its cost per step."),
    ("draft_model", "--draft-model", "NAME", "With --speculative: a bundled or --models draft model (its shape adds its KV cache)."),
    ("cost_per_hour", "--cost-per-hour", "USD", "Price of one GPU per hour: adds USD per 1M generated tokens per batch size and weight dtype."),
)


def serving_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command the speculative decoding and cost options in place of its
    ``serving`` parameter; it is called with what the user typed as ``serving``, a :class:`ServingText`."""
    return option_group("serving", _SERVING_OPTIONS, ServingText)(command)
