"""The evidence line(s) of each idle cause of one GPU: what in the timeline shows it (counts,
times, callers, rates), from the classified gaps and the host view."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...units import fmt_counted, fmt_num, fmt_time, fmt_us as fmt_time_us
from ..kernel_names import display_names
from .activities import KERNEL, Timeline, framework_of
from .gaps import QUEUE_LATENCY_US, WAIT_CLASS, WAITED_FOR, Gaps
from .host import HOST_WORK_MIN_US, HostArrays, HostView, callers
from .track import GpuTrack
from ...verdict.figures import LAUNCH_SIZED_S

#: Where a sync outside any operator comes from, in the words of the framework the trace shows
#: (:func:`~.activities.framework_of`; None: PyTorch's).
SYNC_OUTSIDE = {None: "outside any operator (torch.cuda.synchronize() or a library)",
                "jax": "outside any jitted call (a fetch of a value: float(x), np.asarray(x), x.item(); or a library)"}
#: With DataLoader workers, the GPU idle in DataLoader calls from this share of the span on says the workers lag.
DATA_WAIT_SHARE = 0.05


class Evidence:
    """The evidence of each cause: ``of(key)`` gives its lines.

    ``gaps``/``inner``: the GPU's classified gaps and those inside its span; ``parts``/``tot``:
    idle us by cause per inner gap and summed (``split_gaps``); ``host_ops``/``warm_ops``: the top
    host operations while the GPU waited, after and during warm-up; ``copies``:
    :func:`~.figures.copy_stats`.
    """

    def __init__(self, t: Timeline, host: HostArrays, view: HostView, track: GpuTrack, gaps: Gaps,
                 inner: np.ndarray, parts: dict, tot: dict, host_ops, warm_ops, copies):
        self.t, self.host, self.view, self.track, self.gaps, self.inner = t, host, view, track, gaps, inner
        self.parts, self.tot, self.host_ops, self.warm_ops, self.copies = parts, tot, host_ops, warm_ops, copies

    def of(self, key: str) -> tuple[str, ...]:
        return tuple(getattr(self, "_" + key)())

    def _n(self, key):
        """How many gaps have time in the share ``key``."""
        return int((self.parts[key] > 1e-9).sum())

    def _launch_overhead(self):
        t = self.tot
        ops = ", ".join(f"{o.name} {fmt_time(o.time_s)}" for o in self.host_ops[:3])
        lines = [f"{fmt_counted(self._n('launch_overhead'), 'gap')} where the next launch came after the GPU had gone idle: "
                 f"{fmt_time_us(t['_in_ops'])} in launch calls and the operators that make them"
                 + (f" (top: {ops})" if ops else "")
                 + f", {fmt_time_us(t['_dispatch'])} in stretches under {fmt_time_us(HOST_WORK_MIN_US)} between them "
                 f"(dispatch, Python glue), {fmt_time_us(t['_launch'])} from launch call to GPU start"]
        k = self.track.kind == KERNEL
        if k.any():
            kd = self.track.dur[k]
            short = float((kd < LAUNCH_SIZED_S * 1e6).mean()) * 100
            lines.append(f"{short:.0f}% of the {fmt_counted(int(k.sum()), 'kernel')} are shorter than 10 us "
                         f"(median {fmt_time_us(float(np.median(kd)))})")
        if self.view.graph_launches:
            lines.append(f"the trace already replays CUDA graphs ({fmt_counted(self.view.graph_launches, 'graph launch', 'graph launches')}): the "
                         "eager launches between replays are what the GPU waits for")
        return lines

    def _host_work(self):
        ops = ", ".join(f"{o.name} {fmt_time(o.time_s)}" for o in self.host_ops[:3])
        return [f"{fmt_counted(self._n('host_work'), 'gap')} where the host spent {fmt_time_us(self.tot['host_work'])} issuing no GPU "
                f"work, in stretches of {fmt_time_us(HOST_WORK_MIN_US)} or more (Python work, I/O, logging, CPU-tensor "
                "ops, sleeps): a CUDA graph would not remove it"
                + (f"; host operations while the GPU waited: {ops}" if ops else "")]

    def _host_sync(self):
        v, host = self.view, self.host
        names = Counter(host.r_names[host.r_name[i]] for i in v.sync_idx.tolist())
        blocked = float(v.sync_cum[-1]) if v.sync_cum.size else 0.0
        what = ", ".join(f"{n} {nm}" for nm, n in names.most_common(3))
        lines = [f"{v.sync_idx.size:,} blocking calls ({what}) held the host {fmt_time_us(blocked)} in all"]
        idx = v.sync_idx[:2000]
        who = Counter()
        frames = Counter()
        for outer, inner, frame in callers(host, idx):
            who[(outer, inner)] += 1
            if frame:
                frames[frame] += 1
        if who:
            parts = []
            for (outer, inner), n in who.most_common(3):
                if outer is None:
                    parts.append(f"{SYNC_OUTSIDE.get(framework_of(self.t), SYNC_OUTSIDE[None])} x{n}")
                elif inner and inner != outer:
                    parts.append(f"{outer} > {inner} x{n}")
                else:
                    parts.append(f"{outer} x{n}")
            lines.append("called from " + "; ".join(parts))
        if frames:
            lines.append("Python: " + "; ".join(f"{f} x{n}" for f, n in frames.most_common(2)))
        gp, inner = self.gaps, self.inner
        after = inner[(gp.sync[inner] > 0)]
        follow = float((gp.g1[after] - gp.g0[after]).sum())
        if after.size and self.tot["host_sync"] < 0.2 * follow:
            lines.append(f"{fmt_counted(after.size, 'gap')} beginning with the host in a sync, but the syncs cost only {fmt_time_us(self.tot['host_sync'])} "
                         f"of the {fmt_time_us(follow)} idle after them: the GPU had already finished, the host is the slower side")
        return lines

    def _data_loading(self):
        v = self.view
        host = self.host
        nm = Counter(n for n in host.h_names if isinstance(n, str) and "DataLoader" in n)
        label = next(iter(nm), "DataLoader")
        lines = [(f"{v.data_ranges:,} DataLoader calls ({label}) took {fmt_time(v.data_s)} in all, "
                 f"{fmt_time(v.data_s / max(1, v.data_ranges))} per batch; the GPU was idle {fmt_time_us(self.tot['data_loading'])} of it")]
        if "SingleProcess" in label:
            lines.append("num_workers=0: every batch is built on the main process while the GPU waits")
        elif "MultiProcessing" in label:
            if self.tot["data_loading"] >= DATA_WAIT_SHARE * self.track.span_us:
                lines.append("the workers do not keep up: the main process waits for batches")
            else:  # a few us per batch to take it from the workers' queue is no sign of slow workers
                lines.append(f"the workers keep up: the GPU waited on them {100 * self.tot['data_loading'] / self.track.span_us:.1f}% "
                             "of the span")
        return lines

    def _pageable_copy(self):
        lines = []
        for c in self.copies:
            if c.memory != "pageable":
                continue
            line = f"{fmt_counted(c.count, c.direction + ' copy', c.direction + ' copies')} from pageable memory"
            if c.bytes:
                line += f", {fmt_num(c.bytes / 1e6)} MB"
            line += f" in {fmt_time(c.time_s)}"
            if c.gbs:
                line += f" ({fmt_num(c.gbs)} GB/s)"
            lines.append(line + (f", {fmt_time(c.exposed_s)} of it not hidden under kernels" if c.exposed_s < c.time_s
                                 else ""))
        for c in self.copies:
            if c.memory == "pinned" and c.gbs:
                lines.append(f"the {fmt_counted(c.count, 'pinned ' + c.direction + ' copy', 'pinned ' + c.direction + ' copies')} in the trace ran at {fmt_num(c.gbs)} GB/s")
        if self.tot["pageable_copy"] > 0:
            lines.append(f"the GPU was idle {fmt_time_us(self.tot['pageable_copy'])} while the host staged pageable copies")
        return lines

    def _copy(self):
        return [f"{fmt_counted(c.count, c.direction + ' copy', c.direction + ' copies')} ({c.memory} memory), {fmt_time(c.exposed_s)} not hidden under kernels"
                + (f", {fmt_num(c.gbs)} GB/s" if c.gbs else "") for c in self.copies
                if c.memory != "pageable" and c.exposed_s > 0]

    def _dependency_wait(self):
        gp, inner = self.gaps, self.inner
        w = inner[self.parts["dependency_wait"] > 1e-9]
        lens = gp.g1[w] - gp.g0[w]
        lines = [(f"{fmt_counted(w.size, 'gap')} of {fmt_time_us(float(lens.sum()))} where work already queued did not start for "
                  f"longer than launch latency ({fmt_time_us(QUEUE_LATENCY_US)}; median "
                  f"{fmt_time_us(float(np.median(lens)) if lens.size else 0.0)}, largest "
                  f"{fmt_time_us(float(lens.max()) if lens.size else 0.0)})")]
        what = Counter()
        for code, length in zip(gp.waited_for[w].tolist(), lens.tolist()):
            what[code] += length
        lines.append("it waited for: " + "; ".join(f"{WAITED_FOR[c]} {fmt_time_us(s)}" for c, s in what.most_common()))
        events = w[gp.waited_for[w] == WAITED_FOR.index("another stream's event")]
        if events.size:
            lines.append(self._stream_pairs(events)
                         + f" ({fmt_counted(self.view.wait_ts.size, 'cudaStreamWaitEvent call')} in the trace)")
        return lines

    def _queue_latency(self):
        gp, inner = self.gaps, self.inner
        q = inner[self.parts["queue_latency"] > 1e-9]
        lens = gp.g1[q] - gp.g0[q]
        lines = [f"{fmt_counted(q.size, 'gap')} of at most {fmt_time_us(QUEUE_LATENCY_US)} between work already queued (median "
                 f"{fmt_time_us(float(np.median(lens)) if lens.size else 0.0)}): GPU-side launch latency"]
        g = int(gp.after_graph[q].sum())
        if g:
            lines.append(f"{g:,} of them inside CUDA-graph replays ({fmt_counted(self.view.graph_launches, 'graph launch', 'graph launches')})")
        waits = q[gp.cls[q] == WAIT_CLASS]
        if waits.size:
            lines.append(f"{waits.size:,} of them after a stream waited on another's event: "
                         + self._stream_pairs(waits) + f" ({fmt_counted(self.view.wait_ts.size, 'cudaStreamWaitEvent call')} in the trace)")
        return lines

    def _stream_pairs(self, idx) -> str:
        """"stream B waited for stream A xN" for the commonest pairs of the gaps ``idx``."""
        gp = self.gaps
        pairs = Counter()
        for i in idx.tolist():
            a = self.track.stream[gp.prev_last[i]] if gp.prev_last[i] >= 0 else None
            b = self.track.stream[gp.nxt[i]]
            pairs[(self.track.streams[a] if a is not None else "?", self.track.streams[b])] += 1
        return "; ".join(f"stream {b} waited for stream {a} x{n}" for (a, b), n in pairs.most_common(3))

    def _warmup(self):
        gp, inner = self.gaps, self.inner
        first = self.parts["warmup"] - self.parts["_compile"]  # the first launches' part, compiling aside
        w = inner[first > 1e-9]
        lines = []
        if self.tot["_compile"] > 0:
            n, most = self.view.compiles, self.view.most_compiled
            again = f"; the most: {most[0]} x{most[1]}" if most and most[1] > 1 else ""
            lines.append(f"{fmt_time_us(self.tot['_compile'])} while a JIT compiler ran"
                         + (f" ({fmt_counted(n, 'XLA compile')}, {fmt_time(self.view.compile_s)} in all{again})" if n else "")
                         + ": one-time work, unless the program compiles again every step (as many compiles as steps)")
        if w.size or not lines:
            lines.append(f"{fmt_counted(w.size, 'first launch', 'first launches')} of kernels that run again later waited "
                         f"{fmt_time_us(self.tot['warmup'] - self.tot['_compile'])} longer than their later launches")
        if w.size:
            big = w[int(np.argmax(first[np.searchsorted(inner, w)]))]
            nm = display_names([self.t.gpu_names[self.track.name[gp.nxt[big]]]])
            nm = next(iter(nm.values()))
            lines.append(f"the largest, {fmt_time_us(float(gp.g1[big] - gp.g0[big]))} before the first {nm}"
                         + (f"; the host was in {self.warm_ops[0].name} ({fmt_time(self.warm_ops[0].time_s)} of warm-up)"
                            if self.warm_ops else ""))
        s = self.t
        extra = []
        if s.lazy_loads:
            extra.append(f"{fmt_counted(s.lazy_loads, 'lazy module load')} ({fmt_time_us(s.lazy_load_us)})")
        if self.view.malloc_calls:
            extra.append(f"{fmt_counted(self.view.malloc_calls, 'cudaMalloc/cudaFree call')} ({fmt_time(self.view.malloc_s)})")
        if extra:
            lines.append("one-time work in the trace: " + ", ".join(extra))
        return lines

    def _unexplained(self):
        return [f"{fmt_counted(self._n('unexplained'), 'gap')} ending with work that has no linked launch call (no correlation id or flow event)"]


__all__ = ["DATA_WAIT_SHARE", "Evidence", "fmt_time_us"]
