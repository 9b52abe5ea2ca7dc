"""What each call of a jitted JAX function costs, as XLA's cost model and its jaxpr count it, for the CUPTI tracer.

While `gpuwhy run --tracer cupti` runs a program in this process, :func:`install` wraps ``jax.jit``
as soon as the program imports ``jax`` (an import hook: gpuwhy never imports JAX itself; a program
that does not use JAX is untouched). Each call of a function the program jitted then records

- its host interval (``start``/``end``: ns on the tracer's clock, CUPTI's ``get_timestamp``, so the
  launch API calls it made fall inside it);
- once per input signature (the leaves' shapes, dtypes and weak types, the other arguments' values,
  the tree's structure), the ``flops`` and ``bytes accessed`` a call: the bytes of the compiled
  executable (``fn.lower(...).compile().cost_analysis()``: after fusion, what the kernels move);
  the FLOPs the largest of three counts (``flops_from`` says which): the compiled executable's, the
  lowered module's (``fn.lower(...).cost_analysis()``) and the jaxpr's
  (:func:`gpuwhy.engine.jaxpr_flops.count_flops` of ``fn.trace(...).jaxpr``, or of
  ``jax.make_jaxpr(fn)(...)`` in a JAX without ``trace``). On a GPU XLA's cost model counts the
  compiled module's matmuls (cuBLAS custom calls) as nothing, and the lowered module's count is not
  there: on an H100 with JAX 0.11.2 (2026-12-07) ``Lowered.cost_analysis()`` returned None and the
  compiled executable counted 51.9 MFLOP of a 73.09 GFLOP MLP training step
  (benchmarks/cupti/jax_train.py), which the jaxpr counts (73.09 GFLOP, as the lowered module does
  on a CPU with JAX 0.10.2). The jaxpr is not counted where the arguments span several devices (it
  counts the work of all of them, the cost model one device's). Each cost analysis is a dict, or a
  list of one dict in older JAX. All are asked before the call (a donated argument is gone after
  it), so their host time lies outside the call's interval.

A failed or empty cost analysis leaves the call without figures and its record says why
(``error``). Calls made while JAX traces (an argument is a tracer: a jitted function called inside
another, under ``grad`` or ``vmap``) are passed through unrecorded: they launch nothing. The wrapper
is transparent: the program gets the same results, and ``lower``, ``eval_shape``, ``trace``,
``__wrapped__`` and every other attribute are the jitted function's own.

Records (plain dicts, as :mod:`gpuwhy.importers.cupti.records` reads them): ``k`` ``"jit"``,
``start``, ``end`` (ns), ``name`` (the function's ``__name__``), ``tid`` (``threading.get_ident()``,
CUPTI's default thread id on Linux), ``flops`` and ``bytes`` a call (None unknown), ``dtype`` (the
floating dtype holding most of the arguments' bytes, e.g. ``float32``; None when there is none),
``matmul`` (``jax.config.jax_default_matmul_precision`` at the call, lower case; None: XLA's default),
``error`` (why there are no figures; None when there are), ``flops_from`` (whose count ``flops`` is:
``compiled``, ``lowered`` or ``jaxpr``; None without FLOPs; records written before it existed lack
it: read as the cost model's), ``flops_note`` (what to know of that count: the jaxpr counter's notes
where it is the jaxpr's, e.g. a ``while`` loop's body counted once, or why the jaxpr was not counted;
None when there is nothing to say).
"""

from __future__ import annotations

import functools
import importlib.abc
import math
import sys
import threading
from typing import Any, Callable, Mapping

#: The module whose ``jit`` is wrapped.
MODULE = "jax"


