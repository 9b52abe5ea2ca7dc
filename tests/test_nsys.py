"""`gpuwhy trace` on Nsight Systems exports (issue 29): real exports made by others
(tests/fixtures/nsys/SOURCE.md), their busy time against an interval union computed here straight from
SQL, GPUs named from the report's GPU table, the verdict and its causes, two GPUs run by two processes
(one budget each, each GPU's work linked to its own process's calls); changed copies of a real export
for what no licensed export holds (pageable copies, a synchronous memset, two GPUs named in a GPU
table); bad inputs."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3

import pytest

from conftest import ROOT, one_line, run_cli

from gpuwhy.errors import NoDeviceError, UsageError
from gpuwhy.importers.nsys import load_nsys, read_nsys_timeline
from gpuwhy.importers.nsys.read import api_name, copy_of
from gpuwhy.importers.timeline.activities import DTOH, HTOD, PAGEABLE, PINNED

NSYS = ROOT / "tests" / "fixtures" / "nsys"
#: fixture -> (verdict, top share's cause, GPU name) as gpuwhy judges them.
REAL = {
    "extrap_concurrent_s16": ("gpu-bound", "kernels", "GeForce GTX 1060 with Max-Q Design"),
    "extrap_con_kernel": ("gpu-bound", "kernels", "GeForce GTX 1060 with Max-Q Design"),
    "extrap_ex_gpu_s10": ("overhead-bound", "launch_overhead", "A100-PCIE-40GB"),
    "nvfuser_report1": ("host-bound", "host_work", "NVIDIA H200"),
}
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
#: Real exports with work on two GPUs, one process each (time windows of real captures, SOURCE.md): fixture ->
#: {device: (verdict, top share's cause)} as gpuwhy judges them. Their exports carry no GPU table.
MULTI = {
    "nsysai_h100_2gpu_1s": {"0": ("copy-bound", "copy"), "1": ("copy-bound", "copy")},
    "nsysai_mfu_2gpu_before": {"0": ("gpu-bound", "kernels"), "1": ("gpu-bound", "kernels")},
}
#: The process of a serialised global id (globalPid, globalTid), in SQL.
PID = "((({col}) >> 24) & 16777215)"


def _unpacked(name: str, tmp_path):
    """The fixture ``name`` unpacked into ``tmp_path`` (a copy a test may change)."""
    out = tmp_path / f"{name}.sqlite"
    out.write_bytes(gzip.decompress((NSYS / f"{name}.sqlite.gz").read_bytes()))
    return out


def _sql_union(db, device: int) -> tuple[float, float]:
    """(busy seconds, span seconds) of one device: the union of every kernel, copy and memset interval,
    merged here from the rows SQL gives (no gpuwhy code)."""
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    rows = []
    for t in GPU_TABLES:
        if t in tables:
            rows += con.execute(f"SELECT start, end FROM {t} WHERE deviceId = ?", (device,)).fetchall()
    con.close()
    rows.sort()
    busy, cur_s, cur_e = 0, None, None
    for s, e in rows:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    return busy * 1e-9, (max(e for _, e in rows) - rows[0][0]) * 1e-9


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_export_busy_is_the_sql_interval_union_and_the_gpu_is_named(name, tmp_path):
    db = _unpacked(name, tmp_path)
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    con = sqlite3.connect(db)
    cols = {r[1] for r in con.execute("PRAGMA table_info(TARGET_INFO_GPU)")}
    key = "id" if "id" in cols else "deviceId"
    named = dict(con.execute(f"SELECT {key}, name FROM TARGET_INFO_GPU").fetchall())
    con.close()
    assert len(report.devices) == 1
    d = report.devices[0]
    busy, span = _sql_union(db, int(d.device))
    assert d.busy_s == pytest.approx(busy, rel=1e-9, abs=1e-9)
    assert d.span_s == pytest.approx(span, rel=1e-9, abs=1e-9)
    assert d.name == named[int(d.device)] == REAL[name][2]


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_export_verdict_and_budget(name):
    verdict, top, _ = REAL[name]
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    d = report.devices[0]
    assert (report.verdict, d.diagnosis.top.cause.value) == (verdict, top)
    # every second of the GPU's span is in exactly one share
    assert sum(s.seconds for s in d.diagnosis.shares) == pytest.approx(d.span_s, rel=1e-6)


def test_versions_and_missing_tables_are_said():
    notes = load_nsys(NSYS / "extrap_ex_gpu_s10.sqlite.gz").notes
    assert "read an Nsight Systems export (its version is not recorded: an export before 2022)" in notes
    assert any(n.startswith("no memcpy table") for n in notes)
    assert any(n.startswith("no NVTX trace") for n in notes)
    assert not any(n.startswith("no OS runtime trace") for n in notes)  # it has OSRT_API
    notes = load_nsys(NSYS / "nvfuser_report1.sqlite.gz").notes
    assert "read an Nsight Systems 2024.6.2.25 export" in notes
    assert any(n.startswith("no OS runtime trace: host time outside CUDA calls cannot be told apart") for n in notes)


def test_host_syncs_and_copies_from_a_real_export():
    report = load_nsys(NSYS / "extrap_concurrent_s16.sqlite.gz")
    d = report.devices[0]
    # 10 cudaStreamSynchronize + 5 cudaEventSynchronize (runtime, named without _v3020) + 1 cuCtxSynchronize
    assert report.host_sync_calls == 16
    keys = {s.cause.value: s.seconds for s in d.diagnosis.shares}
    assert keys["host_sync"] > 0 and keys["copy"] > 0 and keys["memset"] > 0
    copies = {(c.direction, c.memory): c.count for c in d.figures.copies}
    assert copies == {("HtoD", "pinned"): 15, ("DtoH", "pinned"): 15}
    assert (d.kernels, d.memcpys, d.memsets, d.streams) == (12, 30, 17, 15)


def test_nvtx_ranges_become_steps_with_steps_from():
    t = read_nsys_timeline(NSYS / "extrap_concurrent_s16.sqlite.gz")
    assert "main->process->phase1" in t.range_names
    report = load_nsys(NSYS / "extrap_concurrent_s16.sqlite.gz", steps_from="main->process")
    steps = report.devices[0].idle.steps
    assert [s.name for s in steps] == ["main->process#0"]
    assert steps[0].wall_s > 0
    with pytest.raises(UsageError, match="--steps-from 'nope': no range of that name"):
        load_nsys(NSYS / "extrap_concurrent_s16.sqlite.gz", steps_from="nope")


def test_api_names_lose_the_version_suffix_only():
    assert api_name("cudaLaunchKernel_v7000") == "cudaLaunchKernel"
    assert api_name("cudaGetDeviceProperties_v2_v12000") == "cudaGetDeviceProperties_v2"
    assert api_name("cuMemcpyDtoH_v2") == "cuMemcpyDtoH_v2"
    assert copy_of(1, 0, 2) == (HTOD, PAGEABLE)
    assert copy_of(2, 2, 1) == (DTOH, PINNED)


# ------------------------------------------------------------------ real exports with work on two GPUs


def _sql_counts(db, device: int) -> tuple[int, int, int]:
    """(kernels, copies, memsets) of one device, counted by SQL."""
    con = sqlite3.connect(db)
    out = tuple(con.execute(f"SELECT COUNT(*) FROM {t} WHERE deviceId = ?", (device,)).fetchone()[0] for t in GPU_TABLES)
    con.close()
    return out


@pytest.mark.parametrize("name", sorted(MULTI))
def test_two_gpu_export_gives_each_gpu_its_budget_and_busy_is_the_sql_union(name, tmp_path):
    db = _unpacked(name, tmp_path)
    con = sqlite3.connect(db)
    in_sql = sorted({r[0] for t in GPU_TABLES for r in con.execute(f"SELECT DISTINCT deviceId FROM {t}")})
    con.close()
    assert in_sql == [0, 1]
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    assert [d.device for d in report.devices] == ["0", "1"]
    for d in report.devices:
        busy, span = _sql_union(db, int(d.device))
        assert d.busy_s == pytest.approx(busy, rel=1e-9, abs=1e-9)
        assert d.span_s == pytest.approx(span, rel=1e-9, abs=1e-9)
        # every activity of the GPU is read and kept (none lost to another process's launch call)
        assert (d.kernels, d.memcpys, d.memsets) == _sql_counts(db, int(d.device))
        assert sum(s.seconds for s in d.diagnosis.shares) == pytest.approx(d.span_s, rel=1e-6)
    assert not report.dropped


@pytest.mark.parametrize("name", sorted(MULTI))
def test_two_gpu_export_verdict_causes_and_the_slowest_named(name, tmp_path):
    db = _unpacked(name, tmp_path)
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    got = {d.device: (d.verdict, d.diagnosis.top.cause.value) for d in report.devices}
    assert got == MULTI[name]
    slowest = max((0, 1), key=lambda dev: _sql_union(db, dev)[0])
    busy, span = _sql_union(db, slowest)
    from gpuwhy.units import fmt_time

    assert report.notes[-1] == (f"2 GPUs, one budget each; the slowest is GPU {slowest}: busy {fmt_time(busy)} of its "
                                f"{fmt_time(span)} span")


@pytest.mark.parametrize("name", sorted(MULTI))
def test_two_gpu_export_without_a_gpu_table_says_so(name, tmp_path):
    db = _unpacked(name, tmp_path)
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    assert not tables & {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU"}  # the capture recorded none
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    assert [d.name for d in report.devices] == [None, None]
    assert "the GPU table names no GPU 0, 1" in report.notes


@pytest.mark.parametrize("name", sorted(MULTI))
def test_each_gpus_work_links_to_the_launch_calls_of_its_own_process(name, tmp_path):
    # CUPTI counts correlation ids per process: the two ranks reuse the same ids, so a kernel's launch call is
    # the call with its id in its own process. The count is SQL's join on (process, correlationId).
    db = _unpacked(name, tmp_path)
    con = sqlite3.connect(db)
    k_pid, r_pid = PID.format(col="k.globalPid"), PID.format(col="r.globalTid")
    ids = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL a JOIN CUPTI_ACTIVITY_KIND_RUNTIME b "
                      "ON a.correlationId = b.correlationId AND a.deviceId = 1 AND "
                      f"{PID.format(col='a.globalPid')} != {PID.format(col='b.globalTid')}").fetchone()[0]
    assert ids > 0  # the ids do collide across the processes
    linked = {dev: con.execute(
        f"SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        f"ON r.correlationId = k.correlationId AND {r_pid} = {k_pid} WHERE k.deviceId = ?", (dev,)).fetchone()[0]
        for dev in (0, 1)}
    con.close()
    report = load_nsys(NSYS / f"{name}.sqlite.gz")
    assert {int(d.device): d.linked_kernels for d in report.devices} == linked
    assert not any("start before their own launch call" in n for n in report.notes)


def test_launches_queued_when_a_capture_ends_are_no_lost_kernels():
    # nsysai_h100_2gpu_1s ends with each rank ~0.4 s ahead of its GPU (behind a queue of host-to-device copies):
    # the launch calls after each process's last recorded kernel have theirs after the capture, not lost.
    report = load_nsys(NSYS / "nsysai_h100_2gpu_1s.sqlite.gz")
    assert min(d.launch_latency_median_s for d in report.devices) > 0.4
    assert not any("have no kernel in the trace" in n for n in report.notes)


def test_correlation_keys_are_per_process_when_every_table_names_it():
    from gpuwhy.importers.nsys.read import corr_key

    rank0, rank1 = 111 << 24, 112 << 24  # globalPid / globalTid of pids 111 and 112 (hardware id 0)
    assert corr_key(7, rank0, True) != corr_key(7, rank1, True)
    assert corr_key(7, rank0 | 5, True) == corr_key(7, rank0, True)  # a thread of the process: same key
    assert corr_key(7, rank0, True) < corr_key(8, rank0, True)  # launch order kept within a process
    assert corr_key(7, rank0, False) == 7 and corr_key(None, rank0, True) is None and corr_key(7, None, True) == 7


# ------------------------------------------------------------------ changed copies of a real export


def _change(db, *sql: str) -> None:
    con = sqlite3.connect(db)
    for q in sql:
        con.execute(q)
    con.commit()
    con.close()


def test_pageable_copies_are_their_own_cause_with_figures(tmp_path):
    db = _unpacked("extrap_concurrent_s16", tmp_path)
    _change(db, "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 0 WHERE copyKind = 1",
            "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET dstKind = 0 WHERE copyKind = 2")
    d = load_nsys(db).devices[0]
    copies = {(c.direction, c.memory): c.count for c in d.figures.copies}
    assert copies == {("HtoD", "pageable"): 15, ("DtoH", "pageable"): 15}
    causes = {c.key: c for c in d.idle.causes}
    assert "pageable_copy" in causes and causes["pageable_copy"].evidence
    before = load_nsys(NSYS / "extrap_concurrent_s16.sqlite.gz").devices[0]
    assert "pageable_copy" not in {c.key for c in before.idle.causes}


def test_synchronous_memsets_are_said(tmp_path):
    db = _unpacked("extrap_concurrent_s16", tmp_path)
    _change(db, "UPDATE StringIds SET value = 'cudaMemset_v3020' WHERE value = 'cudaMemsetAsync_v3020'")
    notes = load_nsys(db).notes
    assert any(n.startswith("17 synchronous memset calls (cudaMemset;") for n in notes), notes
    assert not any("synchronous memset" in n for n in load_nsys(NSYS / "extrap_concurrent_s16.sqlite.gz").notes)


def test_two_gpus_named_from_the_gpu_table_and_the_slowest_named(tmp_path):
    # The real two-GPU exports (above) have no GPU table: the kernels of a real export that has one are copied
    # onto device 1, stretched to twice their length, and a second GPU row is added.
    db = _unpacked("nvfuser_report1", tmp_path)
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    sel = ", ".join("1" if c == "deviceId" else "start + 2 * (end - start)" if c == "end" else c for c in cols)
    con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(cols)}) SELECT {sel} FROM CUPTI_ACTIVITY_KIND_KERNEL")
    gcols = [r[1] for r in con.execute("PRAGMA table_info(TARGET_INFO_GPU)")]
    gsel = ", ".join("1" if c == "id" else "'Test GPU 1'" if c == "name" else c for c in gcols)
    con.execute(f"INSERT INTO TARGET_INFO_GPU ({', '.join(gcols)}) SELECT {gsel} FROM TARGET_INFO_GPU WHERE id = 0")
    con.commit()
    con.close()
    report = load_nsys(db)
    assert [(d.device, d.name) for d in report.devices] == [("0", "NVIDIA H200"), ("1", "Test GPU 1")]
    for d in report.devices:
        busy, _ = _sql_union(db, int(d.device))
        assert d.busy_s == pytest.approx(busy, rel=1e-9)
        assert d.diagnosis is not None
    assert report.notes[-1].startswith("2 GPUs, one budget each; the slowest is GPU 1 (Test GPU 1): busy")


# ------------------------------------------------------------------ the command and bad inputs


def test_cli_json_names_the_gpu_and_text_fits_80_columns():
    r = run_cli("trace", str(NSYS / "nvfuser_report1.sqlite.gz"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["devices"][0]["name"] == "NVIDIA H200" and doc["verdict"] == "host-bound"
    r = run_cli("trace", str(NSYS / "extrap_concurrent_s16.sqlite.gz"), env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert "GPU 0 (GeForce GTX 1060 with Max-Q Design)" in r.stdout
    assert max(len(ln) for ln in r.stdout.splitlines()) <= 80


def _bad(tmp_path) -> dict:
    other = tmp_path / "app.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    con.commit()
    con.close()
    full = _unpacked("nvfuser_report1", tmp_path)
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 4])
    empty_tables = tmp_path / "idle.sqlite"
    shutil.copy(full, empty_tables)
    _change(empty_tables, *(f"DELETE FROM {t}" for t in GPU_TABLES))
    zero = tmp_path / "zero.sqlite"
    zero.write_bytes(b"")
    return {
        "another tool's sqlite": (other, "an SQLite database but not an Nsight Systems export (no StringIds"),
        "a truncated file": (cut, "not a readable SQLite database (database disk image is malformed)"),
        "no CUDA table": (NSYS / "jacc_report1_no_cuda.sqlite.gz", "the report holds no CUDA GPU trace"),
        "an empty report": (empty_tables, "the report holds no kernel, memcpy or memset"),
        "an empty file": (zero, "is empty; pass an Nsight Systems report"),
    }


@pytest.mark.parametrize("case", ["another tool's sqlite", "a truncated file", "no CUDA table", "an empty report",
                                  "an empty file"])
def test_bad_inputs_one_line_exit_2(case, tmp_path):
    path, said = _bad(tmp_path)[case]
    r = run_cli("trace", str(path))
    assert said in one_line(r.returncode, r.stderr)


def test_nsys_rep_without_nsys_says_how_to_export(tmp_path, monkeypatch):
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00not sqlite\x00" * 100)
    r = run_cli("trace", str(rep), env={"PATH": str(tmp_path)})
    line = one_line(r.returncode, r.stderr, want=NoDeviceError.exit_code)
    assert "`nsys` is not on PATH" in line and "nsys export --type sqlite --output REPORT.sqlite" in line


def test_nsys_rep_is_exported_to_a_temporary_file_never_beside_it(tmp_path):
    # A stand-in `nsys` on PATH: it copies a real export where --output says, and records its arguments.
    src = _unpacked("extrap_con_kernel", tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.txt"
    fake = bindir / "nsys"
    fake.write_text(f'#!/bin/sh\necho "$@" > {log}\nwhile [ "$1" != "--output" ]; do shift; done\ncp {src} "$2"\n')
    fake.chmod(0o755)
    rep = tmp_path / "work" / "run.nsys-rep"
    rep.parent.mkdir()
    rep.write_bytes(b"\x00binary report\x00" * 100)
    import os

    r = run_cli("trace", str(rep), "--json", env={"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["devices"][0]["kernels"] == 9
    argv = log.read_text().split()
    assert argv[:4] == ["export", "--type", "sqlite", "--output"] and argv[-1] == str(rep)
    assert not argv[4].startswith(str(rep.parent))  # exported elsewhere: nothing written beside the report
    assert sorted(p.name for p in rep.parent.iterdir()) == ["run.nsys-rep"]


def test_steps_from_works_on_any_timeline_and_replaces_profiler_steps():
    from gpuwhy.importers.timeline.activities import from_activities
    from gpuwhy.importers.timeline.analyze import analyze
    from gpuwhy.importers.timeline.steps import steps_from

    gpu = [{"device": 0, "start": 100.0 * i + 10, "dur": 50.0, "kind": "kernel", "name": "k", "corr": i}
           for i in range(40)]
    api = [{"start": 100.0 * i, "dur": 5.0, "name": "cudaLaunchKernel", "corr": i} for i in range(40)]
    ranges = ([{"start": 1000.0 * s, "dur": 990.0, "name": "train", "kind": "annotation"} for s in range(4)]
              + [{"start": 0.0, "dur": 3990.0, "name": "ProfilerStep#7", "kind": "annotation"}])
    t = from_activities(gpu, api, ranges)
    assert [s.name for s in analyze(t).devices[0].idle.steps] == ["ProfilerStep#7"]
    steps = analyze(steps_from(t, "train")).devices[0].idle.steps
    assert [s.name for s in steps] == ["train#0", "train#1", "train#2", "train#3"]
    assert all(s.wall_s == pytest.approx(990e-6) for s in steps)
