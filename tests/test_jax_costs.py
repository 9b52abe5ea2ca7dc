"""The jax.jit hook of the CUPTI tracer (engine/jax_costs.py) with a stand-in ``jax`` package: it wraps
``jax.jit`` when the program imports jax (never before), records each call's interval and, once per
input signature, XLA's cost analysis; the wrapper is transparent. No GPU and no JAX needed."""

from __future__ import annotations

import sys
import textwrap

import pytest

from gpuwhy.engine.jax_costs import JaxHook, JittedCall, Recorder, parse_cost

STAND_IN = '''
"""A stand-in for jax: jit(f) gives an object that calls f and can be lowered and compiled."""
LOWERED = []
COST = {"flops": 2.0e9, "bytes accessed": 5.0e8}
LOWERED_COST = {"flops": 2.0e9, "bytes accessed": 9.0e8}  # before fusion: the same FLOPs, more bytes
JAXPR = None  # what Jitted.trace(...).jaxpr and make_jaxpr give; None: tracing fails


class Tracer:
    pass


class ShapeDtypeStruct:
    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.nbytes = shape, dtype, 4 * (shape[0] if shape else 1)


class Compiled:
    def __init__(self, shapes):
        self.shapes = shapes

    def cost_analysis(self):
        if COST == "raise":
            raise RuntimeError("cost analysis is not supported on this backend")
        return COST


class Lowered:
    def __init__(self, shapes):
        self.shapes = shapes

    def compile(self):
        return Compiled(self.shapes)

    def cost_analysis(self):
        if LOWERED_COST == "raise":
            raise NotImplementedError("no cost analysis of a lowered module here")
        return LOWERED_COST


class Jitted:
    def __init__(self, f, **options):
        self.f, self.options, self.__name__, self.__doc__ = f, options, f.__name__, f.__doc__

    def __call__(self, *args, **kwargs):
        return self.f(*args, **kwargs)

    def lower(self, *args, **kwargs):
        LOWERED.append(tuple(getattr(a, "shape", a) for a in args))
        return Lowered(LOWERED[-1])

    def eval_shape(self, *args):
        return ("shape of", self.__name__)

    def trace(self, *args, **kwargs):
        return Traced()


class Traced:
    @property
    def jaxpr(self):
        if JAXPR is None:
            raise NotImplementedError("no jaxpr in this stand-in")
        return JAXPR


def make_jaxpr(f):
    return lambda *args, **kwargs: Traced().jaxpr


def jit(fun=None, **options):
    if fun is None:
        return lambda f: Jitted(f, **options)
    return Jitted(fun, **options)
'''


