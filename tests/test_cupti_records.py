"""CUPTI activity records -> a Chrome trace in Kineto's spelling -> the same timeline, budget and verdict
as a torch.profiler trace (no GPU: hand-built records with the figures worked by hand)."""

from __future__ import annotations

import json

import pytest

from gpuwhy.api.readers import read_trace
from gpuwhy.importers.cupti.records import RecordError, api_name, chrome_trace, copy_name

MS = 1_000_000  # ns
US = 1_000
T0 = 1_700_000_000_000_000_000  # CUPTI's clock: ns, large like a real one


def _api(name, start, dur, corr, tid=7, k="runtime"):
    return {"k": k, "start": T0 + start, "end": T0 + start + dur, "name": name, "corr": corr, "pid": 4242, "tid": tid}


def _kernel(start, dur, corr, name="vecadd_kernel", stream=7):
    return {"k": "kernel", "start": T0 + start, "end": T0 + start + dur, "name": name, "corr": corr, "device": 0,
            "stream": stream, "grid": [1024, 1, 1], "block": [256, 1, 1], "graph": 0}


def _write(tmp_path, records, stop):
    doc = chrome_trace(records, start_ns=T0, stop_ns=T0 + stop, pid=4242, devices={0: "NVIDIA H100 80GB HBM3"})
    p = tmp_path / "cupti.json"
    p.write_text(json.dumps(doc))
    return p


def test_names_as_kineto_writes_them():
    assert api_name("cudaLaunchKernel_v7000", runtime=True) == "cudaLaunchKernel"
    assert api_name("cuMemcpyDtoH_v2", runtime=False) == "cuMemcpyDtoH_v2"
    assert copy_name("HTOD", "PAGEABLE", "DEVICE") == "Memcpy HtoD (Pageable -> Device)"
    assert copy_name("DTOH", "DEVICE", "PINNED") == "Memcpy DtoH (Device -> Pinned)"
    assert copy_name(99, "?", "DEVICE") == "Memcpy Unknown (Unknown -> Device)"


def test_times_are_us_from_the_capture_start_and_positive():
    doc = chrome_trace([_kernel(2 * MS, 3 * MS, 1)], start_ns=T0, stop_ns=T0 + 10 * MS, pid=1)
    (k,) = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    assert k["ts"] == pytest.approx(2001.0) and k["dur"] == pytest.approx(3000.0)
    assert k["pid"] == 0 and k["tid"] == 7 and k["args"]["correlation"] == 1
    assert k["args"]["grid"] == [1024, 1, 1] and k["args"]["block"] == [256, 1, 1]
    assert doc["baseTimeNanoseconds"] == T0 - 1000


def test_a_record_without_a_field_is_named():
    bad = {"k": "memcpy", "start": T0, "end": T0 + 5, "corr": 1, "device": 0}
    with pytest.raises(RecordError, match=r"record 0 \('memcpy'\) has no 'copy'"):
        chrome_trace([bad], start_ns=T0, stop_ns=T0 + 10, pid=1)
    with pytest.raises(RecordError, match="unknown kind"):
        chrome_trace([{"k": "teapot", "start": T0, "end": T0}], start_ns=T0, stop_ns=T0 + 10, pid=1)
    with pytest.raises(RecordError, match="before it starts"):
        chrome_trace([], start_ns=T0 + 10, stop_ns=T0, pid=1)


