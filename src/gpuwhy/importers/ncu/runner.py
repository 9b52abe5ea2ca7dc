"""`gpuwhy ncu -- CMD ARGS...`: run a program under Nsight Compute with the right settings
for this GPU, keep the export, and hand back the CSV to classify.

The steps (:func:`profile_command`):

1. find ``ncu`` (``--ncu``, PATH, :data:`~gpuwhy.importers.ncu.rep.NCU_FALLBACKS`): none
   is exit 3 with where to get it; probe the GPU (none is exit 3);
2. choose the metrics for this GPU: ``ncu --query-metrics`` once per GPU name and ncu
   version, cached under ``$XDG_CACHE_HOME/gpuwhy/ncu/``
   (:func:`~gpuwhy.importers.ncu.counters.choose_metrics` drops what it lacks);
3. ``ncu --metrics ... --clock-control none -c N [--kernel-name K] [--launch-skip S]
   [--profile-from-start off] -o BASE CMD ARGS...`` (:func:`profile_argv`), the
   program's and ncu's output passed to stderr and kept in ``BASE.log``;
4. ``ncu --import BASE.ncu-rep --csv --page raw --print-units base`` into ``BASE.csv``.

``BASE`` is ``gpuwhy-ncu-<program>-<UTC time>`` in the current folder, or ``--export``;
no existing file is ever overwritten. ncu's own failures become one line: no
permission to the counters (exit 2, with the fix), the program failing (exit 4),
no kernel profiled (exit 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MeasurementError, NoDeviceError, UsageError
from .counters import choose_metrics, parse_query_metrics
from .read import _perm_error
from .rep import NCU_HINT, find_ncu, import_command

#: Kernel launches profiled by default (``-c``): enough for a training step, bounded in time.
DEFAULT_LAUNCH_COUNT = 200
_VERSION_RE = re.compile(r"Version\s+([0-9][0-9.]*)")


@dataclass(frozen=True)
class NcuRun:
    """What one profiling run made and how: files (paths), the commands (argv lists), the metrics
    asked for and those this GPU lacks, the GPU name and ncu version, the program's exit code."""

    csv_path: str
    rep_path: str
    log_path: str
    profile_argv: tuple[str, ...]
    import_argv: tuple[str, ...]
    metrics: tuple[str, ...]
    lacking_metrics: tuple[str, ...]
    gpu: str
    ncu_version: str
    metrics_source: str
    exit_code: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {
            "csv_path": self.csv_path, "rep_path": self.rep_path, "log_path": self.log_path,
            "profile_argv": list(self.profile_argv), "import_argv": list(self.import_argv),
            "metrics": list(self.metrics), "lacking_metrics": list(self.lacking_metrics), "gpu": self.gpu,
            "ncu_version": self.ncu_version, "metrics_source": self.metrics_source, "exit_code": self.exit_code,
            "notes": list(self.notes),
        }


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/gpuwhy/ncu`` (default ``~/.cache/gpuwhy/ncu``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuwhy" / "ncu"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "unknown"


def ncu_version(ncu: str) -> str:
    """``ncu --version``'s version number (``2025.3.1.0``), or ``unknown``.

    Raises:
        NoDeviceError: ``ncu`` cannot be run.
    """
    try:
        done = subprocess.run([ncu, "--version"], capture_output=True, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoDeviceError(f"cannot run {ncu} ({exc}); {NCU_HINT}") from None
    m = _VERSION_RE.search(done.stdout + done.stderr)
    return m.group(1) if m else "unknown"


def available_metrics(ncu: str, gpu: str, version: str, refresh: bool = False) -> tuple[set[str], str]:
    """``(metric base names this GPU's ncu lists, where they came from)``: the cache, else
    ``ncu --query-metrics`` (then cached).

    Raises:
        NoDeviceError: ncu finds no GPU to query.
        UsageError: ``--query-metrics`` fails otherwise (the message quotes ncu).
    """
    path = cache_dir() / _slug(version) / f"{_slug(gpu)}.metrics"
    if not refresh and path.is_file():
        names = {ln.strip() for ln in path.read_text().splitlines() if ln.strip()}
        if names:
            return names, f"cached ncu --query-metrics ({path})"
    try:
        done = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, errors="replace", timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoDeviceError(f"cannot run {ncu} --query-metrics ({exc})") from None
    names = parse_query_metrics(done.stdout)
    if done.returncode != 0 or not names:
        said = _first_error(done.stdout + done.stderr) or "no metric listed"
        if re.search(r"no (supported|cuda)|no device|not find.*(gpu|device)", said, re.I):
            raise NoDeviceError(f"ncu finds no GPU to profile ({said[:200]})")
        raise UsageError(f"`{ncu} --query-metrics` failed (exit {done.returncode}): {said[:300]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(sorted(names)) + "\n")
    except OSError:
        pass  # a read-only cache only costs a query next time
    return names, "ncu --query-metrics"


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return next((ln for ln in lines if ln.startswith("==ERROR==")), lines[0] if lines else "")


def export_base(cmd: list[str], export: str | None = None, now: float | None = None) -> str:
    """The path (without extension) of the files a run writes: ``export`` (its ``.ncu-rep``/``.csv``
    suffix dropped), else ``gpuwhy-ncu-<program>-<UTC time>`` here, numbered until no file of that
    name exists.

    Raises:
        UsageError: a file of the ``export`` name exists (never overwritten).
    """
    def taken(base: str) -> bool:
        return any(os.path.exists(base + ext) for ext in (".ncu-rep", ".csv", ".log"))

    if export:
        base = re.sub(r"\.(ncu-rep|csv|log)$", "", export)
        if taken(base):
            raise UsageError(f"{base}.ncu-rep/.csv/.log exists; gpuwhy never overwrites a file: pass another --export")
        return base
    prog = next((Path(a).stem for a in cmd[1:] if a.endswith(".py")), Path(cmd[0]).name) if cmd else "run"
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    base = f"gpuwhy-ncu-{_slug(prog)}-{stamp}"
    n, cand = 1, base
    while taken(cand):
        n += 1
        cand = f"{base}-{n}"
    return cand


def profile_argv(ncu: str, metrics: list[str], base: str, cmd: list[str], launch_count: int = DEFAULT_LAUNCH_COUNT,
                 kernel_name: str | None = None, launch_skip: int | None = None,
                 profile_from_start: bool = True) -> list[str]:
    """The ncu command line that profiles ``cmd``: the metrics, clocks not locked, ``launch_count``
    launches, the filters passed through, the report written to ``base.ncu-rep``."""
    argv = [ncu, "--metrics", ",".join(metrics), "--clock-control", "none", "-c", str(launch_count)]
    if kernel_name:
        argv += ["--kernel-name", kernel_name]
    if launch_skip:
        argv += ["--launch-skip", str(launch_skip)]
    if not profile_from_start:
        argv += ["--profile-from-start", "off"]
    return argv + ["-o", base, *cmd]


def _gpu_name() -> str:
    """This machine's first GPU's name (for the metric cache).

    Raises:
        NoDeviceError: no GPU, driver or NVML (one line saying which).
    """
    from ...na import is_na
    from ...device.probe import probe_devices

    d = probe_devices(None, full=False).devices[0]
    name = d.identity.name
    return "unknown GPU" if is_na(name) else str(name)


def profile_command(
    cmd: list[str],
    *,
    ncu: str | None = None,
    launch_count: int = DEFAULT_LAUNCH_COUNT,
    kernel_name: str | None = None,
    launch_skip: int | None = None,
    profile_from_start: bool = True,
    export: str | None = None,
    gpu_name: str | None = None,
    refresh_metrics: bool = False,
    stream=None,
) -> NcuRun:
    """Run ``cmd`` under ncu (see the module docstring) and return what it made.

    ``gpu_name`` skips the GPU probe (tests); ``stream`` receives the program's and ncu's
    output (default stderr, so standard output stays the report's).

    Raises:
        NoDeviceError: no ``ncu``, or no GPU (exit 3).
        UsageError: an empty command, a program that does not exist, ``--ncu`` that is
            not executable, an ``--export`` that exists, no permission to the GPU counters,
            no kernel profiled (exit 2).
        MeasurementError: the program failed under ncu, or ncu failed otherwise (exit 4).
    """
    if not cmd:
        raise UsageError("nothing to run: give the program after `--`, e.g. gpuwhy ncu -- python3 train.py")
    if launch_count < 1:
        raise UsageError(f"-c/--launch-count {launch_count} must be at least 1")
    exe = find_ncu(ncu)
    if exe is None:
        if ncu:
            raise UsageError(f"--ncu {ncu!r} is not an executable file")
        raise NoDeviceError(f"`ncu` (Nsight Compute) is not on PATH; {NCU_HINT}")
    if shutil.which(cmd[0]) is None and not os.path.isfile(cmd[0]):
        raise UsageError(f"the program {cmd[0]!r} is not found (not on PATH, not a file)")
    gpu = gpu_name or _gpu_name()
    version = ncu_version(exe)
    bases, source = available_metrics(exe, gpu, version, refresh_metrics)
    metrics, lacking = choose_metrics(bases)
    base = export_base(cmd, export)
    out = stream if stream is not None else sys.stderr
    log_path = base + ".log"
    argv = profile_argv(exe, metrics, base, cmd, launch_count, kernel_name, launch_skip, profile_from_start)
    rc, log = _run_teed(argv, log_path, out)
    unknown = _unknown_metrics(log, metrics)
    notes = []
    if unknown and not os.path.isfile(base + ".ncu-rep"):
        # a metric --query-metrics listed but this ncu refuses with its suffix: run once more without it
        metrics = [m for m in metrics if m not in unknown]
        lacking = [*lacking, *unknown]
        notes.append(f"ncu refused {', '.join(unknown)}; ran again without")
        os.replace(log_path, base + ".first.log")
        argv = profile_argv(exe, metrics, base, cmd, launch_count, kernel_name, launch_skip, profile_from_start)
        rc, log = _run_teed(argv, log_path, out)
    rep = base + ".ncu-rep"
    have_rep = os.path.isfile(rep)
    if "ERR_NVGPUCTRPERM" in log:
        raise _perm_error("ncu")
    app_rc = _app_error(log)
    if app_rc is not None or (rc != 0 and not have_rep):
        code = app_rc if app_rc is not None else rc
        kept = f"; the partial report is kept at {rep}" if have_rep else ""
        if app_rc is None:
            said = _first_error(log) or f"exit {rc}"
            if re.search(r"no (supported|cuda)|no device", said, re.I):
                raise NoDeviceError(f"ncu finds no GPU to profile ({said[:200]})")
            raise MeasurementError(f"ncu failed (exit {rc}): {said[:300]}; its output is in {log_path}{kept}")
        raise MeasurementError(f"the program exited with code {code} under ncu; its output is in {log_path}{kept}")
    if not have_rep or "No kernels were profiled" in log:
        hint = " (the program never called cudaProfilerStart: drop --profile-from-start off)" if not profile_from_start else ""
        raise UsageError(f"ncu profiled no kernel{hint}; check --kernel-name, --launch-skip and -c, and that the program "
                         f"launches CUDA kernels (output in {log_path})")
    imp = import_command(exe, rep)
    try:
        done = subprocess.run(imp, capture_output=True, text=True, errors="replace", timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise MeasurementError(f"`ncu --import {rep}` could not run ({exc})") from None
    if done.returncode != 0 or '"ID"' not in done.stdout:
        raise MeasurementError(f"`ncu --import {rep}` failed (exit {done.returncode}): {_first_error(done.stderr + done.stdout)[:300]}")
    csv_path = base + ".csv"
    with open(csv_path, "x", encoding="utf-8") as fh:
        fh.write(done.stdout)
    if lacking:
        notes.append(f"this GPU's ncu lacks {len(lacking)} of the metrics gpuwhy asks for: {', '.join(lacking)}")
    return NcuRun(csv_path, rep, log_path, tuple(argv), tuple(imp), tuple(metrics), tuple(lacking), gpu, version,
                  source, rc, tuple(notes))


def _unknown_metrics(log: str, metrics: list[str]) -> list[str]:
    """The metrics of ``metrics`` that an ``==ERROR== Failed to find metric`` line names."""
    bad = [ln for ln in log.splitlines() if "Failed to find metric" in ln]
    return [m for m in metrics if any(m in ln or m.split(".", 1)[0] + " " in ln for ln in bad)]


def _app_error(log: str) -> int | None:
    m = re.search(r"==ERROR== The application returned an error code \((-?\d+)\)", log)
    return int(m.group(1)) if m else None


def _run_teed(argv: list[str], log_path: str, out) -> tuple[int, str]:
    """Run ``argv`` with its output (stdout and stderr together) copied to ``out`` and to ``log_path``;
    ``(exit code, the output)``.

    Raises:
        NoDeviceError: ``argv[0]`` cannot be started.
    """
    kept: list[str] = []
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                bufsize=1)
    except OSError as exc:
        raise NoDeviceError(f"cannot run {argv[0]} ({exc.strerror or exc}); {NCU_HINT}") from None
    with open(log_path, "x", encoding="utf-8") as log:
        try:
            for line in proc.stdout:
                log.write(line)
                kept.append(line)
                try:
                    out.write(line)
                    out.flush()
                except (OSError, ValueError):
                    pass
            rc = proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait()
            raise
    return rc, "".join(kept)


__all__ = ["DEFAULT_LAUNCH_COUNT", "NcuRun", "available_metrics", "cache_dir", "export_base", "ncu_version",
           "profile_argv", "profile_command"]
