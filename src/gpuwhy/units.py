"""Parsing and formatting of quantities with SI/binary suffixes and time units.

Internally gpuwhy works in plain SI: FLOP, bytes, seconds, FLOP/s, B/s.
Formatting to human units happens only at the edges (render, CLI messages).
"""

from __future__ import annotations

import math
import re

from .errors import UsageError

# Decimal (SI) and binary (IEC) multipliers. "B" as a trailing unit is allowed
# ("12GB", "12GiB") and "FLOP"/"FLOPs" likewise ("2.5TFLOP").
_SI = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_IEC = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QTY_RE = re.compile(rf"^\s*({_NUM})\s*([A-Za-z]*)\s*$")
_TIME_RE = re.compile(rf"^\s*({_NUM})\s*([a-zµ]*)\s*$")
_UNIT_WORDS = ("flops", "flop", "ops", "op", "b", "bytes", "byte")


def _finite_positive(value: float, text: str, what: str, allow_zero: bool) -> float:
    if math.isnan(value) or math.isinf(value):
        raise UsageError(f"{what} {text!r} is not a finite number; give a value such as 2.5e12 or 12GB")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "greater than zero"
        raise UsageError(f"{what} {text!r} must be {bound}")
    return value


def parse_quantity(text: str | float | int, what: str = "value", allow_zero: bool = False) -> float:
    """Parse a count with an optional SI or binary suffix into a float.

    Accepts ``2.5e12``, ``2.5T``, ``12GB`` (12e9), ``12GiB`` (12 * 2**30), ``1.5M``,
    ``3 TFLOP``. ``what`` names the value in error messages.

    Raises:
        UsageError: for text that is not a number, an unknown suffix, NaN,
            infinity, a negative number, or zero unless ``allow_zero``.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _finite_positive(float(text), str(text), what, allow_zero)
    s = str(text)
    if s.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity"):
        return _finite_positive(float(s.strip()), s, what, allow_zero)
    m = _QTY_RE.match(s)
    if not m:
        raise UsageError(f"{what} {s!r} is not a number; give e.g. 2.5e12, 2.5T, 12GB or 12GiB")
    number, suffix = float(m.group(1)), m.group(2)
    rest = suffix
    mult = 1.0
    for prefix, factor in sorted(_IEC.items(), key=lambda kv: -len(kv[0])):
        if rest.startswith(prefix):
            mult, rest = factor, rest[len(prefix):]
            break
    else:
        if rest and rest[0] in _SI:
            # "B" alone is bytes, not a prefix; "b" likewise.
            if rest.lower() not in _UNIT_WORDS:
                mult, rest = _SI[rest[0]], rest[1:]
    if rest and rest.lower() not in _UNIT_WORDS:
        raise UsageError(
            f"{what} {s!r} has an unknown suffix {suffix!r}; use k, M, G, T, P, E (x1000) or Ki, Mi, Gi, Ti, Pi (x1024), optionally followed by B or FLOP"
        )
    return _finite_positive(number * mult, s, what, allow_zero)


def parse_time(text: str | float | int, what: str = "time") -> float:
    """Parse a duration such as ``850us``, ``1.2ms`` or ``0.3s`` into seconds.

    Text must carry its unit (a bare ``5`` is ambiguous: 5 s? 5 us?); a Python
    number (int or float) is taken as seconds.

    Raises:
        UsageError: for text that is not a duration, an unknown unit, NaN,
            infinity, zero or a negative value.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _finite_positive(float(text), str(text), what, False)
    s = str(text)
    if s.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity"):
        return _finite_positive(float(s.strip()), s, what, False)
    m = _TIME_RE.match(s)
    if m and m.group(2) == "":
        raise UsageError(f"{what} {s!r} has no unit; write e.g. {m.group(1)}us, {m.group(1)}ms or {m.group(1)}s")
    if not m or m.group(2) not in _TIME:
        raise UsageError(f"{what} {s!r} is not a duration; give e.g. 850us, 1.2ms, 0.3s (units ns, us, ms, s)")
    return _finite_positive(float(m.group(1)) * _TIME[m.group(2)], s, what, False)


