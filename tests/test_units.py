import math

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.units import fmt_bytes, fmt_si, fmt_time, parse_count, parse_quantity, parse_time


@pytest.mark.parametrize(
    "text, value",
    [
        ("2.5e12", 2.5e12),
        ("2.5T", 2.5e12),
        ("12GB", 12e9),
        ("12GiB", 12 * 2**30),
        ("1.5M", 1.5e6),
        ("3 TFLOP", 3e12),
        ("4KiB", 4096),
        ("100", 100.0),
        ("1e9B", 1e9),
        ("7k", 7000.0),
    ],
)
def test_parse_quantity_suffixes(text, value):
    assert parse_quantity(text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", "--flops '0' must be greater than zero"),
        ("-1", "--flops '-1' must be greater than zero"),
        ("-2.5T", "--flops '-2.5T' must be greater than zero"),
        ("nan", "--flops 'nan' is not a finite number"),
        ("NaN", "--flops 'NaN' is not a finite number"),
        ("inf", "--flops 'inf' is not a finite number"),
        ("abc", "--flops 'abc' is not a number"),
        ("12Q", "--flops '12Q' has an unknown suffix 'Q'"),
        ("1.5Mx", "--flops '1.5Mx' has an unknown suffix 'Mx'"),
        ("", "--flops '' is not a number"),
        ("1..2", "--flops '1..2' is not a number"),
        ("GB", "--flops 'GB' is not a number"),
    ],
)
def test_parse_quantity_rejects(text, expected):
    with pytest.raises(UsageError) as exc:
        parse_quantity(text, "--flops")
    msg = str(exc.value)
    assert msg.startswith(expected) and "\n" not in msg


def test_parse_quantity_zero_allowed_when_asked():
    assert parse_quantity("0", allow_zero=True) == 0.0


@pytest.mark.parametrize("text, seconds", [("850us", 850e-6), ("1.2ms", 1.2e-3), ("0.3s", 0.3), ("5e-4s", 5e-4), ("40ns", 40e-9), ("2 ms", 2e-3), (5e-4, 5e-4)])
def test_parse_time(text, seconds):
    assert parse_time(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    "text, msg",
    [
        ("0ms", "time '0ms' must be greater than zero"),
        ("-1us", "time '-1us' must be greater than zero"),
        ("3h", "time '3h' is not a duration"),
        ("fast", "time 'fast' is not a duration"),
        ("nan", "time 'nan' is not a finite number"),
        ("5", "time '5' has no unit; write e.g. 5us, 5ms or 5s"),
        ("5e-4", "time '5e-4' has no unit"),
    ],
)
def test_parse_time_rejects(text, msg):
    with pytest.raises(UsageError, match=msg):
        parse_time(text)


def test_parse_count():
    assert parse_count("64") == 64
    assert parse_count("1k") == 1000
    with pytest.raises(UsageError, match="count \'1.5\' must be a whole number"):
        parse_count("1.5")
    with pytest.raises(UsageError, match="count \'0\' must be greater than zero"):
        parse_count("0")


def test_formatting():
    assert fmt_si(4.8e12, "B/s") == "4.8 TB/s"
    assert fmt_si(None) == "n/a"
    assert fmt_time(8.9e-3) == "8.9 ms"
    assert fmt_time(850e-6) == "850 us"
    assert fmt_time(None) == "n/a"
    # Extremes as people write them (issue 31: "1e-21 ns"): below a thousandth of a ns, seconds in engineering notation.
    assert fmt_time(1e-30) == "1e-30 s" and fmt_time(2.3e-13) == "230e-15 s"
    assert fmt_time(1e-12) == "0.001 ns" and fmt_time(5e-10) == "0.5 ns"
    assert fmt_bytes(62914560) == "60 MiB"
    assert not math.isnan(parse_quantity(1))
