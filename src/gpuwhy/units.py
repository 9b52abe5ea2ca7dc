"""Parsing and formatting of quantities with SI/binary suffixes and time units.

Internally gpuwhy works in plain SI: FLOP, bytes, seconds, FLOP/s, B/s.
Formatting to human units happens only at the edges (render, CLI messages).
"""

from __future__ import annotations

import math
import numbers
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
_BYTE_WORDS = ("B", "byte", "bytes", "Byte", "Bytes")
_FLOP_WORDS = ("flops", "flop", "ops", "op")


def _finite_positive(value: float, text: str, what: str, allow_zero: bool) -> float:
    if math.isnan(value) or math.isinf(value):
        raise UsageError(f"{what} {text!r} is not a finite number; give a value such as 2.5e12 or 12GB")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "greater than zero"
        raise UsageError(f"{what} {text!r} must be {bound}")
    return value


def parse_quantity(text: str | float | int, what: str = "value", allow_zero: bool = False, unit: str | None = None) -> float:
    """Parse a count with an optional SI or binary suffix into a float.

    Accepts ``2.5e12``, ``2.5T``, ``12GB`` (12e9), ``12GiB`` (12 * 2**30), ``1.5M``,
    ``3 TFLOP``. ``what`` names the value in error messages. ``unit`` says what is
    counted: ``"B"`` (bytes: a unit word must be B/byte, a lowercase ``b`` is bits and
    refused with the byte figure, FLOP words refused, at least 1 byte) or ``"FLOP"``
    (FLOP words only: ``1TB`` is refused, bytes are not FLOPs; at least 1 FLOP);
    None accepts either word.

    Raises:
        UsageError: for text that is not a number, an unknown suffix, the wrong unit,
            NaN, infinity, a negative number, zero unless ``allow_zero``, or under one
            byte or FLOP.
    """
    value = _parse_quantity(text, what, allow_zero, unit)
    if unit in ("B", "FLOP") and 0 < value < 1:
        counted, eg = ("byte", "12GB or 3.2e9") if unit == "B" else ("FLOP", "2.5T or 2.5e12")
        raise UsageError(f"{what} {str(text)!r} is less than one {counted}; give the whole count, e.g. {eg}")
    return value


def _parse_quantity(text, what: str, allow_zero: bool, unit: str | None) -> float:
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
    if unit == "B" and rest and rest not in _BYTE_WORDS:
        if rest == "b":
            bytes_ = number * mult / 8
            raise UsageError(f"{what} {s!r} is in bits (lowercase b); that is {fmt_si(bytes_, 'B')}: give bytes, e.g. "
                             f"{what} {fmt_si(bytes_, 'B').replace(' ', '')}")
        raise UsageError(f"{what} {s!r} counts {rest}, not bytes; give bytes, e.g. 12GB or 3.2e9")
    if unit == "FLOP" and rest and rest.lower() not in _FLOP_WORDS:
        hint = "; for a billion write G (2.5G)" if suffix in ("B", "b") else ""
        raise UsageError(f"{what} {s!r} is in bytes ({rest}), and bytes are not FLOPs; give FLOPs, e.g. 2.5T or 2.5e12{hint}")
    return _finite_positive(number * mult, s, what, allow_zero)


