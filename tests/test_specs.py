"""Spec sheets: every bundled sheet validates, broken sheets give the documented errors, names match."""

import shutil
from pathlib import Path

import pytest

from gpuwhy.device.sheet import sheet_for
from gpuwhy.errors import SpecError, UsageError
from gpuwhy.resources import bundled_dir
from gpuwhy.specs import PRECISIONS, SpecLibrary, library, load_library, load_yaml, validate_sheet

FIX = Path(__file__).parent / "fixtures"
BUNDLED = sorted(bundled_dir("specs").glob("*.yaml"))

REQUIRED_PRODUCTS = [
    "rtx 5070", "rtx 5080", "rtx 5090", "rtx 4090", "rtx 3090", "rtx 6000 ada", "L4", "L40S", "T4",
    "V100 SXM2", "A10", "A100 SXM4 40GB", "A100 SXM4 80GB", "A100 PCIe 80GB", "H100 SXM", "H100 PCIe",
    "H100 NVL", "H200 SXM", "H200 NVL", "GH200", "B200", "MI300X",
]


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_sheet_validates(path):
    sheet = validate_sheet(load_yaml(path), str(path))
    assert sheet.peak_tflops["fp32"] > 0
    assert set(sheet.peak_tflops) <= set(PRECISIONS)
    for prec in sheet.peak_tflops:
        assert sheet.source_for(f"peak_tflops.{prec}").startswith("http")
    assert sheet.source_for("memory_bandwidth_gbs").startswith("http")


def test_bundled_library_loads_without_duplicates():
    lib = load_library()
    assert len(lib) == len(BUNDLED)


@pytest.mark.parametrize("query", REQUIRED_PRODUCTS)
def test_required_products_present(query):
    lib = load_library()
    assert lib.match(query) is not None


BAD = {
    "missing-field.yaml": "missing required field 'sm_count'",
    "negative-bandwidth.yaml": "'memory_bandwidth_gbs' must be greater than zero",
    "unknown-precision.yaml": "unknown precision 'bf17'",
    "wrong-unit.yaml": "implausible for GB/s",
    "string-with-unit.yaml": "give a plain number",
    "source-not-url.yaml": "must be an http(s) URL",
    "no-datasheet-source.yaml": "'datasheet' URL",
    "unknown-field.yaml": "unknown field 'board_powr_w'",
    "malformed.yaml": "malformed YAML at line",
    "cc-number.yaml": "quoted string",
    "not-a-mapping.yaml": "must be a YAML mapping",
    "no-fp32.yaml": "must list fp32",
}


@pytest.mark.parametrize("name, expected", sorted(BAD.items()))
def test_bad_sheets_give_documented_errors(name, expected, tmp_path):
    shutil.copy(FIX / "bad_specs" / name, tmp_path / name)
    with pytest.raises(SpecError) as exc:
        load_library([tmp_path])
    msg = str(exc.value)
    assert expected in msg
    assert name in msg  # the error names the file
    assert "\n" not in msg


def test_bad_sheet_through_cli_exits_2_one_line(cli, tmp_path):
    shutil.copy(FIX / "bad_specs" / "negative-bandwidth.yaml", tmp_path / "x.yaml")
    code, out, err = cli("specs", "list", "--specs", str(tmp_path))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "memory_bandwidth_gbs" in err


def _write(tmp: Path, fname: str, name: str, nvml: list[str], aliases=(), bw=1000.0, pci=()):
    tmp.joinpath(fname).write_text(
        "\n".join(
            [
                f"name: {name}",
                f"aliases: {list(aliases)!r}",
                "vendor: NVIDIA",
                "architecture: Blackwell",
                'compute_capability: "10.0"',
                f"nvml_names: {nvml!r}",
                f"pci_device_ids: {list(pci)!r}",
                "sm_count: 100",
                "boost_clock_mhz: 2000",
                "memory_size_gb: 100",
                "memory_type: HBM3e",
                f"memory_bandwidth_gbs: {bw}",
                "l2_cache_mib: 100",
                "board_power_w: 1000",
                "peak_tflops: {fp32: 80.0, bf16: 2000.0}",
                "sources: {datasheet: 'https://example.com/x'}",
            ]
        )
    )


