"""FLOPs counted from a jaxpr (engine/jaxpr_flops.py): stand-in jaxprs (no JAX) worked by hand, then,
where JAX is installed, real jaxprs against XLA's own count of the lowered module on this CPU."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpuwhy.engine.jaxpr_flops import CONV_TAPS_CHECKED, count_flops


def V(*shape):
    """A variable (or literal) whose value has ``shape``."""
    return SimpleNamespace(aval=SimpleNamespace(shape=tuple(shape)))


def E(prim, ins, outs, **params):
    """An equation: the primitive ``prim`` applied to ``ins`` giving ``outs``."""
    return SimpleNamespace(primitive=SimpleNamespace(name=prim), params=params, invars=list(ins), outvars=list(outs))


def J(*eqns):
    """A Jaxpr."""
    return SimpleNamespace(eqns=list(eqns))


def C(*eqns):
    """A ClosedJaxpr: the equations on its ``jaxpr`` (and on itself, as JAX's has them)."""
    inner = J(*eqns)
    return SimpleNamespace(jaxpr=inner, eqns=inner.eqns, consts=[])


def dot(m, k, n):
    """(m, k) @ (k, n): 2 m k n FLOP."""
    return E("dot_general", [V(m, k), V(k, n)], [V(m, n)], dimension_numbers=(((1,), (0,)), ((), ())))


def test_dot_general_with_batch_and_contracting_dimensions():
    """(b=4, m=8, k1=16, k2=3) x (b=4, k1=16, k2=3, n=32), batch 0/0, contracting (2, 3)/(1, 2): output
    (4, 8, 32), each element 16 x 3 multiply-adds: 2 x 1024 x 48 = 98304 FLOP (the batch is not a
    contracting dimension: counting it would give 4x that)."""
    e = E("dot_general", [V(4, 8, 16, 3), V(4, 16, 3, 32)], [V(4, 8, 32)],
          dimension_numbers=(((2, 3), (1, 2)), ((0,), (0,))))
    got = count_flops(J(e))
    assert got.flops == 2 * 4 * 8 * 32 * 16 * 3 == 98304
    assert got.notes == ()


def test_elementwise_one_flop_an_output_element_reductions_an_input_element_moves_none():
    """(3, 4) arrays: add 12, exp 12 (a transcendental counts 1 too), select_n 12, integer_pow 12;
    reduce_sum of (3, 4) to (3,): 12; reshape, broadcast, transpose, convert: 0. Sum 60."""
    x = V(3, 4)
    got = count_flops(J(
        E("add", [x, x], [V(3, 4)]), E("exp", [x], [V(3, 4)]), E("select_n", [V(3, 4), x, x], [V(3, 4)]),
        E("integer_pow", [x], [V(3, 4)], y=3), E("reduce_sum", [x], [V(3)], axes=(1,)),
        E("reshape", [x], [V(12)]), E("broadcast_in_dim", [V(4)], [V(3, 4)]), E("transpose", [x], [V(4, 3)]),
        E("convert_element_type", [x], [V(3, 4)])))
    assert got.flops == 60 and got.notes == ()


def test_a_scan_multiplies_its_body_by_its_length():
    """Body: a (8, 8) @ (8, 8) matmul (1024 FLOP) and a mul of (8, 8) (64): 1088 a step, 7 steps: 7616."""
    body = C(dot(8, 8, 8), E("mul", [V(8, 8), V(8, 8)], [V(8, 8)]))
    got = count_flops(J(E("scan", [V(8, 8)], [V(8, 8)], jaxpr=body, length=7, num_carry=1, num_consts=0)))
    assert got.flops == 7 * (2 * 8 * 8 * 8 + 64) == 7616 and got.notes == ()


def test_a_cond_counts_its_most_expensive_branch_and_says_it_is_an_upper_bound():
    """Branches: an add of (4, 4) (16 FLOP) or a (4, 4) @ (4, 4) matmul (128): 128, an upper bound."""
    branches = (C(E("add", [V(4, 4), V()], [V(4, 4)])), C(dot(4, 4, 4)))
    got = count_flops(J(E("cond", [V(), V(4, 4)], [V(4, 4)], branches=branches)))
    assert got.flops == 128
    assert got.notes == ("cond: the most expensive branch counted (an upper bound)",)
    alike = count_flops(J(E("cond", [V(), V(4, 4)], [V(4, 4)], branches=(C(dot(4, 4, 4)), C(dot(4, 4, 4))))))
    assert alike.flops == 128 and alike.notes == ()  # the same either way: exact


def test_nested_jit_calls_are_walked_and_each_use_of_a_shared_body_counts():
    """jit(outer) holds a jit(inner) (a (2, 3) @ (3, 5) matmul: 60 FLOP) called twice, the same
    jaxpr object each time (as JAX caches it), and an add of (2, 5): 2 x 60 + 10 = 130; a
    custom_jvp_call around it (its call_jaxpr; the jvp rule is a function, not walked): 130 more."""
    inner = C(dot(2, 3, 5))
    outer = C(E("jit", [V(2, 3), V(3, 5)], [V(2, 5)], jaxpr=inner, name="inner"),
              E("jit", [V(2, 3), V(3, 5)], [V(2, 5)], jaxpr=inner, name="inner"),
              E("add", [V(2, 5), V(2, 5)], [V(2, 5)]))
    top = J(E("pjit", [V(2, 3), V(3, 5)], [V(2, 5)], jaxpr=outer, name="outer"))
    assert count_flops(top).flops == 130
    wrapped = J(E("pjit", [], [], jaxpr=outer),
                E("custom_jvp_call", [], [], call_jaxpr=outer, jvp=lambda *a: None, num_consts=0))
    assert count_flops(wrapped).flops == 260
    assert count_flops(C(*top.eqns)).flops == 130  # a ClosedJaxpr at the top as well


def test_a_while_loop_body_is_counted_once_and_the_count_called_a_lower_bound():
    """cond: lt on a scalar (1 FLOP); body: a (16,) mul (16): 17, whatever the trip count."""
    w = E("while", [V(), V(16)], [V(), V(16)], cond_jaxpr=C(E("lt", [V(), V()], [V()])),
          body_jaxpr=C(E("mul", [V(16), V(16)], [V(16)])), cond_nconsts=0, body_nconsts=0)
    got = count_flops(J(w))
    assert got.flops == 17
    assert len(got.notes) == 1 and "while loop bodies counted once" in got.notes[0] and "lower bound" in got.notes[0]


def conv(lhs, rhs, out, padding, strides=(1, 1), lhs_dil=(1, 1), rhs_dil=(1, 1), groups=1):
    dn = SimpleNamespace(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
    return E("conv_general_dilated", [V(*lhs), V(*rhs)], [V(*out)], window_strides=strides, padding=padding,
             lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, dimension_numbers=dn, feature_group_count=groups,
             batch_group_count=1)


def test_a_convolution_counts_the_kernel_taps_that_land_on_real_input():
    """NCHW (2, 3, 8, 8) with OIHW (4, 3, 3, 3), padding 1 (SAME): each spatial dimension has 8 x 3
    (output, tap) pairs less the 2 that fall in the padding: 22; 2 x 2 x 4 x 3 x 22 x 22 = 23232 FLOP,
    XLA's own count of this convolution (JAX 0.10.2, CPU). Without padding (6 x 6 out): 2 x 2 x 4 x 3
    x 18 x 18 = 15552. Grouped (3 groups of 1 input feature, OIHW (6, 1, 3, 3)): 2 x 2 x 6 x 1 x 18 x 18."""
    assert count_flops(J(conv((2, 3, 8, 8), (4, 3, 3, 3), (2, 4, 8, 8), ((1, 1), (1, 1))))).flops == 23232
    assert count_flops(J(conv((2, 3, 8, 8), (4, 3, 3, 3), (2, 4, 6, 6), ((0, 0), (0, 0))))).flops == 15552
    assert count_flops(J(conv((2, 3, 8, 8), (6, 1, 3, 3), (2, 6, 6, 6), ((0, 0), (0, 0)), groups=3))).flops == \
        2 * 2 * 6 * 18 * 18


def test_a_convolution_too_wide_to_check_tap_by_tap_counts_every_tap():
    """A 1-D-like (1, 1, 1, n) input with a (1, 1, 1, 3) kernel and padding 1: n x 3 pairs over
    CONV_TAPS_CHECKED are all counted (padding included): 2 x n x 3; under it, 2 x (3n - 2)."""
    n = CONV_TAPS_CHECKED // 3 + 1
    wide = conv((1, 1, 1, n), (1, 1, 1, 3), (1, 1, 1, n), ((0, 0), (1, 1)))
    assert count_flops(J(wide)).flops == 2 * n * 3
    assert count_flops(J(conv((1, 1, 1, 100), (1, 1, 1, 3), (1, 1, 1, 100), ((0, 0), (1, 1))))).flops == 2 * 298


def test_what_is_not_counted_is_named():
    """An fft (arithmetic not counted here), a primitive with no rule and a convolution whose dimension
    numbers cannot be read count 0, and the notes name each; the matmul beside them still counts."""
    bad = E("conv_general_dilated", [V(1, 1, 4, 4), V(1, 1, 3, 3)], [V(1, 1, 2, 2)], dimension_numbers=None)
    got = count_flops(J(dot(2, 2, 2), E("fft", [V(8)], [V(8)]), E("my_custom_op", [V(8)], [V(8)]), bad))
    assert got.flops == 16
    assert got.notes == ("conv_general_dilated not counted (its parameters could not be read: AttributeError)",
                         "not counted (0 FLOP: the count is a lower bound): fft",
                         "no rule here, counted as 0 FLOP: my_custom_op")


def test_not_a_jaxpr_is_a_type_error():
    with pytest.raises(TypeError, match="not a jaxpr"):
        count_flops(object())


# --- real JAX (skipped without it) -------------------------------------------------------------------


def _mlp_step(sizes, batch):
    """benchmarks/cupti/jax_train.py's step (an MLP, value_and_grad, SGD) at ``sizes`` and ``batch``."""
    import jax
    import jax.numpy as jnp

    def loss(ps, x, y):
        for w, b in ps[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = ps[-1]
        return jnp.mean((x @ w + b - y) ** 2)

    @jax.jit
    def step(ps, x, y):
        l, g = jax.value_and_grad(loss)(ps, x, y)
        return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(ps, g)], l

    key = jax.random.PRNGKey(0)
    ps = [(jax.random.normal(key, (a, b)) / a**0.5, jnp.zeros(b)) for a, b in zip(sizes[:-1], sizes[1:])]
    return step, (ps, jax.random.normal(key, (batch, sizes[0])), jax.random.normal(key, (batch, sizes[-1])))


def _lowered_flops(fn, *args):
    ca = fn.lower(*args).cost_analysis()
    ca = ca[0] if isinstance(ca, (list, tuple)) else ca
    if not ca or not ca.get("flops"):
        pytest.skip("this JAX's lowered cost_analysis counts no FLOPs here")
    return float(ca["flops"])


def test_the_training_step_counts_what_xla_counts_on_this_cpu():
    """jax_train.py's step at 64-128-128-64, batch 32: the jaxpr's count within 2% of XLA's count of the
    lowered module (on a CPU both work; on an H100 with JAX 0.11.2 the lowered count is None). The
    matmuls alone: 3 forward (2 x 32 x (64x128 + 128x128 + 128x64)) and 5 backward (no gradient of x):
    5,767,168 FLOP; the elementwise work and reductions add ~2%."""
    pytest.importorskip("jax")
    step, args = _mlp_step([64, 128, 128, 64], 32)
    got = count_flops(step.trace(*args).jaxpr)
    matmuls = 2 * 32 * (3 * (64 * 128 + 128 * 128 + 128 * 64) - 64 * 128)
    assert matmuls == 5_767_168 and matmuls < got.flops < 1.05 * matmuls
    assert got.flops == pytest.approx(_lowered_flops(step, *args), rel=0.02)
    assert got.notes == ()


def test_a_convolution_and_a_scan_with_real_jax():
    """A SAME 3x3 convolution counts as XLA counts it (23232 FLOP, see the stand-in test); a scan of
    5 (16, 16) @ (16, 16) matmuls: 5 x 8192 FLOP (XLA's while loop count holds one step)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    f = jax.jit(lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"))
    x, k = jnp.ones((2, 3, 8, 8)), jnp.ones((4, 3, 3, 3))
    assert count_flops(f.trace(x, k).jaxpr).flops == 23232 == _lowered_flops(f, x, k)

    def body(c, _):
        return c @ c, None

    g = jax.jit(lambda c: lax.scan(body, c, None, length=5)[0])
    assert count_flops(g.trace(jnp.ones((16, 16))).jaxpr).flops == 5 * 2 * 16**3
