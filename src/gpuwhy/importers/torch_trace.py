"""torch.profiler (kineto) Chrome-trace JSON into a per-GPU timeline verdict.

Reads what ``prof.export_chrome_trace(path)`` (or a ``tensorboard_trace_handler``)
writes, plain or gzipped, and answers per GPU: how long was the GPU busy, how
long idle, and was the idle time the GPU waiting for the host to launch work
(overhead-bound) or short gaps between back-to-back kernels?

Events used (matched leniently across PyTorch versions; categories compared
case-insensitively):

- GPU work: ``ph: "X"`` with category ``kernel``/``Kernel`` (also ``gpu_kernel``),
  ``gpu_memcpy``/``Memcpy``, ``gpu_memset``/``Memset``. The GPU is
  ``args.device`` (else ``pid``); times are ``ts``/``dur`` in microseconds.
- Launches: ``ph: "X"`` with category ``cuda_runtime``/``Runtime``/``cuda_driver``
  (``cudaLaunchKernel``, ``cuLaunchKernel``, ``cudaLaunchKernelExC``,
  ``cudaMemcpyAsync``, ...), linked to the GPU work by ``args.correlation``,
  or failing that by the flow events (``ph: "s"``/``"f"``, category ``ac2g``
  or ``async_cpu_to_gpu``) whose end sits on the GPU event.
- Host syncs: runtime calls ``cudaDeviceSynchronize``, ``cudaStreamSynchronize``,
  ``cudaEventSynchronize``, ``cudaMemcpy`` (the blocking one) and friends.
- The capture window: instant events ``Iteration Start: PyTorch Profiler`` and
  ``Record Window End``; GPU work that starts outside it is dropped and counted.
- FLOPs, when the profile was taken with ``with_flops=True``: ``args.flops`` of
  the CPU operator (category ``cpu_op``) whose ``External id`` the kernel shares,
  split over that operator's kernels in proportion to their durations.

Dropped (and counted, by reason): GPU events with a missing or zero
timestamp, a missing, negative or zero duration, or outside the capture window.

Definitions (per GPU):

- span: first GPU activity start to last GPU activity end;
- busy: the union of kernel, memcpy and memset intervals over all streams;
- idle = span - busy, made of gaps between busy stretches. A gap is
  *GPU waiting on the host* when the launch call of the work that ends it
  started after the GPU went idle (no launch was pending); it is a
  *back-to-back gap* when the launch call was already issued (queue and launch
  latency, cross-stream waits); *unattributed* when that work has no linked
  launch event.

Verdict: ``overhead-bound`` when the GPU is idle for at least
:data:`IDLE_OVERHEAD_PCT` % of its span, or when most kernels are launch-sized
(more than :data:`SHORT_MAJORITY_PCT` % of kernels shorter than 10 us that
also take more than half of the kernel time); otherwise ``gpu-bound``: the
time is in the kernels, so hand the top kernels to the roofline. A trace with
no GPU events gets ``no-gpu-events``, never "idle".

Performance: one JSON parse (:func:`gpuwhy.inputs.read_json`: json's C parser, a few MiB at a time so Ctrl-C is seen) and
one pass over the events into plain lists, then numpy per GPU
(``benchmarks/bench_trace_import.py`` measures a 200 MB trace).
"""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..inputs import read_json
from .kernel_names import display_names
from ..units import fmt_num

#: Idle share of the GPU's span (percent) from which a trace is overhead-bound.
IDLE_OVERHEAD_PCT = 30.0
#: Share of kernels (percent) shorter than SHORT_KERNEL_S from which "most kernels are launch-sized".
SHORT_MAJORITY_PCT = 50.0
#: Kernels shorter than this are launch-sized (the same 10 us as gpuwhy.model.roofline.SHORT_KERNEL_S).
SHORT_KERNEL_S = 10e-6

