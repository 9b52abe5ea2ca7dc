"""JAX profiler (XProf) traces as people have them: JAX's log folder with several runs or hosts, a run traced
without ``create_perfetto_trace``, a broken or odd file, a trace JAX made on a CPU. Each is read or refused in
one line (exit 2), in JAX's words, never from another run than the one asked for."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import ROOT, one_line, run_cli

from gpuwhy.errors import UsageError
from gpuwhy.importers.xprof import find_trace, is_xprof_name, load_xprof, locate, looks_like_xprof

TRACE = ROOT / "tests" / "fixtures" / "xprof" / "jax_train_h100.perfetto_trace.json.gz"
HOST = {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}}
GPU = {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:0"}}
STREAM = {"ph": "M", "pid": 2, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Compute)"}}


def _kernel(ts: float, corr: int) -> list[dict]:
    return [{"ph": "X", "pid": 1, "tid": 1, "ts": ts - 5.0, "dur": 3.0, "name": "fusion", "args": {"correlation_id": str(corr)}},
            {"ph": "X", "pid": 2, "tid": 7, "ts": ts, "dur": 30.0, "name": "fusion",
             "args": {"correlation_id": str(corr), "kernel_details": "grid:1,1,1 block:32,1,1"}}]


def _trace(tmp_path, name: str, events) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"traceEvents": events}))
    return str(p)


def test_a_time_that_is_not_finite_is_one_line_exit_2(tmp_path):
    # json reads 1e999 and Infinity as float('inf'): was an internal error (OverflowError, exit 70)
    for word in ("1e999", "Infinity"):
        p = tmp_path / f"inf{word}.trace.json"
        p.write_text(json.dumps({"traceEvents": [HOST, GPU, STREAM, *_kernel(100.0, 3)]}).replace('"ts": 100.0', f'"ts": {word}'))
        r = run_cli("trace", str(p))
        line = one_line(r.returncode, r.stderr)
        assert "unreadable event" in line and "not a finite number" in line, line


def test_the_newest_run_is_read_or_refused_never_an_older_one(tmp_path):
    # JAX 0.11 without create_perfetto_trace=True writes the XSpace protobuf only: the newest run has no JSON trace,
    # and reading the older run's trace instead would judge a program other than the one just traced.
    logdir = tmp_path / "logs"
    old = logdir / "plugins" / "profile" / "2026_12_07_10_00_00"
    new = logdir / "plugins" / "profile" / "2026_12_07_11_00_00"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    shutil.copy(TRACE, old / "perfetto_trace.json.gz")
    (new / "vm.xplane.pb").write_bytes(b"\x0a\x00")
    assert find_trace(logdir) is None and locate(logdir)[1] == new
    r = run_cli("trace", str(logdir))
    line = one_line(r.returncode, r.stderr)
    assert "its newest run, 2026_12_07_11_00_00, holds the JAX profiler run as XSpace protobufs" in line, line
    assert "create_perfetto_trace=True" in line and "an older run's trace file" in line
    # the older run's folder, or its file, is still read when passed
    assert find_trace(old) == old / "perfetto_trace.json.gz"
    # a LOGDIR/plugins passed is looked into too
    assert locate(logdir / "plugins")[1] == new


def test_other_runs_and_other_hosts_traces_are_named_in_the_notes(tmp_path):
    logdir = tmp_path / "logs"
    runs = [logdir / "plugins" / "profile" / f"2026_12_07_1{i}_00_00" for i in range(3)]
    for run in runs:
        run.mkdir(parents=True)
        (run / "a.xplane.pb").write_bytes(b"\x0a\x00")
    newest = runs[-1]
    shutil.copy(TRACE, newest / "perfetto_trace.json.gz")
    shutil.copy(TRACE, newest / "host-a.trace.json.gz")
    shutil.copy(TRACE, newest / "host-b.trace.json.gz")
    trace, run, notes = locate(logdir)
    assert (trace, run) == (newest / "perfetto_trace.json.gz", newest)
    text = " ".join(notes)
    assert "the newest of 3 JAX profiler runs, 2026_12_07_12_00_00" in text
    assert "the traces of 2 hosts (host-a.trace.json.gz, host-b.trace.json.gz); read perfetto_trace.json.gz" in text
    r = load_xprof(logdir)
    assert any("the newest of 3 JAX profiler runs" in n for n in r.notes)
    # one run, one host (perfetto_trace.json.gz and HOST.trace.json.gz are the same trace): nothing to say
    only = tmp_path / "one"
    only.mkdir()
    shutil.copy(TRACE, only / "perfetto_trace.json.gz")
    shutil.copy(TRACE, only / "vm.trace.json.gz")
    assert locate(only)[2] == []


def test_a_broken_xprof_file_is_refused_in_jaxs_words(tmp_path):
    run = tmp_path / "plugins" / "profile" / "2026_12_07_10_00_00"
    run.mkdir(parents=True)
    cut = run / "perfetto_trace.json.gz"
    cut.write_bytes(TRACE.read_bytes()[:200_000])  # the head is readable: a gzip stream cut short
    head = run / "vm.trace.json.gz"
    head.write_bytes(TRACE.read_bytes()[:20])  # not even the head: a gzip header only
    empty = tmp_path / "empty.perfetto_trace.json.gz"
    empty.write_bytes(b"")
    for p in (cut, head, empty):
        assert looks_like_xprof(p), p
        r = run_cli("trace", str(p))
        line = one_line(r.returncode, r.stderr)
        assert "JAX profiler trace" in line and "torch" not in line, line
    # a torch.profiler trace is not taken for XProf by its name
    torch = tmp_path / "x.pt.trace.json"
    torch.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}))
    assert not looks_like_xprof(torch) and not is_xprof_name(run / "h.pt.trace.json.gz")
    assert is_xprof_name(run / "vm.trace.json.gz") and not is_xprof_name(tmp_path / "vm.trace.json.gz")


def test_gpu_events_on_derived_lines_only_are_not_called_no_gpu_work(tmp_path):
    # A GPU process whose events lie on lines that are not "Stream #N" (XProf's derived lines, another tool's
    # layout): the program did run GPU work, gpuwhy cannot read it as activities, and says so.
    derived = {"ph": "M", "pid": 2, "tid": 9, "name": "thread_name", "args": {"name": "XLA Ops"}}
    op = {"ph": "X", "pid": 2, "tid": 9, "ts": 10.0, "dur": 5.0, "name": "fusion", "args": {}}
    p = _trace(tmp_path, "derived.trace.json", [HOST, GPU, derived, op])
    r = run_cli("trace", p)
    line = one_line(r.returncode, r.stderr)
    assert "lie only on lines that are not streams ('XLA Ops')" in line and "ran no GPU work" not in line, line


def test_a_trace_of_jax_on_the_cpu_is_refused_in_one_line(tmp_path):
    # What JAX writes on a machine without a GPU (JAX 0.10.2, 2026-12-07): /host:CPU only.
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    f = jax.jit(lambda x: (x @ x).sum())
    x = jnp.ones((32, 32))
    logdir = tmp_path / "cpu logs"  # a space in the path
    with jax.profiler.trace(str(logdir), create_perfetto_trace=True):
        for _ in range(3):
            float(f(x))
    assert find_trace(logdir) is not None
    r = run_cli("trace", str(logdir))
    line = one_line(r.returncode, r.stderr)
    assert "holds no GPU (only the host: JAX ran on the CPU)" in line, line


def test_a_cpu_only_trace_says_jax_ran_on_the_cpu(tmp_path):
    step = {"ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "name": "PjitFunction(f)"}
    with pytest.raises(UsageError, match=r"holds no GPU \(only the host: JAX ran on the CPU\)"):
        load_xprof(_trace(tmp_path, "cpu.trace.json", [HOST, step]))


def test_the_json_document_fits_the_trace_schema(tmp_path):
    from test_schema import check_document

    r = run_cli("trace", str(TRACE), "--json")
    assert r.returncode == 0, r.stderr
    check_document(json.loads(r.stdout))


def _strings(doc):
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)
    elif isinstance(doc, str):
        yield doc


def test_a_jax_trace_is_told_about_in_jaxs_words_throughout():
    # Every line of the report of a JAX trace (reasons, evidence, remedies, next steps): no PyTorch advice. The
    # sync evidence said "outside any operator (torch.cuda.synchronize() or a library)".
    r = run_cli("trace", str(TRACE), "--json")
    assert r.returncode == 0, r.stderr
    text = " ".join(_strings(json.loads(r.stdout)))
    assert "torch" not in text.lower() and "ProfilerActivity" not in text
    assert "outside any jitted call (a fetch of a value: float(x)" in text


def test_too_little_to_judge_in_a_jax_trace_says_how_with_jaxs_profiler(tmp_path):
    call = {"ph": "X", "pid": 1, "tid": 1, "ts": 90.0, "dur": 20.0, "name": "PjitFunction(step)"}
    r = load_xprof(_trace(tmp_path, "one.trace.json", [HOST, GPU, STREAM, call, *_kernel(100.0, 3)]))
    (d,) = r.devices
    assert d.verdict == "too-little-to-judge"
    said = " ".join(d.remedies)
    assert "jax.profiler.start_trace" in said and "torch" not in said


def test_the_next_step_of_each_cause_in_jaxs_words():
    from gpuwhy.verdict.causes import Cause
    from gpuwhy.verdict.remedies import NEXT_STEP, next_step

    for cause in NEXT_STEP:
        assert "torch" not in next_step(cause, "jax") and "ProfilerActivity" not in next_step(cause, "jax"), cause
        assert next_step(cause, None) == NEXT_STEP[cause]
    assert "ProfilerActivity" in next_step(Cause.UNEXPLAINED, None)


def _steps(n: int, compile_every: bool) -> list[dict]:
    """n jitted calls of 1 ms, each compiling its module again (``compile_every``) or only the first."""
    ev, corr = [HOST, GPU, STREAM], 1
    for i in range(n):
        t0 = i * 2000.0
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t0, "dur": 1000.0, "name": "PjitFunction(step)"})
        if compile_every or i == 0:
            ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t0 + 100, "dur": 700.0,
                       "name": "PjRtCApiClient::CompileAndLoad(jit_step)"})
        for k in range(3):
            ev.extend(_kernel(t0 + 870 + 40 * k, corr))
            corr += 1
    return ev


def test_a_program_that_compiles_every_step_is_told_by_its_count_of_compiles(tmp_path):
    # XProf names each compile PjRtCApiClient::CompileAndLoad(MODULE): counted like XlaCompile:#module=MODULE#,
    # so the warm-up evidence names the module compiled again and again (it counted none in an XProf trace).
    r = load_xprof(_trace(tmp_path, "again.trace.json", _steps(20, compile_every=True)))
    warm = " ".join(next(c for c in r.devices[0].idle.causes if c.key == "warmup").evidence)
    assert "20 XLA compiles" in warm and "the most: jit_step x20" in warm, warm
    from gpuwhy.importers.timeline.activities import compiled_module

    assert compiled_module("PjRtCApiClient::CompileAndLoad(jit__normal)") == "jit__normal"
    assert compiled_module("XlaCompile:#module=jit_step#") == "jit_step"
    assert compiled_module("PJRT_Client_Compile") is None and compiled_module(None) is None


def test_a_compile_on_another_thread_does_not_make_a_call_warm_up():
    # _first_calls: only a compile started on the call's own thread makes the call a first call. XLA compiles on
    # the calling thread (its phases on a pool's threads), while a steady call on the main thread may overlap
    # another thread's compile (a callback thread jitting something new).
    import numpy as np

    from gpuwhy.importers.timeline.host import _first_calls

    names = ["PjitFunction(step)", "PjRtCApiClient::CompileAndLoad(jit_g)", "ThreadpoolListener::Record"]
    hs = np.array([0.0, 100.0, 2000.0, 2100.0, 5000.0, 5100.0, 5100.0])
    he = np.array([1000.0, 300.0, 3000.0, 2200.0, 6000.0, 5900.0, 5200.0])
    hn = np.array([0, 1, 0, 1, 0, 1, 2])
    ht = np.array([1, 1, 1, 2, 1, 1, 1])  # call 2's compile on thread 2
    is_comp = np.array([False, True, False, True, False, True, False])
    got = _first_calls(hs, he, hn, ht, is_comp, names)
    assert got.tolist() == [True, False, False, False, True, False, False]
    # a compile that began before the call (the call nested in it) is the compile's time already, not a first call
    assert not _first_calls(np.array([0.0, 50.0]), np.array([900.0, 100.0]), np.array([1, 0]), np.array([1, 1]),
                            np.array([True, False]), names).any()


def test_steady_calls_are_judged_when_only_the_first_compiles(tmp_path):
    # 20 calls of 1 ms, 1 ms apart, the kernels 0.87 ms into each call. Only the first compiles: the 19 others are
    # judged (the host in a call launching nothing for 0.87 ms, and the 1 ms between calls: host work). Each
    # compiling: the time in the calls is warm-up, only the 19 ms between them is judged as host work.
    once = load_xprof(_trace(tmp_path, "once.trace.json", _steps(20, compile_every=False))).devices[0].diagnosis
    again = load_xprof(_trace(tmp_path, "again.trace.json", _steps(20, compile_every=True))).devices[0].diagnosis
    w = once.share("warmup")  # the first call alone: its compiling, and its kernel (launched inside it)
    assert w.seconds < 2e-4 and w.busy_s == pytest.approx(90e-6) and once.share("host_work").seconds > 19 * 1.8e-3
    assert again.share("host_work").seconds == pytest.approx(19 * 1e-3, rel=0.01)
    assert again.share("warmup").seconds > 19 * 0.87e-3 and again.share("launch_overhead") is None


def test_nested_step_ranges_are_one_step_per_thread(tmp_path):
    # XProf writes each jitted call as two nested PjitFunction(step) ranges: one step. The same name on another
    # thread at the same time is a step of its own (two threads stepping at once).
    ev, corr = [HOST, GPU, STREAM], 1
    for i in range(3):
        t0 = i * 1000.0
        for tid, off in ((1, 0.0), (2, 300.0)) if i < 2 else ((1, 0.0),):
            ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": t0 + off, "dur": 200.0, "name": "PjitFunction(step)"})
            ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": t0 + off + 1, "dur": 198.0, "name": "PjitFunction(step)"})
            ev.extend(_kernel(t0 + off + 150, corr))
            corr += 1
    r = load_xprof(_trace(tmp_path, "two.trace.json", ev), steps_from="PjitFunction(step)")
    assert len(r.devices[0].idle.steps) == 5
