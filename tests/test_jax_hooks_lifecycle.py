"""`gpuwhy run --tracer cupti`'s JAX hooks as programs use JAX: a value fetched twice, a profiler start that
fails, the hook installed before the program imports JAX and removed after, a program that never imports it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT
from test_jax_profiler_watch import _Recorder

from gpuwhy.engine.jax_profiler_watch import WAIT_NAME, watch, watch_waits


def test_a_value_already_on_the_host_is_no_wait():
    # JAX keeps a fetched value in _npy_value: float(x) again, f"{x}", iterating over x fetch nothing and wait
    # for nothing; each was recorded as one more blocking call.
    class Array:
        def __init__(self):
            self._npy_value = None

        @property
        def _value(self):
            if self._npy_value is None:
                self._npy_value = 42.0
            return self._npy_value

    rec = _Recorder(now=1_000, tick=1_000)  # each reading 1 us after the last
    restore = watch_waits(Array, rec)
    try:
        a = Array()
        assert [a._value, a._value, a._value] == [42.0] * 3
        assert Array()._value == 42.0
    finally:
        restore()
    assert [r["name"] for r in rec.records] == [WAIT_NAME, WAIT_NAME]


def test_real_jax_a_value_fetched_twice_waits_once():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax._src.array import ArrayImpl

    rec = _Recorder(now=1_000, tick=1_000)  # each reading 1 us after the last
    x = jax.jit(lambda v: (v * 2).sum())(jnp.ones(4))
    restore = watch_waits(ArrayImpl, rec)
    try:
        float(x)
        float(x)
        f"{x:.1f}"
        # the jitted call's value is on the device again for each new result
        float(jax.jit(lambda v: v.sum())(jnp.ones(3)))
    finally:
        restore()
    # JAX names its copy of the value _npy_value (what the hook looks at). On a GPU the fetch copies and keeps it:
    # two waits. On a CPU JAX hands its buffer over without a copy and keeps none: each of the 4 fetches is one.
    assert hasattr(x, "_npy_value")
    assert len(rec.records) == (2 if x._npy_value is not None else 4), rec.records


def test_a_profiler_start_that_fails_is_not_recorded():
    calls = []

    def start_trace(log_dir=None, **kw):
        calls.append(log_dir)
        if log_dir is None:
            raise TypeError("start_trace() missing 1 required positional argument: 'log_dir'")
        if len(calls) > 2:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")

    class Prof:
        pass

    Prof.start_trace = staticmethod(start_trace)
    jax = type("jax", (), {"profiler": Prof})
    rec = _Recorder(now=1_000, tick=1_000)  # each reading 1 us after the last
    restore = watch(jax, rec)
    try:
        with pytest.raises(TypeError):
            jax.profiler.start_trace()
        jax.profiler.start_trace("/tmp/a")
        with pytest.raises(RuntimeError):
            jax.profiler.start_trace("/tmp/b")
    finally:
        restore()
    assert [(r["name"], r["log_dir"]) for r in rec.records] == [("jax.profiler.start_trace", "/tmp/a")]
    assert rec.records[0]["start"] < rec.now  # the time it was called, before JAX started it


_LIFECYCLE = """
import sys, time
from gpuwhy.engine.jax_costs import JaxHook, Recorder

rec = Recorder(time.monotonic_ns)
hook = JaxHook(rec)
hook.install()
assert "jax" not in sys.modules
import jax
import jax._src.profiler as own
from jax._src.array import ArrayImpl

value = ArrayImpl.__dict__["_value"]
wrapped = [hasattr(jax.jit, "_gpuwhy_original"), hasattr(jax.profiler.trace, "_gpuwhy_original"),
           hasattr(jax.profiler.start_trace, "_gpuwhy_original"), hasattr(value.fget, "_gpuwhy_original")]
assert wrapped == [True, True, True, True], wrapped
f = jax.jit(lambda x: x * 2)
with jax.profiler.trace(sys.argv[1]):
    float(f(jax.numpy.ones(())))
jax.profiler.start_trace(sys.argv[1] + "2")
jax.profiler.stop_trace()
kinds = sorted({r["k"] + ":" + r["name"] for r in rec.taken()})
hook.remove()
back = [hasattr(jax.jit, "_gpuwhy_original"), jax.profiler.trace is own.trace,
        jax.profiler.start_trace is own.start_trace, hasattr(ArrayImpl.__dict__["_value"].fget, "_gpuwhy_original"),
        any(type(m).__name__ == "_Finder" for m in sys.meta_path)]
assert back == [False, True, True, False, False], back
n = len(rec.taken())
float(f(jax.numpy.ones(())))
assert len(rec.taken()) == n  # removed: nothing more recorded
print(kinds)
"""


def test_hooks_installed_before_jax_is_imported_are_all_removed(tmp_path):
    pytest.importorskip("jax")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(_LIFECYCLE), str(tmp_path / "logs")], capture_output=True,
                       text=True, timeout=300, env={"PYTHONPATH": str(ROOT / "src"), "JAX_PLATFORMS": "cpu",
                                                    "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert ("'driver:np.asarray(jax.Array)', 'jit:<lambda>', 'profiler:jax.profiler.start_trace', "
            "'profiler:jax.profiler.trace'") in r.stdout


def test_a_program_that_never_imports_jax_is_untouched():
    code = textwrap.dedent("""
        import sys, time
        from gpuwhy.engine.jax_costs import JaxHook, Recorder
        before = list(sys.meta_path)
        hook = JaxHook(Recorder(time.monotonic_ns))
        hook.install()
        import json, numpy  # the program's own imports, no JAX
        hook.remove()
        assert "jax" not in sys.modules and sys.meta_path == before, sys.meta_path
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-2000:]
