"""Output at narrow widths and into pipes: keys and values stay readable, a number keeps its unit on
its line, piped output has no trailing spaces and is 80 columns unless COLUMNS says otherwise."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli

CLASSIFY = ("classify", "--bytes", "1GB", "--flops", "1T", "--time", "2ms", "--gpu", "H100 SXM")
#: A unit that must never start a line of a table (its number ended the line before).
_UNIT_START = re.compile(r"^\s*(?:[kMGTPE]i?)?(?:FLOP/s|FLOP/byte|FLOP|B/s|B|Hz|W|us|ms|ns)\b")


def _broken_units(text: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    return [(a, b) for a, b in zip(lines, lines[1:]) if re.search(r"\d$", a.rstrip()) and _UNIT_START.match(b)]


def _table(width: int, rows, header: bool = False) -> str:
    from rich.console import Console
    from rich.table import Table

    from gpuwhy.render.fit import fit_table

    t = Table(show_header=header, box=None, pad_edge=False)
    t.add_column("key", style="bold")
    t.add_column("value")
    for r in rows:
        t.add_row(*r)
    con = Console(width=width, record=True, color_system=None)
    con.print(fit_table(t, con))
    return con.export_text()


def test_a_key_value_table_at_40_columns_shows_keys_not_column_numbers():
    p = run_cli(*CLASSIFY, env={"COLUMNS": "40"})
    assert p.returncode == 0, p.stderr
    assert "column 1" not in p.stdout and "column 2" not in p.stdout
    lines = p.stdout.splitlines()
    assert "GPU" in [ln.strip() for ln in lines]  # the key on its line, the value indented below it
    i = [ln.strip() for ln in lines].index("GPU")
    assert lines[i + 1].startswith("  H100 SXM")
    assert all(len(ln) <= 40 for ln in lines), [ln for ln in lines if len(ln) > 40]


@pytest.mark.parametrize("width", range(24, 50))
def test_a_number_never_wraps_away_from_its_unit(width):
    rows = [("ceilings", "67 TFLOP/s fp32 dense peak, 3.35 TB/s DRAM"),
            ("t_overhead", "5 us (1 x 5 us, default 5 us measured by the launch benchmark)"),
            ("memory", "80 GB HBM3, 5120-bit bus, 3350 GB/s and 50 MiB of L2, 1980 MHz")]
    text = _table(width, rows)
    assert not _broken_units(text), _broken_units(text)
    for figure in ("67 TFLOP/s", "3.35 TB/s", "5 us", "3350 GB/s", "50 MiB", "1980 MHz"):
        assert figure in text, (figure, text)
    assert all(len(ln) <= width for ln in text.splitlines())


@pytest.mark.parametrize("columns", [60, 80])
def test_classify_keeps_numbers_with_their_units(columns):
    p = run_cli(*CLASSIFY, env={"COLUMNS": str(columns)})
    assert p.returncode == 0, p.stderr
    assert not _broken_units(p.stdout), _broken_units(p.stdout)


def test_piped_output_has_no_trailing_spaces_and_is_80_columns_wide():
    p = run_cli("specs", "show", "H100 SXM", env={"COLUMNS": ""})  # sanitize_columns drops an empty COLUMNS
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [ln for ln in lines if ln != ln.rstrip()] == []
    assert max(len(ln) for ln in lines) <= 80
    assert max(len(ln) for ln in lines) > 60  # the table used the width, not a narrower one
    wide = run_cli("specs", "show", "H100 SXM", env={"COLUMNS": "120"})
    assert max(len(ln) for ln in wide.stdout.splitlines()) > 80  # COLUMNS still says how wide


def test_a_records_block_of_a_too_wide_table_names_its_headers():
    from rich.console import Console
    from rich.table import Table

    from gpuwhy.render.fit import fit_table

    t = Table()
    for h in ("GPU", "DRAM GB/s", "fp32 TFLOP/s", "note"):
        t.add_column(h)
    t.add_row("GeForce RTX 5070", "672", "30.9", "a long note of several words that wraps 3.35 TB/s")
    con = Console(width=24, record=True, color_system=None)
    con.print(fit_table(t, con))
    text = con.export_text()
    assert "column" not in text and "DRAM GB/s" in text and "672" in text
    assert not _broken_units(text)


def _broken_cells(text: str) -> list[tuple[str, str]]:
    """Pairs of table cells, one above the other, where the upper ends in a number and the lower
    starts with its unit (cells split at the table's rules │ and ┃)."""
    unit = re.compile(r"\s*(?:[kMGTPE]i?)?(?:FLOP/s|FLOP/byte|FLOP|B/s|B|Hz|W|us|ms|ns)\b")
    lines = text.splitlines()
    found = []
    for a, b in zip(lines, lines[1:]):
        sa, sb = re.split(r"[│┃]", a), re.split(r"[│┃]", b)
        if len(sa) == len(sb) > 1:
            found += [(x.strip(), y.strip()) for x, y in zip(sa, sb) if re.search(r"\d$", x.rstrip()) and unit.match(y)]
    return found


def test_check_at_80_columns_keeps_each_threshold_with_its_unit():
    recorded = str(ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json")
    p = run_cli("check", "--recorded", recorded, env={"COLUMNS": "80"})
    assert p.returncode == 0, p.stderr
    assert not _broken_cells(p.stdout), _broken_cells(p.stdout)
    assert "4800 GB/s" in p.stdout and all(len(ln) <= 80 for ln in p.stdout.splitlines())