def test_word_boundary_matching_b300_vs_gb300(tmp_path):
    _write(tmp_path, "gb300.yaml", "GB300", ["NVIDIA GB300"])  # overrides the bundled GB300 (same name)
    _write(tmp_path, "b300.yaml", "B300 SXM", ["NVIDIA B300 SXM6 TEST"])  # the bundled B300 has the real NVML name
    lib = SpecLibrary([s for s in load_library([tmp_path]) if s.name in ("GB300", "B300 SXM")])
    assert lib.match("B300").name == "B300 SXM"
    assert lib.match("gb300").name == "GB300"
    assert lib.match("nvidia b300 sxm6 test").name == "B300 SXM"


def test_matching_case_insensitive_and_specific():
    lib = load_library()
    assert lib.match("rtx 5070").name == lib.match("NVIDIA GeForce RTX 5070").name
    assert "5070" in lib.match("RTX 5070").name
    assert lib.match("H100 SXM").name == lib.match("NVIDIA H100 80GB HBM3").name
    assert lib.match("h200").name == "H200 SXM"


def test_unknown_and_ambiguous_names_list_closest():
    lib = load_library()
    with pytest.raises(UsageError) as exc:
        lib.match("RTX 9999")
    assert "unknown GPU 'RTX 9999'" in str(exc.value)
    with pytest.raises(UsageError) as exc:
        lib.match("SXM")
    assert "ambiguous" in str(exc.value) and "H100 SXM" in str(exc.value)
    # A family name is the family's usual variant, with a note (issue 19).
    assert lib.resolve("A100")[0].name == "A100 SXM4 80GB" and "A100 PCIe 80GB" in lib.resolve("A100")[1]


def test_user_sheet_overrides_bundled(tmp_path, monkeypatch):
    _write(tmp_path, "h200.yaml", "H200 SXM", ["NVIDIA H200"], aliases=["H200"], bw=1234.0)
    lib = load_library([tmp_path])
    s = lib.match("H200")
    assert s.memory_bandwidth_gbs == 1234.0 and s.origin == "--specs"
    monkeypatch.setenv("GPUWHY_SPECS", str(tmp_path))
    s = load_library().match("H200")
    assert s.memory_bandwidth_gbs == 1234.0 and s.origin == "GPUWHY_SPECS"


def test_user_sheet_stealing_a_bundled_name_is_an_error(tmp_path):
    _write(tmp_path, "mine.yaml", "My Card", ["NVIDIA H200"])
    with pytest.raises(SpecError) as exc:
        load_library([tmp_path])
    assert "NVIDIA H200" in str(exc.value) and "mine.yaml" in str(exc.value)


def test_duplicate_names_in_one_folder(tmp_path):
    _write(tmp_path, "a.yaml", "Card A", ["NVIDIA Same"])
    _write(tmp_path, "b.yaml", "Card B", ["NVIDIA Same"])
    with pytest.raises(SpecError) as exc:
        load_library([tmp_path])
    assert "already used" in str(exc.value)


def test_missing_specs_dir_is_usage_error(tmp_path):
    with pytest.raises(UsageError, match="nope' does not exist; pass a folder of spec-sheet"):
        load_library([tmp_path / "nope"])


def test_match_nvml_uses_pci_id(tmp_path):
    _write(tmp_path, "x.yaml", "X SXM", ["NVIDIA X"], pci=["0x1111"])
    _write(tmp_path, "y.yaml", "X NVL", ["NVIDIA X"], pci=["0x2222"])
    lib = SpecLibrary([s for s in load_library([tmp_path]) if s.name.startswith("X ")])
    assert sheet_for(nvml_name="NVIDIA X", pci_device_id="0x2222", library=lib).sheet.name == "X NVL"
    assert sheet_for(nvml_name="NVIDIA X", pci_device_id="0x1111", library=lib).sheet.name == "X SXM"
    assert sheet_for(nvml_name="NVIDIA X", library=lib).sheet is None  # ambiguous without the PCI id: no guess


def test_bundled_h200_sheet_matches_probe_values():
    lib = load_library()
    s = sheet_for(nvml_name="NVIDIA H200", pci_device_id="0x2335", library=lib).sheet
    assert s.name == "H200 SXM"
    assert round(s.ridge_point("bf16")) == 206


def test_a_sheet_carries_its_parsed_architecture():
    import dataclasses

    from gpuwhy.archs import Arch

    lib = library(())
    assert lib.match("H200").arch == Arch(90) and lib.match("RTX 5070").arch.name == "sm_120"
    assert lib.match("MI300X").arch is None  # gfx942: no NVIDIA architecture
    assert all(s.arch is not None for s in lib if s.vendor == "NVIDIA")
    assert dataclasses.replace(lib.match("H200"), compute_capability="8.0").arch == Arch(80)