_KIND_NAMES = ("kernel", "memcpy", "memset")
_GPU_CATS = {
    "kernel": 0, "gpu_kernel": 0, "cuda_kernel": 0,
    "memcpy": 1, "gpu_memcpy": 1, "cuda_memcpy": 1,
    "memset": 2, "gpu_memset": 2, "cuda_memset": 2,
}
_RUNTIME_CATS = {"runtime", "cuda_runtime", "cuda_driver", "driver", "cuda_api"}
_CPU_OP_CATS = {"cpu_op", "operator"}
_SYNC_NAMES = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
    "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
    "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cudaStreamWaitEvent_host",
}
_WINDOW_START = "Iteration Start: PyTorch Profiler"
_WINDOW_END = "Record Window End"
_OTHER = -1  # category cache marker: not an event we use


def _cat_kind(cat) -> int | str:
    """0/1/2 for GPU work, "runtime", "cpu_op", "flow" or _OTHER."""
    if not isinstance(cat, str):
        return _OTHER
    c = cat.strip().lower()
    if c in _GPU_CATS:
        return _GPU_CATS[c]
    if c in _RUNTIME_CATS:
        return "runtime"
    if c in _CPU_OP_CATS:
        return "cpu_op"
    if "ac2g" in c or "cpu_to_gpu" in c:
        return "flow"
    return _OTHER


def _num(x) -> float | None:
    if type(x) is float or type(x) is int:
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def _device_of(args: dict, pid) -> str:
    d = args.get("device")
    if d is None:
        d = pid
    if isinstance(d, float) and d.is_integer():
        d = int(d)
    if isinstance(d, str):
        digits = "".join(ch for ch in d if ch.isdigit())
        return digits or d
    return str(d)


def load_trace_json(path: str | Path):
    """The parsed JSON of a trace file, plain or gzipped (detected by its first bytes).

    Raises:
        UsageError: the file cannot be read, is not gzip/JSON, or is empty.
    """
    return read_json(Path(path), "a torch.profiler Chrome trace (.json or .json.gz)")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class TraceKernel:
    """One kernel name on one GPU: launches, total and mean time (s), share of the GPU's busy time (%).

    ``flops`` and ``achieved_tflops`` are set when the trace was recorded with
    ``with_flops=True`` and the kernel's operator carries a FLOP count.
    """

    name: str
    full_name: str
    count: int
    total_s: float
    mean_s: float
    busy_pct: float
    flops: float | None = None
    achieved_tflops: float | None = None


@dataclass(frozen=True)
class TraceGpu:
    """The timeline of one GPU (seconds; percentages 0-100 of ``span_s``).

    See the module docstring for span, busy, the three kinds of idle time and
    the verdict. ``launch_latency_*`` is kernel start minus its launch call's
    start (queueing included), over the kernels linked to a launch event.
    """

    device: str
    span_s: float
    busy_s: float
    idle_s: float
    busy_pct: float
    idle_pct: float
    host_wait_s: float
    back_to_back_s: float
    unattributed_idle_s: float
    gaps: int
    host_wait_gaps: int
    kernels: int
    memcpys: int
    memsets: int
    kernel_s: float
    memcpy_s: float
    memset_s: float
    streams: int
    median_kernel_s: float | None
    short_kernel_pct: float | None
    short_kernel_time_pct: float | None
    launch_latency_median_s: float | None
    launch_latency_p90_s: float | None
    linked_kernels: int
    top_kernels: tuple[TraceKernel, ...]
    verdict: str
    reasons: tuple[str, ...]
    remedies: tuple[str, ...]

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