def parse_cost(ca: Any) -> tuple[float | None, float | None, str | None]:
    """``(flops, bytes, why)`` of what ``Compiled.cost_analysis()`` returned: a dict, or a list (or
    tuple) whose first item is the dict (older JAX; one per device, alike). ``flops`` None where XLA
    counted none (0, missing: judged by bytes alone); ``bytes`` (``"bytes accessed"``) None, with
    ``why``, where it is missing, not a number or not positive."""
    if isinstance(ca, (list, tuple)):
        if not ca:
            return None, None, "cost_analysis() returned an empty list"
        ca = ca[0]
    if not isinstance(ca, Mapping):
        return None, None, f"cost_analysis() returned {type(ca).__name__}, not a dict"

    def num(key):
        try:
            v = float(ca[key])
        except (KeyError, TypeError, ValueError):
            return None
        return v if math.isfinite(v) and v > 0 else None

    flops, nbytes = num("flops"), num("bytes accessed")
    if nbytes is None:
        got = "missing" if "bytes accessed" not in ca else f"{ca['bytes accessed']!r}"
        return flops, None, f"cost_analysis() has no usable 'bytes accessed' ({got})"
    return flops, nbytes, None


def lowered_flops(lowered) -> float | None:
    """The lowered module's FLOPs (``lowered.cost_analysis()``); None where it fails, returns None
    (a GPU with JAX 0.11.2) or counts none."""
    try:
        flops, _, _ = parse_cost(lowered.cost_analysis())
    except Exception:  # noqa: BLE001 - an older JAX without it, or a backend that refuses it
        return None
    return flops


def jaxpr_flops(jitted, jax, args, kwargs) -> tuple[float | None, str | None]:
    """``(flops, note)`` of the jaxpr of ``jitted(*args, **kwargs)`` (see
    :func:`gpuwhy.engine.jaxpr_flops.count_flops`): ``note`` its notes joined, None when exact;
    ``(None, why)`` where it cannot be traced or counted, or the arguments span several devices."""
    from .jaxpr_flops import count_flops

    devices = _devices(args, kwargs, jax)
    if devices > 1:
        return None, f"the jaxpr was not counted: the arguments span {devices} devices"
    try:
        trace = getattr(jitted, "trace", None)
        jaxpr = trace(*args, **kwargs).jaxpr if trace is not None else jax.make_jaxpr(jitted)(*args, **kwargs)
        got = count_flops(jaxpr)
    except Exception as exc:  # noqa: BLE001 - a stand-in, an old JAX, or a function make_jaxpr cannot trace
        return None, f"the jaxpr was not counted: {type(exc).__name__}: {exc}".splitlines()[0]
    return (got.flops if got.flops > 0 else None), ("; ".join(got.notes) or None)


def _devices(args, kwargs, jax) -> int:
    """The most devices any argument's sharding spans (1 where none says)."""
    leaves, _ = _leaves(jax, args, kwargs)
    most = 1
    for leaf in leaves:
        try:
            most = max(most, len(leaf.sharding.device_set))
        except Exception:  # noqa: BLE001 - not a jax.Array
            continue
    return most


def no_cost(why: str) -> dict:
    """A call's cost fields (see the module docstring) where there are no figures, and ``why``."""
    return {"flops": None, "bytes": None, "flops_from": None, "flops_note": None, "error": why}


#: The order in which FLOP counts are preferred where they tie (the cost model's first).
FLOPS_SOURCES = ("compiled", "lowered", "jaxpr")


def max_flops(counts: Mapping[str, float | None]) -> tuple[float | None, str | None]:
    """``(flops, source)``: the largest of ``counts`` (source -> FLOPs or None: the compiled
    executable's, the lowered module's, the jaxpr's), the earlier in :data:`FLOPS_SOURCES` where
    they tie; ``(None, None)`` where none counted any. See the module docstring."""
    best, src = None, None
    for name in sorted(counts, key=lambda k: FLOPS_SOURCES.index(k) if k in FLOPS_SOURCES else len(FLOPS_SOURCES)):
        v = counts[name]
        if v is not None and v > 0 and (best is None or v > best):
            best, src = v, name
    return best, src


def _is_tracer(leaf) -> bool:
    return any(c.__name__.endswith("Tracer") for c in type(leaf).__mro__)


def _leaves(jax, args, kwargs) -> tuple[list, str]:
    """The arguments' leaves and their tree's structure (JAX's own flattening where it has one)."""
    try:
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        return list(leaves), str(tree)
    except Exception:  # noqa: BLE001 - no tree_util (a stand-in) or an argument it cannot flatten
        return [*args, *kwargs.values()], f"{len(args)}:{sorted(kwargs)}"