def test_pageable_copy_step_is_judged_pageable_copy_bound(tmp_path):
    """Per step (10 steps of 50 ms): a 256 MiB pageable host-to-device copy, 42 ms on the GPU, its
    cudaMemcpyAsync call blocking the host for the same 42 ms, then a 3 ms kernel and a sync; 5 ms of
    launch-free host time at the step's end. Busy per step: 42 + 3 = 45 ms of 50 ms."""
    recs, corr = [], 0
    for s in range(10):
        t = s * 50 * MS
        corr += 1
        recs.append(_api("cudaMemcpyAsync_v3020", t, 42 * MS, corr))
        recs.append({"k": "memcpy", "start": T0 + t + 10 * US, "end": T0 + t + 10 * US + 42 * MS - 20 * US,
                     "bytes": 256 << 20, "copy": "HTOD", "src": "PAGEABLE", "dst": "DEVICE", "corr": corr,
                     "device": 0, "stream": 7})
        corr += 1
        recs.append(_api("cudaLaunchKernel_v7000", t + 42 * MS, 5 * US, corr))
        recs.append(_kernel(t + 42 * MS + 10 * US, 3 * MS, corr))
        corr += 1
        recs.append(_api("cudaStreamSynchronize_v3020", t + 42 * MS + 10 * US, 3 * MS, corr))
    rep = read_trace(_write(tmp_path, recs, 500 * MS))
    (gpu,) = rep.devices
    busy = 10 * ((42 * MS - 20 * US) + 3 * MS) / 1e9
    assert gpu.busy_s == pytest.approx(busy, rel=1e-6)
    d = gpu.diagnosis
    assert d.top.cause.value == "pageable_copy"
    pin = d.remedy("pin_memory")
    assert pin is not None and pin.ceiling_x > 1.0
    assert dict(pin.removes).get(d.top.cause, 0.0) > 0  # pinning takes from the pageable-copy share


def test_python_work_between_launches_is_host_work(tmp_path):
    """12 ms of host time outside any CUDA call per step, then 20 launches of 50 us kernels:
    the GPU idles ~11 ms per step on the host's own work, not on launches."""
    recs, corr = [], 0
    for s in range(10):
        t = s * 14 * MS + 12 * MS
        for j in range(20):
            corr += 1
            recs.append(_api("cudaLaunchKernel_v7000", t + j * 60 * US, 5 * US, corr))
            recs.append(_kernel(t + j * 60 * US + 8 * US, 50 * US, corr, name="small_kernel"))
    rep = read_trace(_write(tmp_path, recs, 140 * MS))
    d = rep.devices[0].diagnosis
    assert d.top.cause.value == "host_work"
    assert d.remedies[0].key == "move_host_work"
    graph = d.remedy("cuda_graph")
    assert graph is None or d.top.cause not in dict(graph.removes)  # a CUDA graph removes no Python work
    assert d.top.seconds > 0.5 * d.window_s


def test_sync_records_mark_the_stream_a_wait_made_wait(tmp_path):
    recs = [_api("cudaStreamWaitEvent_v3020", 1 * MS, 2 * US, 5),
            {"k": "sync", "start": T0 + 1 * MS, "end": T0 + 1 * MS + 2 * US, "type": "STREAM_WAIT_EVENT",
             "corr": 5, "stream": 13},
            _api("cudaLaunchKernel_v7000", 1 * MS + 10 * US, 5 * US, 6), _kernel(1 * MS + 20 * US, 1 * MS, 6)]
    doc = chrome_trace(recs, start_ns=T0, stop_ns=T0 + 3 * MS, pid=1)
    (w,) = [e for e in doc["traceEvents"] if e.get("cat") == "cuda_sync"]
    assert w["name"] == "Stream Wait Event" and w["args"]["stream"] == 13 and w["args"]["correlation"] == 5
    from gpuwhy.importers.kineto.scan import scan

    assert scan(doc["traceEvents"]).wait_stream == {5: 13}


def test_nvtx_ranges_become_annotations():
    doc = chrome_trace([{"k": "range", "start": T0 + 1 * MS, "end": T0 + 4 * MS, "name": "ProfilerStep#3", "tid": 9}],
                       start_ns=T0, stop_ns=T0 + 5 * MS, pid=1)
    (r,) = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
    assert r["name"] == "ProfilerStep#3" and r["dur"] == pytest.approx(3000.0)


# -- the tracer's choice and its failures (no GPU, no cupti-python here) ---------------------------