@dataclass(frozen=True)
class TraceReport:
    """`gpuwhy trace`: per GPU, busy vs idle and the verdict; what was dropped and why.

    ``verdict`` is ``overhead-bound`` when any GPU is, ``gpu-bound`` when all
    are, ``no-gpu-events`` when the trace has none. ``host_sync_calls`` and
    ``host_sync_s`` count the blocking runtime calls (the host waiting on the GPU).
    """

    source: str
    verdict: str
    summary: str
    devices: tuple[TraceGpu, ...]
    events: int
    gpu_events: int
    runtime_events: int
    host_sync_calls: int
    host_sync_s: float
    capture_s: float | None
    dropped: dict[str, int]
    notes: tuple[str, ...]
    top: int

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "verdict": self.verdict,
            "summary": self.summary,
            "devices": [d.to_dict() for d in self.devices],
            "events": self.events,
            "gpu_events": self.gpu_events,
            "runtime_events": self.runtime_events,
            "host_sync_calls": self.host_sync_calls,
            "host_sync_s": self.host_sync_s,
            "capture_s": self.capture_s,
            "dropped": dict(self.dropped),
            "notes": list(self.notes),
            "top": self.top,
            "thresholds": {
                "idle_overhead_pct": IDLE_OVERHEAD_PCT,
                "short_kernel_s": SHORT_KERNEL_S,
                "short_majority_pct": SHORT_MAJORITY_PCT,
            },
        }


# --------------------------------------------------------------------------- the single pass


@dataclass
class _Scan:
    dev: list = field(default_factory=list)
    ts: list = field(default_factory=list)
    dur: list = field(default_factory=list)
    kind: list = field(default_factory=list)
    corr: list = field(default_factory=list)
    name: list = field(default_factory=list)
    stream: list = field(default_factory=list)
    ext: list = field(default_factory=list)
    flow_key: dict = field(default_factory=dict)  # index of a GPU event without correlation -> (pid, tid, ts)
    names: dict = field(default_factory=dict)
    launch_ts: dict = field(default_factory=dict)  # correlation -> launch call start (us)
    flow_start: dict = field(default_factory=dict)  # flow id -> start ts (us)
    flow_end: dict = field(default_factory=dict)  # (pid, tid, ts) -> flow id
    ext_flops: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)
    events: int = 0
    runtime: int = 0
    sync_calls: int = 0
    sync_us: float = 0.0
    host_min: float = math.inf
    host_max: float = -math.inf
    win_start: float | None = None
    win_end: float | None = None