def _leaf_key(leaf):
    shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
    if shape is not None and dtype is not None:
        return ("array", tuple(int(d) for d in shape), str(dtype), bool(getattr(leaf, "weak_type", False)))
    try:
        hash(leaf)
    except TypeError:
        return ("object", type(leaf).__name__)
    return ("value", type(leaf).__name__, leaf)


def _main_dtype(leaves) -> str | None:
    """The floating dtype holding most of the leaves' bytes (None when no leaf is a floating array)."""
    by: dict[str, float] = {}
    for leaf in leaves:
        dtype = getattr(leaf, "dtype", None)
        name = str(dtype) if dtype is not None else ""
        if "float" not in name:
            continue
        n = getattr(leaf, "nbytes", None)
        by[name] = by.get(name, 0.0) + (float(n) if isinstance(n, (int, float)) else 1.0)
    return max(by, key=by.get) if by else None


def _matmul_precision(jax) -> str | None:
    """``jax.config.jax_default_matmul_precision`` (``highest``, ``tensorfloat32``, ...; None: XLA's
    default, TF32 tensor cores for float32 matmuls on GPUs that have them)."""
    try:
        v = getattr(getattr(jax, "config", None), "jax_default_matmul_precision", None)
    except Exception:  # noqa: BLE001
        return None
    return None if v is None else str(v).lower()


class Recorder:
    """The jit calls recorded while :attr:`active`: ``records`` (see the module docstring), on ``clock``
    (a callable giving ns)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.active = False
        self.records: list[dict] = []
        self._lock = threading.Lock()

    def add(self, record: dict) -> None:
        with self._lock:
            self.records.append(record)

    def taken(self) -> list[dict]:
        with self._lock:
            return list(self.records)


class JittedCall:
    """A jitted function that records its calls in a :class:`Recorder` (see the module docstring)."""

    def __init__(self, jitted, recorder: Recorder, jax) -> None:
        self.__dict__["_gpuwhy_jitted"] = jitted
        self.__dict__["_gpuwhy_recorder"] = recorder
        self.__dict__["_gpuwhy_jax"] = jax
        self.__dict__["_gpuwhy_costs"] = {}
        try:
            functools.update_wrapper(self, jitted)
        except Exception:  # noqa: BLE001 - an object without the usual attributes
            pass
        self.__dict__["__wrapped__"] = jitted

    def __getattr__(self, name):  # lower, eval_shape, trace, clear_cache, ...: the jitted function's own
        return getattr(self.__dict__["_gpuwhy_jitted"], name)

    def __get__(self, obj, objtype=None):  # a jitted method: bound as jax binds its own
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return repr(self.__dict__["_gpuwhy_jitted"])

    def _cost(self, key, args, kwargs) -> dict:
        """The record's cost fields (``flops``, ``bytes``, ``error``, ``flops_from``, ``flops_note``) of
        a call with these arguments, worked out once per ``key`` (the input signature)."""
        costs = self.__dict__["_gpuwhy_costs"]
        if key not in costs:
            jitted = self.__dict__["_gpuwhy_jitted"]
            try:
                lowered = jitted.lower(*args, **kwargs)
                compiled, nbytes, why = parse_cost(lowered.compile().cost_analysis())
            except Exception as exc:  # noqa: BLE001 - the program's call decides; its cost is a bonus
                costs[key] = no_cost(f"cost_analysis() failed: {type(exc).__name__}: {exc}".splitlines()[0])
                return costs[key]
            counted, note = jaxpr_flops(jitted, self.__dict__["_gpuwhy_jax"], args, kwargs)
            flops, source = max_flops({"compiled": compiled, "lowered": lowered_flops(lowered), "jaxpr": counted})
            costs[key] = {"flops": flops, "bytes": nbytes, "error": why, "flops_from": source,
                          "flops_note": note if source == "jaxpr" or counted is None else None}
        return costs[key]

    def __call__(self, *args, **kwargs):
        jitted, rec = self.__dict__["_gpuwhy_jitted"], self.__dict__["_gpuwhy_recorder"]
        if not rec.active:
            return jitted(*args, **kwargs)
        leaves, tree = _leaves(self.__dict__["_gpuwhy_jax"], args, kwargs)
        if any(_is_tracer(x) for x in leaves):
            return jitted(*args, **kwargs)
        try:
            key = (tree, tuple(_leaf_key(x) for x in leaves))
        except Exception:  # noqa: BLE001
            key = None
        cost = self._cost(key, args, kwargs) if key is not None else \
            no_cost("the arguments' signature could not be read")
        t0 = rec.clock()
        out = jitted(*args, **kwargs)
        t1 = rec.clock()
        rec.add({"k": "jit", "start": t0, "end": t1, "name": str(getattr(jitted, "__name__", "jitted")),
                 "tid": threading.get_ident(), "dtype": _main_dtype(leaves),
                 "matmul": _matmul_precision(self.__dict__["_gpuwhy_jax"]), **cost})
        return out


def wrap_jit(jit, recorder: Recorder, jax):
    """``jax.jit`` that returns :class:`JittedCall` s: ``jit(f, ...)``, ``@jit``, ``partial(jit, ...)(f)`` and
    ``jit(static_argnums=...)(f)`` (a decorator factory, where JAX has one) all wrap."""

    @functools.wraps(jit)
    def gpuwhy_jit(*args, **kwargs):
        made = jit(*args, **kwargs)
        if not args and not kwargs.get("fun") and callable(made) and not hasattr(made, "lower"):
            return lambda f: JittedCall(made(f), recorder, jax)  # jit(**options) -> a decorator
        return JittedCall(made, recorder, jax)

    gpuwhy_jit._gpuwhy_original = jit
    return gpuwhy_jit


def _patch(module, recorder: Recorder) -> None:
    jit = getattr(module, "jit", None)
    if jit is not None and not hasattr(jit, "_gpuwhy_original"):
        module.jit = wrap_jit(jit, recorder, module)


class _Loader(importlib.abc.Loader):
    """The real loader of ``jax``, and the patch once the module has run."""

    def __init__(self, loader, after: Callable) -> None:
        self._loader, self._after = loader, after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        self._after(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``jax`` with the other finders and hands back its spec with :class:`_Loader`."""

    def __init__(self, after: Callable) -> None:
        self._after = after

    def find_spec(self, name, path, target=None):
        if name != MODULE:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self._after)
        return spec