def parse_time(text: str | float | int, what: str = "time", allow_zero: bool = False) -> float:
    """Parse a duration such as ``850us``, ``1.2ms`` or ``0.3s`` into seconds: the one parser of
    every time option (``--time``, ``--launch-overhead``, ``--max-launch-overhead``, a ``--point``'s TIME).

    Text must carry its unit (a bare ``5`` is ambiguous: 5 s? 5 us?); a Python
    number (int or float) is taken as seconds. ``0`` needs no unit when ``allow_zero``.

    Raises:
        UsageError: for text that is not a duration, an unknown unit, NaN,
            infinity, a negative value, or zero unless ``allow_zero``.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _finite_positive(float(text), str(text), what, allow_zero)
    s = str(text)
    if s.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity"):
        return _finite_positive(float(s.strip()), s, what, allow_zero)
    if allow_zero and _TIME_RE.match(s) and float(_TIME_RE.match(s).group(1)) == 0:
        return 0.0
    m = _TIME_RE.match(s)
    if m and m.group(2) == "":
        raise UsageError(f"{what} {s!r} has no unit; write e.g. {m.group(1)}us, {m.group(1)}ms or {m.group(1)}s")
    if not m or m.group(2) not in _TIME:
        raise UsageError(f"{what} {s!r} is not a duration; give e.g. 850us, 1.2ms, 0.3s (units ns, us, ms, s)")
    return _finite_positive(float(m.group(1)) * _TIME[m.group(2)], s, what, allow_zero)


def parse_count(text: str | int, what: str = "count") -> int:
    """Parse a positive whole number (suffixes allowed: ``1k``, ``2M``).

    Raises:
        UsageError: if the value is not a whole number greater than zero.
    """
    value = parse_quantity(text, what)
    if value != int(value):
        raise UsageError(f"{what} {text!r} must be a whole number")
    return int(value)


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


# ---------------------------------------------------------------- formatting --
# One formatter for people: a mantissa of about ``digits`` significant figures,
# SI prefixes for quantities with a unit, engineering notation (exponent a
# multiple of three, ``71.6e6``) for dimensionless numbers outside 1e-3..1e6.
# Python's ``g`` format (``1.29e+04``) is never shown to a person.

_BIG_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_LONG_TIMES = ((86400.0, "days"), (3600.0, "h"), (60.0, "min"))


def _missing(value) -> bool:
    return value is None or isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value)


def _sig(x: float, digits: int, trim: bool = True) -> str:
    """``x`` with ``digits`` significant figures, fixed-point (``4.8``, ``850``, ``0.0123``);
    trailing zeros dropped when ``trim`` (``4.80`` kept otherwise)."""
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def _round_sig(x: float, digits: int) -> float:
    """``x`` rounded to ``digits`` significant figures (so 999.7 becomes 1000 before a prefix is picked)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def fmt_eng(value: float, digits: int = 3, trim: bool = True) -> str:
    """Engineering notation: ``71.6e6``, ``1e9``, ``120e-6`` (exponent a multiple of three, no ``+``); ``0`` for zero."""
    x = _round_sig(float(value), digits)
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "n/a")
    exp = 3 * math.floor(math.log10(abs(x)) / 3)
    mant = _round_sig(x / 10.0**exp, digits)
    if abs(mant) >= 1000:  # 999.95e3 rounds up to 1e6
        mant, exp = mant / 1000, exp + 3
    return f"{_sig(mant, digits, trim)}e{exp}" if exp else _sig(mant, digits, trim)


def fmt_num(value: float | None, digits: int = 3, trim: bool = True, *, whole_from: float | None = None) -> str:
    """A dimensionless number for people: ``0.00176``, ``3.36``, ``66.1``, ``4,598``, ``71.6e6``, ``120e-6``.

    Fixed-point with ``digits`` significant figures (whole numbers from 10**digits up,
    thousands separated) for 1e-3 <= |x| < 1e6, engineering notation outside;
    trailing zeros dropped unless ``trim`` is False (a table column: ``55.0``);
    with ``whole_from``, a whole number with separators from that magnitude up, never
    engineering notation there (``fmt_num(2.5e6, 4, whole_from=1000) == "2,500,000"``);
    ``n/a`` for None or NaN, ``inf`` for infinity.
    """
    if _missing(value):
        return "n/a"
    x = float(value)
    if whole_from is not None and abs(x) >= whole_from:
        return f"{x:,.0f}"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    r = _round_sig(x, digits)
    a = abs(r)
    if a == 0:
        return "0"
    if a >= 1e6 or a < 1e-3:
        return fmt_eng(x, digits, trim)
    if a >= 10**digits:
        return f"{x:,.0f}"
    text = _sig(r, digits, trim)
    if a >= 1000:
        whole, _, frac = text.partition(".")
        text = f"{int(whole):,}" + (f".{frac}" if frac else "")
    return text


def fmt_cell(value, digits: int = 3) -> str:
    """A figure for a table cell of the HTML report or a roofline drawing: :func:`fmt_num` with
    ``digits`` figures and trailing zeros kept (``55.0``, ``4,598``, ``71.6e6``); ``n/a`` for
    anything but a finite number (None, text, a bool, NaN, infinity)."""
    return fmt_num(finite(value), digits, trim=False)


