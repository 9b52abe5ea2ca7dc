"""Reading a user's Nsight Compute file: a CSV export, or a ``.ncu-rep`` report (also gzipped).

A ``.ncu-rep`` (it starts with the bytes ``NVR\\0``) is read, in this order, through:

1. NVIDIA's ``ncu_report`` Python module, when it can be imported: from the Python
   path (NVIDIA's ``ncu-report`` wheel, ``pip install 'gpuwhy[ncu]'``), else from an ``extras/python`` folder of an Nsight Compute install
   (:func:`ncu_report_dirs`: next to the ``ncu`` on PATH, in its ``nsight-compute-*``
   siblings, the folder its wrapper script runs, and ``/opt/nvidia/nsight-compute/*``);
2. ``ncu --import FILE --csv --page raw --print-units base``, when ``ncu`` is on PATH;
3. otherwise it stops with one line naming what to install (exit 3).

Every file is read through :func:`gpuwhy.inputs.open_input` (regular files only,
size-bounded, gzip undone by its magic).
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ...errors import NoDeviceError, UsageError
from ...inputs import GZIP_MAGIC, check_head, open_input
from .read import Launch, NcuTable, read_ncu_csv

REP_MAGIC = b"NVR\x00"
WHAT = "an Nsight Compute export (`ncu --csv` or a .ncu-rep report)"
#: Folders searched for Nsight Compute installs besides the ``ncu`` on PATH (tests may empty it).
INSTALL_GLOBS = ["/opt/nvidia/nsight-compute/*", "/usr/local/cuda*/nsight-compute*", "/usr/local/NVIDIA-Nsight-Compute*"]
#: Where ``ncu`` is looked for when it is not on PATH: ``$CUDA_HOME/bin/ncu`` (``CUDA_PATH`` too),
#: else CUDA's default install folder (tests may empty it).
NCU_FALLBACKS = ["/usr/local/cuda/bin/ncu"]
NCU_HINT = ("install NVIDIA Nsight Compute (https://developer.nvidia.com/nsight-compute; the CUDA toolkit ships it "
            "as <cuda>/bin/ncu) and put `ncu` on PATH, or pass --ncu PATH")
#: The extra that installs NVIDIA's ``ncu-report`` wheel (the ``ncu_report`` module, no Nsight Compute needed).
NCU_EXTRA = "python3 -m pip install 'gpuwhy[ncu]'"
INSTALL_HINT = (f"install NVIDIA's ncu-report wheel ({NCU_EXTRA}; no Nsight Compute needed), or install NVIDIA Nsight "
                "Compute (https://developer.nvidia.com/nsight-compute; the CUDA toolkit ships it as <cuda>/bin/ncu) and "
                "put `ncu` on PATH, or put its extras/python folder (the ncu_report module) on PYTHONPATH")


def find_ncu(path: str | None = None) -> str | None:
    """The ``ncu`` executable: ``path`` if given (must be executable), else the one on PATH, else
    ``$CUDA_HOME/bin/ncu`` (or ``$CUDA_PATH``), else :data:`NCU_FALLBACKS` when neither is set;
    None when there is none."""
    if path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    for p in ([os.path.join(home, "bin", "ncu")] if home else NCU_FALLBACKS):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _version_key(p: str) -> list:
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p)]


def ncu_report_dirs(ncu: str | None = None) -> list[Path]:
    """Folders that may hold ``ncu_report.py``, best first (see the module docstring)."""
    roots: list[Path] = []
    ncu = ncu or find_ncu()
    if ncu:
        real = Path(os.path.realpath(ncu))
        for d in (real.parent, real.parent.parent):
            roots.append(d)
            roots += [Path(p) for p in sorted(glob.glob(str(d / "nsight-compute*")), key=_version_key, reverse=True)]
        try:
            if real.stat().st_size < 65536:
                text = real.read_text(errors="replace")
                for m in re.findall(r"(/[^\s\"'$]*nsight-compute[^\s\"'/$]*)", text):
                    roots.append(Path(m))
        except OSError:
            pass
    for g in INSTALL_GLOBS:
        roots += [Path(p) for p in sorted(glob.glob(g), key=_version_key, reverse=True)]
    out: list[Path] = []
    for r in roots:
        d = r / "extras" / "python"
        if d not in out and (d / "ncu_report.py").is_file():
            out.append(d)
    return out


def import_ncu_report(ncu: str | None = None):
    """``(module, where)`` for NVIDIA's ``ncu_report``, or ``(None, "")`` when it cannot be imported."""
    try:
        return importlib.import_module("ncu_report"), "the Python path"
    except Exception:  # noqa: BLE001 (not installed, or a broken build: try the installs)
        pass
    for d in ncu_report_dirs(ncu):
        sys.path.insert(0, str(d))
        try:
            sys.modules.pop("ncu_report", None)
            return importlib.import_module("ncu_report"), str(d)
        except Exception:  # noqa: BLE001
            sys.path.remove(str(d))
    return None, ""


