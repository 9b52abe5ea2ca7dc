"""NCCL all-reduce across this host's GPUs: ``gpuwhy bench --allreduce``.

gpuwhy does not reduce anything itself: the collective is NCCL's, called through PyTorch's
``torch.distributed`` with the NCCL backend, one process per GPU started by gpuwhy
(:mod:`gpuwhy.engine.ranks`, torchrun's environment, NVLink multicast off in every rank).
Each rank runs :mod:`gpuwhy.engine.allreduce_worker`: per message size from 8 B to
``--max-size`` (x2 steps, as nccl-tests sweeps), the result is checked against the expected
sum first, then the in-place all-reduce is timed with CUDA events (warm-up, then
:data:`ITERS` iterations each between two events; :func:`gpuwhy.engine.timing.time_gpu`).
Here every iteration counts at its slowest rank and the median of those is the time t;
algbw = S / t and busbw = algbw x 2(n-1)/n (:mod:`gpuwhy.model.multi_gpu.allreduce`, nccl-tests'
convention). The largest size's busbw is compared with the NVLink limit when one is known.

On one GPU there is nothing to all-reduce across: the result says so and, when PyTorch is
here, runs the same sweep on one rank as a smoke test of the machinery (NCCL's one-rank
all-reduce moves no data between GPUs; its busbw is 0 by the formula; nothing is saved).

Saved in each GPU's profile (:data:`gpuwhy.profile_sections.ALLREDUCE`): for the GPU count,
the largest size's busbw and the 8 B all-reduce's time, which ``gpuwhy llm --num-gpus N``
uses as its all-reduce latency.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import GpuwhyError, MeasurementError, NoDeviceError, UsageError
from ..units import fmt_bytes, fmt_counted
from ..model.multi_gpu.allreduce import (
    BUSBW_SOURCE,
    DEFAULT_MAX_BYTES,
    DTYPE_BYTES,
    EXACT_RANKS_BF16,
    UNKNOWN_LIMIT,
    Limit,
    SizeTiming,
    busbw_factor,
    check_dtype,
    check_max_size,
    sheet_limit,
    slowest_rank,
    sweep_sizes,
    topology_limit,
)

#: Untimed all-reduces before each size's timed ones (nccl-tests' default ``-w 5``).
WARMUP = 5
#: Timed iterations per size, each between its own pair of CUDA events; the median is reported.
ITERS = 50
#: Seconds the whole run may take before gpuwhy stops the ranks (MeasurementError).
TIMEOUT_S = 300.0
#: Seconds a rank's NCCL process group waits on a collective before NCCL's watchdog aborts it.
GROUP_TIMEOUT_S = 120.0
#: The worker module every rank runs.
WORKER = "gpuwhy.engine.allreduce_worker"
#: What to install when PyTorch is missing.
INSTALL = "pip install torch (a CUDA build; its torch.distributed carries the NCCL backend)"
ONE_GPU = "1 GPU: nothing to all-reduce across"


@dataclass(frozen=True)
class RankDevice:
    """The GPU of one rank: nvidia-smi's index, the CUDA ordinal the rank opens, UUID, name."""

    rank: int
    nvml_index: int | None
    cuda_ordinal: int
    uuid: str | None
    name: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AllreduceResult:
    """One ``bench --allreduce`` run.

    Attributes:
        devices: one per rank, in rank order.
        dtype: ``bf16`` or ``fp32``.
        rows: one :class:`~gpuwhy.model.multi_gpu.allreduce.SizeTiming` per size, smallest first (empty
            when nothing ran: one GPU without PyTorch).
        limit: what the largest size's busbw is compared with (:class:`~gpuwhy.model.multi_gpu.allreduce.Limit`).
        smoke_test: True on one GPU (the rows time NCCL's one-rank all-reduce).
        warmup, iters: per size.
        torch_version, nccl_version: of the ranks (None when nothing ran).
        sheet: the spec sheet's name (None when unknown).
        saved: the profile files written.
        notes: sentences for the reader.
        date: ISO 8601 UTC; duration_s: wall time of the run.
    """

    devices: tuple[RankDevice, ...]
    dtype: str
    rows: tuple[SizeTiming, ...]
    limit: Limit = UNKNOWN_LIMIT
    smoke_test: bool = False
    warmup: int = WARMUP
    iters: int = ITERS
    torch_version: str | None = None
    nccl_version: str | None = None
    sheet: str | None = None
    saved: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    date: str = ""
    duration_s: float = 0.0

    @property
    def gpus(self) -> int:
        return len(self.devices)

    @property
    def largest(self) -> SizeTiming | None:
        return self.rows[-1] if self.rows else None

    @property
    def smallest(self) -> SizeTiming | None:
        return self.rows[0] if self.rows else None

    @property
    def limit_fraction(self) -> float | None:
        """The largest size's busbw / the limit (None when either is unknown, or on one GPU)."""
        if self.smoke_test or self.largest is None:
            return None
        return self.limit.fraction(self.largest.busbw_gbs)

    def summary_line(self) -> str:
        if self.gpus < 2:
            tail = (f"; smoke test on one rank: {self.smallest.size_bytes} B in {self.smallest.time_s * 1e6:.1f} us"
                    if self.rows else "")
            return ONE_GPU + tail
        big, small = self.largest, self.smallest
        s = (f"gpuwhy bench --allreduce: {self.gpus} GPUs, {self.dtype}: busbw {big.busbw_gbs:,.1f} GB/s at "
             f"{fmt_bytes(big.size_bytes)}, {small.size_bytes} B in {small.time_s * 1e6:.1f} us")
        f = self.limit_fraction
        return s + (f" ({100 * f:.0f}% of the {self.limit.gbs:,.0f} GB/s limit)" if f is not None else "; limit unknown")

    def to_dict(self) -> dict:
        big, small = self.largest, self.smallest
        return {
            "date": self.date,
            "gpus": self.gpus,
            "devices": [d.to_dict() for d in self.devices],
            "dtype": self.dtype,
            "element_bytes": DTYPE_BYTES[self.dtype],
            "smoke_test": self.smoke_test,
            "engine": {"collective": "torch.distributed.all_reduce (NCCL backend, sum, in place)",
                       "torch_version": self.torch_version, "nccl_version": self.nccl_version,
                       "nvls": "off (NCCL_NVLS_ENABLE=0 in every rank)"},
            "method": {"warmup": self.warmup, "iters": self.iters,
                       "time": "median over iterations of the slowest rank's CUDA-event time",
                       "busbw": BUSBW_SOURCE},
            "busbw_factor": busbw_factor(self.gpus),
            "rows": [r.to_dict() for r in self.rows],
            "largest_bytes": None if big is None else big.size_bytes,
            "largest_busbw_gbs": None if big is None else big.busbw_gbs,
            "latency_bytes": None if small is None else small.size_bytes,
            "latency_s": None if small is None else small.time_s,
            "limit_gbs": self.limit.gbs,
            "limit_source": self.limit.source,
            "limit_fraction": self.limit_fraction,
            "sheet": self.sheet,
            "saved": list(self.saved),
            "notes": list(self.notes),
            "duration_s": self.duration_s,
            "summary": self.summary_line(),
        }