def finite(value) -> float | None:
    """``value`` as a float when it is a finite number, else None (None, text, a bool, NaN,
    infinity): what a figure read from a JSON document may be."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def fmt_g(value: float | None, unit: str = "") -> str:
    """``format(value, "g")`` (six significant figures, no separators: ``4800``, ``989.5``,
    ``0.5``) where that writes no exponent, engineering notation where it would (from 1e6,
    below 1e-4: ``1.2e6`` rather than ``1.2e+06``); ``unit`` appended after a space
    (``fmt_g(1980, "MHz") == "1980 MHz"``); ``n/a`` (no unit) for None/NaN."""
    if _missing(value):
        return "n/a"
    text = format(float(value), "g")
    text = fmt_eng(value, 6) if "e" in text else text
    return f"{text} {unit}" if unit else text


def fmt_pct(value: float | None, decimals: int = 1, *, compact: bool = True, fraction: bool = False) -> str:
    """A percentage with ``decimals`` decimals: ``95.8%``. ``value`` is in percent, or with
    ``fraction`` a fraction (0.958) that is multiplied by 100 first.

    ``compact`` (the default): from 1000% on :func:`fmt_num` (``2,315%``, ``1.49e6%``), and
    ``n/a`` for None/NaN. ``compact=False``: exactly ``f"{value:.{decimals}f}%"`` for every
    number (``2315.0%``; Python's ``inf%``/``nan%``), ``n/a`` only for None (wrap the value
    in :func:`finite` to write ``n/a`` for infinity, NaN and non-numbers too).

    Raises:
        ValueError, TypeError: ``compact=False`` and ``value`` is neither None nor a number.
    """
    if compact:
        if _missing(value):
            return "n/a"
        x = 100 * float(value) if fraction else float(value)
        if abs(x) >= 1000 or math.isinf(x):
            return f"{fmt_num(x)}%"
        return f"{x:.{decimals}f}%"
    if value is None:
        return "n/a"
    return f"{100 * value if fraction else value:.{decimals}f}%"


def fmt_share(part: float, total: float | None, decimals: int = 0) -> str:
    """``part`` as a percentage of ``total`` with ``decimals`` decimals (``37%``); ``n/a``
    when ``total`` is None or zero."""
    return f"{100 * part / total:.{decimals}f}%" if total else "n/a"


def fmt_si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """``value`` with an SI prefix: ``fmt_si(4.8e12, 'B/s') == '4.8 TB/s'``, ``fmt_si(1.5e-3, 'FLOP/byte') == '0.0015 FLOP/byte'``.

    Prefixes k..E from 1e3 up (engineering notation past 1e21); below 1 a plain
    decimal down to 1e-3, then engineering notation (``120e-6 B``). Seconds go
    through :func:`fmt_time`. ``None``/NaN render as ``n/a``.
    """
    if _missing(value):
        return "n/a"
    if unit == "s":
        return fmt_time(value, digits)
    x = float(value)
    if x == 0 or math.isinf(x):
        return f"{fmt_num(x)} {unit}".strip()
    a = abs(_round_sig(x, digits))
    if a >= 1000 * 1e18:
        return f"{fmt_eng(x, digits)} {unit}".strip()
    if a < 1.0:
        return f"{fmt_num(x, digits)} {unit}".strip()
    for factor, p in _BIG_PREFIXES:
        if a >= factor:
            m = _round_sig(x / factor, digits)
            return f"{_sig(m, digits)} {p}{unit}".strip()
    return f"{_sig(x, digits)} {unit}".strip()  # pragma: no cover


def fmt_time(seconds: float | None, digits: int = 3) -> str:
    """A duration for people: ``1.76 us``, ``8.9 ms``, ``12.9 s``, ``4.5 min``, ``4.14 h``, ``12 days``; ``n/a`` for None/NaN.

    ns..s below two minutes (under 1 ns still in ns down to a thousandth: ``0.5 ns``, ``0.001 ns``;
    shorter in seconds, engineering notation: ``1e-30 s``, ``230e-15 s``), then minutes, hours
    and days (day counts past a million in engineering notation).
    """
    if _missing(seconds):
        return "n/a"
    x = float(seconds)
    if x == 0:
        return "0 s"
    if math.isinf(x):
        return f"{fmt_num(x)} s"
    a = abs(_round_sig(x, digits))
    for factor, unit in _LONG_TIMES:
        if a >= 2 * factor:
            return f"{fmt_num(x / factor, digits)} {unit}"
    for factor, unit in _TIME_UNITS:
        if a >= factor:
            return f"{_sig(_round_sig(x / factor, digits), digits)} {unit}"
    if a < 1e-12:
        return f"{fmt_eng(x, digits)} s"
    return f"{fmt_num(x / 1e-9, digits)} ns"


def fmt_bytes(n: float | None, digits: int = 3) -> str:
    """A byte count with binary prefixes: ``512 B``, ``60 MiB``, ``1.5 TiB``, ``2 EiB``; ``n/a`` for None/NaN."""
    if _missing(n):
        return "n/a"
    x = float(n)
    if math.isinf(x):
        return f"{fmt_num(x)} B"
    a = abs(x)
    for power, unit in ((60, "EiB"), (50, "PiB"), (40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        factor = 2.0**power
        if a >= factor * (1 - 0.5 * 10.0 ** -(digits - 1)) and _round_sig(a / factor, digits) >= 1:
            m = _round_sig(x / factor, digits)
            if abs(m) >= 1024 and unit != "EiB":
                continue
            return f"{fmt_num(m, digits) if unit == 'EiB' else _sig(m, digits)} {unit}"
    return f"{fmt_num(x, digits) if a < 1 else f'{x:.0f}'} B"


def fmt_fixed(value: float | None, decimals: int = 1, *, grouped: bool = True, whole_from: float | None = None,
              missing: str = "n/a") -> str:
    """``value`` with exactly ``decimals`` decimals, thousands separated when ``grouped``:
    ``fmt_fixed(3350.04) == "3,350.0"``, ``fmt_fixed(0.5, 2, grouped=False) == "0.50"``.

    ``whole_from``: from that value up a whole number with separators (``fmt_fixed(350.4, 1,
    grouped=False, whole_from=10) == "350"``, ``"3.5"`` below). ``missing`` for None;
    infinity and NaN as Python writes them (``inf``, ``nan``).
    """
    if value is None:
        return missing
    if whole_from is not None and value >= whole_from:
        return f"{value:,.0f}"
    return f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"


def fmt_ns(seconds: float | None, decimals: int = 0, *, unit: bool = False) -> str:
    """A duration given in seconds as nanoseconds with ``decimals`` decimals and separators, for a
    column of nanoseconds: ``fmt_ns(1.2345e-6) == "1,234"``; ``unit`` appends `` ns``
    (``fmt_ns(8.05e-7, 1, unit=True) == "805.0 ns"``); ``n/a`` for None."""
    if seconds is None:
        return "n/a"
    text = f"{seconds * 1e9:,.{decimals}f}"
    return f"{text} ns" if unit else text


def fmt_us(microseconds: float, digits: int = 3) -> str:
    """A duration given in microseconds, written as :func:`fmt_time` writes seconds (``1.76 us``, ``8.9 ms``)."""
    return fmt_time(microseconds * 1e-6, digits)


def fmt_rate(value: float, infinite: str = "unbounded") -> str:
    """A rate for sentences and tables (tokens/s): :func:`fmt_num` (``112``, ``4,598``);
    ``infinite`` for infinity or NaN.

    Raises:
        TypeError: ``value`` is not a number.
    """
    if not math.isfinite(value):
        return infinite
    return fmt_num(value)


def fmt_times(value: float | None, decimals: int = 2, *, infinite: str = "no bound") -> str:
    """A factor for a table: ``2.50x`` (``decimals`` decimals) below 100, a whole ``250x`` from
    100 up (no separators), ``infinite`` for infinity, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if value == float("inf"):
        return infinite
    return f"{value:.{decimals}f}x" if value < 100 else f"{value:.0f}x"


