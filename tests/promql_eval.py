"""A small PromQL evaluator over one instant, for testing gpuwhy's Prometheus rules without a Prometheus.

Expressions are parsed by ``promql-parser`` (a PromQL parser; the real grammar, so a rule that
Prometheus would refuse to parse fails here too) and evaluated on a list of samples: each series is
constant over time, so ``avg_over_time(x[5m])`` is ``x``. It covers what the rules use: selectors
with matchers, ``avg_over_time``, ``label_replace``, ``vector``, ``time``; ``max``, ``avg``, ``sum``,
``count``, ``quantile`` with ``by``/``without``; arithmetic, comparisons (filters and ``bool``),
``and``/``or``/``unless``, one-to-one matching and ``on (...) group_left``. Semantics follow
Prometheus' documentation (https://prometheus.io/docs/prometheus/latest/querying/operators/):
an arithmetic or ``bool`` result drops the metric name, a filter keeps the left sample.
"""

from __future__ import annotations

import math
import re

import promql_parser as pp

Sample = tuple[dict, float]
_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "/": lambda a, b: a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a))}
_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">": lambda a, b: a > b, "<": lambda a, b: a < b,
        ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}


def _strip(labels: dict) -> dict:
    return {k: v for k, v in labels.items() if k != "__name__"}


def _matching(mod):
    """A binary operation's vector matching: ``(on, key)``, ``on`` being ``(include, label names)`` of its
    ``on(...)``/``ignoring(...)`` (None without one) and ``key(labels)`` the labels a sample is matched on
    (the metric name dropped)."""
    on = None
    if mod is not None and mod.matching is not None:
        on = (str(mod.matching.type).endswith("Include"), set(mod.matching.labels))

    def key(lab):
        lab = _strip(lab)
        if on is None:
            return tuple(sorted(lab.items()))
        include, names = on
        return tuple(sorted((k, v) for k, v in lab.items() if (k in names) == include))

    return on, key


def _match(m, labels: dict) -> bool:
    v = labels.get(m.name, "")
    op = str(m.op)
    if op.endswith("NotEqual"):
        return v != m.value
    if op.endswith("Equal"):
        return v == m.value
    if op.endswith("NotRe"):
        return re.fullmatch(m.value, v) is None
    if op.endswith("Re"):
        return re.fullmatch(m.value, v) is not None
    raise NotImplementedError(op)


