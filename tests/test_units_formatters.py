"""The one home of number formatting (gpuwhy.units): each variant a former private copy
printed, pinned where the copies disagreed (decimals, separators, what is n/a)."""

from __future__ import annotations

import math

import pytest

from gpuwhy.units import (
    finite, fmt_binary_count, fmt_cell, fmt_count, fmt_count_words, fmt_decade, fmt_file_size, fmt_fixed, fmt_g,
    fmt_kb, fmt_ns, fmt_num, fmt_params, fmt_pct, fmt_pow2, fmt_rate, fmt_share, fmt_size, fmt_times, fmt_us, fmt_usd,
    tera_unit,
)


def test_percent_compact_and_fixed():
    assert fmt_pct(95.84) == "95.8%" and fmt_pct(95.84, 0) == "96%"
    assert fmt_pct(2315.04) == "2,315%" and fmt_pct(2315.04, compact=False) == "2315.0%"
    assert fmt_pct(math.nan) == "n/a" and fmt_pct(math.nan, compact=False) == "nan%"
    assert fmt_pct(math.inf, 0, compact=False) == "inf%" and fmt_pct(finite(math.inf), compact=False) == "n/a"
    assert fmt_pct(None, compact=False) == "n/a" and fmt_pct(0.958, compact=False, fraction=True) == "95.8%"
    assert fmt_pct(0.5, 0, fraction=True) == "50%"
    assert fmt_share(3, 8) == "38%" and fmt_share(3, 8, 1) == "37.5%" and fmt_share(3, 0) == fmt_share(3, None) == "n/a"


def test_table_figures():
    assert fmt_cell(55) == "55.0" and fmt_cell(4598.2) == "4,598" and fmt_cell(7.16e7) == "71.6e6"
    assert [fmt_cell(v) for v in (None, "55", True, math.nan, math.inf)] == ["n/a"] * 5
    assert fmt_num(2.5e6, 4, whole_from=1000) == "2,500,000" and fmt_num(2.5e6, 4) == "2.5e6"
    assert fmt_num(123.456, 4, whole_from=1000) == "123.5" and fmt_num(1234.5, 4, whole_from=1000) == "1,234"


def test_fixed_decimals():
    assert fmt_fixed(3350.04) == "3,350.0" and fmt_fixed(3350.04, 0) == "3,350" and fmt_fixed(3350.04, 0, grouped=False) == "3350"
    assert fmt_fixed(350.4, 1, grouped=False, whole_from=10) == "350" and fmt_fixed(3.54, 1, whole_from=10) == "3.5"
    assert fmt_fixed(None) == "n/a" and fmt_fixed(None, missing="-") == "-" and fmt_fixed(math.nan) == "nan"
    assert fmt_ns(1.2345e-6) == "1,234" and fmt_ns(8.05e-7, 1, unit=True) == "805.0 ns" and fmt_ns(None) == "n/a"
    assert fmt_times(2.5) == "2.50x" and fmt_times(250.4) == "250x" and fmt_times(1234.0) == "1234x"
    assert fmt_times(math.inf) == "no bound" and fmt_times(math.inf, infinite="unbounded") == "unbounded" and fmt_times(None) == "n/a"
    assert fmt_usd(1234.5) == "1,234.50" and fmt_usd(0.01234) == "0.0123"


def test_rates_times_and_units():
    assert fmt_rate(1234.5) == "1,234" and fmt_rate(math.inf) == "unbounded" and fmt_rate(math.nan, "n/a") == "n/a"
    with pytest.raises(TypeError):
        fmt_rate(None)
    assert fmt_us(1760) == "1.76 ms" and fmt_us(1.76) == "1.76 us"
    assert fmt_g(1980, "MHz") == "1980 MHz" and fmt_g(1.2e6) == "1.2e6" and fmt_g(None, "MHz") == "n/a"
    assert tera_unit("int8") == "TOPS" and tera_unit("bf16") == "TFLOP/s"
    assert [fmt_decade(e) for e in (-4, -3, 0, 4, 5)] == ["1e-4", "0.001", "1", "10,000", "1e5"]


def test_counts():
    assert fmt_count(2**27) == "134,217,728" and fmt_count(2**53) == "9.007e15" and fmt_count(0.123456) == "0.1235"
    assert fmt_pow2(2**28) == "2^28" and fmt_pow2(1000) == "1,000" and fmt_pow2(512) == "512" and fmt_pow2("x") == "n/a"
    assert fmt_binary_count(256 * 2**20) == "256M" and fmt_binary_count(2**30) == "1G" and fmt_binary_count(1000) == "1,000"
    assert fmt_count_words(3e9) == "3 billion" and fmt_count_words(999.96e6) == "1 billion" and fmt_count_words(512) == "512"
    assert fmt_params(8.03e9) == "8.03B" and fmt_params(999.96e6) == "1B" and fmt_params(124e6) == "124M" and fmt_params(500) == "500"


def test_sizes():
    assert fmt_size(50 * 2**20) == "50 MiB" and fmt_size(1.5 * 2**30) == "1.5 GiB" and fmt_size(2**19) == "0.5 MiB"
    assert fmt_size(2**19, "KiB") == "512 KiB" and fmt_size(60 * 2**20, "KiB") == "60 MiB"
    assert fmt_kb(336_000) == "336 KB" and fmt_kb(2.5e6) == "2.5 MB"
    assert fmt_kb(336_000, fixed=True) == "336.0 KB" and fmt_kb(2.5e6, fixed=True) == "2.50 MB"
    assert fmt_file_size(512) == "512 bytes" and fmt_file_size(4 * 2**30) == "4.0 GiB" and fmt_file_size(2**51) == "2048.0 TiB"
