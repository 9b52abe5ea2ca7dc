"""`gpuwhy run`: the time-budget arithmetic, the window, and running a script in-process with a fake profiler."""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from gpuwhy.api import run_program as rp
from gpuwhy.api.run import run_program
from gpuwhy.errors import UsageError
from gpuwhy.importers.kineto import trace_timeline
from gpuwhy.importers.timeline.activities import crop
from gpuwhy.importers.timeline.window import choose_window

REAL = Path(__file__).parent / "fixtures" / "real"


def _trace(events):
    return trace_timeline({"traceEvents": events})


def test_window_skip_and_steps_and_crop():
    # The clock starts at T (a timestamp of 0 is no timestamp to the trace reader).
    T = 1000
    ev = [
        {"ph": "X", "name": "ProfilerStep#1", "ts": T + 0, "dur": 100, "cat": "user_annotation"},
        {"ph": "X", "name": "ProfilerStep#2", "ts": T + 100, "dur": 100, "cat": "user_annotation"},
        {"ph": "X", "name": "ProfilerStep#3", "ts": T + 200, "dur": 100, "cat": "user_annotation"},
        {"ph": "X", "name": "k", "ts": T + 150, "dur": 100, "cat": "kernel"},
        {"ph": "M", "name": "process_name", "args": {"name": "x"}},
    ]
    w = choose_window(_trace(ev), steps=2)
    assert (w.start_us, w.end_us) == (T + 100, T + 300) and "2 of 3" in w.how
    w = choose_window(_trace(ev), skip_first_s=175e-6)
    assert w.start_us == T + 175
    tl = _trace(ev)
    c = crop(tl, w.start_us, w.end_us)
    assert (c.gpu_start[0], c.gpu_dur[0]) == (T + 175, 75)  # clipped to the window
    assert [c.range_names[i] for i in c.range_name] == ["ProfilerStep#2", "ProfilerStep#3"]  # step 1 ends before it
    assert (c.range_start[0], c.range_dur[0]) == (T + 175, 25)
    assert tl.gpu_start[0] == T + 150  # the input is not changed
    w = choose_window(_trace(ev), from_first_gpu=True)  # start-up before the first kernel not judged
    assert w.start_us == T + 150 and "not judged" in w.how
    with pytest.raises(UsageError, match="only 3 steps"):
        choose_window(_trace(ev), steps=4)
    with pytest.raises(UsageError, match="skips the whole trace"):
        choose_window(_trace(ev), skip_first_s=1.0)
    with pytest.raises(UsageError, match="no ProfilerStep"):
        choose_window(_trace(ev[3:]), steps=1)


class FakeProfiler:
    """Writes a real H200 trace as 'its' trace; records that it was started and stopped."""

    def __init__(self, source: Path | None):
        self.source, self.started, self.stopped = source, False, False

    def start(self):
        self.started = True

    def stop(self):
        self.stopped = True

    def export(self, path):
        if self.source is not None:
            data = self.source.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            Path(path).write_bytes(data)


SCRIPT = """
import sys, json, pathlib
assert __name__ == "__main__"
pathlib.Path(sys.argv[1]).write_text(json.dumps(sys.argv))
sys.exit(int(sys.argv[2]))
"""