def test_pick_tracer():
    from gpuwhy.api.run import pick_tracer
    from gpuwhy.errors import UsageError

    have = lambda *mods: (lambda m: m in mods)  # noqa: E731
    assert pick_tracer("auto", have("torch", "cupti")) == "torch"
    assert pick_tracer("auto", have("cupti")) == "cupti"
    assert pick_tracer("auto", have()) == "torch"  # which says PyTorch is missing: run turns to ncu alone
    assert pick_tracer("cupti", have("torch")) == "cupti"
    with pytest.raises(UsageError, match="not a tracer"):
        pick_tracer("nsys", have())


def test_tracer_cupti_without_cupti_python_is_one_line_exit_3(tmp_path, cli, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_cupti(name, *a, **k):
        if name == "cupti" or name.startswith("cupti."):
            raise ImportError("No module named 'cupti'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_cupti)
    script = tmp_path / "prog.py"
    script.write_text("print(1)\n")
    code, out, err = cli("run", "--tracer", "cupti", "--out", str(tmp_path / "o"), "--", "python", str(script))
    assert code == 3, err
    assert "cupti-python" in err and "gpuwhy[cupti]" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()  # the folder the failed run made is gone


def test_tracer_option_errors(tmp_path, cli):
    code, out, err = cli("run", "--tracer", "perf", "--out", str(tmp_path / "o"), "--", "python", "x.py")
    assert code == 2 and "not a tracer" in err
    code, out, err = cli("run", "--tracer", "cupti", "--out", str(tmp_path / "o"), "--", "./app")
    assert code == 2 and "in-process" in err


def test_cupti_profiler_writes_the_trace_and_the_records(tmp_path, monkeypatch):
    """The profiler the run uses, over a fake tracer: the trace the reader judges, the raw records on request."""
    from gpuwhy.api import run_program as rp

    cap = {"start_ns": T0, "stop_ns": T0 + 5 * MS, "pid": 1, "devices": {0: "GPU"}, "lost": 0,
           "records": [_api("cudaLaunchKernel_v7000", 1 * MS, 5 * US, 1), _kernel(1 * MS + 10 * US, 2 * MS, 1)]}

    class Fake:
        def start(self): ...

        def stop(self): ...

        def capture(self):
            return cap

    prof = rp._CuptiProfiler.__new__(rp._CuptiProfiler)
    prof._tracer = Fake()
    monkeypatch.setenv(rp.RECORDS_ENV, str(tmp_path / "records.json"))
    prof.export(tmp_path / "trace.json")
    rep = read_trace(tmp_path / "trace.json")
    assert rep.devices[0].busy_s == pytest.approx(0.002)
    assert json.loads((tmp_path / "records.json").read_text())["records"][1]["name"] == "vecadd_kernel"
    with pytest.raises(FileExistsError):  # never over a file that is there
        prof.export(tmp_path / "trace.json")


def _recorded(name: str, tmp_path):
    """A recorded capture under tests/fixtures/cupti/: its records, the Chrome trace written from them, and the
    one GPU `gpuwhy trace` reads from that trace."""
    import gzip
    from pathlib import Path

    cap = json.loads(gzip.decompress((Path(__file__).parent / "fixtures" / "cupti" / name).read_bytes()))
    recs = cap["records"]
    doc = chrome_trace(recs, start_ns=cap["start_ns"], stop_ns=cap["stop_ns"], pid=cap["pid"],
                       devices={int(k): v for k, v in cap["devices"].items()}, lost=cap["lost"],
                       buffers=cap.get("buffers", ()))  # as `gpuwhy run --tracer cupti` writes it
    p = tmp_path / "capture.json"
    p.write_text(json.dumps(doc))
    (gpu,) = read_trace(p).devices
    return recs, doc, gpu


def test_a_recorded_cupti_capture_of_a_cupy_program(tmp_path):
    """A real capture (benchmarks/cupti/cupy_loop.py under `gpuwhy run --tracer cupti` on an H100,
    2026-12-07, docs/results/2026-12-07-diagnosis.md call 4): its busy time equals the union of its
    kernel, copy and memset intervals computed here from the records alone, and the verdict is the one
    the GPU run printed (host work: CuPy stages each 64 MiB NumPy array into a pinned buffer on the host)."""
    recs, doc, gpu = _recorded("cupy_loop.records.json.gz", tmp_path)
    spans = sorted((r["start"], r["end"]) for r in recs if r["k"] in ("kernel", "memcpy", "memset"))
    union, lo, hi = 0, *spans[0]
    for s, e in spans[1:]:
        if s > hi:
            union, lo, hi = union + (hi - lo), s, e
        else:
            hi = max(hi, e)
    union += hi - lo
    assert gpu.busy_s == pytest.approx(union / 1e9, rel=1e-6)
    copies = {(r["copy"], r["src"], r["dst"]) for r in recs if r["k"] == "memcpy"}
    assert copies == {("HTOD", "PINNED", "DEVICE"), ("DTOH", "DEVICE", "PAGEABLE")}
    assert any(e.get("cat") == "user_annotation" and e["name"] == "cub::DeviceReduce::Sum" for e in doc["traceEvents"])
    assert gpu.diagnosis.top.cause.value == "host_work"


def test_time_inside_a_jit_compilers_ranges_is_warm_up(tmp_path):
    # vecadd runs 0-100 us (launched at -10 us); the host is in XLA's compiler 150-900 us (loading the module it
    # made: a driver call inside), then launches vecadd again at 950 (it starts at 960). The gap 100-960: 750 us
    # compiling is warm-up, not launch overhead; 100-150 is host work (the host issued nothing from -5 to 150 us,
    # over 100 us); 900-950 (glue) and 10 us of launch latency are launch overhead.
    recs = [_api("cudaLaunchKernel", -10 * US, 5 * US, 1), _kernel(0, 100 * US, 1),
            {"k": "range", "start": T0 + 150 * US, "end": T0 + 900 * US, "name": "XlaCompile:#module=jit_f#", "tid": 7},
            _api("cuModuleLoadData", 200 * US, 100 * US, 2, k="driver"),
            _api("cudaLaunchKernel", 950 * US, 5 * US, 3), _kernel(960 * US, 40 * US, 3)]
    (gpu,) = read_trace(_write(tmp_path, recs, 1000 * US)).devices
    assert gpu.idle.cause_s("warmup") == pytest.approx(750e-6)
    assert gpu.idle.cause_s("launch_overhead") == pytest.approx(60e-6) and gpu.idle.cause_s("host_work") == pytest.approx(50e-6)
    assert gpu.diagnosis.judged_s == pytest.approx(gpu.diagnosis.window_s - 750e-6)
    ev = " ".join(next(c for c in gpu.idle.causes if c.key == "warmup").evidence)
    assert "750 us while a JIT compiler ran (1 XLA compile, 750 us in all)" in ev
    assert "first launch" not in ev  # vecadd ran before: no first launch waited
    # the same range under another name is an annotation like any: its driver call is launch overhead (100 us), the
    # rest of it host work
    recs[2] = dict(recs[2], name="my_range")
    (gpu,) = read_trace(_write(tmp_path, recs, 1000 * US)).devices
    assert gpu.idle.cause_s("warmup") == 0.0 and gpu.idle.cause_s("launch_overhead") == pytest.approx(110e-6)
    assert gpu.idle.cause_s("host_work") == pytest.approx(750e-6)


def test_a_recorded_cupti_capture_of_a_jax_training_loop(tmp_path):
    """A real capture (benchmarks/cupti/jax_train.py, an MLP trained for 300 jitted steps, under `gpuwhy run
    --tracer cupti` on an H100, JAX 0.11, 2026-12-07, docs/results/2026-12-07-diagnosis.md session 4): XLA
    compiled for 6 s of the 8 s the GPU spans, inside its ``XlaCompile...`` ranges. That time is warm-up, so
    the judged window is what is left; the 300 steps' jitted calls are ``jax.jit step`` ranges."""
    recs, doc, gpu = _recorded("jax_train_h100.records.json.gz", tmp_path)
    compiles = [r for r in recs if r["k"] == "range" and r["name"].startswith("XlaCompile:")]
    assert len(compiles) == 15 and sum(r["end"] - r["start"] for r in compiles) / 1e9 == pytest.approx(6.14, abs=0.01)
    d = gpu.diagnosis
    warm = d.share("warmup").seconds
    assert 6.0 < warm < 7.2 and d.judged_s == pytest.approx(d.window_s - warm)
    assert d.share("warmup").busy_s == pytest.approx(0.0986, abs=1e-3)  # the autotuner's kernels, launched compiling
    assert d.share("launch_overhead").seconds < 0.25  # was 6 s with the compiler's time in it
    # its 1,207 syncs of 8.5 ms GPU idle all lay inside the compiles (the autotuner's): no sync of the program's
    assert d.share("host_sync") is None and d.remedy("remove_syncs") is None
    ev = " ".join(next(c for c in gpu.idle.causes if c.key == "warmup").evidence)
    assert "15 XLA compiles" in ev and "the most: jit__normal x4" in ev  # four shapes of weights initialised
    assert sum(1 for e in doc["traceEvents"] if e.get("name") == "jax.jit step") == 301


def test_the_tracer_leaves_the_calls_the_budget_never_reads_unrecorded():
    """The cbids of cupti-python's enums (a stand-in with the real names and version suffixes) whose
    calls launch, copy or wait on nothing are switched off; launches, copies and syncs stay on."""
    import enum
    from types import SimpleNamespace

    from gpuwhy.engine.cupti_tracer import quiet_calls

    rt = enum.IntEnum("runtime_api_trace_cbid", {"cudaGetDevice_v3020": 17, "cudaGetLastError_v3020": 10,
                                                 "cudaLaunchKernel_v7000": 211, "cudaStreamSynchronize_v3020": 131,
                                                 "cudaMemcpyAsync_v3020": 41})
    dr = enum.IntEnum("driver_api_trace_cbid", {"cuGetProcAddress": 500, "cuGetProcAddress_v2": 501,
                                                "cuLaunchKernel": 307, "cuDeviceGetAttribute": 11})
    got = quiet_calls(SimpleNamespace(runtime_api_trace_cbid=rt, driver_api_trace_cbid=dr))
    assert sorted(got) == [("driver", 11), ("driver", 500), ("driver", 501), ("runtime", 10), ("runtime", 17)]
    assert quiet_calls(SimpleNamespace()) == []


def test_a_jit_compilers_own_syncs_and_launches_are_warm_up_too(tmp_path):
    # XLA's autotuner runs candidate kernels inside the compile and waits on them (the H100 JAX capture: all 8.5 ms
    # of its host_sync, and 21 ms of its launch latency, lay inside XlaCompile ranges). vecadd runs 0-100 us; the
    # compiler runs 150-900 us on a pool thread: it launches a candidate at 300 (it runs 310-400) and syncs on it
    # 305-402; vecadd is launched again at 950 (it starts at 960). Gap 100-310: 50 us host work (the host issued
    # nothing from -5 to 150), 150-300 compiling, and the candidate's launch 300-310, inside the compile: 160 us
    # warm-up. Gap 400-960: 400-900 compiling (the autotuner's sync is compile work, no lead of a sync of the
    # program's), 900-950 glue and 10 us launch latency: launch overhead.
    recs = [_api("cudaLaunchKernel", -10 * US, 5 * US, 1), _kernel(0, 100 * US, 1),
            {"k": "range", "start": T0 + 150 * US, "end": T0 + 900 * US, "name": "XlaCompile:#module=jit_f#", "tid": 7},
            _api("cuLaunchKernel", 300 * US, 5 * US, 2, tid=8, k="driver"), _kernel(310 * US, 90 * US, 2, "gemm_cand"),
            _api("cuStreamSynchronize", 305 * US, 97 * US, 3, tid=8, k="driver"),
            _api("cudaLaunchKernel", 950 * US, 5 * US, 4), _kernel(960 * US, 40 * US, 4)]
    (gpu,) = read_trace(_write(tmp_path, recs, 1000 * US)).devices
    assert gpu.idle.cause_s("host_sync") == 0.0
    assert gpu.idle.cause_s("warmup") == pytest.approx(660e-6)
    assert gpu.idle.cause_s("launch_overhead") == pytest.approx(60e-6) and gpu.idle.cause_s("host_work") == pytest.approx(50e-6)
    assert gpu.diagnosis.remedy("remove_syncs") is None
    # the candidate kernel the compiler launched is warm-up as well, not judged: the judged kernels are vecadd's
    d = gpu.diagnosis
    assert d.share("warmup").busy_s == pytest.approx(90e-6) and d.share("warmup").seconds == pytest.approx(750e-6)
    assert [k.name for k in d.kernels] == ["vecadd_kernel"] and d.judged_s == pytest.approx(d.window_s - 750e-6)
    assert any("largest: gemm_cand 90 us" in e for e in d.share("warmup").evidence)
    # outside a compiler's range the same sync is the program's: it leads the gap after it
    recs[2] = dict(recs[2], name="my_range")
    (gpu,) = read_trace(_write(tmp_path, recs, 1000 * US)).devices
    assert gpu.idle.cause_s("host_sync") == pytest.approx(97e-6) and gpu.idle.cause_s("warmup") == 0.0
    assert gpu.diagnosis.share("warmup") is None and {k.name for k in gpu.diagnosis.kernels} == {"vecadd_kernel",
                                                                                                "gemm_cand"}


def test_buffers_handed_over_after_the_capture_stopped_are_not_the_programs_time():
    # CUPTI hands most buffers over in the flush at stop: on the H100 JAX capture, 4.4 s after the program's
    # last call. Shown as the tracer's time they stretched the trace, and the judged window, past the program.
    recs = [{"k": "kernel", "start": 2000, "end": 3000, "name": "k", "corr": 1, "device": 0, "stream": 7}]
    doc = chrome_trace(recs, start_ns=1000, stop_ns=5000, pid=1,
                       buffers=[(1500, 1600, 3), (4900, 5200, 9), (9000, 9100, 40)])
    over = [(e["ts"], e["dur"]) for e in doc["traceEvents"] if e.get("cat") == "overhead"]
    assert over == [(1.5, 0.1), (4.9, pytest.approx(0.1))]  # the first whole, the second cut at the stop
    assert max(e["ts"] + e.get("dur", 0) for e in doc["traceEvents"]) == pytest.approx(5.0)


def jax011_capture() -> dict:
    """The second H100 JAX capture (see the test below), as recorded."""
    import gzip
    from pathlib import Path

    return json.loads(gzip.decompress((Path(__file__).parent / "fixtures" / "cupti" /
                                       "jax_train_h100_jax011.records.json.gz").read_bytes()))


def run_capture(cap: dict, tmp_path, monkeypatch, skip_first_s: float | None = 4.0, steps: int | None = None):
    """`gpuwhy run --tracer cupti --skip-first 4s` of a recorded capture: its trace written as the tracer
    writes it, handed over by a stand-in profiler; judged against the spec sheet (no saved profile)."""
    from gpuwhy import profiles
    from gpuwhy.api.run import run_program
    from test_run_kernels import FakeProfiler

    doc = chrome_trace(cap["records"], start_ns=cap["start_ns"], stop_ns=cap["stop_ns"], pid=cap["pid"],
                       devices={int(k): v for k, v in cap["devices"].items()}, lost=cap["lost"], buffers=cap["buffers"])
    monkeypatch.setattr(profiles, "find_profile", lambda *a, **k: None)
    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    window = {"steps": steps} if steps is not None else {"skip_first_s": skip_first_s}
    return run_program(["python", str(script)], tmp_path / "out", profiler_factory=lambda: FakeProfiler(doc), **window)


def test_a_jax_training_loop_judged_over_the_programs_time_alone(tmp_path, monkeypatch):
    """A second real capture (benchmarks/cupti/jax_train.py, 300 steps, JAX 0.11.2 on an H100, 2026-12-07
    session 5, `gpuwhy run --tracer cupti --skip-first 4s`): its last buffers came 4.4 s after the capture
    stopped, and the GPU run judged those seconds as launch overhead (90%, "bigger launches, at most 19.4x").
    Without them the window ends where the capture does, and the time between the steps is the host's: JAX's
    dispatch of each jitted call (``jax.jit step``, XLA's ``XlaModule`` ranges) and Python."""
    import gzip
    from pathlib import Path

    from gpuwhy import profiles
    from gpuwhy.api.run import run_program
    from test_run_kernels import FakeProfiler

    cap = jax011_capture()
    assert max(b for _, b, _ in cap["buffers"]) - cap["stop_ns"] > 4e9  # the flush, as recorded
    b = run_capture(cap, tmp_path, monkeypatch).budget
    assert b.window_s == pytest.approx((cap["stop_ns"] - cap["start_ns"]) / 1e9 - 4.0, abs=1e-3)
    assert 0.45 < b.judged_s < 0.6  # 300 steps of about 1.7 ms under the tracer (the autotuner's kernels not judged)
    assert b.top.cause.value == "host_work" and b.top.seconds == pytest.approx(0.2575, abs=0.01)
    lo = next(s for s in b.shares if s.cause.value == "launch_overhead")
    assert lo.seconds < 0.15


def test_a_jax_loop_that_fetches_its_loss_every_step_under_cupti(tmp_path, monkeypatch):
    """A third real capture (benchmarks/cupti/jax_train.py 300, its loss fetched every step, steps marked by NVTX,
    under `gpuwhy run --tracer cupti --steps 200` on an H100, JAX 0.11.2, 2026-12-07 11:39 UTC): JAX waits for
    the loss on a host callback, which CUPTI does not show; the JAX hook recorded each fetch as a blocking call,
    so the planted cause is named, as JAX's own profiler names it. The step's FLOPs are the jaxpr's."""
    import gzip
    from pathlib import Path

    cap = json.loads(gzip.decompress((Path(__file__).parent / "fixtures" / "cupti" /
                                      "jax_train_h100_fetch_every_step.records.json.gz").read_bytes()))
    waits = [r for r in cap["records"] if r["k"] == "driver" and r["name"] == "np.asarray(jax.Array)"]
    steps = [r for r in cap["records"] if r["k"] == "jit" and r["name"] == "step"]
    assert len(waits) >= 300 and {(r["flops"], r["flops_from"]) for r in steps} == {(73089444866.0, "jaxpr")}
    r = run_capture(cap, tmp_path, monkeypatch, steps=200)
    b = r.budget
    assert b.top.cause.value == "host_sync" and b.remedies[0].key == "remove_syncs"
    assert b.remedies[0].ceiling_x == pytest.approx(2.70, abs=0.02)  # as the GPU run printed it
    # its fixed twin (the loss fetched once) ran 1.90-2.04x faster alone: under the ceiling
    assert any("FLOPs counted from the jaxpr" in n for n in r.notes)


def test_cupti_without_a_driver_says_so_in_one_line(monkeypatch):
    """cupti-python importable but no NVIDIA driver (a machine without a GPU): CUPTI's refusal is
    named as that one cause with what to do, not as another profiler or an old driver."""
    import sys
    import types

    from gpuwhy.device import cuda_version
    from gpuwhy.engine.cupti_tracer import CuptiTracer, NoCupti

    class Refusing:
        class cuptiError(Exception):
            pass

        def activity_register_callbacks(self, *a):
            raise RuntimeError("CUDA driver is not found (libcuda.so.1: cannot open shared object file)")

    pkg = types.ModuleType("cupti")
    pkg.cupti = Refusing()
    monkeypatch.setitem(sys.modules, "cupti", pkg)
    monkeypatch.setattr(cuda_version, "driver_cuda_version", lambda: None)
    with pytest.raises(NoCupti) as e:
        CuptiTracer().start()
    msg = str(e.value)
    assert "no NVIDIA driver here" in msg and "run on a machine with an NVIDIA GPU" in msg
    assert "another profiler" not in msg and "\n" not in msg and e.value.exit_code == 3
    monkeypatch.setattr(cuda_version, "driver_cuda_version", lambda: 13000)  # a driver: CUPTI's other causes
    with pytest.raises(NoCupti, match="another profiler"):
        CuptiTracer().start()