class JaxHook:
    """Wraps ``jax.jit`` now (``jax`` already imported) or when the program imports it; :meth:`remove`
    puts the original back (functions jitted meanwhile keep their wrapper, which records nothing
    once ``recorder.active`` is False)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._finder: _Finder | None = None
        self._module = None
        self._unwatch: Callable[[], None] | None = None

    def _after(self, module) -> None:
        from .jax_profiler_watch import watch, watch_waits

        self._module = module
        _patch(module, self.recorder)
        unwatch = watch(module, self.recorder)  # JAX's own profiler takes CUPTI over: say when it starts
        unwait = watch_waits(getattr(sys.modules.get("jax._src.array"), "ArrayImpl", None), self.recorder)
        self._unwatch = lambda: (unwatch(), unwait())

    def install(self) -> None:
        self.recorder.active = True
        if MODULE in sys.modules:
            self._after(sys.modules[MODULE])
            return
        self._finder = _Finder(self._after)
        sys.meta_path.insert(0, self._finder)

    def remove(self) -> None:
        self.recorder.active = False
        if self._finder is not None:
            try:
                sys.meta_path.remove(self._finder)
            except ValueError:
                pass
            self._finder = None
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        m = self._module
        jit = getattr(m, "jit", None) if m is not None else None
        if jit is not None and hasattr(jit, "_gpuwhy_original"):
            m.jit = jit._gpuwhy_original
        self._module = None


__all__ = ["FLOPS_SOURCES", "JaxHook", "JittedCall", "MODULE", "Recorder", "jaxpr_flops", "lowered_flops",
           "max_flops", "no_cost", "parse_cost", "wrap_jit"]
