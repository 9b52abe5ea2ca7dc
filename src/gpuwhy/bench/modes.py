"""The modes of `gpuwhy bench`: one declaration each, like a list of test cases.

Each :class:`~gpuwhy.bench.registry.BenchMode` below declares the switch that picks it and
its own options, the options it reads, what it cannot run beside and the words of that
refusal, its runner (:mod:`gpuwhy.bench.mode_runs`), its ``--json`` document and view, and
the profile sections it saves (:mod:`gpuwhy.profile_sections`). The
:class:`~gpuwhy.bench.registry.Registry` built from them makes :class:`BenchRequest` (one
field per option), :data:`FLAGS` and every refusal; ``cli/bench.py`` parses, calls
:func:`choose`, runs and prints.

Adding a mode: its module (the measurement), its runner in ``mode_runs.py``, its view under
:mod:`gpuwhy.render`, one declaration in :data:`MODES` (before any mode that would pick the
same request), a profile section if it saves figures, and its option in ``cli/bench.py``.

Views are named ``"module:function"`` under :mod:`gpuwhy.render` (render sits above
bench, so the CLI looks them up); each takes the runner's result. No typer here, and
nothing heavy is imported before a runner runs.
"""

from __future__ import annotations

from ..profile_sections import ALLREDUCE, CACHES, COMPUTE, LATENCY, ROOFLINE, RUN
from .mode_runs import (  # noqa: F401  (the runs' types and hooks are public here)
    CompileRun, MemoryRun, Progress, ProgressBar, RooflineRun, RunHooks, compile_document, failure, measure_caches,
    measure_compute, memory_document, no_bar, run_allreduce, run_caches, run_compile, run_compute, run_latency, run_link,
    run_memory, run_p2p, run_roofline,
)
from .registry import Alone, BenchMode, Option, Registry, switch

#: Options no single mode owns (which GPU, which sheet, output, the memory run's choices).
SHARED = (
    Option("kernel", "--kernel", type="Sequence[str] | None"), Option("dtype", "--dtype"), Option("device", "--device"),
    Option("gpu", "--gpu"), Option("specs", "--specs", type="Sequence[str] | None"), Option("csv", "--csv-file"),
    switch("no_save", "--no-save"), Option("json_out", "--json", False, "bool", every_mode=True),
)

#: The order of :class:`BenchRequest`'s fields, which is the order in which an error names the
#: first of several options a mode does not use: gpuwhy's options as they were added. A new
#: mode's options need not be listed (they follow, in the order of :data:`MODES`).
OPTION_ORDER = ("sweep", "quick", "compute", "roofline", "precision", "kernel", "dtype", "device", "gpu", "specs", "csv",
                "compile_only", "arch", "no_save", "latency", "link", "l1_bypass", "json_out", "caches", "allreduce",
                "max_size", "p2p")

_MEASURE = ("device", "gpu", "specs")  # which GPU, which sheet
_MEMORY_USES = ("kernel", "dtype", "csv", "no_save", *_MEASURE)
#: The order in which a "runs alone" sentence names what to drop.
_DROP_ORDER = ("sweep", "quick", "compute", "roofline", "kernel", "csv", "compile_only", "caches", "latency", "link", "p2p",
               "allreduce")


def _all_but(*fields: str) -> tuple[str, ...]:
    return tuple(f for f in _DROP_ORDER if f not in fields)


_HIERARCHY = Alone(_all_but("latency", "link", "p2p", "allreduce"), together=("latency", "link"))
_SWEEP_HAS_THEM = " (--sweep already includes them)"


def _to_dict(result):
    return result.to_dict()


