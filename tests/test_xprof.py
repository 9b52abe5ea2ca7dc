"""JAX's own profiler trace (XProf), read by `gpuwhy trace` into the one timeline.

The fixture is a real trace: benchmarks/cupti/jax_profile.py (benchmarks/cupti/jax_train.py's 100 jitted
MLP steps, each fetching its loss with ``float(l)``, under ``jax.profiler.trace(create_perfetto_trace=True)``)
on an H100, JAX 0.11.2, 2026-12-07 (docs/results/2026-12-07-diagnosis.md, session 5): its
``perfetto_trace.json.gz`` as JAX wrote it."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import ROOT, one_line, run_cli

from gpuwhy.errors import UsageError
from gpuwhy.importers.timeline.activities import SYNC_NAMES
from gpuwhy.importers.xprof import find_trace, load_xprof, looks_like_xprof, read_xprof_timeline
from gpuwhy.importers.xprof.convert import HOST_WAITS, convert, details, is_xprof

TRACE = ROOT / "tests" / "fixtures" / "xprof" / "jax_train_h100.perfetto_trace.json.gz"


def _events():
    return json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]


def _union_us(spans) -> float:
    spans = sorted(spans)
    total, (lo, hi) = 0.0, spans[0]
    for s, e in spans[1:]:
        if s > hi:
            total, lo, hi = total + (hi - lo), s, e
        else:
            hi = max(hi, e)
    return total + hi - lo


def test_busy_time_is_the_union_of_the_gpu_events_of_the_raw_trace():
    # Computed here from the JSON alone: every complete event of the process named /device:GPU:0 on a thread
    # named "Stream #N(...)".
    ev = _events()
    gpu = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
           and e["args"]["name"] == "/device:GPU:0"}
    streams = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"
               and e["pid"] in gpu and e["args"]["name"].startswith("Stream #")}
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in streams]
    assert len(spans) == 6608
    r = load_xprof(TRACE)
    (d,) = r.devices
    assert d.device == "0" and d.busy_s == pytest.approx(_union_us(spans) * 1e-6, rel=1e-6)
    assert d.kernels == 4619 and d.memcpys == 899 and d.memsets == 1090


def test_the_verdict_of_a_jax_loop_that_fetches_its_loss_every_step():
    """Steady state, counted from the raw trace: 1.42 ms a step, 0.45 ms of it GPU work, the host blocked
    0.93 ms a step in ``np.asarray(jax.Array)`` (``float(l)``); the 6.6 s before the loop are XLA compiling
    (its compile calls, the phases its autotuner runs inside a first execution, and each first call of a
    jitted function, tracing included): warm-up, not judged."""
    r = load_xprof(TRACE)
    (d,) = r.devices
    g = d.diagnosis
    assert g.top.cause.value == "host_sync" and g.remedies[0].key == "remove_syncs"
    assert g.share("warmup").seconds > 6.0 and 0.14 < g.judged_s < 0.16  # the loop's 141.8 ms and a little
    assert g.share("warmup").busy_s == pytest.approx(0.0961, abs=1e-3)  # the autotuner's kernels: not judged
    assert g.share("host_sync").seconds / g.judged_s > 0.5  # pct is of the window, warm-up included
    assert g.share("host_work").seconds < 0.02  # was 408 ms with the tracing of first calls judged as host work
    # the host operations named while the GPU waited: the steady calls, not a first call's seconds of compiling
    assert d.idle.host_ops and max(op.time_s for op in d.idle.host_ops) < 0.01
    ev = " ".join(next(c for c in d.idle.causes if c.key == "host_sync").evidence)
    assert "101 blocking calls (101 np.asarray(jax.Array))" in ev
    texts = " ".join(x.text for x in g.remedies) + " ".join(g.next_steps)
    assert "float(x)" in g.remedies[0].text and "torch" not in texts and "jax.profiler" in texts  # JAX's words
    assert any("JAX profiler (XProf) trace" in n for n in r.notes)
    assert any("Python-tracer frames left out" in n for n in r.notes)


def test_the_text_weighs_the_shares_against_the_judged_window(cli):
    """6.7 s of the 6.9 s window are warm-up: the budget's column is % of the judged window, as the verdict's
    54% is, and the shares that are large in it (the kernels' 26%) get their evidence printed."""
    code, out, err = cli("trace", str(TRACE))
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line.split("│")[4].strip() for line in out.splitlines() if line.count("│") == 5}
    assert "% of judged" in out and "% of window" not in out
    assert rows["warm-up (first calls) (not judged)"] == "-" and rows["host blocked in a sync"] == "54.2%"
    assert "54% of the judged window" in out
    assert "\nkernels (regime not measured):\n  - by kind: gemm" in out  # evidence of a 26% share


