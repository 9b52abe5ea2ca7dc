"""`gpuwhy compare`: the printed table's figures against the roofline worked out here.

Sheets (bundled, dense): H100 SXM 3350 GB/s, 67 TFLOP/s fp32, 989.5 bf16, 700 W; L4 300 GB/s, 121 bf16, 72 W.
"""

from __future__ import annotations

import re


def _rows(out: str) -> dict[str, list[str]]:
    """The table's cells per GPU name (the box-drawn table at a wide terminal)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in re.split("[│┃]", line) if c.strip()]
        if len(cells) > 3 and cells[0].isdigit():
            rows[cells[1]] = cells
    return rows


def test_compare_table_at_200_flop_per_byte(cli, monkeypatch):
    # 1e12 FLOP over 5e9 B = 200 FLOP/byte, bf16:
    #   H100 SXM: ridge 989.5e12 / 3350e9 = 295.4 (memory-bound), attainable 3350e9 x 200 = 670 TFLOP/s,
    #             time 5e9 / 3350e9 = 1.4925 ms
    #   L4: ridge 121e12 / 300e9 = 403.3, attainable 300e9 x 200 = 60 TFLOP/s, time 5e9 / 300e9 = 16.67 ms,
    #       speed-up 60 / 670 = 0.0896
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("compare", "H100 SXM", "L4", "--flops", "1T", "--bytes", "5GB", "--dtype", "bf16")
    assert code == 0, err
    rows = _rows(out)
    assert rows["H100 SXM"] == ["1", "H100 SXM", "3350", "989.5", "295", "memory", "670", "1.49 ms", "1.00x"]
    assert rows["L4"] == ["2", "L4", "300", "121", "403", "memory", "60", "16.7 ms", "0.09x"]
    assert "compare: 1e12 FLOP over 5e9 bytes (200 FLOP/byte); dense bf16 peaks" in out


def test_compare_cost_and_power_columns(cli, monkeypatch):
    # 0.33 FLOP/byte fp32 on the H100 SXM: 3350e9 x 0.33 = 1.1055 TFLOP/s; at $2.50/h:
    # 1.1055e12 x 3600 / 2.5 = 1.592e15 FLOP per dollar = 1.59 PFLOP/$; per watt 1.1055e12 / 700 = 1.58 GFLOP/J
    monkeypatch.setenv("COLUMNS", "160")
    code, out, err = cli("compare", "H100 SXM", "--intensity", "0.33", "--cost", "H100=2.5", "--per-watt")
    assert code == 0, err
    h = _rows(out)["H100 SXM"]
    assert h[2:] == ["3350", "67", "20", "memory", "1.11", "1.00x", "2.5", "1.59", "700", "1.58"]