#: The modes, in the order :func:`choose` tries them (the first one a request picks runs).
MODES: tuple[BenchMode, ...] = (
    BenchMode(
        "allreduce", switch("allreduce", "--allreduce"), options=(Option("max_size", "--max-size"),),
        uses=("dtype", "no_save", *_MEASURE), alone=Alone(_all_but("allreduce")),
        run=run_allreduce, json_kind="bench-allreduce", document=_to_dict, view="allreduce_view:render_allreduce",
        records=(ALLREDUCE,),
    ),
    BenchMode(
        "p2p", switch("p2p", "--p2p"), uses=("device",),
        alone=Alone(_all_but("p2p"), aside=" (every pair of the GPUs -i names, all by default)"),
        run=run_p2p, json_kind="bench-p2p", document=_to_dict, view="p2p_view:render_p2p",
    ),
    BenchMode(
        "latency", switch("latency", "--latency"), options=(switch("l1_bypass", "--cg"),), uses=_MEASURE,
        alone=_HIERARCHY,
        run=run_latency, json_kind="bench-latency", document=_to_dict, view="hierarchy_view:render_latency",
        records=(LATENCY,),
    ),
    BenchMode(
        "link", switch("link", "--link"), uses=("device", "specs"), alone=_HIERARCHY,
        run=run_link, json_kind="bench-link", document=_to_dict, view="hierarchy_view:render_link",
    ),
    BenchMode(
        "caches", switch("caches", "--caches"), uses=("no_save", *_MEASURE),
        alone=Alone(_all_but("sweep", "caches", "p2p", "allreduce"), what="the L2, shared-memory and L1 ceilings",
                    tail=_SWEEP_HAS_THEM, unnamed=("sweep",)),
        run=run_caches, json_kind="bench-caches", document=_to_dict, view="hierarchy_view:render_caches",
        records=(CACHES,),
    ),
    BenchMode(
        "compile-only", switch("compile_only", "--compile-only"), uses=("device",),
        options=(Option("arch", "--arch", why="; a measurement always compiles for the GPU's own architecture",
                        blank_is_given=True),),
        run=run_compile, json_kind="bench-compile", document=compile_document, view="bench_view:render_compile_run",
    ),
    BenchMode(
        "compute", switch("compute", "--compute"), uses=("no_save", *_MEASURE),
        options=(Option("precision", "--precision", type="Sequence[str] | None", checked_first=False),),
        alone=Alone(("sweep", "quick", "kernel"), what="the compute ceilings", tail=_SWEEP_HAS_THEM),
        run=run_compute, json_kind="bench-compute", document=lambda rs: {"compute": [r.to_dict() for r in rs]},
        view="compute_view:render_compute", records=(COMPUTE,),
    ),
    BenchMode(
        "roofline", switch("roofline", "--roofline"), uses=("no_save", *_MEASURE),
        alone=Alone(("sweep", "quick", "compute", "kernel"), what="the mixed-intensity sweep"),
        run=run_roofline, json_kind="bench-roofline", document=lambda r: r.sweep, view="bench_view:render_roofline_run",
        records=(ROOFLINE,),
    ),
    BenchMode(
        "sweep", switch("sweep", "--sweep"), uses=_MEMORY_USES, excludes=("quick",),
        run=run_memory, json_kind="bench", document=memory_document, view="bench_view:render_bench_run",
        records=(RUN, COMPUTE, CACHES),
    ),
    BenchMode(
        "quick", switch("quick", "--quick"), default=True, uses=_MEMORY_USES,
        run=run_memory, json_kind="bench", document=memory_document, view="bench_view:render_bench_run",
        records=(RUN,),
    ),
)

REGISTRY = Registry(SHARED, MODES, OPTION_ORDER, module=__name__)
#: The options of one ``gpuwhy bench`` call, as the CLI parsed them (None / False: not given).
BenchRequest = REGISTRY.request
#: The command-line spelling of each :class:`BenchRequest` field.
FLAGS = REGISTRY.flags


def mode(name: str) -> BenchMode:
    """The mode called ``name``.

    Raises:
        KeyError: no such mode.
    """
    return REGISTRY.mode(name)


def choose(req) -> BenchMode:
    """The mode ``req`` (a :class:`BenchRequest`) runs (:meth:`~gpuwhy.bench.registry.Registry.choose`).

    Raises:
        UsageError: options that exclude each other, an option without the mode it applies
            to, or one the picked mode refuses or does not read (the messages name the flags).
    """
    return REGISTRY.choose(req)