class Arr:
    """An array as the wrapper reads one: shape, dtype, nbytes."""

    def __init__(self, n, dtype="float32", value=1.0):
        self.shape, self.dtype, self.nbytes, self.value = (n,), dtype, 4 * n, value


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A ``jax`` package on sys.path, not imported yet; sys.modules and sys.meta_path put back afterwards."""
    pkg = tmp_path / "jax"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(STAND_IN))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    saved = list(sys.meta_path)
    yield tmp_path
    sys.meta_path[:] = saved
    sys.modules.pop("jax", None)


def _clock():
    t = iter(range(1000, 10**9, 1000))
    return lambda: next(t)


@pytest.mark.parametrize("ca, want", [
    ({"flops": 1.5e9, "bytes accessed": 3e8}, (1.5e9, 3e8, None)),
    ([{"flops": 1.5e9, "bytes accessed": 3e8}], (1.5e9, 3e8, None)),  # older JAX: a list of one dict
    ({"flops": 0.0, "bytes accessed": 3e8}, (None, 3e8, None)),  # no FLOPs: judged by bytes alone
    ({"bytes accessed": 3e8}, (None, 3e8, None)),
])
def test_cost_analysis_shapes(ca, want):
    assert parse_cost(ca) == want


@pytest.mark.parametrize("ca, says", [
    ([], "empty list"), ("text", "returned str, not a dict"), (None, "returned NoneType"),
    ({"flops": 1e9}, "no usable 'bytes accessed' (missing)"),
    ({"flops": 1e9, "bytes accessed": float("nan")}, "no usable 'bytes accessed' (nan)"),
    ({"flops": 1e9, "bytes accessed": -1}, "no usable 'bytes accessed' (-1)"),
])
def test_cost_analysis_without_bytes_says_why(ca, says):
    flops, nbytes, why = parse_cost(ca)
    assert nbytes is None and says in why


def test_the_hook_does_not_import_jax(stand_in):
    hook = JaxHook(Recorder(_clock()))
    hook.install()
    hook.remove()
    assert "jax" not in sys.modules
    assert not any(type(f).__name__ == "_Finder" for f in sys.meta_path)


def test_jit_is_wrapped_when_the_program_imports_jax(stand_in):
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    @jax.jit
    def step(x, y):
        """the docstring"""
        return x.value + y.value

    assert isinstance(step, JittedCall)
    assert step.__name__ == "step" and step.__doc__ == "the docstring"
    assert step.eval_shape(Arr(4)) == ("shape of", "step")  # forwarded
    assert step.options == {} and step.__wrapped__.f.__name__ == "step"
    # the results are the program's own; the cost is asked once per input signature
    assert step(Arr(8, value=2.0), Arr(8, value=3.0)) == 5.0
    assert step(Arr(8, value=1.0), Arr(8, value=1.0)) == 2.0
    assert step(Arr(16), Arr(16)) == 2.0
    assert jax.LOWERED == [((8,), (8,)), ((16,), (16,))]
    calls = rec.taken()
    assert [c["name"] for c in calls] == ["step"] * 3
    assert all(c["k"] == "jit" and c["end"] > c["start"] for c in calls)
    assert all(c["flops"] == 2.0e9 and c["bytes"] == 5.0e8 and c["error"] is None for c in calls)
    assert calls[0]["dtype"] == "float32"
    # options, partial(jax.jit, ...) and a decorator factory wrap too
    g = jax.jit(lambda x: x.value * 2, static_argnums=(1,))
    assert isinstance(g, JittedCall) and g.options == {"static_argnums": (1,)}
    h = jax.jit(donate_argnums=0)(lambda x: x.value)
    assert isinstance(h, JittedCall) and h(Arr(2, value=7.0)) == 7.0
    hook.remove()
    assert not hasattr(jax.jit, "_gpuwhy_original")  # the original is back
    assert step(Arr(8), Arr(8)) == 2.0 and len(rec.taken()) == 4  # still works, records nothing more


def test_jax_already_imported_is_patched_at_once(stand_in):
    import jax

    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    try:
        f = jax.jit(lambda x: x.value)
        assert isinstance(f, JittedCall) and f(Arr(2, value=4.0)) == 4.0 and len(rec.taken()) == 1
    finally:
        hook.remove()


def test_a_failed_cost_analysis_leaves_the_call_without_figures(stand_in):
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    jax.COST = "raise"
    f = jax.jit(lambda x: x.value + 1)
    assert f(Arr(3, value=1.0)) == 2.0 and f(Arr(3, value=2.0)) == 3.0
    hook.remove()
    a, b = rec.taken()
    assert a["flops"] is None and a["bytes"] is None
    assert a["error"] == "cost_analysis() failed: RuntimeError: cost analysis is not supported on this backend"
    assert jax.LOWERED == [((3,),)]  # asked once, not again for the same signature


@pytest.mark.parametrize("lowered, want_flops, source", [
    # an H100's compiled MLP step (2026-12-07): its cuBLAS matmuls counted as nothing; the lowered module counts them
    ({"flops": 7.31e10, "bytes accessed": 1.39e9}, 7.31e10, "lowered"),
    ({"flops": 1.0e7, "bytes accessed": 1.39e9}, 5.19e7, "compiled"),  # the compiled count when it is the larger
    ({"bytes accessed": 1.39e9}, 5.19e7, "compiled"),                    # the lowered module counts none
    ("raise", 5.19e7, "compiled"),                                       # or cannot say
])
def test_flops_from_the_lowered_module_where_it_counts_more_bytes_from_the_compiled(stand_in, lowered, want_flops,
                                                                                    source):
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    jax.COST = {"flops": 5.19e7, "bytes accessed": 4.43e8}
    jax.LOWERED_COST = lowered
    f = jax.jit(lambda x: x.value)
    assert f(Arr(3, value=1.0)) == 1.0
    hook.remove()
    (a,) = rec.taken()
    assert a["flops"] == want_flops and a["bytes"] == 4.43e8 and a["error"] is None
    assert a["flops_from"] == source
    assert a["flops_note"] == "the jaxpr was not counted: NotImplementedError: no jaxpr in this stand-in"


def test_calls_while_jax_traces_are_passed_through(stand_in):
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    f = jax.jit(lambda x: "traced")
    assert f(jax.Tracer()) == "traced"
    hook.remove()
    assert rec.taken() == [] and jax.LOWERED == []


def test_a_jitted_method_binds_its_instance(stand_in):
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    class Model:
        scale = 3.0

        @jax.jit
        def apply(self, x):
            return self.scale * x.value

    assert Model().apply(Arr(2, value=2.0)) == 6.0
    hook.remove()
    assert len(rec.taken()) == 1


def test_the_cupti_tracer_records_jit_calls_on_its_clock(stand_in, monkeypatch):
    """CuptiTracer with a stand-in cupti-python: start() wraps jax.jit when the program imports jax,
    stop() puts it back, and capture() holds the calls timed by cupti's get_timestamp (ns)."""
    import enum
    import types

    from gpuwhy.engine.cupti_tracer import CuptiTracer

    ticks = iter(range(5_000, 10**9, 1_000))
    c = types.SimpleNamespace(
        ActivityKind=enum.IntEnum("ActivityKind", "CONCURRENT_KERNEL KERNEL MEMCPY MEMSET RUNTIME DRIVER "
                                                  "SYNCHRONIZATION MARKER"),
        cuptiError=RuntimeError, activity_register_callbacks=lambda *a: None, activity_enable=lambda k: None,
        activity_disable=lambda k: None, activity_flush_all=lambda f: None,
        activity_get_num_dropped_records=lambda *a: 0, get_timestamp=lambda: next(ticks))
    pkg = types.ModuleType("cupti")
    pkg.cupti = c
    monkeypatch.setitem(sys.modules, "cupti", pkg)
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)
    tracer = CuptiTracer()
    tracer.start()
    import jax

    f = jax.jit(lambda x: x.value * 3)
    assert f(Arr(4, value=2.0)) == 6.0
    tracer.stop()
    assert not hasattr(jax.jit, "_gpuwhy_original")
    (call,) = [r for r in tracer.capture()["records"] if r["k"] == "jit"]
    assert call["start"] >= 5_000 and call["end"] > call["start"]  # CUPTI's clock, not perf_counter
    assert (call["flops"], call["bytes"]) == (2.0e9, 5.0e8)