def torch_missing() -> str | None:
    """Why ``torch.distributed`` cannot be used here (one sentence), or None when PyTorch can be
    found. Only looked up, not imported (the ranks import it; a CPU-only build or one without
    NCCL is caught there)."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"PyTorch is not importable here; install it: {INSTALL}"


def parse_max_size(text: str | None) -> int:
    """``--max-size`` in bytes (default 1 GiB).

    Raises:
        UsageError: not a byte count, or not a power of two from 8 B to 16 GiB.
    """
    if text is None:
        return DEFAULT_MAX_BYTES
    from ..units import parse_quantity

    return check_max_size(parse_quantity(text, "--max-size", unit="B"))


def _devices(device: str | None) -> tuple[tuple[RankDevice, ...], str]:
    """The GPUs ``-i`` names (default: every visible one), and the selection's note."""
    from ..device.select import resolve

    sel = resolve(device if device is not None and str(device).strip() else "all")
    return tuple(RankDevice(r, d.nvml_index, int(d.cuda_ordinal), d.uuid, d.name) for r, d in enumerate(sel.devices)), sel.note


def _limit(devices: Sequence[RankDevice], sheet) -> Limit:
    """What the largest all-reduce is compared with: the NVLinks NVML reports between these GPUs
    (:func:`~gpuwhy.model.multi_gpu.allreduce.topology_limit`), else the sheet's figure, else unknown."""
    try:
        from ..device.topology import read_topology

        topo = read_topology(",".join(d.uuid for d in devices if d.uuid) or None)
        limit = topology_limit(topo.gpus)
    except GpuwhyError:
        limit = UNKNOWN_LIMIT
    if limit.gbs is None and sheet is not None:
        limit = sheet_limit(sheet)
    return limit


