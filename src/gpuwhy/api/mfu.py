"""The MFU use case: `gpuwhy mfu`. Model FLOPs utilisation of a training or inference run:
FLOPs per token times tokens per second over the GPUs' dense peak."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MfuOptions:
    """What `gpuwhy mfu` was given, as typed (None, False or the default where not given); each
    field's flag is its name with dashes (``tokens_per_s`` -> ``--tokens-per-s``)."""

    params: str | None = None
    tokens_per_s: str | None = None
    gpus: str = "1"
    train: bool = False
    infer: bool = False
    dtype: str = "bf16"
    seq_len: str | None = None
    layers: str | None = None
    hidden: str | None = None
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def parse(self) -> "MfuRequest":
        """The options checked and parsed.

        Raises:
            UsageError: no ``--params`` or ``--tokens-per-s``; both ``--train`` and ``--infer``;
                part of the attention shape; a bad count or rate.
        """
        from ..errors import UsageError
        from ..model.llm.dtypes import parse_params
        from ..model.llm.mfu import MfuShape
        from ..units import parse_count, parse_quantity

        if self.params is None or self.tokens_per_s is None:
            raise UsageError("mfu needs --params P and --tokens-per-s T, e.g. --params 8B --tokens-per-s 12000 --gpus 8 --gpu 'H100 SXM'")
        if self.train and self.infer:
            raise UsageError("give --train or --infer, not both")
        shape_opts = {"--seq-len": self.seq_len, "--layers": self.layers, "--hidden": self.hidden}
        given = [k for k, v in shape_opts.items() if v is not None]
        if given and len(given) < 3:
            raise UsageError("attention's FLOPs need --seq-len, --layers and --hidden together; missing "
                             f"{', '.join(k for k in shape_opts if k not in given)}")
        n = parse_params(self.params, "--params")
        tps = parse_quantity(self.tokens_per_s, "--tokens-per-s")
        count = parse_count(self.gpus, "--gpus")
        shape = None
        if given:
            shape = MfuShape(parse_count(self.layers, "--layers"), parse_count(self.hidden, "--hidden"),
                             parse_count(self.seq_len, "--seq-len"))
        return MfuRequest(n, tps, count, not self.infer, self.dtype, shape, self.gpu, self.spec_dirs)


@dataclass(frozen=True)
class MfuRequest:
    """An MFU to work out: ``params`` (parameters), ``tokens_per_s`` of all ``gpus`` together,
    ``train`` (6 FLOPs per parameter per token) or inference (2), the ``dtype`` whose dense peak
    is 100%, the attention ``shape`` (:class:`~gpuwhy.model.llm.mfu.MfuShape`) or None, the GPU
    (None: this machine's) and the ``--specs`` folders.

    Raises:
        UsageError: (when made) a parameter count or rate that is not above zero, or no GPU.
    """

    params: float
    tokens_per_s: float
    gpus: int = 1
    train: bool = True
    dtype: str = "bf16"
    shape: Any = None
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def __post_init__(self):
        from ..errors import UsageError

        for name in ("params", "tokens_per_s"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0:
                raise UsageError(f"mfu's {name} must be a number above zero, got {v!r}")
        if not isinstance(self.gpus, int) or self.gpus < 1:
            raise UsageError(f"mfu's gpus must be a whole number >= 1, got {self.gpus!r}")


def mfu(req: MfuRequest):
    """The :class:`~gpuwhy.model.llm.mfu.Mfu` of ``req`` against its GPU sheet's dense peak.

    Raises:
        UsageError: an unknown GPU or none to probe; a precision the sheet lacks.
    """
    from ..model.llm.mfu import mfu as model_mfu
    from ..model.roofline.ceilings import sheet_precision
    from ..device.probe import gpu_sheet
    from .sheets import noted

    sheet = noted(gpu_sheet(req.gpu, tuple(req.spec_dirs or ()))).sheet
    prec = sheet_precision(sheet, req.dtype, tensor_cores=True)
    return model_mfu(req.params, req.tokens_per_s, req.gpus, sheet.peak_flops(prec), sheet.name, prec, train=req.train,
                     shape=req.shape)