def test_the_matmul_precision_asked_is_recorded(stand_in):
    import types

    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    import jax

    f = jax.jit(lambda x: x.value)
    f(Arr(2))
    jax.config = types.SimpleNamespace(jax_default_matmul_precision="HIGHEST")
    f(Arr(2))
    hook.remove()
    assert [c["matmul"] for c in rec.taken()] == [None, "highest"]


def _one_call(jax, arg=None):
    """One call of a jitted function under a fresh hook (``jax`` already imported): its record."""
    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    f = jax.jit(lambda x: x.value)
    f(arg if arg is not None else Arr(3))
    hook.remove()
    (a,) = rec.taken()
    return a


@pytest.fixture
def gpu_like(stand_in):
    """The stand-in as JAX 0.11.2 answered on an H100 (2026-12-07): the compiled step counts 51.9 MFLOP
    (its cuBLAS matmuls as nothing), the lowered module's cost_analysis() is None."""
    import jax

    jax.COST = {"flops": 5.19e7, "bytes accessed": 4.43e8}
    jax.LOWERED_COST = None
    return jax


def test_flops_from_the_jaxpr_where_the_cost_model_counts_fewer(gpu_like):
    """The jaxpr: a (512, 1024) @ (1024, 4096) matmul, 2 x 512 x 1024 x 4096 = 4.29 GFLOP, over the
    compiled 51.9 MFLOP; the bytes stay the compiled executable's."""
    from test_jaxpr_flops import J, dot

    gpu_like.JAXPR = J(dot(512, 1024, 4096))
    a = _one_call(gpu_like)
    assert (a["flops"], a["flops_from"], a["bytes"], a["error"], a["flops_note"]) == (
        2 * 512 * 1024 * 4096, "jaxpr", 4.43e8, None, None)


