"""CI-grade behaviour (issue 19): numbers and names as a person writes them.

Huge or tiny figures print in engineering form (one formatter, gpuwhy.units), and long
kernel names are shortened in the middle (one place, importers/kernel_names). No GPU.
"""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_cli
from gpuwhy.importers.kernel_names import display_names, short_kernel_name, shorten_middle
from gpuwhy.units import fmt_bytes, fmt_eng, fmt_num, fmt_pct, fmt_si, fmt_time

#: Python's scientific notation, which no person writes: 1.29e+04, 1e-05, 2.5E+12.
_PY_SCI = re.compile(r"\d[eE]\+\d|\d[eE]-0\d")


@pytest.mark.parametrize("seconds, text", [
    (12.9, "12.9 s"), (1.76e-6, "1.76 us"), (8.9e-3, "8.9 ms"), (850e-6, "850 us"), (0.9996e-3, "1 ms"),
    (40e-9, "40 ns"), (5e-10, "0.5 ns"), (150, "2.5 min"), (1.49e4, "4.14 h"), (5 * 86400, "5 days"), (0, "0 s"),
])
def test_engineering_notation_times_pick_their_unit(seconds, text):
    assert fmt_time(seconds) == text


@pytest.mark.parametrize("value, text", [
    (0.00176, "0.00176"), (3.36, "3.36"), (66.1, "66.1"), (999.7, "1,000"), (1370, "1,370"), (4598, "4,598"),
    (12900, "12,900"), (1.2e6, "1.2e6"), (7.16e7, "71.6e6"), (1e9, "1e9"), (2.99e9, "2.99e9"), (1.2e-4, "120e-6"),
    (999_950, "1e6"), (-5e-7, "-500e-9"), (0, "0"), (None, "n/a"), (float("nan"), "n/a"), (float("inf"), "inf"),
])
def test_engineering_notation_plain_numbers(value, text):
    assert fmt_num(value) == text


def test_engineering_notation_units_and_prefixes():
    assert fmt_si(4.8e12, "B/s") == "4.8 TB/s"
    assert fmt_si(999.96e6, "B", 4) == "1 GB"  # rounded before the prefix is chosen
    assert fmt_si(1.11e23, "FLOP/s") == "111e21 FLOP/s"  # past exa: engineering, not a made-up prefix
    assert fmt_si(2e-12, "FLOP/byte") == "2e-12 FLOP/byte"
    assert fmt_si(1.5e-3, "s") == "1.5 ms"
    assert fmt_bytes(62914560) == "60 MiB" and fmt_bytes(1023.9) == "1 KiB" and fmt_bytes(3 * 2**60) == "3 EiB"
    assert fmt_pct(95.84) == "95.8%" and fmt_pct(2314.8) == "2,315%" and fmt_pct(1.66e11) == "166e9%"
    assert fmt_eng(12900) == "12.9e3" and fmt_num(55.0, trim=False) == "55.0"
    for x in (1e-30, 1e-9, 1e-3, 0.5, 1, 999.5, 1e3, 1e5, 1e7, 1e12, 1e20, 1e40):
        for text in (fmt_num(x), fmt_si(x, "B/s"), fmt_time(x), fmt_bytes(x), fmt_pct(x)):
            assert not _PY_SCI.search(text), (x, text)


@pytest.mark.parametrize("args", [
    ["classify", "--gpu", "H200", "--flops", "1e18", "--bytes", "1e9", "--time", "9us"],
    ["classify", "--gpu", "H200", "--flops", "2", "--bytes", "1e12"],
    ["classify", "--gpu", "H200", "--flops", "1e20", "--bytes", "1e3", "--time", "1ms"],
    ["roofline", "--gpu", "H200", "--point", "x:1e18:1e3:1s", "--point", "y:1k:1e15"],
    ["compare", "H100", "H200", "--intensity", "1e6"],
    ["compare", "H100", "H200", "--flops", "1e19", "--bytes", "3"],
    ["llm", "--model", "llama-3-8b", "--gpu", "H200", "--batch", "100000"],
], ids=lambda a: " ".join(a[:3]))
def test_engineering_notation_in_every_command_output(args):
    for extra in ([], ["--json"]):
        p = run_cli(*args, *extra)
        assert p.returncode in (0, 2), p.stderr
        if extra:
            continue  # JSON holds numbers for machines: any notation json allows
        assert not _PY_SCI.search(p.stdout + p.stderr), [ln for ln in (p.stdout + p.stderr).splitlines() if _PY_SCI.search(ln)][:3]


def test_engineering_notation_one_formatter_no_g_format_in_the_sources():
    # Python's "g"/"e" format specs print 1.29e+04: every number for people goes through gpuwhy.units.
    spec = re.compile(r"\{[^{}]*?:,?\.?\d*[geE]\}|'%\.\d*[ge]'|\"%\.\d*[ge]\"")
    bad = []
    for path in sorted((ROOT / "src" / "gpuwhy").rglob("*")):
        if path.suffix not in (".py", ".j2") or path.name == "units.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if spec.search(line) and "machine text" not in line:
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, bad


def test_long_kernel_names_shortened_in_the_middle():
    cublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    s = short_kernel_name(cublas)
    assert len(s) == 64 and s.startswith("sm90_xmma_gemm_bf16") and s.endswith("_cublas") and "\u2026" in s
    assert shorten_middle("short") == "short"
    # Two kernels that differ only at the end stay apart.
    a, b = "triton_poi_fused_" + "x" * 80 + "_0", "triton_poi_fused_" + "x" * 80 + "_1"
    names = display_names([a, b])
    assert names[a] != names[b] and names[a].endswith("_0") and names[b].endswith("_1")
    assert all(len(v) <= 64 for v in names.values())
    # The template tail that tells colliding names apart is kept whole.
    stem = "void at::native::vectorized_elementwise_kernel_with_a_really_long_generated_name_for_testing"
    add, mul = f"{stem}<4, at::native::CUDAFunctor_add<float>>(int)", f"{stem}<4, at::native::MulFunctor<float>>(int)"
    names = display_names([add, mul])
    assert names[add].endswith("\u2026<CUDAFunctor_add>") and names[mul].endswith("\u2026<MulFunctor>")
    assert names[add].startswith("vectorized_elementwise_kernel") and all(len(v) <= 64 for v in names.values())
    # Names equal after shortening get numbered, the number kept at the end.
    c, d = "k_" + "a" * 50 + "b" * 10 + "a" * 40 + "_end", "k_" + "a" * 50 + "c" * 10 + "a" * 40 + "_end"
    names = display_names([c, d])
    assert names[c] != names[d] and names[d].endswith("#2")