def read_export(path: str | Path) -> tuple[NcuTable, str]:
    """``(table, how it was read)`` of the user's file ``path``: a CSV export, or a ``.ncu-rep``.

    Raises:
        UsageError: not a readable file (see :func:`gpuwhy.inputs.open_input`), not an
            ncu export, or a report that ``ncu_report``/``ncu`` cannot read.
        NoDeviceError: a ``.ncu-rep`` and neither ``ncu_report`` nor ``ncu`` is installed.
    """
    with open_input(path, WHAT) as fh:
        magic = fh.peek(len(REP_MAGIC))[:len(REP_MAGIC)]
        if magic != REP_MAGIC:
            check_head(fh.peek(4096)[:4096], path, "an `ncu --csv` export or a .ncu-rep report", "text")  # a binary file: one line
        else:
            if not _is_gzip(path):  # ncu can read the file itself
                return read_ncu_rep(str(path), str(path))
            with tempfile.TemporaryDirectory(prefix="gpuwhy-ncu-") as tmp:
                rep = os.path.join(tmp, Path(path).name.removesuffix(".gz") or "report.ncu-rep")
                if not rep.endswith(".ncu-rep"):
                    rep += ".ncu-rep"
                with open(rep, "wb") as out:
                    shutil.copyfileobj(fh, out, 1 << 20)
                return read_ncu_rep(rep, str(path))
    return read_ncu_csv(path), "csv"  # read again, a line at a time


def _is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def read_ncu_rep(rep: str, source: str) -> tuple[NcuTable, str]:
    """The launches of the report file ``rep`` (``source`` is the user's name for it), and how it was read.

    Raises:
        UsageError: ``ncu_report`` or ``ncu --import`` failed on the file.
        NoDeviceError: neither is available (the message names what to install).
    """
    ncu = find_ncu()
    mod, where = import_ncu_report(ncu)
    failed = ""
    if mod is not None:
        try:
            return _from_module(mod, rep, source), f"ncu_report ({where})"
        except Exception as exc:  # noqa: BLE001 (the module's own errors)
            failed = f"ncu_report could not read it ({type(exc).__name__}: {str(exc)[:120]})"
    if ncu is not None:
        return _from_ncu(ncu, rep, source), f"{ncu} --import"
    if failed:
        raise UsageError(f"{source}: {failed}; install `ncu` to try `ncu --import`, or export a CSV: "
                         f"ncu --import {source} --csv --page raw > report.csv")
    raise NoDeviceError(f"{source} is a .ncu-rep report and neither NVIDIA's ncu_report module nor `ncu` is here to read it; "
                        f"{INSTALL_HINT}; or export a CSV where ncu is: ncu --import FILE --csv --page raw > report.csv")


def import_command(ncu: str, rep: str) -> list[str]:
    """The ``ncu`` command that prints a report as a raw-page CSV in base units."""
    return [ncu, "--import", rep, "--csv", "--page", "raw", "--print-units", "base"]


def _from_ncu(ncu: str, rep: str, source: str) -> NcuTable:
    try:
        done = subprocess.run(import_command(ncu, rep), capture_output=True, text=True, errors="replace", timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"{source}: `{ncu} --import` could not run ({exc})") from None
    if done.returncode != 0 or '"ID"' not in done.stdout:
        said = next((ln.strip() for ln in (done.stderr + done.stdout).splitlines() if ln.strip()), "no output")
        raise UsageError(f"{source}: `ncu --import` failed (exit {done.returncode}): {said[:300]}")
    return read_ncu_csv(source, text=done.stdout)


def _value_text(m) -> tuple[str, str]:
    """(cell text, unit) of an ncu_report IMetric."""
    unit = ""
    try:
        unit = m.unit() or ""
    except Exception:  # noqa: BLE001
        pass
    v = m.value() if hasattr(m, "value") else m.as_string()  # value() since Nsight Compute 2021; as_* before
    if v is None:
        return "n/a", unit
    if isinstance(v, bool):
        return str(int(v)), unit
    if isinstance(v, (int, float)):
        return repr(v), unit
    return str(v), unit


def _from_module(mod, rep: str, source: str) -> NcuTable:
    from .read import _read_cell  # the one cell reader (units to SI, text kept)

    ctx = mod.load_report(rep)
    launches: list[Launch] = []
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            act = rng.action_by_idx(ai)
            try:
                name = act.name(mod.IAction.NameBase_DEMANGLED)
            except Exception:  # noqa: BLE001 (older modules: name() only)
                name = act.name()
            la = Launch(id=f"{ri}:{ai}", name=str(name), device="0", device_name=None)
            for metric in act.metric_names():
                try:
                    text, unit = _value_text(act.metric_by_name(metric))
                except Exception:  # noqa: BLE001 (an instanced or unreadable metric)
                    continue
                la.metrics[metric] = _read_cell(la, metric, text, unit)
            dev = la.metrics.get("device__attribute_device_index", (None, None))[0]
            la.device = str(int(dev)) if dev is not None else "0"
            la.device_name = la.texts.get("device__attribute_display_name") or None
            major = la.metrics.get("device__attribute_compute_capability_major", (None, None))[0]
            minor = la.metrics.get("device__attribute_compute_capability_minor", (None, None))[0]
            if major is not None and minor is not None:
                la.cc = f"{int(major)}.{int(minor)}"
            launches.append(la)
    if not launches:
        raise UsageError(f"{source} holds no profiled kernel")
    cols = sorted({m for la in launches for m in la.metrics})
    return NcuTable(source, "raw", tuple(launches), tuple(cols), {}, (), ())


__all__ = ["INSTALL_HINT", "NCU_HINT", "REP_MAGIC", "find_ncu", "import_command", "import_ncu_report", "ncu_report_dirs",
           "read_export", "read_ncu_rep"]
