"""Each input of `gpuwhy diff` read into one :class:`~gpuwhy.diff.side.Side`: its kind told by its
first bytes, then the reader of that kind.

Kinds: a `gpuwhy run --json` document, a `gpuwhy trace --json` document, a torch.profiler trace
(``.json``/``.json.gz``), an Nsight Compute export (``--csv``, or ``.ncu-rep``), a `gpuwhy check`
or `gpuwhy bench` document or a device profile. An Nsight Systems report is named and refused
(no reader yet); anything else, an empty file included, is one line naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..diff.side import DeviceFacts, FigureValue, KernelStat, Prediction, Side
from ..errors import UsageError
from ..inputs import check_input_path

WHAT = ("a gpuwhy run --json document, a torch.profiler trace (.json, .json.gz), an ncu export (--csv or "
        ".ncu-rep) or a gpuwhy check/bench document")
#: Bytes read to tell a file's kind.
SNIFF_BYTES = 4096
_STEPS = re.compile(r"the last (\d+) of \d+ steps")


def sniff(path: str) -> str:
    """The kind of ``path`` from its first bytes: ``gpuwhy`` (a gpuwhy document or profile: JSON
    object with a ``gpuwhy`` key or a profile's ``uuid``), ``trace`` (other JSON, or an Nsight Systems
    report: a timeline like a torch.profiler trace's), ``ncu`` (an ncu CSV or ``.ncu-rep``).

    Raises:
        UsageError: not a file, empty, or none of the kinds (one line, never the file's content).
    """
    from ..importers.nsys import is_nsys_report
    from ..inputs import open_input

    p = check_input_path(path, WHAT)
    if p.suffix == ".ncu-rep":
        return "ncu"
    if is_nsys_report(p):
        return "trace"
    with open_input(p, WHAT) as fh:
        head = fh.read(SNIFF_BYTES)
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        raise UsageError(f"{path} is empty; pass {WHAT}")
    if text[:1] == b"{" and re.match(rb'\{\s*"(gpuwhy|uuid|name)"', text):
        return "gpuwhy"
    if text[:1] in (b"{", b"["):
        return "trace"
    if b"ID" in text[:4096] and (b"Kernel Name" in text or b"Metric Name" in text or b"==PROF==" in text):
        return "ncu"
    raise UsageError(f"{path} is none of the files diff reads; pass {WHAT}")


def read_side(path: str, spec_dirs=()) -> Side:
    """The :class:`Side` of ``path`` (see the module docstring).

    Raises:
        UsageError: unreadable, empty, of no kind diff reads, or holding nothing to compare.
    """
    kind = sniff(path)
    if kind == "ncu":
        return ncu_side(path, spec_dirs)
    if kind == "trace":
        return trace_side(path)
    from ..inputs import read_json

    doc = read_json(path, WHAT)
    if isinstance(doc, dict) and doc.get("kind") == "run":
        return run_side(doc, path)
    if isinstance(doc, dict) and doc.get("kind") == "trace":
        return trace_document_side(doc, path)
    from ..check.figures import document_kind

    if document_kind(doc) is not None:
        return check_side(doc, path)
    kind_word = doc.get("kind") if isinstance(doc, dict) else None
    raise UsageError(f"{path} is a gpuwhy {kind_word or 'document'} document, which diff does not compare; pass {WHAT}")


def _shares(diagnosis: dict, path: str) -> dict[str, float]:
    """Seconds per cause of a document's ``diagnosis`` (warm-up left out: listed, never judged)."""
    out: dict[str, float] = {}
    for s in diagnosis.get("shares") or []:
        c, v = s.get("cause"), s.get("seconds")
        if not isinstance(c, str) or not isinstance(v, (int, float)) or v < 0:
            raise UsageError(f"{path}: a share of its diagnosis has no cause or seconds; pass the document as gpuwhy "
                             "wrote it")
        if c != "warmup":
            out[c] = out.get(c, 0.0) + float(v)
    if not out:
        raise UsageError(f"{path}: its diagnosis holds no time: nothing to compare")
    return out


def program_of(argv) -> str | None:
    """The script (its file name) or ``-m`` module a `gpuwhy run` command line ran; None when it says neither."""
    args = [a for a in argv or [] if isinstance(a, str)]
    for i, a in enumerate(args):
        if a == "-m" and i + 1 < len(args):
            return args[i + 1]
        if a.endswith(".py"):
            return Path(a).name
    return None


def run_side(doc: dict, path: str) -> Side:
    """A `gpuwhy run --json` document: its diagnosis (over the window), the steps its window holds
    (``the last N of M steps``), its top kernels, its remedies and the program it ran; the GPU's
    name where the trace it kept can still be read.

    Raises:
        UsageError: no diagnosis (no GPU work in the window), or a malformed diagnosis.
    """
    diag = doc.get("diagnosis")
    if not isinstance(diag, dict):
        raise UsageError(f"{path}: the gpuwhy run document holds no diagnosis (no GPU work in its window): nothing to "
                         "compare")
    window = doc.get("window") or {}
    m = _STEPS.search(str(window.get("how") or ""))
    kernels = tuple(KernelStat(k.get("full_name") or k.get("name") or "?", float(k.get("total_s") or 0.0),
                               int(k.get("launches") or 0), kind=k.get("kind") or "other", regime=k.get("regime"),
                               roof_pct=k.get("roof_pct"), level=k.get("deciding_level"))
                    for k in doc.get("kernels") or [] if isinstance(k, dict))
    preds = tuple(Prediction(r.get("key", "?"), r.get("text", ""), r.get("ceiling_x"),
                             tuple(x.get("cause") for x in r.get("removes") or [] if isinstance(x, dict)))
                  for r in diag.get("remedies") or [] if isinstance(r, dict))
    notes = ["a gpuwhy run document lists its top kernels only"] if kernels else []
    device = DeviceFacts()
    trace = doc.get("trace")
    if isinstance(trace, str) and Path(trace).is_file():
        device = _trace_device(trace, str(doc.get("gpu") or "0"))
    return Side(path, "run", _shares(diag, path), int(m.group(1)) if m else None, (), kernels, {},
                doc.get("mode") == "ncu", preds, device, program_of(doc.get("argv")), {}, tuple(notes))


def _trace_device(trace: str, gpu: str, tl=None) -> DeviceFacts:
    """The GPU ``gpu`` of a trace: the name the timeline holds (an Nsight Systems report's GPU table),
    else the torch.profiler header's name and driver."""
    from ..importers.kineto.read import trace_header

    if tl is not None and getattr(tl, "device_names", {}).get(gpu):
        return DeviceFacts(tl.device_names[gpu])

    try:
        names, driver = trace_header(trace)
    except UsageError:
        return DeviceFacts()
    return DeviceFacts(names.get(gpu), driver)


def trace_side(path: str) -> Side:
    """A torch.profiler trace or an Nsight Systems report: its busiest GPU's diagnosis over its span,
    each step's wall time, its kernels by name, grid and block, its top-level operators, and the GPU
    it names.

    Raises:
        UsageError: not a trace, or no GPU work in it.
    """
    from ..importers.kineto import read_timeline
    from ..importers.nsys import is_nsys_report, read_nsys_timeline
    from ..importers.timeline.analyze import analyze
    from .readers import readable
    from .run import busiest_gpu

    what, read = (("Nsight Systems report", read_nsys_timeline) if is_nsys_report(path)
                  else ("torch.profiler trace", read_timeline))
    tl = readable(path, what, read, path)
    report = readable(path, what, analyze, tl, str(path), 100_000)
    gpu = busiest_gpu(report)
    if gpu is None or gpu.diagnosis is None or gpu.busy_s <= 0:
        raise UsageError(f"{path}: the trace holds no GPU work to judge: nothing to compare")
    steps = tuple(s.wall_s for s in gpu.idle.steps if s.wall_s > 0)
    shares = {s.cause.value: s.seconds for s in gpu.diagnosis.shares if s.cause.value != "warmup"}
    notes = [] if steps else [f"{path} marks no ProfilerStep ranges"]
    return Side(path, "trace", shares, len(steps) or None, steps, trace_kernels(tl, gpu.device),
                top_operators(tl), False, (), _trace_device(path, gpu.device, tl), None, {}, tuple(notes))


def trace_kernels(tl, device: str) -> tuple[KernelStat, ...]:
    """The kernels device ``device`` of timeline ``tl`` ran, summed by (name, grid, block)."""
    import numpy as np

    from ..importers.timeline.activities import KERNEL
    from ..importers.timeline.kinds import kernel_kind

    by: dict[tuple, list] = {}
    idx = np.nonzero(tl.gpu_kind == KERNEL)[0].tolist()
    for i in idx:
        if tl.gpu_device[i] != device:
            continue
        name = tl.gpu_names[tl.gpu_name[i]]
        grid, block = tl.gpu_grid[i], tl.gpu_block[i]
        key = (name, tuple(grid) if grid else None, tuple(block) if block else None)
        got = by.setdefault(key, [0.0, 0])
        got[0] += float(tl.gpu_dur[i]) * 1e-6
        got[1] += 1
    return tuple(KernelStat(n, s, c, g, b, kernel_kind(n)) for (n, g, b), (s, c) in by.items())


def top_operators(tl) -> dict[str, float]:
    """Seconds per name of the timeline's top-level host operators (those inside no other operator
    of their thread; nested ones would count twice)."""
    import numpy as np

    from ..importers.timeline.activities import OPERATOR

    idx = np.nonzero(tl.range_kind == OPERATOR)[0]
    order = sorted(idx.tolist(), key=lambda i: (int(tl.range_thread[i]), float(tl.range_start[i]),
                                                -float(tl.range_dur[i])))
    out: dict[str, float] = {}
    thread, end = None, -np.inf
    for i in order:
        th, st, du = int(tl.range_thread[i]), float(tl.range_start[i]), float(tl.range_dur[i])
        if th != thread:
            thread, end = th, -np.inf
        if st >= end:
            name = tl.range_names[tl.range_name[i]]
            out[name] = out.get(name, 0.0) + du * 1e-6
            end = st + du
    return out


def trace_document_side(doc: dict, path: str) -> Side:
    """A `gpuwhy trace --json` document: its busiest GPU's diagnosis, steps and top kernels (by name).

    Raises:
        UsageError: no GPU with a diagnosis in it.
    """
    devs = [d for d in doc.get("devices") or [] if isinstance(d, dict) and isinstance(d.get("diagnosis"), dict)]
    if not devs:
        raise UsageError(f"{path}: the gpuwhy trace document holds no GPU with a diagnosis: nothing to compare")
    d = max(devs, key=lambda x: float(x.get("busy_s") or 0.0))
    steps = tuple(float(s["wall_s"]) for s in (d.get("idle") or {}).get("steps") or []
                  if isinstance(s, dict) and isinstance(s.get("wall_s"), (int, float)) and s["wall_s"] > 0)
    kernels = tuple(KernelStat(k.get("full_name") or k.get("name") or "?", float(k.get("total_s") or 0.0),
                               int(k.get("count") or 0)) for k in d.get("top_kernels") or [] if isinstance(k, dict))
    return Side(path, "trace-document", _shares(d["diagnosis"], path), len(steps) or None, steps, kernels, {}, False,
                (), DeviceFacts(), None, {}, ("a gpuwhy trace document lists its top kernels only",))


def ncu_side(path: str, spec_dirs=()) -> Side:
    """An Nsight Compute export: the kernels' time by regime (the engine's diagnosis of the kernel
    time), each kernel with its regime and % of roof, the GPU and the median SM clock.

    Raises:
        UsageError: not a readable export, an unknown GPU, or no kernel time in it.
    """
    from ..importers.ncu import load_ncu_report
    from ..importers.timeline.kinds import kernel_kind
    from ..model.multi_gpu.spread import median
    from .readers import readable

    rep = readable(path, "Nsight Compute export", load_ncu_report, path, top=100_000, spec_dirs=tuple(spec_dirs),
                   local_gpu=False)
    devs = [d for d in rep.devices if d.diagnosis is not None]
    if not devs:
        raise UsageError(f"{path}: the ncu export holds no kernel time to judge: nothing to compare")
    d = max(devs, key=lambda x: x.total_time_s or 0.0)
    notes = ([f"{path}: {len(devs)} GPUs in the export; the one with the most kernel time is compared"]
             if len(devs) > 1 else [])
    shares = {s.cause.value: s.seconds for s in d.diagnosis.shares if s.cause.value != "warmup"}
    kernels = tuple(KernelStat(k.full_name, float(k.total_time_s or 0.0), int(k.launches),
                               kind=kernel_kind(k.full_name), regime=k.regime, roof_pct=k.roof_pct,
                               level=k.deciding_level) for k in d.kernels)
    clocks = [k.sm_clock_hz / 1e6 for k in d.kernels if k.sm_clock_hz]
    device = DeviceFacts(d.name or d.sheet, None, median(clocks) if clocks else None)
    return Side(path, "ncu", shares, None, (), kernels, {}, True, (), device, None, {}, tuple(notes))


def check_side(doc, path: str) -> Side:
    """A `gpuwhy check`/`bench` document or a device profile: the first GPU's figures.

    Raises:
        UsageError: no figure in it.
    """
    from ..check.figures import figure, read_records

    records = read_records(doc, path)
    rec = next((r for r in records if r.figures), None)
    if rec is None:
        raise UsageError(f"{path}: the document holds no measured figure to compare")
    figs = {}
    for key, v in rec.figures.items():
        try:
            f = figure(key)
        except KeyError:
            continue
        figs[key] = FigureValue(float(v), f.higher_is_better, f.label, f.unit)
    notes = [f"{path}: {len(records)} GPUs in the document; the first with figures ({rec.model}) is compared"] \
        if len(records) > 1 else []
    return Side(path, "check", {}, None, (), (), {}, False, (), DeviceFacts(rec.model), None, figs, tuple(notes))


__all__ = ["WHAT", "check_side", "ncu_side", "program_of", "read_side", "run_side", "sniff", "top_operators",
           "trace_document_side", "trace_kernels", "trace_side"]