def _scan(events) -> _Scan:
    s = _Scan()
    kinds: dict = {}
    names = s.names
    dev_l, ts_l, dur_l, kind_l, corr_l, name_l, stream_l, ext_l = s.dev, s.ts, s.dur, s.kind, s.corr, s.name, s.stream, s.ext
    launch_ts = s.launch_ts
    dropped = s.dropped
    n = 0
    for ev in events:
        n += 1
        if type(ev) is not dict:
            dropped["not an event object"] = dropped.get("not an event object", 0) + 1
            continue
        ph = ev.get("ph")
        if ph == "X":
            cat = ev.get("cat")
            k = kinds.get(cat)
            if k is None:
                k = kinds[cat] = _cat_kind(cat)
            if k == _OTHER:
                continue
            ts = ev.get("ts")
            if type(ts) is not float and type(ts) is not int:
                ts = _num(ts)
            if k == "runtime":
                s.runtime += 1
                args = ev.get("args")
                if ts is None or ts == 0:
                    continue
                s.host_min = min(s.host_min, ts)
                d = ev.get("dur")
                d = d if (type(d) is float or type(d) is int) else (_num(d) or 0.0)
                s.host_max = max(s.host_max, ts + d)
                if args:
                    c = args.get("correlation")
                    if c is not None:
                        launch_ts[c] = ts
                nm = ev.get("name")
                if nm in _SYNC_NAMES:
                    s.sync_calls += 1
                    s.sync_us += d
                continue
            if k == "cpu_op":
                if ts:
                    s.host_min = min(s.host_min, ts)
                    d = _num(ev.get("dur")) or 0.0
                    s.host_max = max(s.host_max, ts + d)
                args = ev.get("args")
                if args:
                    fl = args.get("flops")
                    if fl:
                        x = args.get("External id")
                        if x is not None:
                            s.ext_flops[x] = s.ext_flops.get(x, 0.0) + float(fl)
                continue
            if k == "flow":
                continue
            # GPU work
            d = ev.get("dur")
            if type(d) is not float and type(d) is not int:
                d = _num(d)
            if ts is None or ts == 0:
                reason = "GPU events with a missing or zero timestamp"
            elif d is None:
                reason = "GPU events without a duration"
            elif d < 0:
                reason = "GPU events with a negative duration"
            elif d == 0:
                reason = "GPU events of zero duration"
            else:
                reason = None
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            args = ev.get("args") or {}
            nm = ev.get("name") or "(unnamed)"
            nid = names.get(nm)
            if nid is None:
                nid = names[nm] = len(names)
            c = args.get("correlation")
            if c is None:
                s.flow_key[len(ts_l)] = (ev.get("pid"), ev.get("tid"), ts)
            dev_l.append(_device_of(args, ev.get("pid")))
            ts_l.append(ts)
            dur_l.append(d)
            kind_l.append(k)
            corr_l.append(c)
            name_l.append(nid)
            stream_l.append(args.get("stream", ev.get("tid")))
            ext_l.append(args.get("External id"))
        elif ph == "s" or ph == "f" or ph == "t":
            cat = ev.get("cat")
            k = kinds.get(cat)
            if k is None:
                k = kinds[cat] = _cat_kind(cat)
            if k != "flow":
                continue
            fid = ev.get("id")
            ts = _num(ev.get("ts"))
            if fid is None or ts is None:
                continue
            if ph == "s":
                s.flow_start[fid] = ts
            else:
                s.flow_end[(ev.get("pid"), ev.get("tid"), ts)] = fid
        elif ph == "i" or ph == "I" or ph == "R":
            nm = ev.get("name")
            if nm == _WINDOW_START or nm == _WINDOW_END:
                ts = _num(ev.get("ts"))
                if ts:
                    if nm == _WINDOW_START:
                        s.win_start = ts if s.win_start is None else min(s.win_start, ts)
                    else:
                        s.win_end = ts if s.win_end is None else max(s.win_end, ts)
    s.events = n
    return s


# --------------------------------------------------------------------------- analysis


def _events_of(data) -> list:
    if isinstance(data, dict):
        ev = data.get("traceEvents")
        if ev is None:
            raise UsageError("the JSON has no 'traceEvents' list; pass a trace written by torch.profiler's export_chrome_trace")
        if not isinstance(ev, list):
            raise UsageError("'traceEvents' is not a list; pass a trace written by torch.profiler's export_chrome_trace")
        return ev
    if isinstance(data, list):
        return data
    raise UsageError("the JSON is neither a Chrome trace object nor an event list; pass a torch.profiler trace")


