"""Spec sheets: the validator's every check at its limit, name matching's rules, the sheet
figures `specs show` prints, and the sheet chosen for a device (MIG scaling included).

The H200 SXM figures are NVIDIA's (https://www.nvidia.com/en-us/data-center/h200/):
4800 GB/s, 141 GB, 67 TFLOP/s fp32, 989.5 TFLOP/s dense bf16 (1979 with sparsity / 2);
132 SMs x 128 FP32 lanes at 1980 MHz from the Hopper whitepaper (the sheet's sources).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import yaml

from gpuwhy.device.sheet import SheetChoice, sheet_for
from gpuwhy.errors import SpecError, UsageError
from gpuwhy.specs import SpecLibrary, library, load_library, load_yaml, spec_dirs, validate_sheet

GOOD = {
    "name": "Test Card",
    "vendor": "NVIDIA",
    "architecture": "Hopper",
    "compute_capability": "9.0",
    "nvml_names": ["NVIDIA Test Card"],
    "sm_count": 132,
    "boost_clock_mhz": 1980,
    "memory_size_gb": 141,
    "memory_type": "HBM3e",
    "memory_bandwidth_gbs": 4800,
    "l2_cache_mib": 60,
    "board_power_w": 700,
    "peak_tflops": {"fp32": 67.0, "bf16": 989.5},
    "sources": {"datasheet": "https://example.com/card"},
}


def check(**change):
    data = {**GOOD, **change}
    return validate_sheet({k: v for k, v in data.items() if v is not DROP}, "my/card.yaml")


DROP = object()


def refused(msg: str, **change) -> str:
    with pytest.raises(SpecError) as exc:
        check(**change)
    text = str(exc.value)
    assert text.startswith("my/card.yaml: ") and "\n" not in text
    assert msg in text, text
    return text


# --- the validator, check by check -------------------------------------------------------------------

# (field, lowest plausible, highest plausible, unit in the message): numbers outside are a wrong unit.
BOUNDS = [
    ("memory_bandwidth_gbs", 1.0, 1e5, "GB/s (1e9 B/s)"),
    ("boost_clock_mhz", 100.0, 1e4, "MHz"),
    ("memory_size_gb", 0.1, 1e5, "GB (1e9 B)"),
    ("l2_cache_mib", 0.01, 1e4, "MiB"),
    ("board_power_w", 1.0, 1e5, "W"),
]


@pytest.mark.parametrize("field, lo, hi, unit", BOUNDS)
def test_plausibility_bounds_are_inclusive(field, lo, hi, unit):
    assert getattr(check(**{field: lo}), field) == lo
    assert getattr(check(**{field: hi}), field) == hi
    refused(f"field {field!r} = {lo * 0.99!r} is implausible for {unit}; check the unit", **{field: lo * 0.99})
    refused(f"field {field!r} = {hi * 1.01!r} is implausible for {unit}", **{field: hi * 1.01})
    refused(f"field {field!r} must be greater than zero, got 0", **{field: 0})
    refused(f"field {field!r} must be greater than zero, got -1", **{field: -1})


def test_sm_count_bounds_and_whole_numbers():
    assert check(sm_count=1).sm_count == 1 and check(sm_count=10000).sm_count == 10000
    assert check(sm_count=132.0).sm_count == 132  # a float that is a whole number is a whole number
    refused("field 'sm_count' = 10001 is implausible for multiprocessors", sm_count=10001)
    refused("field 'sm_count' must be greater than zero, got 0", sm_count=0)
    assert refused("field 'sm_count' must be a number, got 132.5", sm_count=132.5).endswith("got 132.5")  # no unit hint
    refused("field 'sm_count' must be a number, got True", sm_count=True)


def test_wrong_types():
    refused("field 'memory_bandwidth_gbs' must be a number, got '4800 GB/s' (give a plain number in the unit the field name says)",
            memory_bandwidth_gbs="4800 GB/s")
    refused("field 'memory_type' must be str, got 5.0", memory_type=5.0)
    refused("field 'nvml_names' must be list, got 'NVIDIA X'", nvml_names="NVIDIA X")
    refused("field 'name' must be str, got True", name=True)
    refused("field 'compute_capability' must be a quoted string such as \"9.0\"", compute_capability=9.0)
    refused("missing required field 'sm_count'", sm_count=DROP)
    refused("missing required field 'vendor'", vendor=None)
    refused("unknown field 'bogus'", bogus=1)
    with pytest.raises(SpecError, match="a spec sheet must be a YAML mapping of fields, got list"):
        validate_sheet([1, 2], "x.yaml")


def test_optional_counts():
    s = check(fp32_lanes_per_sm=128, memory_bus_width_bits=6144)
    assert (s.fp32_lanes_per_sm, s.memory_bus_width_bits) == (128, 6144)
    assert check(fp32_lanes_per_sm=None).fp32_lanes_per_sm is None
    assert check(fp32_lanes_per_sm=1).fp32_lanes_per_sm == 1
    refused("field 'fp32_lanes_per_sm' must be greater than zero, got 0", fp32_lanes_per_sm=0)
    refused("field 'memory_bus_width_bits' must be greater than zero, got -64", memory_bus_width_bits=-64)


def test_name_lists():
    refused("field 'aliases' must be a list of non-empty strings, got ''", aliases=[""])
    refused("field 'aliases' must be a list of non-empty strings, got '  '", aliases=["  "])
    refused("field 'nvml_names' must be a list of non-empty strings, got 5", nvml_names=[5])
    refused("field 'notes' must be a list of non-empty strings, got None", notes=[None])
    assert check(aliases=["TC"]).aliases == ("TC",)


@pytest.mark.parametrize("pci", ["0x233", "2335", "0x23355", "0x23G5", "0X2335", " 0x2335"])
def test_pci_id_format(pci):
    refused(f"field 'pci_device_ids' entry {pci!r} must look like 0x2335", pci_device_ids=[pci])


def test_pci_ids_are_kept_in_lower_case():
    assert check(pci_device_ids=["0x233B", "0x2335"]).pci_device_ids == ("0x233b", "0x2335")


@pytest.mark.parametrize(
    "peak, msg",
    [
        (0, "field 'peak_tflops.bf16' must be a number greater than zero, got 0"),
        (-1.0, "field 'peak_tflops.bf16' must be a number greater than zero, got -1.0"),
        (math.nan, "field 'peak_tflops.bf16' must be a number greater than zero, got nan"),
        ("989.5", "field 'peak_tflops.bf16' must be a number greater than zero, got '989.5'"),
        (True, "field 'peak_tflops.bf16' must be a number greater than zero, got True"),
        (0.00099, "field 'peak_tflops.bf16' = 0.00099 is implausible for TFLOP/s; check the unit"),
        (989.5e12, "field 'peak_tflops.bf16' = 989500000000000.0 is implausible for TFLOP/s"),  # FLOP/s, not TFLOP/s
        (100001.0, "field 'peak_tflops.bf16' = 100001.0 is implausible for TFLOP/s"),
    ],
)
def test_peaks(peak, msg):
    refused(msg, peak_tflops={"fp32": 67.0, "bf16": peak})


def test_peak_limits_are_inclusive_and_fp32_required():
    assert check(peak_tflops={"fp32": 0.001}).peak_tflops == {"fp32": 0.001}
    assert check(peak_tflops={"fp32": 1e5}).peak_tflops == {"fp32": 1e5}
    refused("field 'peak_tflops' lists no precision; fp32 at least is required", peak_tflops={})
    refused("field 'peak_tflops' must list fp32", peak_tflops={"bf16": 989.5})
    refused("field 'peak_tflops' has unknown precision 'bf17'", peak_tflops={"fp32": 67.0, "bf17": 1.0})


def test_sources():
    s = check(sources={"datasheet": "https://a.example/d", "sm_count": "http://b.example/w", "peak_tflops.bf16": "https://c.example/p"})
    assert s.source_for("sm_count") == "http://b.example/w"
    assert s.source_for("peak_tflops.bf16") == "https://c.example/p"
    assert s.source_for("peak_tflops.fp32") == "https://a.example/d"  # no own source: the datasheet
    s2 = check(sources={"datasheet": "https://a.example/d", "peak_tflops": "https://g.example/peaks"})
    assert s2.source_for("peak_tflops.fp32") == "https://g.example/peaks"  # the field's group
    refused("field 'sources' must have a 'datasheet' URL", sources={"sm_count": "https://x.example"})
    refused("field 'sources' has key 'bogus', which names no field of the sheet", sources={"datasheet": "https://x", "bogus": "https://y"})
    refused("field 'sources' has key 'peak_tflops.fp8', which names no field", sources={"datasheet": "https://x", "peak_tflops.fp8": "https://y"})
    refused("field 'sources.datasheet' must be an http(s) URL, got 'ftp://x'", sources={"datasheet": "ftp://x"})
    refused("field 'sources.sm_count' must be an http(s) URL, got 5", sources={"datasheet": "https://x", "sm_count": 5})


def test_duplicate_names():
    refused("name 'tc' appears twice in name/aliases or in nvml_names", name="TC", aliases=["tc "])
    refused("name 'nvidia tc' appears twice", nvml_names=["NVIDIA TC", "nvidia  tc"])
    refused("name 'other' appears twice", name="TC", aliases=["Other", "other"])  # the repeated name, not the first
    # an NVML name may equal the marketing name (old drivers report "GeForce RTX 3090")
    assert check(name="GeForce X", nvml_names=["GeForce X"]).name == "GeForce X"


def test_sheet_figures():
    s = check(l2_cache_mib=60, name="  Test Card ")
    assert s.name == "Test Card"
    assert s.l2_bytes == 62_914_560  # 60 x 2^20
    assert check(l2_cache_mib=0.5).l2_bytes == 524_288
    assert s.bandwidth_bytes_per_s == 4.8e12
    assert s.peak_flops("bf16") == 989.5e12
    assert s.ridge_point("bf16") == pytest.approx(989.5 / 4.8)  # 206.146 FLOP/byte
    assert s.ridge_points() == {"fp32": pytest.approx(67 / 4.8), "bf16": pytest.approx(989.5 / 4.8)}
    with pytest.raises(UsageError, match="the Test Card sheet has no fp8 peak; it has: fp32, bf16"):
        s.peak_flops("fp8")


# --- reading YAML ------------------------------------------------------------------------------


def test_load_yaml_errors(tmp_path):
    with pytest.raises(SpecError, match=r"nope.yaml' does not exist; pass a YAML file"):  # through gpuwhy.inputs
        load_yaml(tmp_path / "nope.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(SpecError, match="latin1.yaml: not UTF-8 text"):
        load_yaml(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nsm_count: 1\npeak_tflops: {fp32: [\n")  # the flow sequence never closes
    with pytest.raises(SpecError) as exc:
        load_yaml(broken)
    assert "broken.yaml: malformed YAML at line 4:" in str(exc.value)
    ctl = tmp_path / "ctl.yaml"
    ctl.write_text("name: a\x07b\n")  # a reader error: no line mark, the message's first line
    with pytest.raises(SpecError) as exc:
        load_yaml(ctl)
    assert str(exc.value) == f"{ctl}: malformed YAML: unacceptable character #x0007: control characters are not allowed"
    tab = tmp_path / "tab.yaml"
    tab.write_text("name: x\n\tsm_count: 1\n")
    with pytest.raises(SpecError, match="tab.yaml: malformed YAML at line 2: found a tab character"):
        load_yaml(tab)


# --- name matching --------------------------------------------------------------------------------

LIB = library()


@pytest.mark.parametrize(
    "query, sheet",
    [
        ("H200", "H200 SXM"),  # an alias: exact
        ("nvidia h200", "H200 SXM"),  # an NVML name: exact, any case
        ("NVIDIA  GeForce   RTX 5070", "GeForce RTX 5070"),  # spaces collapse
        ("GH200", "GH200 96GB"),  # exact alias of the 96GB sheet
        ("NVIDIA GH200", "GH200 96GB"),  # 'nvidia' is noise: {gh200} is all of 'GH200' (0 extra words) vs 'GH200 144GB' (1)
        ("gh200 144gb", "GH200 144GB"),
        ("a100 40gb", "A100 SXM4 40GB"),
        ("h100 pcie", "H100 PCIe"),
        ("H100 SXM5 80GB", "H100 SXM"),
        ("v100 32gb", "V100 SXM2"),  # a word of the NVML name Tesla V100-SXM2-32GB
        ("RTX 6000 Ada", "RTX 6000 Ada Generation"),  # 'RTX 6000' alone is now two sheets (Ada, PRO Blackwell)
        ("Tesla T4", "T4"),
        # issue 19: a family name or a memory size picks the family's usual variant (with a note)
        ("A100", "A100 SXM4 80GB"),
        ("A100 80GB", "A100 SXM4 80GB"),
        ("A100 SXM4", "A100 SXM4 80GB"),
        ("H100 80GB", "H100 SXM"),
        ("H200 141GB", "H200 SXM"),
        ("rtx4090", "GeForce RTX 4090"),
    ],
)
def test_match_picks(query, sheet):
    assert LIB.match(query).name == sheet


@pytest.mark.parametrize(
    "query, names",
    [
        ("RTX 6000", "'RTX 6000 Ada Generation', 'RTX PRO 6000 Blackwell'"),
        ("sxm", "'H100 SXM', 'H200 SXM'"),
    ],
)
def test_match_refuses_to_guess_between_equal_candidates(query, names):
    with pytest.raises(UsageError) as exc:
        LIB.match(query)
    assert str(exc.value) == f"GPU name {query!r} is ambiguous: it matches {names}; use the full name"


def test_match_empty_unknown_and_noise_only():
    for q in ("", "   "):
        with pytest.raises(UsageError, match="empty GPU name; pass --gpu with a name from `gpuwhy specs list`"):
            LIB.match(q)
    with pytest.raises(UsageError, match="unknown GPU 'NVIDIA'; closest sheets: "):
        LIB.match("NVIDIA")  # only a noise word
    # issue 19: a memory size picks by the sheets' memory, and B300 has a sheet now
    assert LIB.match("h200 141gb").name == "H200 SXM"
    with pytest.raises(UsageError, match="unknown GPU 'h200 999gb'"):
        LIB.match("h200 999gb")  # no H200 sheet has 999 GB
    with pytest.raises(UsageError, match="B400"):
        LIB.match("B400")


def _mini(tmp_path, sheets):
    for i, extra in enumerate(sheets):
        (tmp_path / f"s{i}.yaml").write_text(yaml.safe_dump({**GOOD, **extra}))
    names = {e["name"] for e in sheets}
    return SpecLibrary([s for s in load_library([tmp_path]) if s.name in names])


def test_exact_name_shared_by_two_sheets_is_ambiguous(tmp_path):
    lib = _mini(tmp_path, [
        {"name": "X SXM", "nvml_names": ["NVIDIA X"], "pci_device_ids": ["0x1111"]},
        {"name": "X NVL", "nvml_names": ["NVIDIA X"], "pci_device_ids": ["0x2222"]},
    ])
    with pytest.raises(UsageError) as exc:
        lib.match("nvidia x")
    assert str(exc.value) == "GPU name 'nvidia x' is ambiguous: it names 'X NVL', 'X SXM'; use the full name"
    assert lib.match("X SXM").name == "X SXM"


def test_fewest_extra_words_wins(tmp_path):
    # {zeta} is all of 'Zeta Pro' but one word, all of 'Zeta Pro Max' but two: the Pro wins; {zeta, max} only the Max has.
    lib = _mini(tmp_path, [
        {"name": "Zeta Pro", "nvml_names": ["NVIDIA Zeta Pro Card Board"]},
        {"name": "Zeta Pro Max", "nvml_names": ["NVIDIA Zeta Pro Max"]},
    ])
    assert lib.match("zeta").name == "Zeta Pro"
    assert lib.match("zeta max").name == "Zeta Pro Max"
    assert lib.match("pro card").name == "Zeta Pro"  # a word of the NVML name counts
    assert lib.match("zeta pro").name == "Zeta Pro"  # the exact marketing name


def test_equal_extra_words_are_ambiguous(tmp_path):
    lib = _mini(tmp_path, [
        {"name": "Zeta Pro", "nvml_names": ["NVIDIA Zeta Pro"]},
        {"name": "Zeta Max", "nvml_names": ["NVIDIA Zeta Max"]},
        {"name": "Zeta Max Ultra", "nvml_names": ["NVIDIA Zeta Max Ultra"]},
    ])
    with pytest.raises(UsageError, match="'zeta' is ambiguous: it matches 'Zeta Max', 'Zeta Pro'; use the full name"):
        lib.match("zeta")  # one extra word each; 'Zeta Max Ultra' has two
    assert lib.match("ultra").name == "Zeta Max Ultra"


def test_closest_names():
    assert LIB.closest("H20") == ["H20", "H200 SXM", "GH200 96GB"]  # H20 is a sheet now (issue 19)
    assert LIB.closest("rtx 5O70", n=2) == ["GeForce RTX 5070", "GeForce RTX 5090"]
    assert LIB.closest("zzzz") == []
    # nothing spelled alike, but a shared word: the sheets that have it
    assert LIB.closest("5070 xyzzy qwerty") == ["GeForce RTX 5070"]
    assert len(LIB.closest("rtx", n=5)) == 5


def test_spec_dirs_and_layers(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUWHY_SPECS", str(tmp_path / "missing"))
    with pytest.raises(UsageError, match="'.*missing' does not exist; pass a folder of spec-sheet \\*.yaml files \\(GPUWHY_SPECS\\)"):
        spec_dirs()
    monkeypatch.delenv("GPUWHY_SPECS")
    with pytest.raises(UsageError, match="does not exist; pass a folder of spec-sheet \\*.yaml files \\(--specs\\)"):
        spec_dirs([tmp_path / "nope"])
    assert [o for _, o in spec_dirs([tmp_path])] == ["bundled", "--specs"]


def test_two_user_layers_that_claim_one_name(tmp_path, monkeypatch):
    env, flag = tmp_path / "env", tmp_path / "flag"
    env.mkdir(), flag.mkdir()
    (env / "a.yaml").write_text(yaml.safe_dump({**GOOD, "name": "Card A", "nvml_names": ["NVIDIA Same"]}))
    (flag / "b.yaml").write_text(yaml.safe_dump({**GOOD, "name": "Card B", "nvml_names": ["NVIDIA Same"]}))
    monkeypatch.setenv("GPUWHY_SPECS", str(env))
    with pytest.raises(SpecError) as exc:
        load_library([flag])
    msg = str(exc.value)
    # the later layer's sheet (--specs) is the one named first: it is the one that claims a taken name
    assert msg.startswith(f"{flag / 'b.yaml'}: name 'NVIDIA Same' is already used by the sheet 'Card A' ({env / 'a.yaml'})")


def test_a_user_sheet_stealing_a_bundled_name_is_named_first(tmp_path):
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({**GOOD, "name": "My Card", "aliases": ["h200"], "nvml_names": ["NVIDIA Mine"]}))
    with pytest.raises(SpecError) as exc:
        load_library([tmp_path])
    msg = str(exc.value)
    assert msg.startswith(str(tmp_path / "mine.yaml") + ": name 'H200' is already used by the sheet 'H200 SXM' (")
    assert msg.endswith("give your sheet the same `name` to override it, or another name")


def test_clash_within_one_folder_names_the_later_file_and_its_spelling(tmp_path):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({**GOOD, "name": "Card A", "aliases": ["Same Name"], "nvml_names": ["NVIDIA A"]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**GOOD, "name": "Card B", "aliases": ["same name"], "nvml_names": ["NVIDIA B"]}))
    with pytest.raises(SpecError) as exc:
        load_library([tmp_path])
    assert str(exc.value) == f"{tmp_path / 'b.yaml'}: name 'same name' is already used by {tmp_path / 'a.yaml'}"


def test_nvml_name_shared_only_with_different_pci_ids(tmp_path):
    base = {**GOOD, "nvml_names": ["NVIDIA X"]}
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({**base, "name": "X A", "pci_device_ids": ["0x1111"]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**base, "name": "X B", "pci_device_ids": ["0x1111"]}))
    with pytest.raises(SpecError, match="name 'NVIDIA X' is already used by"):
        load_library([tmp_path])
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**base, "name": "X B"}))  # one side without ids: still a clash
    with pytest.raises(SpecError, match="name 'NVIDIA X' is already used by"):
        load_library([tmp_path])
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**base, "name": "X B", "pci_device_ids": ["0x2222"]}))
    assert {"X A", "X B"} <= {s.name for s in load_library([tmp_path])}


# --- the bundled sheets' own figures ------------------------------------------------------------------------


def test_bundled_fp32_peaks_agree_with_sms_lanes_and_clock():
    # fp32 peak = SMs x FP32 lanes x 2 FLOP (an FMA) x boost clock: H200 132 x 128 x 2 x 1.98e9 = 66.9 TFLOP/s (sheet 67)
    checked = 0
    for s in LIB:
        if s.fp32_lanes_per_sm:
            derived = s.sm_count * s.fp32_lanes_per_sm * 2 * s.boost_clock_mhz * 1e6 / 1e12
            assert derived == pytest.approx(s.peak_tflops["fp32"], rel=0.01), s.name
            checked += 1
    assert checked >= 20


def test_specs_show_h200_figures(cli, monkeypatch):
    import re

    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("specs", "show", "H200")
    assert code == 0, err
    text = " ".join(re.sub("[│┃]", " ", out).split())
    for shown in (
        "H200 SXM (NVIDIA Hopper, compute capability 9.0)",
        "SMs 132 x 128 FP32 lanes",
        "boost clock 1980 MHz",
        "memory 141 GB HBM3e, 6144-bit bus, 4800 GB/s",
        "L2 60 MiB",
        "board power 700 W",
        # ridge = peak / 4.8 TB/s: fp64 34 / 4.8 = 7.08, fp32 67 / 4.8 = 13.96, tf32 494.5 / 4.8 = 103.02,
        # bf16 989.5 / 4.8 = 206.15, fp8 1979 / 4.8 = 412.29
        "fp64 34 7.1 https://",
        "fp32 67 14.0 https://",
        "tf32 494.5 103.0 https://",
        "bf16 989.5 206.1 https://",
        "fp8 1979 412.3 https://",
    ):
        assert shown in text, shown


def test_specs_show_json_figures(cli):
    import json

    code, out, _ = cli("specs", "show", "H200", "--json")
    d = json.loads(out)
    d = d.get("sheet", d)
    assert d["memory_bandwidth_gbs"] == 4800 and d["memory_size_gb"] == 141 and d["sm_count"] == 132
    assert d["ridge_points"]["bf16"] == pytest.approx(989.5 / 4.8) and d["ridge_points"]["fp64"] == pytest.approx(34 / 4.8)
    assert d["peak_tflops"]["fp8"] == 1979.0


# --- the sheet for a device ------------------------------------------------------------------------------


def test_sheet_for_given_empty_and_unknown():
    with pytest.raises(UsageError, match="empty GPU name; pass --gpu"):
        sheet_for("  ")
    c = sheet_for(nvml_name=None)
    assert (c.sheet, c.rule, c.note) == (None, "none", "no sheet matched: the device name is unknown")
    d = c.to_dict()
    assert d["matched"] is False and d["name"] is None and d["path"] is None and d["peak_tflops"] is None
    assert d["memory_bandwidth_gbs"] is None and d["origin"] is None


def test_sheet_choice_to_dict():
    c = sheet_for("H200")
    d = c.to_dict()
    assert d["matched"] is True and d["name"] == "H200 SXM" and d["full_sheet_name"] == "H200 SXM"
    assert d["memory_bandwidth_gbs"] == 4800 and d["peak_tflops"]["bf16"] == 989.5 and d["origin"] == "bundled"
    assert d["path"].endswith("h200-sxm.yaml") and d["rule"] == "given"


def test_two_sheets_with_one_nvml_name_and_no_pci_id_is_no_guess(tmp_path):
    lib = _mini(tmp_path, [
        {"name": "X SXM", "nvml_names": ["NVIDIA X"], "pci_device_ids": ["0x1111"]},
        {"name": "X NVL", "nvml_names": ["NVIDIA X"], "pci_device_ids": ["0x2222"]},
    ])
    c = sheet_for(nvml_name="NVIDIA X", library=lib)
    assert c.sheet is None and c.closest == ("X NVL", "X SXM")
    assert "no PCI device id tells them apart" in c.note
    c = sheet_for(nvml_name="NVIDIA X", pci_device_id="0x3333", library=lib)
    assert c.sheet is None and "PCI device id 0x3333 picks none of them" in c.note


def mig(**kw):
    base = {"profile": "1g.18gb", "sm_count": 16, "parent_sm_count": 132, "sm_share": 16 / 132, "memory_share": 1 / 8,
            "memory_bytes": 17.6e9}
    return SimpleNamespace(**{**base, **kw})


def test_mig_slice_scales_the_sheet():
    # 16 of 132 SMs (12.1%) and 1/8 of the memory: bf16 989.5 x 16 / 132 = 119.94 TFLOP/s, DRAM 4800 / 8 = 600 GB/s,
    # L2 60 / 8 = 7.5 MiB, 17.6 GB of memory
    c = sheet_for("H200", mig=mig())
    s = c.sheet
    assert s.name == "H200 SXM MIG 1g.18gb" and c.full_sheet_name == "H200 SXM"
    assert s.peak_tflops["bf16"] == pytest.approx(989.5 * 16 / 132) and s.peak_tflops["fp32"] == pytest.approx(67 * 16 / 132)
    assert s.memory_bandwidth_gbs == 600.0 and s.l2_cache_mib == 7.5 and s.memory_size_gb == pytest.approx(17.6)
    assert s.sm_count == 16 and s.nvml_names == () and s.aliases == ()
    assert c.note.startswith("MIG 1g.18gb: 16 of 132 SMs (12.1%) and 12.5% of the memory; peaks scaled from the H200 SXM sheet")
    assert s.notes[-1] == c.note


def test_mig_slice_with_unknown_shares_gets_no_sheet():
    from gpuwhy.na import NA

    c = sheet_for("H200", mig=mig(memory_share=NA("not supported")))
    assert c.sheet is None and c.full_sheet_name == "H200 SXM" and "share of SMs/memory is unknown" in c.note
    c = sheet_for("H200", mig=mig(profile=NA("not supported")))
    assert c.sheet.name == "H200 SXM MIG slice"


def test_sheet_for_device(tmp_path):
    info = SimpleNamespace(name="NVIDIA H200", pci_device_id="0x233B")
    c = sheet_for(device=info)
    assert c.sheet.name == "H200 NVL" and c.rule == "pci_id"  # the device's PCI id decides
    assert sheet_for("H100 SXM", device=info).sheet.name == "H100 SXM"  # a named GPU decides alone
    unknown = sheet_for(device=SimpleNamespace(name="Mystery GPU", pci_device_id=None))
    assert unknown.sheet is None and unknown.rule == "none"
    # a broken sheet folder does not stop a measurement; a name given still raises
    (tmp_path / "bad.yaml").write_text("name: [unclosed\n")
    broken = sheet_for(device=info, spec_dirs=(str(tmp_path),))
    assert broken.sheet is None and broken.note.startswith("spec sheets not loaded (")
    with pytest.raises(SpecError):
        sheet_for(nvml_name=info.name, pci_device_id=info.pci_device_id, spec_dirs=(str(tmp_path),))


def test_sheet_choice_defaults():
    c = SheetChoice(None, "none", "x")
    assert c.matched is False and c.closest == () and c.conflict is None