def fmt_usd(value: float) -> str:
    """US dollars: cents from 1 up (``1,234.50``), :func:`fmt_num` figures below (``0.0123``)."""
    return f"{value:,.2f}" if value >= 1 else fmt_num(value)


# Counts: five ways of writing how many, each where it reads best.

def fmt_count(n: float) -> str:
    """An exact count with separators (``134,217,728``); past 2^53, where a float stops
    holding whole numbers, :func:`fmt_num` with 4 figures."""
    return f"{int(n):,}" if n == int(n) and abs(n) < 2**53 else fmt_num(n, 4)


def fmt_pow2(value) -> str:
    """An element count: ``2^28`` for a power of two from 1024 up, else ``1,000`` (the whole
    part); ``n/a`` for anything but a finite number."""
    x = finite(value)
    if x is None:
        return "n/a"
    n = int(x)
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt_binary_count(n: int) -> str:
    """A count as an exact binary multiple when it is one: ``256M`` (256 x 2^20), ``1G``,
    ``4K``; else the count with separators (``1,000``)."""
    for factor, suffix in ((2**30, "G"), (2**20, "M"), (2**10, "K")):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return f"{n:,}"


def fmt_count_words(n: float) -> str:
    """A count in words: ``3 billion``, ``124 million``, ``1.5 trillion`` (from 0.9995 x the
    unit, so 999.96 million reads 1 billion); below a thousand the whole number (``512``)."""
    for factor, unit in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if n >= factor * 0.9995:
            return f"{fmt_num(n / factor)} {unit}"
    return f"{n:.0f}"


