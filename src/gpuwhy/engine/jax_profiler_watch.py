"""Whether a program traced by `gpuwhy run --tracer cupti` starts JAX's own profiler.

JAX's profiler (``jax.profiler.trace(log_dir)``, ``jax.profiler.start_trace(log_dir)``) subscribes to
CUPTI itself, and CUPTI hands a process's activity records to one subscriber: from then on the CUPTI
tracer records no GPU work (seen on an H100 with JAX 0.11.2, 2026-12-07: the whole window empty, no
verdict). :func:`watch` wraps those two functions of the ``jax.profiler`` module so each call runs JAX's
own and, where it returned, adds a record to the recorder (``k`` ``"profiler"``, ``start`` ns on the
tracer's clock when it was called, ``name``, ``log_dir``); :func:`note` turns such records into the line `gpuwhy run` prints.
:func:`watch_waits` records the host's waits for an array's value, which CUPTI does not show.
"""

from __future__ import annotations

import functools
import shlex
from typing import Callable, Iterable, Mapping

#: The functions of ``jax.profiler`` that start its trace.
STARTERS = ("trace", "start_trace")


def watch(jax_module, recorder) -> Callable[[], None]:
    """Wrap :data:`STARTERS` of ``jax_module.profiler`` (where present); returns the function that puts
    them back. ``recorder``: an object with ``add(record)``, ``clock()`` (ns) and ``active``."""
    prof = getattr(jax_module, "profiler", None)
    undo = []
    for name in STARTERS:
        fn = getattr(prof, name, None) if prof is not None else None
        if fn is None or hasattr(fn, "_gpuwhy_original"):
            continue

        def wrapper(*args, _fn=fn, _name=name, **kwargs):
            t0 = recorder.clock() if recorder.active else None
            out = _fn(*args, **kwargs)  # a call that raises (a trace already running, no log_dir) started nothing
            if t0 is not None:
                log_dir = args[0] if args else kwargs.get("log_dir", "")
                recorder.add({"k": "profiler", "start": t0, "name": f"jax.profiler.{_name}", "log_dir": str(log_dir)})
            return out

        functools.update_wrapper(wrapper, fn)
        wrapper._gpuwhy_original = fn
        setattr(prof, name, wrapper)
        undo.append((name, fn))

    def restore() -> None:
        for n, f in undo:
            setattr(prof, n, f)

    return restore


#: The name JAX's own profiler gives the host's wait for an array's value (``float(x)``, ``np.asarray(x)``,
#: ``x.item()``): recorded under the same name, a blocking call
#: (:data:`gpuwhy.importers.timeline.activities.SYNC_NAMES`).
WAIT_NAME = "np.asarray(jax.Array)"


def watch_waits(array_class, recorder) -> Callable[[], None]:
    """Wrap ``array_class._value`` (JAX's ``jax._src.array.ArrayImpl``: the one path by which the host fetches
    an array's value, and so waits for the GPU work that makes it) so each fetch while ``recorder.active``
    adds a ``driver`` record named :data:`WAIT_NAME` with its host interval (not where the array holds its
    value already, in ``_npy_value``: ``float(x)`` twice or iterating over ``x`` waits once): JAX waits on a
    host callback, not a CUDA sync call, so CUPTI alone does not show the wait. Returns the function that puts it back; a
    class it cannot change is left alone (the wait stays unseen, as before)."""
    import os
    import threading

    prop = getattr(array_class, "__dict__", {}).get("_value")
    if not isinstance(prop, property) or prop.fget is None or hasattr(prop.fget, "_gpuwhy_original"):
        return lambda: None
    fget = prop.fget

    def value(self):
        if not recorder.active or getattr(self, "_npy_value", None) is not None:
            return fget(self)  # a value already fetched (JAX keeps it in _npy_value): no wait
        t0 = recorder.clock()
        try:
            return fget(self)
        finally:
            recorder.add({"k": "driver", "start": t0, "end": recorder.clock(), "name": WAIT_NAME, "corr": 0,
                          "pid": os.getpid(), "tid": threading.get_ident()})

    value._gpuwhy_original = fget
    try:
        setattr(array_class, "_value", property(value, prop.fset, prop.fdel, prop.__doc__))
    except (TypeError, AttributeError):
        return lambda: None

    def restore() -> None:
        try:
            setattr(array_class, "_value", prop)
        except (TypeError, AttributeError):
            pass

    return restore


def first_start(records: Iterable[Mapping]) -> Mapping | None:
    """The first ``profiler`` record among ``records`` (the program's first start of JAX's profiler); None."""
    return min((r for r in records if r.get("k") == "profiler"), key=lambda r: r.get("start", 0), default=None)


def log_dir(records: Iterable[Mapping]) -> str | None:
    """The log folder of the first start of JAX's profiler among ``records`` (None: none, or none named)."""
    r = first_start(records)
    return str(r.get("log_dir") or "") or None if r is not None else None


def note(records: Iterable[Mapping], start_ns: int) -> str | None:
    """The line to print when the program started JAX's profiler (the first such record of
    ``records``, its time from ``start_ns``), None when it did not."""
    r = first_start(records)
    if r is None:
        return None
    from ..units import fmt_time

    at = max(0, int(r.get("start", start_ns)) - int(start_ns)) / 1e9
    d = str(r.get("log_dir", ""))
    return (f"the program started JAX's profiler ({r.get('name', 'jax.profiler')}({d!r})) {fmt_time(at)} into the run: "
            "it takes CUPTI over while it traces, so this trace holds no GPU work from then on; read JAX's own "
            f"trace instead: gpuwhy trace {shlex.quote(d) if d else 'LOGDIR'}")


__all__ = ["STARTERS", "WAIT_NAME", "first_start", "log_dir", "note", "watch", "watch_waits"]
