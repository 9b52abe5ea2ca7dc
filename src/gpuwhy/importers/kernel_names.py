"""Kernel names as profilers print them, made readable: :func:`demangle`,
:func:`short_kernel_name`, :func:`template_hint` and :func:`display_names`
(short names unique within a set). Shared by the ncu and torch.profiler readers;
imports nothing heavy.
"""

from __future__ import annotations

import re

_MAX_SHORT = 64
#: Kernel function names that say nothing; the template argument names the kernel instead.
_GENERIC = {"Kernel", "Kernel2", "kernel", "device_kernel", "kernel_entry", "operator()", "global_kernel"}


def _demangle_itanium(name: str) -> str:
    """A minimal Itanium C++ ABI reading of ``_Z...``: the qualified function name only.

    Reads ``_Z<len><id>`` and ``_ZN<len><id>...E`` (nested names, stopping at
    template arguments ``I...E``); enough to name a CUDA kernel. Returns the
    input unchanged when it cannot read it.
    """
    s = name
    if not s.startswith("_Z"):
        return name
    i = 2
    nested = i < len(s) and s[i] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "rVKRO":  # cv- and ref-qualifiers of member functions
            i += 1
    parts: list[str] = []
    while i < len(s):
        if s[i].isdigit():
            j = i
            while j < len(s) and s[j].isdigit():
                j += 1
            n = int(s[i:j])
            ident = s[j : j + n]
            if len(ident) < n:
                break
            parts.append("(anonymous namespace)" if ident.startswith("_GLOBAL__N") else ident)
            i = j + n
            if not nested:
                break
        elif s.startswith("St", i):
            parts.append("std")
            i += 2
        else:
            break  # I (template args), E (end of nested name), S_ substitutions, ...
    return "::".join(parts) if parts else name


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1: terminal escapes) shown as ``?``: a kernel name
    from a file is printed literally, and must not drive the terminal."""
    return _CONTROL.sub("?", text)


def demangle(name: str) -> str:
    """The human-readable form of a kernel name.

    Names that are already demangled (what ``ncu`` and ``torch.profiler``
    print by default) are returned as they are; an Itanium-mangled ``_Z...``
    name is reduced to its qualified function name (``_ZN2at6native6kernelEv``
    -> ``at::native::kernel``), without template or parameter lists.
    """
    name = (name or "").strip()
    if name.startswith("_Z"):
        return _demangle_itanium(name)
    return name


_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _top_level(name: str) -> tuple[str, list[str]]:
    """Split ``name`` into the text at bracket depth 0 and the bracketed groups' contents.

    ``operator<``/``operator()`` and ``->`` are kept at depth 0 where they
    would otherwise unbalance the brackets.
    """
    out: list[str] = []
    groups: list[str] = []
    depth = 0
    cur: list[str] = []
    i = 0
    n = len(name)
    while i < n:
        c = name[i]
        if name.startswith("operator", i) and depth == 0:
            j = i + len("operator")
            m = re.match(r"\s*(\(\)|\[\]|<<=?|>>=?|<=>|<=|>=|<|>|->\*?|[-+*/%^&|~!=,]+)", name[j:])
            if m:
                out.append(name[i : j + m.end()])
                i = j + m.end()
                continue
        if c == "-" and i + 1 < n and name[i + 1] == ">":
            (cur if depth else out).append("->")
            i += 2
            continue
        if c in _OPEN:
            if depth > 0:
                cur.append(c)
            depth += 1
        elif c in _CLOSE and depth > 0:
            depth -= 1
            if depth == 0:
                groups.append("".join(cur))
                cur = []
            else:
                cur.append(c)
        elif depth > 0:
            cur.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out), groups


def function_name(name: str) -> str:
    """The kernel's function name as Nsight Compute's ``--kernel-name-base function`` has it: the
    unqualified identifier, without return type, namespaces, template or parameter lists.

    ``void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)`` gives
    ``vectorized_elementwise_kernel``, ``void cutlass::Kernel2<cutlass_80_simt_sgemm...>(...)``
    gives ``Kernel2`` (unlike :func:`short_kernel_name`, which names it by its template
    argument), ``nvjet_sm90_tst_...`` stays as it is. CUPTI (torch.profiler) and ncu
    spell the rest of a name differently (``(anonymous namespace)`` against
    ``<unnamed>``, concrete types against ``T1``), so this is the part both share.
    Returns ``""`` for an empty name.
    """
    full = demangle(name)
    if not full:
        return ""
    top, _ = _top_level(full.replace("(anonymous namespace)", "anon"))
    # The last whitespace-separated token is the qualified name ("void ns::f" -> "ns::f").
    tokens = top.split()
    qual = tokens[-1] if tokens else top
    return qual.rsplit("::", 1)[-1] or qual


def short_kernel_name(name: str, max_len: int = _MAX_SHORT) -> str:
    """A short display name for a kernel: no return type, namespaces, templates or parameters.

    ``void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, ...>(int, T2, T3)``
    becomes ``vectorized_elementwise_kernel``; plain names (cuBLAS, Triton:
    ``sm90_xmma_gemm_bf16bf16...``, ``triton_poi_fused_add_0``) stay as they
    are, shortened to ``max_len`` characters in the middle (:func:`shorten_middle`).
    Mangled names are demangled first (:func:`demangle`).
    """
    full = printable(demangle(name))
    if not full:
        return "(unnamed kernel)"
    base = function_name(full) or full
    if base in _GENERIC:
        # cutlass::Kernel2<cutlass_80_tensorop_...>: the template argument is the real name.
        longer = [i for i in _template_idents(full) if len(i) >= 8]
        if longer:
            base = longer[0]
    return shorten_middle(base, max_len)


def _tail_group(text: str) -> str:
    """The trailing ``<...>`` group of ``text`` (with any ``#N`` after it), or a bare ``#N``; ``""`` if none."""
    m = re.search(r"#\d+$", text)
    suffix = m.group(0) if m else ""
    body = text[: len(text) - len(suffix)]
    if not body.endswith(">"):
        return suffix
    depth = 0
    for i in range(len(body) - 1, -1, -1):
        depth += {">": 1, "<": -1}.get(body[i], 0)
        if depth == 0:
            return body[i:] + suffix
    return suffix


def shorten_middle(text: str, max_len: int = _MAX_SHORT) -> str:
    """``text`` cut to ``max_len`` characters in the middle (``…``), keeping its start and its tail.

    The tail kept is the trailing template group (``<CUDAFunctor_add>``) and ``#N``
    suffix when they take at most half the width, else the last third of the width:
    long generated names (``sm90_xmma_gemm_..._cublas``, ``triton_poi_fused_..._0``)
    differ at both ends, so both are kept.
    """
    if len(text) <= max_len:
        return text
    if max_len < 5:
        return text[:max_len]
    tail = _tail_group(text)
    if not tail or len(tail) > max_len // 2:
        tail = text[len(text) - max_len // 3:]
    return text[: max_len - 1 - len(tail)] + "\u2026" + tail


_HINT_SKIP = {
    "float", "double", "int", "long", "char", "bool", "short", "unsigned", "signed", "void", "const",
    "at", "native", "detail", "c10", "std", "cutlass", "cute", "Array", "T", "half", "__half",
    "BFloat16", "Half", "instance", "lambda", "anon", "int64_t", "int32_t", "uint32_t", "uint64_t",
    "Params", "true", "false",
}


def _template_idents(name: str) -> list[str]:
    _, groups = _top_level(demangle(name).replace("(anonymous namespace)", "anon"))
    if not groups:
        return []
    # Template arguments are the first <...> group; the parameter list is the last (...) one.
    return [i for i in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", groups[0]) if i not in _HINT_SKIP and len(i) >= 3]


def template_hint(name: str) -> str:
    """The most telling identifier in the template arguments of ``name``, or ``""``.

    Used to tell apart kernels whose short names collide
    (``vectorized_elementwise_kernel`` for add and for mul): the innermost
    functor-like name wins (``...BinaryFunctor<..., MulFunctor<float>>`` gives
    ``MulFunctor``; PyTorch's add kernel gives ``CUDAFunctor_add``), else the
    first capitalised identifier.
    """
    idents = _template_idents(name)
    functors = [i for i in idents if re.search(r"(Functor|functor|Op$|_op$|Op_|_func|Func)", i)]
    if functors:
        return functors[-1]
    caps = [i for i in idents if i[0].isupper() and "_internal" not in i]
    return caps[0] if caps else ""


def display_names(full_names: list[str]) -> dict[str, str]:
    """Short display names for a set of full kernel names, unique within the set.

    Each name gets :func:`short_kernel_name`; names whose short forms collide get
    a ``<hint>`` from :func:`template_hint`, and any that still collide a ``#2``,
    ``#3``, ... suffix (in the order given). A name longer than 64 characters with
    its hint is shortened in the middle (:func:`shorten_middle`), the hint kept.
    """
    short = {f: short_kernel_name(f, max_len=10**9) for f in full_names}  # printable: control characters as ?
    by_short: dict[str, list[str]] = {}
    for f in full_names:
        by_short.setdefault(short[f], []).append(f)
    out: dict[str, str] = {}
    for s, fulls in by_short.items():
        if len(fulls) == 1:
            out[fulls[0]] = s
            continue
        for f in fulls:
            hint = template_hint(f)
            out[f] = f"{s}<{hint}>" if hint else s
    # Shorten in the middle, then number what the shortening (or a missing hint) left equal.
    used: dict[str, int] = {}
    for f in full_names:
        cand = shorten_middle(out[f])
        k = used.get(cand, 0) + 1
        used[cand] = k
        out[f] = cand if k == 1 else shorten_middle(f"{out[f]}#{k}")
    return out


__all__ = ["demangle", "display_names", "function_name", "printable", "short_kernel_name", "shorten_middle", "template_hint"]
