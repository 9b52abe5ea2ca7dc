"""CI-grade behaviour (issue 19): GPU names as people type them, through the one lookup
(device/sheet.sheet_for -> specs.SpecLibrary.resolve), and the sheets for current parts. No GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwhy.device.sheet import sheet_for
from gpuwhy.errors import UsageError
from gpuwhy.specs import load_library


@pytest.mark.parametrize("typed, sheet", [
    ("rtx4090", "GeForce RTX 4090"), ("RTX4090", "GeForce RTX 4090"), ("rtx5070", "GeForce RTX 5070"),
    ("h100sxm", "H100 SXM"), ("H100-SXM", "H100 SXM"), ("a100 40gb", "A100 SXM4 40GB"),
    ("H200 141GB", "H200 SXM"), ("H100 80GB", "H100 SXM"), ("H100 94GB", "H100 NVL"), ("A100 80GB", "A100 SXM4 80GB"),
    ("B300", "B300"), ("GB300", "GB300"), ("GB200", "GB200"), ("B200", "B200"), ("H20", "H20"), ("L40", "L40"),
    ("L40S", "L40S"), ("RTX PRO 6000", "RTX PRO 6000 Blackwell"), ("B300 288GB", "B300"),
])
def test_gpu_name_forms_resolve_to_one_sheet(typed, sheet):
    assert sheet_for(typed).sheet.name == sheet


@pytest.mark.parametrize("typed, picked, others", [
    ("H100", "H100 SXM", ("H100 PCIe", "H100 NVL")), ("GH200", "GH200 96GB", ("GH200 144GB",)),
    ("H200", "H200 SXM", ("H200 NVL",)), ("A100", "A100 SXM4 80GB", ("A100 PCIe 80GB", "A100 SXM4 40GB")),
    ("H100 80GB", "H100 SXM", ("H100 PCIe",)),
])
def test_gpu_name_family_picks_a_variant_with_a_note(typed, picked, others):
    choice = sheet_for(typed)
    assert choice.sheet.name == picked
    assert choice.family and f"is the {picked} sheet" in choice.family and all(o in choice.family for o in others)
    assert sheet_for(picked).family is None  # the full name needs no note
    assert sheet_for("B300").family is None and sheet_for("rtx4090").family is None


def test_gpu_name_family_note_is_printed_once_at_the_end_and_not_before_an_error(cli):
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H100")
    assert code == 0 and "is the H100 SXM sheet" in err and err.count("is the H100 SXM sheet") == 1
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H100", "--dtype", "fp7")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "H100 SXM sheet" not in err
    code, out, err = cli("specs", "show", "H100 SXM")
    assert code == 0 and err == ""


def test_gpu_name_family_note_comes_from_the_choice_wherever_the_name_is_used(cli, tmp_path):
    note = "'H100' is the H100 SXM sheet (80 GB); other H100 sheets: H100 NVL, H100 PCIe (name one to use it)"
    # a --gpu used deep inside the command (the ncu analysis), printed last, once
    code, out, err = cli("ncu", str(Path(__file__).parent / "fixtures" / "real" / "ncu_full_raw.csv"), "--gpu", "H100", "--json")
    assert code == 0 and err.strip().splitlines()[-1] == note and err.count(note) == 1
    # names given as arguments, in the order given
    code, out, err = cli("compare", "A100", "H100", "--intensity", "3")
    assert code == 0 and err.strip().splitlines()[-2:] == [sheet_for("A100").family, note]
    # with the command's --specs: a user's sheet is one of the others
    lab = (Path(__file__).parents[1] / "specs" / "h100-pcie.yaml").read_text()
    lab = lab.replace("name: H100 PCIe", "name: H100 Lab").replace("aliases: [H100 PCIe 80GB]", "aliases: []")
    lab = lab.replace('nvml_names: ["NVIDIA H100 PCIe"]', "nvml_names: []").replace('pci_device_ids: ["0x2331"]', "pci_device_ids: []")
    (tmp_path / "h100-lab.yaml").write_text(lab)
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H100", "--specs", str(tmp_path))
    assert code == 0 and err.strip().splitlines()[-1] == note.replace("sheets: H100 NVL", "sheets: H100 Lab, H100 NVL")


def test_gpu_name_ambiguous_and_unknown_stay_errors():
    with pytest.raises(UsageError, match="ambiguous"):
        sheet_for("RTX 6000")  # the Ada and the Blackwell PRO cards
    with pytest.raises(UsageError, match="unknown GPU"):
        sheet_for("H300")


@pytest.mark.parametrize("name, nvml", [("B300", "NVIDIA B300 SXM6 AC"), ("GB300", "NVIDIA GB300")])
def test_gpu_name_new_sheets_match_their_nvml_names(name, nvml):
    assert sheet_for(nvml_name=nvml).sheet.name == name


@pytest.mark.parametrize("name", ["B300", "GB200", "GB300", "H20", "L40", "RTX PRO 6000 Blackwell"])
def test_gpu_name_new_sheets_carry_sources_and_dense_peaks(name):
    s = load_library().match(name)
    assert s.sources["datasheet"].startswith("https://")
    for prec in s.peak_tflops:
        assert s.source_for(f"peak_tflops.{prec}").startswith("https://")
    assert "fp32" in s.peak_tflops and s.notes  # every sheet says what it left out or estimated
    # FP32 peak = SMs x 128 lanes x 2 x boost clock, within 1% (the sheets are consistent with themselves).
    assert s.sm_count * 128 * 2 * s.boost_clock_mhz / 1e6 == pytest.approx(s.peak_tflops["fp32"], rel=0.01)


def test_a_family_note_reaches_a_listener_at_the_end_and_nothing_is_kept_without_one():
    from gpuwhy import notices
    from gpuwhy.api.sheets import noted

    family = sheet_for("H100").family
    heard = []
    noted(sheet_for("H100"))  # the Python API: no listener, nothing kept for a later reader
    with notices.listening(lambda m: heard.append(("note", m)), lambda m: heard.append(("warn", m)),
                           lambda m: heard.append(("later", m))):
        assert heard == []
        noted(sheet_for("H100"))
        noted(sheet_for("H100 SXM"))  # the full name has no note
    with notices.listening(lambda m: heard.append(("note", m)), lambda m: heard.append(("warn", m))):
        noted(sheet_for("H100"))  # a listener without an end channel drops it
    assert heard == [("later", family)]
