"""The evidence line(s) of each idle cause of one GPU: what in the timeline shows it (counts,
times, callers, rates), from the classified gaps and the host view."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...units import fmt_g, fmt_num, fmt_time
from ..kernel_names import display_names
from .activities import KERNEL, Timeline
from .gaps import Gaps
from .host import HostArrays, HostView, callers
from .track import GpuTrack
from .verdict import H200_PAGEABLE_H2D_GBS, H200_PINNED_H2D_GBS, SHORT_KERNEL_S

#: With DataLoader workers, the GPU idle in DataLoader calls from this share of the span on says the workers lag.
DATA_WAIT_SHARE = 0.05


def fmt_time_us(us: float) -> str:
    """A time given in us, as people write it (``fmt_time`` of the seconds)."""
    return fmt_time(us * 1e-6)


class Evidence:
    """The evidence of each cause: ``of(key)`` gives its lines.

    ``gaps``/``inner``: the GPU's classified gaps and those inside its span; ``parts``/``tot``:
    idle us by cause per inner gap and summed (``split_gaps``); ``host_ops``/``warm_ops``: the top
    host operations while the GPU waited, after and during warm-up; ``copies``:
    :func:`~.figures.copy_stats`.
    """

    def __init__(self, t: Timeline, host: HostArrays, view: HostView, track: GpuTrack, gaps: Gaps,
                 inner: np.ndarray, parts: dict, tot: dict, host_ops, warm_ops, copies: dict):
        self.t, self.host, self.view, self.track, self.gaps, self.inner = t, host, view, track, gaps, inner
        self.parts, self.tot, self.host_ops, self.warm_ops, self.copies = parts, tot, host_ops, warm_ops, copies

    def of(self, key: str) -> tuple[str, ...]:
        return tuple(getattr(self, "_" + key)())

    def _n(self, key):
        return int((self.parts[key] > 1e-9).sum())

    def _host_launch(self):
        t = self.tot
        ops = ", ".join(f"{o.name} {fmt_time(o.time_s)}" for o in self.host_ops[:3])
        lines = [f"{self._n('host_launch')} gaps where the next launch came after the GPU had gone idle: "
                 f"{fmt_time_us(t['_in_ops'])} with the host in CPU operators"
                 + (f" (top: {ops})" if ops else "")
                 + f", {fmt_time_us(t['_outside_ops'])} outside any profiled operator (Python, sleep, I/O), "
                 f"{fmt_time_us(t['_launch'])} from launch call to GPU start"]
        k = self.track.kind == KERNEL
        if k.any():
            kd = self.track.dur[k]
            short = float((kd < SHORT_KERNEL_S * 1e6).mean()) * 100
            lines.append(f"{short:.0f}% of the {int(k.sum()):,} kernels are shorter than 10 us (median {fmt_time_us(float(np.median(kd)))})")
        return lines

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
                    parts.append(f"outside any operator (torch.cuda.synchronize() or a library) x{n}")
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
            lines.append(f"{after.size} gaps begin with the host in a sync, but the syncs cost only {fmt_time_us(self.tot['host_sync'])} "
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
        c = self.copies
        lines = []
        if c["pg_n"]:
            rate = c["pg_bytes"] / (c["pg_us"] * 1e-6) / 1e9 if c["pg_us"] > 0 else None
            line = f"{c['pg_n']:,} host-to-device copies from pageable memory, {fmt_num(c['pg_bytes'] / 1e6)} MB in {fmt_time_us(c['pg_us'])}"
            if rate:
                line += f" ({fmt_num(rate)} GB/s)"
            lines.append(line)
            if c["pin_us"] > 0 and c["pin_bytes"] > 0:
                pin = c["pin_bytes"] / (c["pin_us"] * 1e-6) / 1e9
                src = "the pinned copies in this trace"
            else:
                pin = H200_PINNED_H2D_GBS
                src = (f"pinned copies on the H200 (gpuwhy bench --link; {fmt_g(H200_PAGEABLE_H2D_GBS)} GB/s from pageable "
                       "memory there)")
            if rate and pin > rate:
                lines.append(f"at the {fmt_num(pin)} GB/s of {src} they would take {fmt_time_us(c['pg_bytes'] / (pin * 1e9) * 1e6)}")
        if self.tot["pageable_copy"] > 0:
            lines.append(f"the GPU was idle {fmt_time_us(self.tot['pageable_copy'])} while the host staged pageable copies")
        return lines

    def _stream_wait(self):
        gp, inner = self.gaps, self.inner
        w = inner[self.parts["stream_wait"] > 1e-9]
        pairs = Counter()
        for i in w.tolist():
            a = self.track.stream[gp.prev_last[i]] if gp.prev_last[i] >= 0 else None
            b = self.track.stream[gp.nxt[i]]
            pairs[(self.track.streams[a] if a is not None else "?", self.track.streams[b])] += 1
        lens = gp.g1[w] - gp.g0[w]
        pp = "; ".join(f"stream {b} waited for stream {a} x{n}" for (a, b), n in pairs.most_common(3))
        return [(f"{w.size} gaps where work already queued waited on another stream's event "
                f"(median {fmt_time_us(float(np.median(lens)) if lens.size else 0.0)}): {pp}"),
                f"{self.view.wait_ts.size:,} cudaStreamWaitEvent calls in the trace"]

    def _queued(self):
        gp, inner = self.gaps, self.inner
        q = inner[self.parts["queued"] > 1e-9]
        lens = gp.g1[q] - gp.g0[q]
        lines = [f"{q.size:,} gaps between work already queued (median {fmt_time_us(float(np.median(lens)) if lens.size else 0.0)}, "
                 "largest " + fmt_time_us(float(lens.max()) if lens.size else 0.0) + "): GPU-side launch latency"]
        g = int(gp.after_graph[q].sum())
        if g:
            lines.append(f"{g:,} of them inside CUDA-graph replays ({self.view.graph_launches:,} graph launches)")
        return lines

    def _warmup(self):
        gp, inner = self.gaps, self.inner
        w = inner[self.parts["warmup"] > 1e-9]
        lines = [(f"{w.size} first launches of kernels that run again later waited {fmt_time_us(self.tot['warmup'])} longer "
                 "than their later launches")]
        if w.size:
            big = w[int(np.argmax(self.parts["warmup"][np.searchsorted(inner, w)]))]
            nm = display_names([self.t.gpu_names[self.track.name[gp.nxt[big]]]])
            nm = next(iter(nm.values()))
            lines.append(f"the largest, {fmt_time_us(float(gp.g1[big] - gp.g0[big]))} before the first {nm}"
                         + (f"; the host was in {self.warm_ops[0].name} ({fmt_time(self.warm_ops[0].time_s)} of warm-up)"
                            if self.warm_ops else ""))
        s = self.t
        extra = []
        if s.lazy_loads:
            extra.append(f"{s.lazy_loads} lazy module loads ({fmt_time_us(s.lazy_load_us)})")
        if self.view.malloc_calls:
            extra.append(f"{self.view.malloc_calls} cudaMalloc/cudaFree calls ({fmt_time(self.view.malloc_s)})")
        if extra:
            lines.append("one-time work in the trace: " + ", ".join(extra))
        return lines

    def _unexplained(self):
        return [f"{self._n('unexplained')} gaps end with work that has no linked launch call (no correlation id or flow event)"]


__all__ = ["DATA_WAIT_SHARE", "Evidence", "fmt_time_us"]