def fmt_params(n: float) -> str:
    """A parameter or token count the way model names write it, 4 figures and no space:
    ``8.03B``, ``1.5T``, ``124M``, ``512`` (T, B for billion, M; from 0.9995 x the unit,
    so 999.96M reads 1B)."""
    scales = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1.0, ""))
    for factor, unit in scales:
        if n >= factor * 0.9995:
            break
    return f"{fmt_num(n / factor, 4)}{unit}"


# Sizes in words other than fmt_bytes's.

def fmt_size(n: float, smallest: str = "MiB") -> str:
    """A memory size (a cache, a working set) in GiB from 1 GiB up, else MiB, with
    :func:`fmt_num` figures (``50 MiB``, ``1.5 GiB``); with ``smallest="KiB"``, KiB below
    1 MiB (``512 KiB``) where ``"MiB"`` writes ``0.5 MiB``."""
    if smallest == "MiB":
        return f"{fmt_num(n / 2**20)} MiB" if n < 2**30 else f"{fmt_num(n / 2**30)} GiB"
    if n >= 2**30:
        return f"{fmt_num(n / 2**30)} GiB"
    if n >= 2**20:
        return f"{fmt_num(n / 2**20)} MiB"
    return f"{fmt_num(n / 2**10)} KiB"


def fmt_kb(n: float, *, fixed: bool = False) -> str:
    """Bytes in decimal kilobytes as the course writes them (336 KB = 336,000 B), MB from
    1e6 up: :func:`fmt_num` figures (``336 KB``, ``2.5 MB``), or with ``fixed`` a table's
    fixed decimals (``336.0 KB``, ``2.50 MB``)."""
    if n >= 1e6:
        return f"{n / 1e6:,.2f} MB" if fixed else f"{fmt_num(n / 1e6)} MB"
    return f"{n / 1e3:,.1f} KB" if fixed else f"{fmt_num(n / 1e3)} KB"


def fmt_file_size(n: float) -> str:
    """A file size for messages: whole ``bytes`` below 1 KiB, else one decimal in the largest
    binary unit it reaches up to TiB (``512 bytes``, ``4.0 GiB``, ``2048.0 TiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def fmt_decade(exp: int) -> str:
    """10**``exp`` as an axis tick: ``0.001`` .. ``10,000`` written out, else ``1e5``, ``1e-4``."""
    if -3 <= exp <= 4:
        v = 10.0**exp
        return f"{v:,.0f}" if exp >= 0 else f"{v:.{-exp}f}"
    return f"1e{exp}"


def tera_unit(precision: str) -> str:
    """The unit of a peak given in 1e12 operations per second: ``TOPS`` for integer
    precisions (``int8``), else ``TFLOP/s``."""
    return "TOPS" if precision.startswith("int") else "TFLOP/s"


def fmt_counted(n: float, noun: str, plural: str | None = None) -> str:
    """``n`` things in words, the noun agreeing with the count: ``1 gap``, ``0 gaps``, ``1,024
    launches``, ``2 GPUs`` (``plural``: the plural when adding "s" does not make it, e.g.
    ``fmt_counted(3, "copy", "copies")``). The one place a count meets its noun."""
    many = plural if plural is not None else noun + "s"
    whole = float(n).is_integer()
    figure = f"{int(n):,}" if whole else fmt_num(n)
    return f"{figure} {noun if whole and abs(int(n)) == 1 else many}"