def test_run_python_passes_argv_main_and_exit_code(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    seen = tmp_path / "argv.json"
    fake = FakeProfiler(None)
    r = rp.run_python(["python3", str(script), str(seen), "3"], tmp_path / "t.json", profiler_factory=lambda: fake)
    assert r.exit_code == 3 and fake.started and fake.stopped
    assert json.loads(seen.read_text()) == [str(script), str(seen), "3"]
    r = rp.run_python([str(script), str(seen), "0"], tmp_path / "t.json", profiler_factory=lambda: fake)
    assert r.exit_code == 0 and r.error is None


def test_run_python_exception_gives_1_and_restores_sys(tmp_path, capsys):
    import sys

    script = tmp_path / "boom.py"
    script.write_text("raise ValueError('bad shape')\n")
    argv = sys.argv[:]
    r = rp.run_python(["python", str(script)], tmp_path / "t.json", profiler_factory=lambda: FakeProfiler(None))
    assert r.exit_code == 1 and r.error == "ValueError: bad shape"
    assert "Traceback" in capsys.readouterr().err  # printed as Python would
    assert sys.argv == argv


def test_parse_program_forms():
    assert rp.parse_program(["python", "-m", "pkg.mod", "a"]) == (True, "pkg.mod", ["a"])
    assert rp.parse_program(["train.py", "--lr", "1"]) == (False, "train.py", ["--lr", "1"])
    for bad, says in (([], "no program given"), (["python"], "`python` with no script"),
                      (["python", "-c", "x"], "python option '-c' is not run in-process"),
                      (["./a.out"], "is not a Python program"), (["python", "-m"], "`-m` with no module name")):
        with pytest.raises(UsageError, match=re.escape(says)):
            rp.parse_program(bad)


def test_run_program_budget_on_a_real_trace(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("print('hello')\n")
    src = REAL / "trace_item_sync.json.gz"
    r = run_program(["python", str(script)], tmp_path / "out", profiler_factory=lambda: FakeProfiler(src))
    assert r.budget is not None and r.gpu is not None
    assert sum(s.pct for s in r.budget.shares) == pytest.approx(100.0, abs=1e-6)
    assert r.budget.window_s == pytest.approx(max(r.window.seconds, r.gpu.span_s), rel=1e-9)
    # the same diagnosis `gpuwhy trace` gives the GPU over the window: one engine
    assert r.budget is r.gpu.diagnosis
    assert r.program.trace.name == "gpuwhy-run-trace.json"
    # a second run never overwrites the first trace
    r2 = run_program(["python", str(script)], tmp_path / "out", profiler_factory=lambda: FakeProfiler(src))
    assert r2.program.trace.name == "gpuwhy-run-trace-1.json"


def test_cli_run(tmp_path, cli, monkeypatch):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    seen = tmp_path / "argv.json"
    src = REAL / "trace_item_sync.json.gz"
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(src))
    code, out, err = cli("run", "--out", str(tmp_path / "o"), "--", "python", str(script), str(seen), "5")
    assert code == 4 and "exit code 5" in err and len(err.strip().splitlines()) == 1
    assert not list((tmp_path / "o").glob("*.json"))  # nothing half-written left behind
    code, out, err = cli("run", "--json", "--out", str(tmp_path / "o"), "--", "python", str(script), str(seen), "0")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "run" and doc["exit_code"] == 0
    diag = doc["diagnosis"]
    assert sum(x["share_pct"] for x in diag["shares"]) == pytest.approx(100.0)
    assert sum(x["seconds"] for x in diag["shares"]) == pytest.approx(diag["window_s"])
    assert diag["top_cause"] == "host_work" and diag["remedies"][0]["key"] == "move_host_work"


def test_cli_run_without_torch_exits_3(tmp_path, cli):
    try:
        import torch  # noqa: F401
        pytest.skip("PyTorch is installed here")
    except ImportError:
        pass
    script = tmp_path / "prog.py"
    script.write_text("print(1)\n")
    code, out, err = cli("run", "--out", str(tmp_path / "o"), "--", "python", str(script))
    assert code == 3 and "PyTorch is not importable" in err and len(err.strip().splitlines()) == 1


def test_steps_count_host_ranges_and_reach_the_gpu_work():
    # host ranges at 0, 100, 200 (90 us each); the GPU-track copy of each runs 50 us later and longer
    T = 1000  # (a timestamp of 0 is no timestamp to the trace reader)
    ev = [{"ph": "X", "name": f"ProfilerStep#{i}", "ts": T + 100 * i, "dur": 90, "cat": "user_annotation"} for i in range(3)]
    ev += [{"ph": "X", "name": f"ProfilerStep#{i}", "ts": T + 100 * i + 50, "dur": 120, "cat": "gpu_user_annotation"}
           for i in range(3)]
    w = choose_window(_trace(ev), steps=2)
    assert "2 of 3 steps" in w.how and (w.start_us, w.end_us) == (T + 100, T + 370)


def test_json_run_keeps_stdout_for_the_document(tmp_path, cli, monkeypatch):
    script = tmp_path / "talk.py"
    script.write_text("print('program output')\n")
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(REAL / "trace_item_sync.json.gz"))
    code, out, err = cli("run", "--json", "--out", str(tmp_path / "o"), "--", "python", str(script))
    assert code == 0, err
    assert json.loads(out)["kind"] == "run"  # the program's print went to stderr
    assert "program output" in err


def test_a_program_stopped_by_ctrl_c_is_judged_then_exits_130(tmp_path, cli, monkeypatch):
    script = tmp_path / "stop.py"
    script.write_text("raise KeyboardInterrupt\n")
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(REAL / "trace_item_sync.json.gz"))
    code, out, err = cli("run", "--kernels", "--out", str(tmp_path / "o"), "--", "python", str(script))
    assert code == 130 and "where the window went" in out  # the window until then, judged
    assert err.strip().splitlines()[-1] == ("gpuwhy: error: the program was interrupted (Ctrl-C): what ran until then "
                                            "is judged above")
    assert "--kernels: no ncu pass: the program was interrupted (Ctrl-C)" in err


def test_out_folder_that_cannot_be_made_is_one_line(tmp_path, cli):
    script = tmp_path / "p.py"
    script.write_text("print(1)\n")
    (tmp_path / "f").write_text("x")
    code, out, err = cli("run", "--out", str(tmp_path / "f" / "sub"), "--", "python", str(script))
    assert code == 2 and "cannot be made" in err and len(err.strip().splitlines()) == 1


def test_json_and_debug_before_the_command_stay_gpuwhys_and_the_programs_own_pass_through(tmp_path, cli, monkeypatch):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    seen = tmp_path / "argv.json"
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(REAL / "trace_item_sync.json.gz"))
    code, out, err = cli("--json", "run", "--out", str(tmp_path / "o"), "--", "python", str(script), str(seen), "0",
                         "--json", "--debug")
    assert code == 0, err
    assert json.loads(out)["kind"] == "run"  # gpuwhy's --json, though it stood before the command
    assert json.loads(seen.read_text()) == [str(script), str(seen), "0", "--json", "--debug"]  # the program's own
    code, out, err = cli("run", "--export", "x", "--", "python", str(script))
    # click's wording: "No such option: --export" (typer's own parser, and click before 8.2),
    # "No such option '--export'" (click 8.2 and later, with typer 0.16-0.24)
    assert code == 2 and re.search(r"No such option:? '?--export", err), err




def test_a_failed_run_leaves_no_folder_it_made_and_keeps_the_users(tmp_path, monkeypatch):
    from gpuwhy.api.run import profile_program
    from gpuwhy.errors import NoDeviceError
    from gpuwhy.importers.ncu import rep

    monkeypatch.setattr(rep, "find_ncu", lambda path=None: None)  # no ncu, whatever this machine has
    new = tmp_path / "made-here"
    with pytest.raises(NoDeviceError, match=r"'python3 -c' is not run in-process .* `ncu` .* is not on PATH"):
        profile_program(["python3", "-c", "print(1)"], new)
    assert not new.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    with pytest.raises(NoDeviceError):
        profile_program(["python3", "-c", "print(1)"], mine)
    assert mine.is_dir()  # a folder the user had stays, empty or not
