"""The timeline seam: the analysis takes only the Timeline structure, so a torch.profiler trace and
the same activities handed to the structure directly give the same report; cropping works on the
structure; and every real trace reads into a timeline whose busy time is an independent union."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuwhy.importers.kineto import analyze_trace, read_timeline, trace_timeline
from gpuwhy.importers.timeline.activities import (
    DTOH, HTOD, KERNEL, MEMCPY, PAGEABLE, PINNED, crop, extent, from_activities,
)
from gpuwhy.importers.timeline.analyze import analyze
from gpuwhy.render.jsonout import to_plain

REAL = Path(__file__).parent / "fixtures" / "real"
T0 = 1_000_000.0


def _program():
    """A small program, as records: 3 steps, each a DataLoader call, a pageable copy in, two kernels
    (the second launched late behind a CPU operator), a sync and a pinned copy out. Returns
    (gpu, api, ranges) record lists in the structure's vocabulary."""
    gpu, api, ranges = [], [], []
    corr = 100
    for s in range(3):
        t = T0 + s * 1000.0
        ranges.append(dict(start=t, dur=990.0, name=f"ProfilerStep#{s}", kind="annotation", thread=1, pid=7))
        ranges.append(dict(start=t + 5, dur=200.0, name="enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                           kind="annotation", thread=1, pid=7))
        corr += 1
        api.append(dict(start=t + 210, dur=90.0, name="cudaMemcpyAsync", corr=corr, thread=1, pid=7))
        gpu.append(dict(device="0", start=t + 300, dur=60.0, kind="memcpy", name="Memcpy HtoD (Pageable -> Device)",
                        stream=7, corr=corr, bytes=4_000_000, copy="HtoD", memory="pageable"))
        corr += 1
        api.append(dict(start=t + 310, dur=8.0, name="cudaLaunchKernel", corr=corr, thread=1, pid=7))
        gpu.append(dict(device="0", start=t + 365, dur=150.0, kind="kernel", name="gemm_kernel", stream=7, corr=corr))
        ranges.append(dict(start=t + 520, dur=180.0, name="aten::nonzero", kind="operator", thread=1, pid=7))
        corr += 1
        api.append(dict(start=t + 690, dur=6.0, name="cudaLaunchKernel", corr=corr, thread=1, pid=7))
        gpu.append(dict(device="0", start=t + 700, dur=40.0, kind="kernel", name="elementwise_kernel", stream=7,
                        corr=corr))
        corr += 1
        api.append(dict(start=t + 745, dur=40.0, name="cudaMemcpyAsync", corr=corr, thread=1, pid=7))
        gpu.append(dict(device="0", start=t + 750, dur=20.0, kind="memcpy", name="Memcpy DtoH (Device -> Pinned)",
                        stream=7, corr=corr, bytes=4096, copy="DtoH", memory="pinned"))
        api.append(dict(start=t + 790, dur=30.0, name="cudaStreamSynchronize", thread=1, pid=7))
    return gpu, api, ranges


def _kineto(gpu, api, ranges) -> dict:
    """The same records written as torch.profiler writes them."""
    ev = []
    for g in gpu:
        args = {"device": int(g["device"]), "stream": g["stream"], "correlation": g["corr"]}
        if "bytes" in g:
            args["bytes"] = g["bytes"]
        ev.append({"ph": "X", "cat": "gpu_memcpy" if g["kind"] == "memcpy" else "kernel", "name": g["name"],
                   "pid": 0, "tid": g["stream"], "ts": g["start"], "dur": g["dur"], "args": args})
    for a in api:
        args = {"correlation": a["corr"]} if "corr" in a else {}
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": a["name"], "pid": a["pid"], "tid": a["thread"],
                   "ts": a["start"], "dur": a["dur"], "args": args})
    for r in ranges:
        ev.append({"ph": "X", "cat": "user_annotation" if r["kind"] == "annotation" else "cpu_op", "name": r["name"],
                   "pid": r["pid"], "tid": r["thread"], "ts": r["start"], "dur": r["dur"]})
    return {"traceEvents": ev}


def _plain(report) -> dict:
    d = to_plain(report)
    for k in ("events", "runtime_events"):  # what the source held, not what was judged
        d.pop(k)
    return d


def test_a_kineto_trace_and_the_same_activities_give_the_same_report():
    gpu, api, ranges = _program()
    direct = analyze(from_activities(gpu, api, ranges), source="x")
    via_kineto = analyze_trace(_kineto(gpu, api, ranges), source="x")
    assert _plain(direct) == _plain(via_kineto)
    d = direct.devices[0]
    # The figures the structure carries reach the analysis: 3 pageable copies of 4 MB, the DataLoader,
    # the host operator that delayed the second kernel.
    causes = {c.key: c for c in d.idle.causes}
    assert d.memcpys == 6 and d.kernels == 6
    assert causes["pageable_copy"].time_s > 0 and causes["data_loading"].time_s > 0
    assert any("12 MB" in line for line in causes["pageable_copy"].evidence)
    assert [op.name for op in d.idle.host_ops][:1] == ["aten::nonzero"]
    assert len(d.idle.steps) == 3


def test_the_reader_sets_copy_direction_and_host_memory_from_the_names():
    gpu, api, ranges = _program()
    t = trace_timeline(_kineto(gpu, api, ranges))
    copies = t.gpu_kind == MEMCPY
    assert (t.gpu_kind[~copies] == KERNEL).all()
    assert set(zip(t.gpu_copy[copies].tolist(), t.gpu_memory[copies].tolist())) == {(HTOD, PAGEABLE), (DTOH, PINNED)}
    assert np.nansum(t.gpu_bytes) == 3 * (4_000_000 + 4096)


def test_crop_clips_what_crosses_the_edges_and_drops_what_lies_outside():
    gpu, api, ranges = _program()
    t = from_activities(gpu, api, ranges)
    lo, hi = T0 + 1000.0 + 320.0, T0 + 2000.0 + 100.0  # inside step 1's first kernel .. into step 2
    c = crop(t, lo, hi)
    assert extent(c) == (lo, hi)
    assert float(c.gpu_start.min()) == lo and float((c.gpu_start + c.gpu_dur).max()) <= hi
    # step 1's kernel at +365 is whole; the copy at +300..+360 is clipped to start at lo
    assert sorted(zip(c.gpu_start.tolist(), c.gpu_dur.tolist()))[0] == (lo, 40.0)
    assert t.gpu_count == 12 and c.gpu_count == 4  # the input is unchanged


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("trace_*.json*")))
def test_busy_time_is_an_independent_union_of_the_gpu_activities(name):
    t = read_timeline(REAL / name)
    rep = analyze(t, top=5)
    for d in rep.devices:
        sel = [i for i, dev in enumerate(t.gpu_device) if dev == d.device]
        iv = sorted((float(t.gpu_start[i]), float(t.gpu_start[i] + t.gpu_dur[i])) for i in sel)
        busy, cur_a, cur_b = 0.0, None, None
        for a, b in iv:  # a plain sweep, written apart from the analysis's own union
            if cur_b is None or a > cur_b:
                if cur_b is not None:
                    busy += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        busy += cur_b - cur_a
        if not rep.dropped:
            assert d.busy_s == pytest.approx(busy * 1e-6, rel=1e-9, abs=1e-12)