def test_trace_help_names_jax_logdir(cli):
    # a JAX user reading `gpuwhy trace --help` learns that the log folder is an input
    import re

    code, out, err = cli("trace", "--help")
    assert code == 0, err
    text = re.sub(r"[\s│]+", " ", out)
    assert "JAX's profiler trace" in text and "jax.profiler.trace(LOGDIR)" in text and "'PjitFunction(step)'" in text


def test_a_missing_path_names_the_jax_log_folder_among_the_inputs(cli, tmp_path):
    line = one_line(*cli("trace", str(tmp_path / "logdir-typo"))[::2])
    assert "does not exist" in line and "jax.profiler.trace(LOGDIR)" in line and "torch.profiler trace" in line


def test_each_jitted_call_is_one_step_with_steps_from():
    # XProf writes each call as two nested PjitFunction(step) ranges: one step each, not two.
    r = load_xprof(TRACE, steps_from="PjitFunction(step)")
    assert len(r.devices[0].idle.steps) == 101


def test_the_steps_table_names_the_ranges_that_are_the_steps(cli):
    # JAX's jitted calls are no torch.profiler ProfilerStep ranges: the title says what the steps are
    code, out, err = cli("trace", str(TRACE), "--steps-from", "PjitFunction(step)")
    assert code == 0, err
    assert "per step (101 PjitFunction(step) ranges: the fastest" in out and "ProfilerStep" not in out
    code, out, err = cli("trace", str(ROOT / "tests" / "fixtures" / "real" / "trace_dataloader.json"))
    assert code == 0, err
    assert "per step (3 ProfilerStep ranges)" in out  # torch.profiler's own


def test_launch_calls_are_named_by_the_work_they_started():
    c = convert(_events())
    calls = {}
    for x in c.records:
        if x["k"] == "driver":
            calls[x["name"]] = calls.get(x["name"], 0) + 1
    assert calls["cuGraphLaunch"] == 101 and calls["np.asarray(jax.Array)"] == 101
    assert calls["cuLaunchKernel"] > 1000 and calls["cuMemsetD8Async"] > 900
    kernels = {x["corr"] for x in c.records if x["k"] == "kernel"}
    launches = {x["corr"] for x in c.records if x["k"] == "driver" and x["name"] in ("cuLaunchKernel", "cuGraphLaunch")}
    assert kernels <= launches | {0}
    assert HOST_WAITS <= SYNC_NAMES


def test_conversion_of_hand_written_events():
    ev = [
        {"ph": "M", "pid": 7, "name": "process_name", "args": {"name": "/device:GPU:1"}},
        {"ph": "M", "pid": 7, "tid": 3, "name": "thread_name", "args": {"name": "Stream #3(Compute)"}},
        {"ph": "M", "pid": 7, "tid": 99, "name": "thread_name", "args": {"name": "XLA Ops"}},
        {"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "X", "pid": 7, "tid": 3, "ts": 10.0, "dur": 5.0, "name": "MemcpyH2D",
         "args": {"correlation_id": "4", "memcpy_details": "kind_src:pageable kind_dst:device size:4096 async:0"}},
        {"ph": "X", "pid": 7, "tid": 3, "ts": 20.0, "dur": 2.5, "name": "fusion_1",
         "args": {"correlation_id": "5", "kernel_details": "regs:16 grid:8,2,1 block:128,1,1"}},
        {"ph": "X", "pid": 7, "tid": 99, "ts": 20.0, "dur": 2.5, "name": "fusion_1", "args": {}},
        {"ph": "X", "pid": 9, "tid": 1, "ts": 5.0, "dur": 6.0, "name": "MemcpyH2D",
         "args": {"correlation_id": "4", "memcpy_details": "kind_src:unknown kind_dst:unknown size:4096 async:0"}},
        {"ph": "X", "pid": 9, "tid": 1, "ts": 12.0, "dur": 1.0, "name": "fusion_1", "args": {"correlation_id": "5"}},
        {"ph": "X", "pid": 9, "tid": 1, "ts": 13.0, "dur": 1.0, "name": "cuGraphCreate (CudaGraph:3)",
         "args": {"correlation_id": "6"}},
        {"ph": "X", "pid": 9, "tid": 1, "ts": 14.0, "dur": 9.0, "name": "$train.py:10 step", "args": {}},
        {"ph": "X", "pid": 9, "tid": 1, "ts": 2.0, "dur": 30.0, "name": "PjitFunction(step)", "args": {}},
    ]
    assert is_xprof(ev)
    c = convert(ev)
    by = {(r["k"], r.get("name")): r for r in c.records}
    copy = by[("memcpy", None)]
    assert (copy["copy"], copy["src"], copy["dst"], copy["bytes"], copy["device"], copy["stream"]) == \
        ("HTOD", "PAGEABLE", "DEVICE", 4096, 1, 3)
    k = by[("kernel", "fusion_1")]
    assert k["grid"] == [8, 2, 1] and k["block"] == [128, 1, 1] and (k["start"], k["end"]) == (20000, 22500)
    assert by[("driver", "cuMemcpyHtoD_v2")]["corr"] == 4  # async:0: the blocking call, a sync
    assert by[("driver", "cuLaunchKernel")]["corr"] == 5
    assert by[("driver", "cuGraphCreate")]["corr"] == 6
    assert ("range", "PjitFunction(step)") in by and c.frames == 1 and c.skipped_lines == {"XLA Ops"}
    assert c.devices == {1: ""} and c.pid == 9 and (c.start_ns, c.stop_ns) == (2000, 32000)
    assert details("kind:device num_bytes:8 async:1") == {"kind": "device", "num_bytes": "8", "async": "1"}