def _sheet(devices: Sequence[RankDevice], gpu: str | None, spec_dirs: Sequence[str]):
    from ..device.sheet import sheet_for

    if gpu:
        return sheet_for(gpu, spec_dirs=spec_dirs).sheet
    try:
        return sheet_for(nvml_name=devices[0].name, spec_dirs=spec_dirs).sheet if devices[0].name else None
    except GpuwhyError:  # a broken sheet folder must not stop a measurement
        return None


def measure_allreduce(device: str | None = None, dtype: str | None = None, max_size: str | None = None, *,
                      gpu: str | None = None, spec_dirs: Sequence[str] = (), save: bool = True,
                      progress: Callable[..., None] | None = None, start=None, timeout_s: float = TIMEOUT_S) -> AllreduceResult:
    """Run the all-reduce sweep on the GPUs ``device`` names (``-i``; default all) and save it.

    ``start`` replaces how a rank is started (:data:`gpuwhy.engine.ranks.Start`; tests).

    Raises:
        UsageError: a bad ``--dtype`` or ``--max-size``, a bad ``-i``.
        NoDeviceError: no GPU; PyTorch, its CUDA or its NCCL backend missing on several GPUs
            (the message says what to install).
        MeasurementError: a wrong all-reduce result, a rank that failed or hung.
    """
    d = check_dtype(dtype)
    top = parse_max_size(max_size)
    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    devices, sel_note = _devices(device)
    notes = [sel_note] if sel_note else []
    sheet = _sheet(devices, gpu, spec_dirs)
    n = len(devices)
    smoke = n == 1
    missing = torch_missing()

    def skipped(why: str) -> AllreduceResult:
        """One GPU, no smoke test: its note (the last) becomes why (nothing asked needs PyTorch)."""
        return AllreduceResult(devices, d, (), smoke_test=True, sheet=getattr(sheet, "name", None),
                               notes=(*notes[:-1], f"smoke test skipped: {why}"), date=date, duration_s=time.perf_counter() - t0)

    if smoke:  # the summary line starts with ONE_GPU
        notes.append("smoke test: NCCL's all-reduce on one rank (no data crosses a link; busbw is 0 by the formula); not saved")
        if missing:
            return skipped(missing)
    elif missing:
        raise NoDeviceError(f"bench --allreduce needs torch.distributed with NCCL: {missing}")
    if d == "bf16" and n > EXACT_RANKS_BF16:
        raise UsageError(f"--dtype bf16 checks sums exactly up to {EXACT_RANKS_BF16} GPUs, not {n}; use --dtype fp32")
    sizes = sweep_sizes(top)
    try:
        raw = _run(devices, d, sizes, progress, start, timeout_s)
    except NoDeviceError as exc:
        if not smoke:
            raise
        return skipped(str(exc))
    rows = _rows(raw, n, DTYPE_BYTES[d])
    limit = _limit(devices, sheet)
    result = AllreduceResult(devices, d, tuple(rows), limit, smoke, WARMUP, ITERS, raw.get("torch_version"),
                             raw.get("nccl_version"), getattr(sheet, "name", None), (), tuple(notes), date,
                             time.perf_counter() - t0)
    if save and not smoke:
        from dataclasses import replace

        from ..profile_sections import ALLREDUCE, AllreduceRun
        from ..profiles import allreduce_entry, record

        big, small = result.largest, result.smallest
        entry = allreduce_entry(busbw_gbs=big.busbw_gbs, largest_bytes=big.size_bytes, latency_s=small.time_s,
                                latency_bytes=small.size_bytes, dtype=d, date=date)
        paths = [record(ALLREDUCE, x.uuid, AllreduceRun(n, entry), name=x.name or "GPU", sheet=result.sheet)
                 for x in devices if x.uuid]
        result = replace(result, saved=tuple(str(p) for p in paths if p is not None))
    return result


