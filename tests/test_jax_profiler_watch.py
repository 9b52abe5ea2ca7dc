"""`gpuwhy run --tracer cupti` and a program that starts JAX's own profiler, which takes CUPTI over (on an H100,
JAX 0.11.2, 2026-12-07: the CUPTI trace then held no GPU work and `gpuwhy run` printed no verdict and no reason)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gpuwhy.engine.jax_profiler_watch import note, watch
from gpuwhy.importers.cupti.records import chrome_trace


class _Recorder:
    """A recorder for the hooks (``add``, ``clock``, ``active``): its clock reads ``now`` (ns), then moves it on
    by ``tick`` (0: set by hand)."""

    def __init__(self, now: int = 5_000_000_000, tick: int = 0):
        self.records, self.active, self.now, self.tick = [], True, now, tick

    def add(self, r):
        self.records.append(r)

    def clock(self):
        self.now += self.tick
        return self.now


def _fake_jax():
    calls = []
    prof = SimpleNamespace(trace=lambda log_dir, **kw: calls.append(("trace", log_dir)) or "ctx",
                           start_trace=lambda log_dir, **kw: calls.append(("start_trace", log_dir)))
    return SimpleNamespace(profiler=prof), calls


def test_each_start_of_jax_profiler_is_recorded_and_jax_still_runs_it():
    jax, calls = _fake_jax()
    rec = _Recorder()
    original = jax.profiler.trace
    restore = watch(jax, rec)
    assert jax.profiler.trace("/tmp/my logs") == "ctx"  # JAX's own result, passed on
    rec.now += 1_000_000_000
    jax.profiler.start_trace(log_dir="/tmp/b")
    assert calls == [("trace", "/tmp/my logs"), ("start_trace", "/tmp/b")]
    assert [(r["k"], r["name"], r["log_dir"], r["start"]) for r in rec.records] == [
        ("profiler", "jax.profiler.trace", "/tmp/my logs", 5_000_000_000),
        ("profiler", "jax.profiler.start_trace", "/tmp/b", 6_000_000_000)]
    rec.active = False  # after the run: JAX's calls pass through unrecorded
    jax.profiler.trace("/tmp/c")
    assert len(rec.records) == 2
    restore()
    assert jax.profiler.trace is original


def test_the_note_names_the_log_folder_and_the_command_that_reads_it():
    recs = [{"k": "kernel"}, {"k": "profiler", "start": 5_500_000_000, "name": "jax.profiler.trace",
                              "log_dir": "/tmp/my logs"}]
    line = note(recs, 1_000_000_000)
    assert "jax.profiler.trace('/tmp/my logs')) 4.5 s into the run" in line
    assert "takes CUPTI over" in line and line.endswith("gpuwhy trace '/tmp/my logs'")
    assert note([{"k": "kernel"}], 0) is None


def test_a_profiler_record_is_an_instant_event_of_the_trace():
    recs = [{"k": "kernel", "start": 2000, "end": 3000, "name": "k", "corr": 1, "device": 0, "stream": 7},
            {"k": "profiler", "start": 2500, "name": "jax.profiler.trace", "log_dir": "/tmp/x"}]
    doc = chrome_trace(recs, start_ns=1000, stop_ns=5000, pid=1)
    (ev,) = [e for e in doc["traceEvents"] if e.get("name") == "jax.profiler.trace started"]
    assert ev["ph"] == "i" and ev["ts"] == pytest.approx(2.5) and ev["args"] == {"log_dir": "/tmp/x"}


def test_run_prints_the_tracers_note(tmp_path, monkeypatch):
    # The CUPTI profiler's notes reach the run's notes (here a stand-in profiler with one; its trace has GPU work).
    from gpuwhy import profiles
    from gpuwhy.api.run import run_program

    class Prof:
        notes = ("the program started JAX's profiler (stand-in)",)

        def start(self):
            pass

        def stop(self):
            pass

        def export(self, path):
            recs = [{"k": "kernel", "start": 2000, "end": 9000, "name": "k", "corr": 1, "device": 0, "stream": 7},
                    {"k": "driver", "start": 1500, "end": 1900, "name": "cuLaunchKernel", "corr": 1, "pid": 1, "tid": 1}]
            path.write_text(json.dumps(chrome_trace(recs, start_ns=1000, stop_ns=10000, pid=1)))

    monkeypatch.setattr(profiles, "find_profile", lambda *a, **k: None)
    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    r = run_program(["python", str(script)], tmp_path / "out", profiler_factory=Prof)
    assert r.notes[0] == "the program started JAX's profiler (stand-in)"


def test_real_jax_profiler_start_is_seen(tmp_path):
    jax = pytest.importorskip("jax")
    rec = _Recorder()
    restore = watch(jax, rec)
    try:
        jax.profiler.start_trace(str(tmp_path / "logs"))
        jax.profiler.stop_trace()
    finally:
        restore()
    assert [(r["name"], r["log_dir"]) for r in rec.records] == [("jax.profiler.start_trace", str(tmp_path / "logs"))]
    assert not hasattr(jax.profiler.start_trace, "_gpuwhy_original")


def test_the_hosts_wait_for_a_value_is_recorded_as_a_blocking_call():
    from gpuwhy.engine.jax_profiler_watch import WAIT_NAME, watch_waits
    from gpuwhy.importers.timeline.activities import SYNC_NAMES

    class Array:
        @property
        def _value(self):
            rec.now += 7000  # the wait
            return 42.0

    rec = _Recorder()
    restore = watch_waits(Array, rec)
    assert Array()._value == 42.0
    (r,) = rec.records
    assert (r["k"], r["name"], r["end"] - r["start"]) == ("driver", WAIT_NAME, 7000) and WAIT_NAME in SYNC_NAMES
    rec.active = False
    Array()._value
    assert len(rec.records) == 1
    restore()
    assert not hasattr(Array.__dict__["_value"].fget, "_gpuwhy_original")
    assert watch_waits(None, rec)() is None and watch_waits(object, rec)() is None  # nothing to wrap: left alone


def test_real_jax_fetch_is_seen_as_a_wait():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax._src.array import ArrayImpl

    from gpuwhy.engine.jax_profiler_watch import watch_waits

    rec = _Recorder()
    x = jnp.arange(4.0).sum()
    restore = watch_waits(ArrayImpl, rec)
    try:
        assert float(x) == 6.0
    finally:
        restore()
    assert [r["name"] for r in rec.records] == ["np.asarray(jax.Array)"]
    assert float(jnp.ones(2).sum()) == 2.0 and len(rec.records) == 1  # put back


def test_run_judges_jaxs_own_trace_when_the_program_started_jaxs_profiler(tmp_path, monkeypatch):
    # The CUPTI trace of such a program holds no GPU work after the start (JAX's profiler took CUPTI over); the
    # log folder JAX wrote (here the committed H100 trace, in JAX's layout) is judged instead, and said so.
    import shutil
    from pathlib import Path

    from gpuwhy import profiles
    from gpuwhy.api.run import run_program

    logdir = tmp_path / "my logs"
    run_dir = logdir / "plugins" / "profile" / "2026_12_07_10_35_47"
    run_dir.mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "fixtures" / "xprof" / "jax_train_h100.perfetto_trace.json.gz", run_dir)

    class Prof:
        def __init__(self, other):
            self.notes, self.other_trace = ("the program started JAX's profiler",), other

        def start(self):
            pass

        def stop(self):
            pass

        def export(self, path):  # host calls only: no GPU work reached CUPTI
            recs = [{"k": "driver", "start": 1500, "end": 1900, "name": "cuInit", "corr": 0, "pid": 1, "tid": 1}]
            path.write_text(json.dumps(chrome_trace(recs, start_ns=1000, stop_ns=10000, pid=1)))

    monkeypatch.setattr(profiles, "find_profile", lambda *a, **k: None)
    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    r = run_program(["python", str(script)], tmp_path / "out", profiler_factory=lambda: Prof(logdir))
    assert r.budget is not None and r.budget.top.cause.value == "host_sync"
    assert any(n.startswith("judged JAX's own trace (") and "perfetto_trace.json.gz" in n for n in r.notes)
    # no trace JSON in the folder (JAX wrote only XSpace protobufs): the CUPTI trace, and why
    r = run_program(["python", str(script)], tmp_path / "out2", profiler_factory=lambda: Prof(tmp_path / "none"))
    assert r.budget is None and any(n.startswith("JAX's own trace could not be read (") for n in r.notes)
