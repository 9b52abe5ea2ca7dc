"""Every multiplier, unit and formatter branch of gpuwhy.units, with the values written out.

SI prefixes are powers of 1000 (k/K 1e3, M 1e6, G 1e9, T 1e12, P 1e15, E 1e18); IEC
prefixes powers of 1024 (Ki 2^10, Mi 2^20, Gi 2^30, Ti 2^40, Pi 2^50); times ns 1e-9,
us/µs 1e-6, ms 1e-3, s 1.
"""

from __future__ import annotations

import pytest

from gpuwhy.errors import UsageError
from gpuwhy.units import fmt_bytes, fmt_si, fmt_time, parse_count, parse_quantity, parse_time


@pytest.mark.parametrize(
    "text, value",
    [
        ("1", 1.0),
        ("3k", 3_000.0),
        ("3K", 3_000.0),
        ("3M", 3_000_000.0),
        ("3G", 3_000_000_000.0),
        ("3T", 3_000_000_000_000.0),
        ("3P", 3_000_000_000_000_000.0),
        ("3E", 3_000_000_000_000_000_000.0),
        ("3Ki", 3 * 1024),
        ("3Mi", 3 * 1_048_576),
        ("3Gi", 3 * 1_073_741_824),
        ("3Ti", 3 * 1_099_511_627_776),
        ("3Pi", 3 * 1_125_899_906_842_624),
        ("3MiB", 3 * 1_048_576),
        ("3 PB", 3e15),
        ("3 TFLOPs", 3e12),
        ("3Gops", 3e9),
        ("3 bytes", 3.0),
        ("3b", 3.0),
        ("+4e3", 4000.0),
        (".5k", 500.0),
    ],
)
def test_multipliers(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text, msg",
    [  # (more cases in test_units.test_parse_quantity_rejects)
        ("abc", "--x 'abc' is not a number; give e.g. 2.5e12, 2.5T, 12GB or 12GiB"),
        ("3Kix", "--x '3Kix' has an unknown suffix 'Kix'; use k, M, G, T, P, E (x1000) or Ki, Mi, Gi, Ti, Pi (x1024)"),
        ("3kk", "--x '3kk' has an unknown suffix 'kk'"),
        ("-inf", "--x '-inf' is not a finite number"),
        ("0k", "--x '0k' must be greater than zero"),
    ],
)
def test_parse_quantity_messages(text, msg):
    with pytest.raises(UsageError) as exc:
        parse_quantity(text, "--x")
    assert str(exc.value).startswith(msg)


def test_zero_and_numbers_and_bools():
    assert parse_quantity("0", allow_zero=True) == 0.0
    with pytest.raises(UsageError, match="'-1' must be zero or more"):
        parse_quantity("-1", allow_zero=True)
    assert parse_quantity(5) == 5.0 and parse_quantity(2.5e12) == 2.5e12
    with pytest.raises(UsageError, match="'0' must be greater than zero"):
        parse_quantity(0)
    with pytest.raises(UsageError, match="is not a finite number"):
        parse_quantity(float("inf"))
    with pytest.raises(UsageError, match="'True' is not a number"):  # a bool is not a count
        parse_quantity(True)


@pytest.mark.parametrize(
    "text, seconds",
    [("850µs", 850e-6), ("3s", 3.0), (" 2 ms ", 2e-3), (0.25, 0.25), (3, 3.0)],  # more in test_units.test_parse_time
)
def test_parse_time_units(text, seconds):
    assert parse_time(text) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize(
    "text, msg",
    [  # more in test_units.test_parse_time_rejects
        ("3h", "time '3h' is not a duration; give e.g. 850us, 1.2ms, 0.3s (units ns, us, ms, s)"),
        (0, "time '0' must be greater than zero"),
        (True, "time 'True' is not a duration"),
    ],
)
def test_parse_time_messages(text, msg):
    with pytest.raises(UsageError) as exc:
        parse_time(text)
    assert str(exc.value).startswith(msg)


def test_parse_count():
    assert parse_count("64") == 64 and parse_count("1k") == 1000 and parse_count("2Ki") == 2048 and parse_count(7) == 7
    with pytest.raises(UsageError, match="launches '1.5' must be a whole number"):
        parse_count("1.5", "launches")
    with pytest.raises(UsageError, match="launches '0' must be greater than zero"):
        parse_count("0", "launches")


@pytest.mark.parametrize(
    "value, text",
    [
        (4.8e12, "4.8 TB/s"),
        (2.5e18, "2.5 EB/s"),
        (3.2e15, "3.2 PB/s"),
        (989.5e9, "990 GB/s"),
        (12.5e6, "12.5 MB/s"),
        (1.5e3, "1.5 kB/s"),
        (999.5, "1 kB/s"),  # from 0.9995 x the prefix up
        (999.4, "999 B/s"),
        (1.0, "1 B/s"),
        (0.5, "0.5 B/s"),
        (0, "0 B/s"),
        (-4.8e12, "-4.8 TB/s"),
        (None, "n/a"),
        (float("nan"), "n/a"),
    ],
)
def test_fmt_si(value, text):
    assert fmt_si(value, "B/s") == text


def test_fmt_si_digits_and_no_unit():
    assert fmt_si(123456.0) == "123 k"
    assert fmt_si(123456.0, digits=5) == "123.46 k"
    assert fmt_si(0) == "0"


@pytest.mark.parametrize(
    "seconds, text",
    [
        (12.9, "12.9 s"),
        (1.0, "1 s"),
        (0.9995, "1 s"),
        (0.9994, "999 ms"),
        (8.9e-3, "8.9 ms"),
        (850e-6, "850 us"),
        (1.76e-6, "1.76 us"),
        (40e-9, "40 ns"),
        (0.5e-9, "0.5 ns"),  # below a nanosecond: still ns
        (None, "n/a"),
    ],
)
def test_fmt_time(seconds, text):
    assert fmt_time(seconds) == text


def test_fmt_time_digits():
    assert fmt_time(1.23456e-3, digits=5) == "1.2346 ms"


@pytest.mark.parametrize(
    "n, text",
    [
        (3 * 2**40, "3 TiB"),
        (2**30, "1 GiB"),
        (62914560, "60 MiB"),  # 60 x 2^20
        (1024, "1 KiB"),
        (1023, "1023 B"),
        (1536, "1.5 KiB"),
        (0, "0 B"),
        (None, "n/a"),
    ],
)
def test_fmt_bytes(n, text):
    assert fmt_bytes(n) == text


def test_fmt_bytes_digits():
    assert fmt_bytes(1.23456 * 2**30) == "1.23 GiB"
    assert fmt_bytes(1.23456 * 2**30, digits=5) == "1.2346 GiB"
