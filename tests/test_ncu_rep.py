"""`gpuwhy ncu REPORT.ncu-rep`: the real H200 report (tests/fixtures/real/ncu_mix.ncu-rep.gz), read
through NVIDIA's ncu_report module when it imports, else `ncu --import`, else one line (exit 3).

Neither ncu_report nor ncu is on the test machine, so both are stood in for: a fake ncu_report
module that serves the values of the same report's `ncu --import --csv --page raw` export
(ncu_rep_import_raw.csv, made on the H200 from this report), and a fake `ncu` script that
prints that export when it is given the real report.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from gpuwhy.errors import NoDeviceError, UsageError
from gpuwhy.importers.ncu import load_ncu_report, read_export
from gpuwhy.importers.ncu import rep as rep_mod

REAL = Path(__file__).parent / "fixtures" / "real"
REP_GZ = REAL / "ncu_mix.ncu-rep.gz"
IMPORT_CSV = REAL / "ncu_rep_import_raw.csv"


@pytest.fixture
def no_ncu(monkeypatch, tmp_path):
    """No ncu and no ncu_report anywhere this test can see."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(rep_mod, "NCU_FALLBACKS", [])
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(rep_mod, "INSTALL_GLOBS", [])
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def rep_file(tmp_path_factory) -> Path:
    """The real .ncu-rep, gunzipped to a temporary file."""
    out = tmp_path_factory.mktemp("rep") / "ncu_mix.ncu-rep"
    with gzip.open(REP_GZ, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _fake_ncu(bin_dir: Path, log: Path) -> Path:
    """A `ncu` that answers `--import FILE --csv --page raw ...` with the H200 export of that report,
    only when FILE is the real report (its magic and size), and logs its arguments."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "ncu"
    script.write_text(f"""#!{sys.executable}
import sys
open({str(log)!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if "--import" not in args:
    sys.exit(2)
path = args[args.index("--import") + 1]
with open(path, "rb") as fh:
    head = fh.read(4)
if head != b"NVR\\x00":
    print("==ERROR== the file is not a report", file=sys.stderr)
    sys.exit(1)
sys.stdout.write(open({str(IMPORT_CSV)!r}).read())
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _fake_module(folder: Path) -> Path:
    """An ncu_report module with the Python Report Interface calls gpuwhy uses, serving the values
    of the H200 `ncu --import --csv --page raw` export of the same report (numbers as numbers)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ncu_report.py").write_text(f'''
import csv

CSV = {str(IMPORT_CSV)!r}
IDS = {{"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"}}
LOADED = []


class IAction:
    NameBase_DEMANGLED = 1

    def __init__(self, name, metrics):
        self._name, self._metrics = name, metrics

    def name(self, base=0):
        return self._name

    def metric_names(self):
        return tuple(self._metrics)

    def metric_by_name(self, name):
        return self._metrics[name]


class IMetric:
    def __init__(self, value, unit):
        self._value, self._unit = value, unit

    def value(self):
        return self._value

    def unit(self):
        return self._unit


def _value(text):
    t = text.replace(",", "")
    if t in ("", "n/a"):
        return None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return text


class _Range:
    def __init__(self, actions):
        self._actions = actions

    def num_actions(self):
        return len(self._actions)

    def action_by_idx(self, i):
        return self._actions[i]


class _Context:
    def __init__(self, ranges):
        self._ranges = ranges

    def num_ranges(self):
        return len(self._ranges)

    def range_by_idx(self, i):
        return self._ranges[i]


def load_report(path):
    with open(path, "rb") as fh:
        assert fh.read(4) == b"NVR\\x00", "not a report"
    LOADED.append(path)
    rows = list(csv.reader(open(CSV)))
    header, units, data = rows[0], rows[1], rows[2:]
    actions = []
    for row in data:
        metrics = {{h: IMetric(_value(v), u) for h, u, v in zip(header, units, row) if h not in IDS}}
        actions.append(IAction(row[header.index("Kernel Name")], metrics))
    return _Context([_Range(actions)])
''')
    return folder


def _summary(report):
    (d,) = report.devices
    return {k.full_name: (k.regime, round(k.total_time_s, 9), k.basis) for k in d.kernels}, d


def test_report_through_ncu_report_module(no_ncu, rep_file, monkeypatch):
    folder = _fake_module(no_ncu / "nsight" / "extras" / "python")
    monkeypatch.syspath_prepend(str(folder))
    r = load_ncu_report(rep_file, top=50, local_gpu=False)
    import ncu_report

    assert ncu_report.LOADED == [str(rep_file)]
    assert r.reader.startswith("ncu_report")
    got, d = _summary(r)
    want, _ = _summary(load_ncu_report(IMPORT_CSV, top=50, local_gpu=False))
    assert got == want  # the same verdicts as ncu's own CSV of this report
    assert d.sheet == "H200 SXM" and d.classified_fraction == 1.0
    monkeypatch.delitem(sys.modules, "ncu_report")


def test_ncu_report_found_next_to_the_ncu_wrapper(no_ncu, monkeypatch):
    """CUDA's bin/ncu is a wrapper that runs <cuda>/nsight-compute-<version>/ncu; extras/python is there."""
    cuda = no_ncu / "cuda-13.0"
    _fake_module(cuda / "nsight-compute-2025.3.1" / "extras" / "python")
    _fake_module(cuda / "nsight-compute-2024.1.0" / "extras" / "python")
    (cuda / "bin").mkdir(parents=True)
    wrapper = cuda / "bin" / "ncu"
    wrapper.write_text(f'#!/bin/sh\nexec "{cuda}/nsight-compute-2025.3.1/ncu" "$@"\n')
    wrapper.chmod(0o755)
    dirs = rep_mod.ncu_report_dirs(str(wrapper))
    assert dirs[0] == cuda / "nsight-compute-2025.3.1" / "extras" / "python"  # the newest first
    assert cuda / "nsight-compute-2024.1.0" / "extras" / "python" in dirs
    mod, where = rep_mod.import_ncu_report(str(wrapper))
    assert mod is not None and where == str(dirs[0])
    sys.path.remove(where)
    monkeypatch.delitem(sys.modules, "ncu_report")


def test_report_through_ncu_import_when_the_module_is_missing(no_ncu, rep_file, monkeypatch):
    log = no_ncu / "ncu.log"
    script = _fake_ncu(no_ncu / "bin", log)
    monkeypatch.setenv("PATH", str(script.parent))
    r = load_ncu_report(rep_file, top=50, local_gpu=False)
    assert r.reader == f"{script} --import"
    assert log.read_text().split() == ["--import", str(rep_file), "--csv", "--page", "raw", "--print-units", "base"]
    got, _ = _summary(r)
    want, _ = _summary(load_ncu_report(IMPORT_CSV, top=50, local_gpu=False))
    assert got == want


def test_gzipped_report_is_unpacked_for_ncu(no_ncu, monkeypatch):
    log = no_ncu / "ncu.log"
    monkeypatch.setenv("PATH", str(_fake_ncu(no_ncu / "bin", log).parent))
    table, how = read_export(REP_GZ)
    assert how.endswith("--import") and len(table.launches) == 8 and table.source == str(REP_GZ)
    used = log.read_text().split()[1]
    assert used.endswith("ncu_mix.ncu-rep") and not os.path.exists(used)  # a temporary copy, removed after


def test_report_with_nothing_to_read_it_is_exit_3(no_ncu, rep_file, cli):
    with pytest.raises(NoDeviceError) as e:
        load_ncu_report(rep_file)
    msg = str(e.value)
    assert "ncu_report" in msg and "`ncu`" in msg and "https://developer.nvidia.com/nsight-compute" in msg and "\n" not in msg
    assert "python3 -m pip install 'gpuwhy[ncu]'" in msg  # NVIDIA's ncu-report wheel: no Nsight Compute needed
    code, out, err = cli("ncu", str(rep_file))
    assert code == 3 and out == "" and err.count("\n") == 1


def test_ncu_import_failure_is_one_line(no_ncu, tmp_path, monkeypatch):
    bad = tmp_path / "broken.ncu-rep"
    bad.write_bytes(b"NVR\x00" + b"\x00" * 16)
    script = no_ncu / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho '==ERROR== Failed to load report' >&2\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(script.parent))
    with pytest.raises(UsageError, match="ncu --import` failed \\(exit 1\\): ==ERROR== Failed to load report"):
        load_ncu_report(bad)
