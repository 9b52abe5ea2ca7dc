"""`gpuwhy classify`'s request: what was typed, checked in the command's order and parsed into
one of a workload's FLOPs and bytes, a named example, or a shape to count them from (or, with
``--ncu``, an export to read instead). Typer-free; the CLI declares the options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .options import refuse_unused


@dataclass(frozen=True)
class ShapeRequest:
    """A parsed shape (:mod:`gpuwhy.model.kernels.shapes`), the ``tile`` (TM, TN) asked for or None,
    and the flag that named the shape."""

    shape: Any
    tile: tuple[int, int] | None
    flag: str


@dataclass(frozen=True)
class ShapeText:
    """What the user typed for the shape options (``--gemm``, ``--attention``, ``--elementwise``
    and theirs); None (False for flags) where not given. Each field's flag is its name with
    dashes (``kv_heads`` -> ``--kv-heads``)."""

    gemm: str | None = None
    batch: str | None = None
    accumulate: bool = False
    tile: str | None = None
    attention: str | None = None
    causal: bool = False
    kv_heads: str | None = None
    q_len: str | None = None
    elementwise: str | None = None
    inputs: str | None = None
    outputs: str | None = None
    flops_per_element: str | None = None

    def parse(self) -> ShapeRequest | None:
        """The shape asked for, or None when no shape option was given.

        Raises:
            UsageError: what :func:`gpuwhy.model.kernels.shapes.shape_from_options` refuses;
                ``--tile`` without ``--gemm`` or a bad tile.
        """
        from ..errors import UsageError
        from ..model.kernels.shapes import shape_from_options
        from ..units import parse_shape

        shape = shape_from_options(self.gemm, self.attention, self.elementwise, batch=self.batch, accumulate=self.accumulate,
                                   causal=self.causal, kv_heads=self.kv_heads, q_len=self.q_len, inputs=self.inputs,
                                   outputs=self.outputs, flops_per_element=self.flops_per_element)
        if self.tile is not None and self.gemm is None:
            raise UsageError("--tile goes with --gemm")
        if shape is None:
            return None
        tile = None if self.tile is None else parse_shape(self.tile, ("TM", "TN"), "x", "--tile", "128x256")
        return ShapeRequest(shape, tile, "--gemm" if self.gemm is not None else "--attention" if self.attention is not None else "--elementwise")


@dataclass(frozen=True)
class ClassifyRequest:
    """One workload to classify, parsed (:func:`gpuwhy.api.classify.classify` runs it; :meth:`ClassifyOptions.parse` makes it).

    Attributes:
        workload: the FLOPs, bytes, launches, seconds and name (a :class:`~gpuwhy.model.roofline.classify.Workload`);
            None for a shape, which counts them.
        shape: the shape to count (:class:`ShapeRequest`), or None.
        gpu: a sheet name, a :class:`~gpuwhy.specs.Sheet`, or None for this machine's GPU.
        dtype: the precision of the compute ceiling (``fp32``, ``bf16``, ...).
        example: the example's name when the workload is one; ``example_description`` its words.
        tensor_cores: tensor-core peaks for tf32 and narrower types.
        launch_overhead_s: seconds per launch, None for the default.
        time_s, launches: a shape's measured time (seconds, or None) and launches.
        measured: judge against the newest bench profile's ceilings.
        working_set: bytes the workload touches, or None.
        spec_dirs: extra spec-sheet folders.
        plot: a checked ``.png``/``.svg`` path to draw the workload to, or None.

    Raises:
        UsageError: (when made) neither or both of a workload and a shape.
    """

    dtype: str
    workload: Any = None
    shape: ShapeRequest | None = None
    gpu: Any = None
    example: str | None = None
    example_description: str = ""
    tensor_cores: bool = True
    launch_overhead_s: float | None = None
    time_s: float | None = None
    launches: int = 1
    measured: bool = False
    working_set: float | None = None
    spec_dirs: tuple[str, ...] = ()
    plot: str | None = None

    def __post_init__(self):
        from ..errors import UsageError

        if (self.workload is None) == (self.shape is None):
            raise UsageError("classify needs a workload (FLOPs and bytes, or an example) or a shape, and not both")


@dataclass(frozen=True)
class NcuReading:
    """``classify --ncu``: the export to read as `gpuwhy ncu` does, with the options that apply to it."""

    path: str
    gpu: str | None = None
    top: str = "10"
    dtype: str | None = None
    measured: bool = False
    spec_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassifyOptions:
    """What `gpuwhy classify` was given, as typed (None, False or the default where not given).

    Each field's flag is its name with dashes (``bytes_`` -> ``--bytes``, ``no_tensor_cores``
    -> ``--no-tensor-cores``); ``shape`` holds the shape options, ``spec_dirs`` the ``--specs``.
    """

    flops: str | None = None
    bytes_: str | None = None
    time: str | None = None
    launches: str = "1"
    dtype: str | None = None
    no_tensor_cores: bool = False
    launch_overhead: str | None = None
    example: str | None = None
    measured: bool = False
    ncu: str | None = None
    top: str = "10"
    working_set: str | None = None
    plot: str | None = None
    shape: ShapeText = field(default_factory=ShapeText)
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()

    def parse(self) -> ClassifyRequest | NcuReading:
        """The request, checked in the command's order: the shape, what goes with ``--ncu``,
        options without effect, the plot path, then the numbers.

        Raises:
            UsageError: a bad shape; a shape or ``--ncu`` with ``--flops/--bytes/--example``;
                an option that has no effect here; a plot path that is not ``.png``/``.svg`` or
                must not be written; an unknown example; neither ``--flops``/``--bytes`` nor
                ``--example``; a bad number (one line naming the flag).
        """
        from ..errors import UsageError

        counted = self.shape.parse()
        if counted is not None and (self.flops is not None or self.bytes_ is not None or self.example is not None
                                    or self.ncu is not None):
            raise UsageError(f"{counted.flag} counts the FLOPs and bytes; drop --flops/--bytes/--example/--ncu")
        if self.ncu is not None:
            return self._ncu()
        refuse_unused("without --ncu", top=self.top != "10")
        if self.example is None and (self.dtype or "fp32").strip().lower() in ("fp32", "fp64"):
            refuse_unused(f"with --dtype {self.dtype or 'fp32'} (it picks CUDA-core peaks for tf32, fp16 and bf16)",
                          no_tensor_cores=self.no_tensor_cores)
        if self.plot is not None:
            from ..outputs import check_plot_path

            check_plot_path(self.plot, "--plot")
        return self._workload(counted)

    def _ncu(self) -> NcuReading:
        from ..errors import UsageError

        if (self.flops is not None or self.bytes_ is not None or self.time is not None or self.example is not None
                or self.working_set is not None):
            raise UsageError("--ncu reads FLOPs, bytes and times from the export; drop --flops/--bytes/--time/--example/--working-set")
        if self.plot is not None:
            raise UsageError("--plot draws one workload; drop --plot with --ncu")
        refuse_unused("with --ncu (the export gives the times; sheets give the ceilings)",
                      no_tensor_cores=self.no_tensor_cores, launch_overhead=self.launch_overhead, launches=self.launches != "1")
        return NcuReading(self.ncu, self.gpu, self.top, self.dtype, self.measured, self.spec_dirs)

    def _workload(self, counted: ShapeRequest | None) -> ClassifyRequest:
        from ..errors import UsageError
        from ..model.roofline.classify import Workload
        from ..units import parse_count, parse_quantity, parse_time
        from .examples import example_workload

        dtype, desc, wl = self.dtype, "", None
        if counted is not None:
            n = parse_count(self.launches, "--launches")
        elif self.example is not None:
            ex, ex_dtype, desc = example_workload(self.example)
            if self.flops is not None or self.bytes_ is not None:
                raise UsageError("--example sets the FLOPs and bytes; drop --flops/--bytes or drop --example")
            dtype = dtype or ex_dtype
            n = ex.launches if self.launches == "1" else parse_count(self.launches, "--launches")
            f, b = ex.flops, ex.bytes
        else:
            if self.flops is None or self.bytes_ is None:
                raise UsageError("classify needs --flops F and --bytes B (or --example NAME); e.g. --flops 2.7e8 --bytes 3.2GB")
            f = parse_quantity(self.flops, "--flops", unit="FLOP")
            b = parse_quantity(self.bytes_, "--bytes", unit="B")
            n = parse_count(self.launches, "--launches")
        t = None if self.time is None else parse_time(self.time, "--time")
        ws = None if self.working_set is None else parse_quantity(self.working_set, "--working-set")
        lo = None if self.launch_overhead is None else parse_time(self.launch_overhead, "--launch-overhead")
        if counted is None:
            wl = Workload(flops=f, bytes=b, launches=n, time_s=t, name=self.example or "workload")
        return ClassifyRequest(dtype=dtype or "fp32", workload=wl, shape=counted, gpu=self.gpu, example=self.example,
                               example_description=desc, tensor_cores=not self.no_tensor_cores, launch_overhead_s=lo,
                               time_s=t, launches=n, measured=self.measured, working_set=ws,
                               spec_dirs=tuple(self.spec_dirs), plot=self.plot)