def analyze_trace(data, source: str = "<trace>", top: int = 10) -> TraceReport:
    """Analyze a parsed Chrome trace (the dict ``json.load`` gives, or a bare event list).

    Raises:
        UsageError: the JSON is not a Chrome trace; ``top`` < 1.
    """
    import numpy as np

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    events = _events_of(data)
    s = _scan(events)
    dropped = dict(s.dropped)
    notes: list[str] = []
    n_gpu = len(s.ts)
    ts = np.asarray(s.ts, dtype=np.float64)
    dur = np.asarray(s.dur, dtype=np.float64)
    kind = np.asarray(s.kind, dtype=np.int8)
    name = np.asarray(s.name, dtype=np.int64)

    # Launch call start per GPU event: by correlation id, else through a flow event.
    launch = np.full(n_gpu, np.nan)
    lt = s.launch_ts
    for i, c in enumerate(s.corr):
        if c is not None:
            v = lt.get(c)
            if v is not None:
                launch[i] = v
    if s.flow_key:
        for i, key in s.flow_key.items():
            fid = s.flow_end.get(key)
            if fid is not None and fid in s.flow_start:
                launch[i] = s.flow_start[fid]

    keep = np.ones(n_gpu, dtype=bool)
    if s.win_start is not None:
        out = ts < s.win_start
        if out.any():
            dropped["GPU events that start before the capture window"] = int(out.sum())
        keep &= ~out
    if s.win_end is not None:
        out = ts > s.win_end
        if out.any():
            dropped["GPU events that start after the capture window"] = int(out.sum())
        keep &= ~out

    dev_arr = np.asarray(s.dev, dtype=object)
    capture_s = None
    if math.isfinite(s.host_min):
        lo = s.win_start if s.win_start is not None else s.host_min
        hi = s.win_end if s.win_end is not None else s.host_max
        if n_gpu and keep.any():
            lo = min(lo, float(ts[keep].min()))
            hi = max(hi, float((ts[keep] + dur[keep]).max()))
        capture_s = max(0.0, hi - lo) * 1e-6
    full_by_id = {v: k for k, v in s.names.items()}

    devices: list[TraceGpu] = []
    if keep.any():
        for dev in sorted(set(dev_arr[keep].tolist()), key=lambda d: (len(d), d)):
            sel = keep & (dev_arr == dev)
            devices.append(_analyze_gpu(dev, ts[sel], dur[sel], kind[sel], name[sel], launch[sel],
                                        [s.stream[i] for i in np.flatnonzero(sel)],
                                        [s.ext[i] for i in np.flatnonzero(sel)], s.ext_flops, full_by_id, top, s))
    if n_gpu == 0 and not dropped:
        notes.append(
            "the trace has no GPU events: record it with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] "
            "and make sure the code ran on the GPU"
        )
    if any(d.kernels and d.linked_kernels == 0 for d in devices):
        notes.append("no kernel could be linked to its launch call (no correlation ids or ac2g flow events): idle time is unattributed")
    if not devices:
        verdict = "no-gpu-events"
        why = " (all dropped: " + ", ".join(f"{v} {k}" for k, v in dropped.items()) + ")" if dropped else ""
        summary = (
            f"the trace has no GPU events{why}: no kernel, memcpy or memset was recorded, so it says nothing about "
            "the GPU; record with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        )
    else:
        over = [d for d in devices if d.verdict == "overhead-bound"]
        verdict = "overhead-bound" if over else "gpu-bound"
        if over:
            d = max(over, key=lambda x: x.idle_s)
            summary = (
                f"overhead-bound: GPU {d.device} is idle {d.idle_pct:.0f}% of its {fmt_num(d.span_s * 1e3)} ms span "
                f"({100 * d.host_wait_s / d.span_s:.0f}% waiting on the host)"
            )
            if (d.short_kernel_pct or 0) >= SHORT_MAJORITY_PCT:
                summary += f"; {d.short_kernel_pct:.0f}% of its {d.kernels} kernels are shorter than 10 us"
        else:
            d = max(devices, key=lambda x: x.busy_s)
            summary = (
                f"gpu-bound: GPU {d.device} is busy {d.busy_pct:.0f}% of its {fmt_num(d.span_s * 1e3)} ms span; "
                "the time is in the kernels: hand the top kernels to the roofline (gpuwhy ncu / gpuwhy classify)"
            )
    return TraceReport(
        source=source,
        verdict=verdict,
        summary=summary,
        devices=tuple(devices),
        events=s.events,
        gpu_events=n_gpu,
        runtime_events=s.runtime,
        host_sync_calls=s.sync_calls,
        host_sync_s=s.sync_us * 1e-6,
        capture_s=capture_s,
        dropped=dropped,
        notes=tuple(notes),
        top=top,
    )


def _fmt_us(us: float) -> str:
    from ..units import fmt_time

    return fmt_time(us * 1e-6)


def _analyze_gpu(dev, ts, dur, kind, name, launch, streams, exts, ext_flops, full_by_id, top, scan) -> TraceGpu:
    import numpy as np

    order = np.argsort(ts, kind="stable")
    st = ts[order]
    en = st + dur[order]
    lau = launch[order]
    span_us = float(en.max() - st.min())
    cm = np.maximum.accumulate(en)
    gaps = st[1:] - cm[:-1]
    gmask = gaps > 0
    g = gaps[gmask]
    idle_us = float(g.sum())
    busy_us = span_us - idle_us
    lg = lau[1:][gmask]
    prev_end = cm[:-1][gmask]
    known = ~np.isnan(lg)
    host = known & (lg >= prev_end)
    b2b = known & (lg < prev_end)
    host_wait_us = float(g[host].sum())
    b2b_us = float(g[b2b].sum())
    unattr_us = float(g[~known].sum())

    is_k = kind == 0
    kd = dur[is_k]
    n_k = int(is_k.sum())
    median_k = float(np.median(kd)) * 1e-6 if n_k else None
    short = kd < SHORT_KERNEL_S * 1e6
    short_pct = 100.0 * float(short.mean()) if n_k else None
    short_time_pct = 100.0 * float(kd[short].sum() / kd.sum()) if n_k and kd.sum() > 0 else None
    lat = ts[is_k] - launch[is_k]
    lat = lat[~np.isnan(lat)]
    linked = int(lat.size)
    lat_med = float(np.median(lat)) * 1e-6 if linked else None
    lat_p90 = float(np.percentile(lat, 90)) * 1e-6 if linked else None

    # FLOPs per kernel from its operator (with_flops=True), split by duration among the operator's kernels.
    kflops = None
    if ext_flops:
        k_idx = np.flatnonzero(is_k)
        op_dur: dict = {}
        for i in k_idx:
            x = exts[i]
            if x is not None and x in ext_flops:
                op_dur[x] = op_dur.get(x, 0.0) + float(dur[i])
        if op_dur:
            kflops = np.full(len(ts), np.nan)
            for i in k_idx:
                x = exts[i]
                if x in op_dur and op_dur[x] > 0:
                    kflops[i] = ext_flops[x] * float(dur[i]) / op_dur[x]

    top_kernels: list[TraceKernel] = []
    if n_k:
        kn = name[is_k]
        tot = np.bincount(kn, weights=kd)
        cnt = np.bincount(kn)
        fl = None
        if kflops is not None:
            kf = kflops[is_k]
            have = ~np.isnan(kf)
            fl = np.bincount(kn[have], weights=kf[have], minlength=len(tot)) if have.any() else None
            fl_cnt = np.bincount(kn[have], minlength=len(tot)) if have.any() else None
        ids = [int(i) for i in np.argsort(-tot, kind="stable")[:top] if cnt[i] > 0]
        disp = display_names([full_by_id[i] for i in ids])
        for i in ids:
            full = full_by_id[i]
            f = None
            tf = None
            if fl is not None and fl_cnt[i] == cnt[i] and fl[i] > 0:
                f = float(fl[i])
                tf = float(f / (tot[i] * 1e-6) / 1e12)
            top_kernels.append(TraceKernel(
                name=disp[full], full_name=full, count=int(cnt[i]), total_s=float(tot[i]) * 1e-6,
                mean_s=float(tot[i] / cnt[i]) * 1e-6, busy_pct=100.0 * float(tot[i]) / busy_us if busy_us > 0 else 0.0,
                flops=f, achieved_tflops=tf,
            ))

    idle_pct = 100.0 * idle_us / span_us if span_us > 0 else 0.0
    reasons: list[str] = []
    remedies: list[str] = []
    idle_flag = idle_pct >= IDLE_OVERHEAD_PCT
    short_flag = (short_pct or 0) > SHORT_MAJORITY_PCT and (short_time_pct or 0) > 50.0
    if idle_flag or short_flag:
        verdict = "overhead-bound"
        if idle_flag:
            reasons.append(f"the GPU is idle {idle_pct:.0f}% of its span (threshold {IDLE_OVERHEAD_PCT:.0f}%)")
        if host_wait_us > 0:
            reasons.append(
                f"{100 * host_wait_us / span_us:.0f}% of the span is the GPU waiting on the host "
                f"({int(host.sum())} gaps where the next launch call began after the GPU had gone idle)"
            )
        if short_flag or (short_pct or 0) > SHORT_MAJORITY_PCT:
            reasons.append(f"{short_pct:.0f}% of the {n_k} kernels are shorter than 10 us (median {fmt_num(median_k * 1e6)} us)")
        if scan.sync_calls:
            remedies.append(
                f"Remove host syncs from the loop: {scan.sync_calls} blocking calls (cudaStreamSynchronize, cudaMemcpy D2H, ...) "
                f"held the host {_fmt_us(scan.sync_us)}; look for .item(), .cpu(), .tolist(), print(tensor), torch.cuda.synchronize()."
            )
        remedies.append("Capture the step in a CUDA graph (torch.cuda.graphs, or torch.compile(mode=\"reduce-overhead\")): one launch replaces many.")
        remedies.append("Fuse the small ops with torch.compile (or a fused kernel) so fewer, larger kernels run.")
        remedies.append("Give each launch more work: larger batches or merged small tensors.")
        if not scan.sync_calls:
            remedies.append("Keep host syncs (.item(), .cpu(), print(tensor)) out of the hot loop.")
    else:
        verdict = "gpu-bound"
        reasons.append(f"the GPU is busy {100 - idle_pct:.0f}% of its span; the time is in the kernels")
        remedies.append(
            "Hand the top kernels to the roofline: profile them with ncu (command in docs/diagnose.md) and run "
            "`gpuwhy ncu report.csv`, or `gpuwhy classify --flops F --bytes B --time T` per kernel."
        )
    return TraceGpu(
        device=str(dev),
        span_s=span_us * 1e-6,
        busy_s=busy_us * 1e-6,
        idle_s=idle_us * 1e-6,
        busy_pct=100.0 - idle_pct,
        idle_pct=idle_pct,
        host_wait_s=host_wait_us * 1e-6,
        back_to_back_s=b2b_us * 1e-6,
        unattributed_idle_s=unattr_us * 1e-6,
        gaps=int(gmask.sum()),
        host_wait_gaps=int(host.sum()),
        kernels=n_k,
        memcpys=int((kind == 1).sum()),
        memsets=int((kind == 2).sum()),
        kernel_s=float(kd.sum()) * 1e-6,
        memcpy_s=float(dur[kind == 1].sum()) * 1e-6,
        memset_s=float(dur[kind == 2].sum()) * 1e-6,
        streams=len({x for x in streams}),
        median_kernel_s=median_k,
        short_kernel_pct=short_pct,
        short_kernel_time_pct=short_time_pct,
        launch_latency_median_s=lat_med,
        launch_latency_p90_s=lat_p90,
        linked_kernels=linked,
        top_kernels=tuple(top_kernels),
        verdict=verdict,
        reasons=tuple(reasons),
        remedies=tuple(remedies),
    )


def load_trace(path: str | Path, top: int = 10) -> TraceReport:
    """Read a torch.profiler trace file (``.json`` or gzipped) and analyze it.

    Raises:
        UsageError: unreadable or not a Chrome trace (see :func:`load_trace_json`).
    """
    # The parsed trace is millions of small acyclic containers: the cyclic garbage
    # collector would rescan them over and over while they are built (2-3x the
    # parse time); nothing here makes cycles, so it is paused and restored.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        data = load_trace_json(path)
        report = analyze_trace(data, source=str(path), top=top)
        del data
    finally:
        if was_enabled:
            gc.enable()
    return report


__all__ = [
    "IDLE_OVERHEAD_PCT",
    "SHORT_KERNEL_S",
    "SHORT_MAJORITY_PCT",
    "TraceGpu",
    "TraceKernel",
    "TraceReport",
    "analyze_trace",
    "load_trace",
    "load_trace_json",
]