def _run(devices: Sequence[RankDevice], dtype: str, sizes: Sequence[int], progress, start, timeout_s: float) -> dict:
    """Start one rank per device, wait, and return rank 0's ``result.json`` (see the worker).

    Raises:
        NoDeviceError: a rank found no PyTorch, CUDA or NCCL.
        MeasurementError: a rank failed, the time ran out, or a result was wrong (the run's
            folder is kept and named).
    """
    from ..engine.ranks import popen, python_module, run_ranks

    folder = Path(tempfile.mkdtemp(prefix="gpuwhy-allreduce-"))
    cfg = {"devices": [x.cuda_ordinal for x in devices], "dtype": dtype, "sizes_bytes": list(sizes), "warmup": WARMUP,
           "iters": ITERS, "timeout_s": GROUP_TIMEOUT_S, "out_dir": str(folder)}
    (folder / "config.json").write_text(json.dumps(cfg))
    done = [0]

    def poll() -> None:
        try:
            k = len((folder / "progress").read_text().split())
        except OSError:
            k = 0
        if progress is not None and k > done[0]:
            progress(advance=k - done[0], description=fmt_bytes(sizes[k - 1]))
            done[0] = k

    if progress is not None:
        progress(total=len(sizes), description=f"{fmt_counted(len(devices), 'rank')} starting")
    ok = False
    try:
        run = run_ranks(python_module(WORKER, str(folder / "config.json")), len(devices), folder, timeout_s=timeout_s,
                        start=start or popen, poll=poll)
        if not run.ok:
            problem = _failure(run, folder, timeout_s)
            ok = isinstance(problem, NoDeviceError)  # software missing: its logs are not needed
            raise problem
        raw = json.loads((folder / "result.json").read_text())
        _check_results(raw, folder)
        ok = True
        return raw
    except KeyboardInterrupt:  # the ranks are stopped (run_ranks); nothing to keep
        ok = True
        raise
    except (OSError, ValueError) as exc:
        raise MeasurementError(f"the all-reduce ranks left no readable result in {folder} ({exc})") from None
    finally:
        if ok:
            shutil.rmtree(folder, ignore_errors=True)


def _failure(run, folder: Path, timeout_s: float) -> Exception:
    """The one-line error for a failed run: the first rank's own error file, else its last log line."""
    errors = []
    for p in sorted(folder.glob("error-*.json")):
        try:
            errors.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            continue
    kinds = [e for e in errors if e.get("kind") in ("no_torch", "no_cuda", "no_nccl")]
    if kinds:
        return NoDeviceError(f"bench --allreduce needs torch.distributed with NCCL on the GPU: {kinds[0].get('message')}; "
                             f"install it: {INSTALL}")
    if errors:
        return MeasurementError(f"all-reduce failed: {errors[0].get('message')} (logs in {folder})")
    if run.timed_out:
        return MeasurementError(f"the all-reduce ranks did not finish in {timeout_s:.0f} s and were stopped (logs in {folder})")
    bad = run.first_failure()
    line = bad.last_line() if bad is not None else ""
    code = bad.code if bad is not None else None
    return MeasurementError(f"all-reduce rank {bad.rank if bad else '?'} exited with code {code}"
                            f"{': ' + line if line else ''} (logs in {folder})")


def _check_results(raw: dict, folder: Path) -> None:
    """Raise MeasurementError naming the first wrong element a rank saw (ranks in order)."""
    ranks = raw.get("ranks", ())
    for rank in ranks:
        for s in rank.get("checked", ()):
            if not s.get("ok", False):
                raise MeasurementError(
                    f"all-reduce gave a wrong sum on rank {rank.get('rank')} at {s['size_bytes']} B: element {s.get('index')} "
                    f"is {s.get('got')}, expected {s.get('expected')} (logs in {folder})")
    for rank in ranks:
        for s in rank.get("checked", ()):
            if not s.get("all_ok", True):
                raise MeasurementError(f"all-reduce gave a wrong sum on some rank at {s['size_bytes']} B (logs in {folder})")


def _rows(raw: dict, ranks: int, esize: int) -> list[SizeTiming]:
    """One :class:`SizeTiming` per size from every rank's samples (rank -> size -> iteration).

    Raises:
        MeasurementError: the ranks' results do not line up (a rank missing, sizes missing).
    """
    per_rank = sorted(raw.get("ranks", ()), key=lambda r: r["rank"])
    sizes = [int(s["size_bytes"]) for s in raw.get("sizes", ())]
    if len(per_rank) != ranks or any(len(r["samples_s"]) != len(sizes) for r in per_rank):
        raise MeasurementError(f"the all-reduce ranks' results do not line up ({len(per_rank)} of {ranks} ranks reported)")
    try:
        return [slowest_rank([r["samples_s"][k] for r in per_rank], size, size // esize) for k, size in enumerate(sizes)]
    except ValueError as exc:
        raise MeasurementError(f"all-reduce timings unusable: {exc}") from None