def test_a_jax_log_folder_is_read_from_its_newest_run(tmp_path):
    old = tmp_path / "plugins" / "profile" / "2026_12_07_10_00_00"
    new = tmp_path / "plugins" / "profile" / "2026_12_07_10_35_47"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    (old / "vm.trace.json.gz").write_bytes(b"not read")
    shutil.copy(TRACE, new / "perfetto_trace.json.gz")
    assert find_trace(tmp_path) == new / "perfetto_trace.json.gz"
    assert find_trace(new) == new / "perfetto_trace.json.gz"
    r = run_cli("trace", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["devices"][0]["diagnosis"]["top_cause"] == "host_sync"
    from test_schema import check_document

    check_document(doc)  # the trace schema, and units in every figure's key
    assert looks_like_xprof(TRACE) and not looks_like_xprof(tmp_path / "plugins" / "profile" / "none.json")


def _write(tmp_path, name: str, events) -> str:
    p = tmp_path / name
    p.write_text(json.dumps({"displayTimeUnit": "ns", "traceEvents": events}))
    return str(p)


def test_bad_inputs_one_line_exit_2(tmp_path):
    host = {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}}
    tpu = {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:TPU:0"}}
    gpu = {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/device:GPU:0"}}
    step = {"ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "name": "PjitFunction(step)"}
    cut = tmp_path / "cut.perfetto_trace.json.gz"
    cut.write_bytes(TRACE.read_bytes()[:200_000])
    cases = {
        _write(tmp_path, "tpu.trace.json", [host, tpu, step]): "holds no GPU (it traced TPU devices)",
        _write(tmp_path, "idle.trace.json", [host, gpu, step]): "holds no kernel, copy or memset",
        str(cut): "cut.perfetto_trace.json.gz",
        str(tmp_path / "empty"): "is a folder, not a file, and holds no JAX profiler trace",
        str(tmp_path / "pb"): "(*.xplane.pb) only, which gpuwhy does not read; trace with jax.profiler.trace(LOGDIR, "
                              "create_perfetto_trace=True)",
    }
    cases[str(tmp_path / "pb" / "plugins" / "profile" / "run1" / "vm.xplane.pb")] = "an XSpace protobuf"
    (tmp_path / "empty").mkdir()
    (tmp_path / "pb" / "plugins" / "profile" / "run1").mkdir(parents=True)
    (tmp_path / "pb" / "plugins" / "profile" / "run1" / "vm.xplane.pb").write_bytes(b"\x0a\x00")
    for path, said in cases.items():
        r = run_cli("trace", path)
        line = one_line(r.returncode, r.stderr)
        assert said in line, line


def test_reader_refuses_a_torch_trace_in_one_line(tmp_path):
    p = _write(tmp_path, "torch.json", [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}])
    with pytest.raises(UsageError, match="not a JAX profiler trace"):
        read_xprof_timeline(p)


def test_the_trace_is_read_a_piece_at_a_time_without_its_python_frames():
    # The event list parsed in pieces, the Python tracer's frames (374,409 of the H100 trace's 440,659 events)
    # dropped as they come: the same events as the whole file parsed at once, less the frames.
    from gpuwhy.importers.xprof import _events as read_events

    whole = _events()
    kept, frames = read_events(TRACE)
    expected = [e for e in whole if not (e.get("ph") == "X" and str(e.get("name", "")).startswith("$"))]
    assert frames == 374_409 and frames + len(kept) == len(whole) and kept == expected