def _quantile(q: float, values: list[float]) -> float:
    """Prometheus' quantile: linear interpolation at rank q x (n - 1)."""
    v = sorted(values)
    rank = q * (len(v) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (rank - lo)


class Evaluator:
    """``Evaluator(samples, now).eval(text)``; ``record(rule)`` adds a recording rule's output to the samples."""

    def __init__(self, samples: list[Sample], now: float = 0.0):
        self.samples = [(dict(lab), float(v)) for lab, v in samples]
        self.now = now

    def eval(self, text: str):
        return self._ev(pp.parse(text))

    def record(self, rule: dict) -> list[Sample]:
        out = self.eval(rule["expr"])
        if not isinstance(out, list):
            out = [({}, out)]
        made = [({**_strip(lab), **rule.get("labels", {}), "__name__": rule["record"]}, v) for lab, v in out]
        self.samples += made
        return made

    # ------------------------------------------------------------------ nodes
    def _ev(self, n):
        if isinstance(n, pp.NumberLiteral):
            return float(n.val)
        if isinstance(n, pp.StringLiteral):
            return n.val
        if isinstance(n, pp.ParenExpr):
            return self._ev(n.expr)
        if isinstance(n, pp.UnaryExpr):
            v = self._ev(n.expr)
            return -v if not isinstance(v, list) else [(_strip(lab), -x) for lab, x in v]
        if isinstance(n, pp.VectorSelector):
            return self._select(n)
        if isinstance(n, pp.MatrixSelector):
            return self._select(n.vector_selector)
        if isinstance(n, pp.Call):
            return self._call(n)
        if isinstance(n, pp.AggregateExpr):
            return self._aggregate(n)
        if isinstance(n, pp.BinaryExpr):
            return self._binary(n)
        raise NotImplementedError(type(n).__name__)

    def _select(self, vs) -> list[Sample]:
        out = []
        for lab, v in self.samples:
            if vs.name is not None and lab.get("__name__") != vs.name:
                continue
            if all(_match(m, lab) for m in vs.matchers.matchers):
                out.append((dict(lab), v))
        return out

    def _call(self, n):
        name, args = n.func.name, n.args
        if name == "vector":
            return [({}, self._ev(args[0]))]
        if name == "time":
            return self.now
        if name == "avg_over_time":  # constant series
            return [(_strip(lab), v) for lab, v in self._ev(args[0])]
        if name == "label_replace":
            vec, dst, repl, src, regex = (self._ev(a) for a in args)
            out = []
            for lab, v in vec:
                lab = dict(lab)
                m = re.fullmatch(regex, lab.get(src, ""))
                if m is not None:
                    value = re.sub(r"\$(\d+)", lambda g: m.group(int(g.group(1))) or "", repl)
                    if value:
                        lab[dst] = value
                    else:
                        lab.pop(dst, None)
                out.append((lab, v))
            return out
        raise NotImplementedError(name)

    def _aggregate(self, n):
        vec = self._ev(n.expr)
        mod = n.modifier
        keep = set(mod.labels) if mod is not None else set()
        without = mod is not None and str(mod.type).endswith("Without")
        groups: dict = {}
        for lab, v in vec:
            lab = _strip(lab)
            key = {k: x for k, x in lab.items() if (k not in keep if without else k in keep)} if mod is not None else {}
            groups.setdefault(tuple(sorted(key.items())), []).append(v)
        op = str(n.op)
        out = []
        for key, vals in groups.items():
            if op == "max":
                r = max(vals)
            elif op == "min":
                r = min(vals)
            elif op == "avg":
                r = sum(vals) / len(vals)
            elif op == "sum":
                r = sum(vals)
            elif op == "count":
                r = float(len(vals))
            elif op == "quantile":
                r = _quantile(self._ev(n.param), vals)
            else:
                raise NotImplementedError(op)
            out.append((dict(key), r))
        return out

    def _binary(self, n):
        op = str(n.op)
        mod = n.modifier
        lhs, rhs = self._ev(n.lhs), self._ev(n.rhs)
        want_bool = mod is not None and mod.return_bool
        if op in ("and", "or", "unless"):
            return self._set_op(op, lhs, rhs, mod)
        fn = _ARITH.get(op) or _CMP[op]
        is_cmp = op in _CMP
        if not isinstance(lhs, list) and not isinstance(rhs, list):
            r = fn(lhs, rhs)
            return float(r) if is_cmp else r
        if not isinstance(lhs, list) or not isinstance(rhs, list):
            vec, scalar, left = (lhs, rhs, True) if isinstance(lhs, list) else (rhs, lhs, False)
            out = []
            for lab, v in vec:
                a, b = (v, scalar) if left else (scalar, v)
                r = fn(a, b)
                if is_cmp and not want_bool:
                    if r:
                        out.append((dict(lab), v))
                else:
                    out.append((_strip(lab), float(r)))
            return out
        on, key = _matching(mod)
        many_to_one = mod is not None and str(mod.card).endswith("ManyToOne")

        right: dict = {}
        for lab, v in rhs:
            k = key(lab)
            assert k not in right, f"many-to-many matching on {k}: Prometheus refuses it"
            right[k] = (lab, v)
        out = []
        seen = set()
        for lab, v in lhs:
            k = key(lab)
            if k not in right:
                continue
            if not many_to_one:
                assert k not in seen, f"many-to-one matching without group_left on {k}: Prometheus refuses it"
                seen.add(k)
            r = fn(v, right[k][1])
            if is_cmp and not want_bool:
                if r:
                    out.append((dict(lab), v))
            else:
                result = _strip(lab)
                if not many_to_one and on is not None and on[0]:
                    result = {x: y for x, y in result.items() if x in on[1]}
                out.append((result, float(r)))
        return out

    def _set_op(self, op, lhs, rhs, mod):
        _, key = _matching(mod)

        rkeys = {key(lab) for lab, _ in rhs}
        if op == "and":
            return [(lab, v) for lab, v in lhs if key(lab) in rkeys]
        if op == "unless":
            return [(lab, v) for lab, v in lhs if key(lab) not in rkeys]
        lkeys = {key(lab) for lab, _ in lhs}
        return list(lhs) + [(lab, v) for lab, v in rhs if key(lab) not in lkeys]


def metric_names(text: str) -> set[str]:
    """The metric names an expression selects (by name or by an exact ``__name__`` match)."""
    names: set[str] = set()

    def walk(n):
        if isinstance(n, pp.VectorSelector):
            if n.name:
                names.add(n.name)
            for m in n.matchers.matchers:
                if m.name == "__name__":
                    names.add(m.value)
        elif isinstance(n, pp.MatrixSelector):
            walk(n.vector_selector)
        elif isinstance(n, (pp.ParenExpr, pp.UnaryExpr)):
            walk(n.expr)
        elif isinstance(n, pp.Call):
            for a in n.args:
                walk(a)
        elif isinstance(n, pp.AggregateExpr):
            walk(n.expr)
        elif isinstance(n, pp.BinaryExpr):
            walk(n.lhs)
            walk(n.rhs)

    walk(pp.parse(text))
    return names