def test_the_jaxpr_counts_notes_come_with_its_flops(gpu_like):
    """A while loop around a (256, 256) @ (256, 256) matmul (33.6 MFLOP counted once) and a 64 MFLOP
    matmul: 97.6 MFLOP over the compiled 51.9: the jaxpr's, with its note that it is a lower bound."""
    from test_jaxpr_flops import C, E, J, V, dot

    loop = E("while", [V(256, 256)], [V(256, 256)], cond_jaxpr=C(E("lt", [V(), V()], [V()])),
             body_jaxpr=C(dot(256, 256, 256)))
    gpu_like.JAXPR = J(loop, dot(256, 256, 512))
    a = _one_call(gpu_like)
    assert a["flops"] == 2 * 256**3 + 1 + 2 * 256 * 256 * 512 and a["flops_from"] == "jaxpr"
    assert "while loop bodies counted once" in a["flops_note"] and "lower bound" in a["flops_note"]


def test_the_cost_model_wins_where_the_jaxpr_counts_fewer(gpu_like):
    """A (4, 4) add in the jaxpr (16 FLOP) under the compiled 51.9 MFLOP: the compiled count, no note."""
    from test_jaxpr_flops import E, J, V

    gpu_like.JAXPR = J(E("add", [V(4, 4), V(4, 4)], [V(4, 4)]))
    a = _one_call(gpu_like)
    assert (a["flops"], a["flops_from"], a["flops_note"]) == (5.19e7, "compiled", None)


def test_a_jax_without_trace_is_counted_through_make_jaxpr(gpu_like, monkeypatch):
    from test_jaxpr_flops import J, dot

    monkeypatch.delattr(gpu_like.Jitted, "trace")
    gpu_like.JAXPR = J(dot(512, 1024, 4096))
    a = _one_call(gpu_like)
    assert (a["flops"], a["flops_from"]) == (2 * 512 * 1024 * 4096, "jaxpr")


def test_arguments_on_several_devices_leave_the_jaxpr_uncounted(gpu_like):
    """The jaxpr counts every device's work, the cost model one device's: not mixed."""
    import types

    from test_jaxpr_flops import J, dot

    gpu_like.JAXPR = J(dot(512, 1024, 4096))
    arg = Arr(8)
    arg.sharding = types.SimpleNamespace(device_set={"gpu:0", "gpu:1"})
    a = _one_call(gpu_like, arg)
    assert (a["flops"], a["flops_from"]) == (5.19e7, "compiled")
    assert a["flops_note"] == "the jaxpr was not counted: the arguments span 2 devices"


def test_real_jax_records_the_largest_count_and_says_whose():
    """With JAX (CPU): jax_train.py's step at 64-128-128-64, batch 32: the record's FLOPs are at least
    the jaxpr's count and within 2% of XLA's lowered module's, their source named."""
    jax = pytest.importorskip("jax")
    from test_jaxpr_flops import _lowered_flops, _mlp_step

    from gpuwhy.engine.jaxpr_flops import count_flops

    rec = Recorder(_clock())
    hook = JaxHook(rec)
    hook.install()
    try:
        step, args = _mlp_step([64, 128, 128, 64], 32)
        step(*args)
    finally:
        hook.remove()
    (a,) = rec.taken()
    counted = count_flops(step.trace(*args).jaxpr).flops
    assert a["flops_from"] in ("compiled", "lowered", "jaxpr") and a["flops"] >= counted
    assert a["flops"] == pytest.approx(_lowered_flops(step, *args), rel=0.02) and a["bytes"] > 0


@pytest.mark.parametrize("counts, want", [
    ({"compiled": 5.19e7, "lowered": None, "jaxpr": 7.309e10}, (7.309e10, "jaxpr")),
    ({"compiled": 7.309e10, "lowered": 7.308e10, "jaxpr": 7.307e10}, (7.309e10, "compiled")),
    ({"jaxpr": 1e9, "lowered": 1e9, "compiled": 1e9}, (1e9, "compiled")),  # a tie: the cost model's
    ({"jaxpr": 1e9, "lowered": 1e9, "compiled": None}, (1e9, "lowered")),
    ({"compiled": None, "lowered": 0.0, "jaxpr": None}, (None, None)),
])
def test_the_largest_count_wins_the_cost_models_on_a_tie(counts, want):
    from gpuwhy.engine.jax_costs import max_flops

    assert max_flops(counts) == want
