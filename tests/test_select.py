"""`-i/--id` as nvidia-smi reads it (device/select.py), on fake nodes of 1, 2 and 8 GPUs
(tests/fakes.py: fake NVML and CUDA driver over the recorded H200), and CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

import json

import pytest

from gpuwhy.device import probe as probe_mod
from gpuwhy.device.select import Listed, choose, parse_selection, pci_key
from gpuwhy.errors import NoDeviceError, UsageError

from fakes import Machine, h200_node


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


def _uuid(i: int) -> str:
    return f"GPU-0a1b2c3d-0000-4000-8000-{0x200 + i:012x}"


def _names(rep) -> list[tuple[int, int, str]]:
    return [(d.identity.nvml_index, d.identity.cuda_ordinal, d.identity.uuid) for d in rep.devices]


# --------------------------------------------------------------------------- the text


@pytest.mark.parametrize(
    "text, kinds",
    [
        ("0", [("index", 0)]),
        ("0,2", [("index", 0), ("index", 2)]),
        (" 3 , 1 ", [("index", 3), ("index", 1)]),
        ("cuda:1", [("cuda", 1)]),
        ("CUDA:0", [("cuda", 0)]),
        ("GPU-0a1b2c3d", [("uuid", "GPU-0a1b2c3d")]),
        ("0a1b2c3d-0000", [("uuid", "0a1b2c3d-0000")]),
        ("MIG-5f1c", [("uuid", "MIG-5f1c")]),
        ("00000000:2A:00.0", [("pci", (0, 0x2A, 0, 0))]),
        ("0000:2a:00.0", [("pci", (0, 0x2A, 0, 0))]),
        ("2a:00.0", [("pci", (0, 0x2A, 0, 0))]),
        ("0,GPU-0a1b,19:00.0", [("index", 0), ("uuid", "GPU-0a1b"), ("pci", (0, 0x19, 0, 0))]),
    ],
)
def test_parse_forms(text, kinds):
    assert [(s.kind, s.value) for s in parse_selection(text)] == kinds


@pytest.mark.parametrize("text", [None, "all", "ALL", " all "])
def test_all_is_none(text):
    assert parse_selection(text) is None


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "-i is empty"),
        ("0,,1", "has an empty entry"),
        ("0,all", "all stands alone"),
        ("-1", "is not a device"),
        ("first", "is not a device"),
        ("cuda:x", "is not a device"),
        ("abc", "is not a device"),
    ],
)
def test_parse_errors(text, words):
    with pytest.raises(UsageError, match=words):
        parse_selection(text)


def test_pci_key():
    assert pci_key("00000000:19:00.0") == pci_key("0000:19:00.0") == pci_key("19:00.0") == (0, 0x19, 0, 0)
    assert pci_key("0001:19:00.1") == (1, 0x19, 0, 1)
    assert pci_key("19:00") is None and pci_key("zz:00.0") is None


# --------------------------------------------------------------------------- choosing (pure)

LISTING = [
    Listed(0, 1, _uuid(0), "00000000:18:00.0", "NVIDIA H200", 0),
    Listed(1, None, _uuid(1), "00000000:2A:00.0", "NVIDIA H200"),  # hidden by CUDA_VISIBLE_DEVICES
    Listed(2, 0, _uuid(2), "00000000:3C:00.0", "NVIDIA H200", 1),
]


def test_choose_reads_an_index_in_nvidia_smi_order_and_cuda_n_in_cuda_order():
    assert [d.nvml_index for d in choose("2", LISTING).devices] == [2]
    assert [d.nvml_index for d in choose("cuda:0", LISTING).devices] == [2]
    assert [d.nvml_index for d in choose("2,0", LISTING).devices] == [2, 0]
    assert [d.nvml_index for d in choose("all", LISTING).devices] == [0, 2]  # the visible ones
    assert [d.nvml_index for d in choose("3c:00.0", LISTING).devices] == [2]


def test_choose_names_a_hidden_gpu_and_the_visible_ones():
    with pytest.raises(UsageError) as e:
        choose("1", LISTING, cvd="GPU-0a1b2c3d-0000-4000-8000-000000000202,0")
    msg = str(e.value)
    assert "-i 1: GPU 1 NVIDIA H200 " + _uuid(1) in msg and "is hidden from CUDA by CUDA_VISIBLE_DEVICES=" in msg
    assert "(-i 0, -i 2)" in msg and "\n" not in msg
    with pytest.raises(UsageError, match="is hidden from CUDA"):
        choose(_uuid(1), LISTING, cvd="0,2")
    with pytest.raises(UsageError, match="is hidden from CUDA"):
        choose("2a:00.0", LISTING, cvd="0,2")


def test_choose_errors_are_one_line_each():
    for text, words in [
        ("7", r"-i 7: nvidia-smi lists 3 GPUs, indices 0..2"),
        ("cuda:5", r"-i cuda:5: CUDA sees 2 GPUs, ordinals 0..1"),
        ("GPU-ffff", "matches no GPU's UUID"),
        ("99:00.0", r"no GPU at that PCI bus id \(the GPUs are at 00000000:18:00.0"),
        ("0,cuda:1", "names GPU 0 .* twice"),
    ]:
        with pytest.raises(UsageError, match=words) as e:
            choose(text, LISTING)
        assert "\n" not in str(e.value)


def test_an_ambiguous_prefix_lists_the_matches():
    with pytest.raises(UsageError) as e:
        choose("GPU-0a1b2c3d", LISTING)
    msg = str(e.value)
    assert "is the start of 3 GPUs' UUIDs" in msg
    assert all(_uuid(i) in msg for i in range(3)) and "give more of it" in msg


def test_a_full_uuid_wins_over_longer_ones_it_starts():
    devs = [Listed(0, 0, "GPU-ab", None, "x", 0), Listed(1, 1, "GPU-abcd", None, "y", 1)]
    assert [d.nvml_index for d in choose("GPU-ab", devs).devices] == [0]


def test_nothing_visible_is_no_device():
    with pytest.raises(NoDeviceError, match="CUDA sees no GPU"):
        choose(None, [Listed(0, None, _uuid(0), None, "NVIDIA H200")], cvd="GPU-dead")


def test_without_nvml_an_index_is_the_cuda_ordinal_and_says_so():
    devs = [Listed(None, 0, None, None, "NVIDIA H200", 0), Listed(None, 1, None, None, "NVIDIA H200", 1)]
    sel = choose("1", devs)
    assert [d.cuda_ordinal for d in sel.devices] == [1] and "read as the CUDA ordinal" in sel.note
    with pytest.raises(UsageError, match="without NVML an index is read as the CUDA ordinal"):
        choose("2", devs)


# --------------------------------------------------------------------------- probe on fake nodes


@pytest.mark.parametrize("n", [2, 8])
def test_probe_all_lists_every_gpu_in_nvidia_smi_order(machine, n):
    h200_node(machine, n, cuda_order=list(reversed(range(n))))  # CUDA numbers them the other way round
    rep = probe_mod.probe_devices("all")
    assert _names(rep) == [(i, n - 1 - i, _uuid(i)) for i in range(n)]
    assert _names(probe_mod.probe_devices(None)) == _names(rep)


def test_eight_gpus_every_form(machine):
    h200_node(machine, 8, cuda_order=[4, 5, 6, 7, 0, 1, 2, 3])
    pick = lambda text: [d.identity.nvml_index for d in probe_mod.probe_devices(text, full=False).devices]  # noqa: E731
    assert pick("5") == [5]
    assert pick("cuda:0") == [4]
    assert pick("0,2") == [0, 2]
    assert pick("7,3,1") == [7, 3, 1]
    assert pick(_uuid(6)) == [6]
    assert pick(_uuid(6)[len("GPU-"):]) == [6]  # without GPU-
    assert pick("GPU-0a1b2c3d-0000-4000-8000-000000000203") == [3]
    assert pick("00000000:96:00.0") == [7]  # 0x18 + 7 x 0x12
    assert pick("0000:2a:00.0") == [1]
    assert pick("2A:00.0") == [1]
    with pytest.raises(UsageError, match="is the start of 8 GPUs' UUIDs"):
        pick("GPU-0a1b")
    with pytest.raises(UsageError, match=r"-i 8: nvidia-smi lists 8 GPUs"):
        pick("8")


@pytest.mark.parametrize(
    "cvd, visible",
    [
        ("1", [1]),
        ("3,1", [1, 3]),  # listed in nvidia-smi's order; CUDA's ordinals beside
        ("GPU-0a1b2c3d-0000-4000-8000-000000000202", [2]),
        ("GPU-0a1b2c3d-0000-4000-8000-000000000202,GPU-0a1b2c3d-0000-4000-8000-000000000200", [0, 2]),
        ("0,2,-1,1", [0, 2]),  # the list stops at -1, as CUDA's does
    ],
)
def test_cuda_visible_devices_forms(machine, cvd, visible):
    h200_node(machine, 4, cvd=cvd)
    rep = probe_mod.probe_devices()
    assert [d.identity.nvml_index for d in rep.devices] == visible
    assert rep.cuda_visible_devices == cvd


def test_cuda_visible_devices_order_gives_the_cuda_ordinals(machine):
    h200_node(machine, 4, cvd="3,1")
    rep = probe_mod.probe_devices()
    assert [(d.identity.nvml_index, d.identity.cuda_ordinal) for d in rep.devices] == [(1, 1), (3, 0)]
    assert [d.identity.nvml_index for d in probe_mod.probe_devices("cuda:0").devices] == [3]


def test_a_gpu_hidden_by_cuda_visible_devices_is_named(machine):
    h200_node(machine, 4, cvd="1")
    for text in ("0", _uuid(0), "18:00.0"):
        with pytest.raises(UsageError) as e:
            probe_mod.probe_devices(text)
        msg = str(e.value)
        assert "hidden from CUDA by CUDA_VISIBLE_DEVICES='1'" in msg and "(-i 1)" in msg and _uuid(0) in msg


@pytest.mark.parametrize("cvd", ["", "-1", " ", "none"])
def test_cuda_visible_devices_hiding_everything(machine, monkeypatch, cvd):
    h200_node(machine, 2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cvd)
    with pytest.raises(NoDeviceError, match="CUDA_VISIBLE_DEVICES.*hides every GPU"):
        probe_mod.probe_devices("0")


def test_engine_opens_the_cuda_ordinal_of_the_gpu_nvidia_smi_names(machine):
    """bench and check open what resolve_device returns: the same GPU probe -i shows."""
    from gpuwhy.engine.context import resolve_device

    h200_node(machine, 2, cuda_order=[1, 0])
    assert resolve_device("0", 2) == 1 and resolve_device("1", 2) == 0
    assert resolve_device(None, 2) == 1  # the first in nvidia-smi's order, as probe lists it
    assert resolve_device("cuda:1", 2) == 1 and resolve_device(1, 2) == 1  # an int is a CUDA ordinal
    assert resolve_device(_uuid(1), 2) == 0
    with pytest.raises(UsageError, match=r"a measurement runs on one GPU and -i all names 2"):
        resolve_device("all", 2)
    with pytest.raises(UsageError, match="CUDA device 2 does not exist"):
        resolve_device(2, 2)


def test_engine_all_on_one_gpu_works(machine):
    from gpuwhy.engine.context import resolve_device

    h200_node(machine, 1)
    assert resolve_device("all", 1) == 0 and resolve_device("0", 1) == 0


# --------------------------------------------------------------------------- the commands


def test_probe_cli_i_and_list(machine, cli):
    h200_node(machine, 8, cuda_order=[1, 0, 2, 3, 4, 5, 6, 7])
    code, out, err = cli("probe", "-L")
    assert code == 0, err
    rows = [ln for ln in out.splitlines() if "NVIDIA H200" in ln]
    assert len(rows) == 8 and rows[0].split()[:2] == ["0", "1"] and _uuid(7) in rows[7]
    code, out, err = cli("probe", "-i", "0,2", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [d["identity"]["nvml_index"] for d in doc["devices"]] == [0, 2]
    code, out, err = cli("probe", "--id", "3")
    assert code == 0 and "GPU 3: NVIDIA H200" in out
    code, out, err = cli("probe", "--device", "1")  # the old name still works
    assert code == 0 and "GPU 1: NVIDIA H200 (cuda:0)" in out
    code, out, err = cli("probe", "-i", "GPU-0a1b")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is the start of 8 GPUs' UUIDs" in err


def test_check_selects_the_same_gpus(machine, cli, monkeypatch):
    """check -i / --all-devices measure the GPUs nvidia-smi names, each opened by UUID."""
    from gpuwhy.check import observe
    from gpuwhy.check.policy import Observations

    h200_node(machine, 8, cuda_order=list(reversed(range(8))))
    monkeypatch.setenv("GPUWHY_WORKERS", "inline")  # one after another here: the fake observe_device lives in this process
    seen = []

    def fake_observe(device, policy, spec_dirs=(), gpu=None):
        seen.append(device)
        return Observations(device="NVIDIA H200", uuid=device), 0.0

    monkeypatch.setattr(observe, "observe_device", fake_observe)
    cli("check", "-i", "6,1", "--json")
    assert seen == [_uuid(6), _uuid(1)]
    seen.clear()
    cli("check", "-i", "all", "--json")
    assert seen == [_uuid(i) for i in range(8)]
    seen.clear()
    cli("check", "--all-devices", "--json")
    assert seen == [_uuid(i) for i in range(8)]
    code, out, err = cli("check", "-i", "0", "--all-devices")
    assert code == 2 and "--all-devices is -i all" in err
    h200_node(machine, 4, cvd="2")
    code, out, err = cli("check", "-i", "0")
    assert code == 2 and "hidden from CUDA by CUDA_VISIBLE_DEVICES='2'" in err


def test_occupancy_takes_one_gpu(machine, cli):
    h200_node(machine, 2)
    code, out, err = cli("occupancy", "--block-size", "256", "--registers", "32", "-i", "all")
    assert code == 2 and "occupancy takes one GPU and -i all names 2" in err
    code, out, err = cli("occupancy", "--block-size", "256", "--registers", "32", "-i", "1", "--json")
    assert code == 0, err


@pytest.mark.parametrize("cvd", ["", "-1", "none"])
def test_bench_with_cuda_visible_devices_hiding_everything(cli, monkeypatch, tmp_path, cvd):
    from fakes import FakeGpu, install

    install(monkeypatch, FakeGpu(), tmp_path)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cvd)
    code, out, err = cli("bench", "--kernel", "launch")
    assert code == 3 and out == "" and len(err.strip().splitlines()) == 1
    assert "CUDA_VISIBLE_DEVICES" in err and "hides every GPU" in err


def test_bench_i_forms_on_one_gpu(cli, monkeypatch, tmp_path):
    """bench -i: the index, cuda:0, the UUID prefix, the PCI bus id and all name the one fake GPU."""
    from fakes import FakeGpu, install

    install(monkeypatch, FakeGpu(), tmp_path)
    for ident in ("0", "cuda:0", "GPU-1234abcd", "0000:19:00.0", "all"):
        code, out, err = cli("bench", "--kernel", "launch", "-i", ident, "--no-save", "--json")
        assert code == 0, (ident, err)
        assert json.loads(out)["device"]["uuid"].startswith("GPU-1234abcd")
    code, out, err = cli("bench", "--kernel", "launch", "-i", "0000:20:00.0")
    assert code == 2 and "no GPU at that PCI bus id" in err