def parse_count(text: str | int, what: str = "count") -> int:
    """Parse a positive whole number (suffixes allowed: ``1k``, ``2M``).

    Raises:
        UsageError: if the value is not a whole number greater than zero.
    """
    value = parse_quantity(text, what)
    if value != int(value):
        raise UsageError(f"{what} {text!r} must be a whole number")
    return int(value)


def fmt_si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """Format ``value`` with an SI prefix, e.g. ``fmt_si(4.8e12, 'B/s') == '4.80 TB/s'``.

    ``None`` renders as ``n/a``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value == 0:
        return f"0 {unit}".strip()
    prefixes = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
    a = abs(value)
    for factor, p in prefixes:
        if a >= factor * 0.9995:
            return f"{value / factor:.{digits}g} {p}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def fmt_time(seconds: float | None, digits: int = 3) -> str:
    """Format a duration in s, ms, us or ns, e.g. ``fmt_time(8.9e-3) == '8.9 ms'``; ``None`` is ``n/a``."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    a = abs(seconds)
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if a >= factor * 0.9995:
            return f"{seconds / factor:.{digits}g} {unit}"
    return f"{seconds / 1e-9:.{digits}g} ns"


def fmt_bytes(n: float | None, digits: int = 3) -> str:
    """Format a byte count with binary prefixes (KiB, MiB, GiB); ``None`` is ``n/a``."""
    if n is None:
        return "n/a"
    for factor, unit in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(n) >= factor:
            return f"{n / factor:.{digits}g} {unit}"
    return f"{n:.0f} B"


#: The largest dimension a shape may give: 2**53, the last integer a float holds exactly.
MAX_DIMENSION = 2**53
_POWER_RE = re.compile(r"^\s*(\d+)\s*(?:\^|\*\*)\s*(\d+)\s*$")


def parse_dimension(text: str | int, what: str = "dimension") -> int:
    """A whole number of elements greater than zero: ``4096``, ``2^28`` (or ``2**28``),
    ``1M`` (suffixes as :func:`parse_count`), at most :data:`MAX_DIMENSION`.

    Raises:
        UsageError: zero, negative, not a whole number, not a number, or too large.
    """
    if isinstance(text, bool):
        raise UsageError(f"{what} {text!r} is not a whole number")
    m = _POWER_RE.match(str(text)) if not isinstance(text, int) else None
    if m:
        base, exp = int(m.group(1)), int(m.group(2))
        value = base**exp if exp <= 64 and base <= MAX_DIMENSION else MAX_DIMENSION + 1
        if value < 1:
            raise UsageError(f"{what} {text!r} must be greater than zero")
    else:
        value = parse_count(text, what)
    if value > MAX_DIMENSION:
        raise UsageError(f"{what} {text!r} is larger than 2^53; give a real size")
    return value


def parse_shape(text: str | tuple | list, names: tuple[str, ...], sep: str, what: str, example: str) -> tuple[int, ...]:
    """The dimensions of a shape such as ``8192x8192x4096`` (``sep`` "x"; ``X`` and ``×``
    also split) or ``1,32,4096,128`` (``sep`` ","), one per name in ``names``; each
    as :func:`parse_dimension`. A tuple or list of numbers is taken as the dimensions.

    Raises:
        UsageError: the wrong number of parts (the message shows ``example``), or a bad part.
    """
    if isinstance(text, (tuple, list)):
        parts = [p for p in text]
    else:
        s = str(text)
        if sep == "x":
            s = s.replace("×", "x").replace("X", "x")
        parts = s.split(sep)
    form = sep.join(names)
    if len(parts) != len(names) or any(isinstance(p, str) and not p.strip() for p in parts):
        raise UsageError(f"{what} {text!r} must give {len(names)} dimensions {form}, e.g. {example}")
    return tuple(parse_dimension(p, f"{what} {n}") for n, p in zip(names, parts))
