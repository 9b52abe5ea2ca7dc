"""`gpuwhy bench --allreduce` without a GPU or PyTorch: the busbw arithmetic, the size sweep, the
slowest-rank statistics, the ranks' environments (fake and real processes), the run end to end on
a fake 8-GPU node, the profile round trip, and `gpuwhy llm --num-gpus` picking the measured figure."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from fake_ranks import FakeRanks
from gpuwhy.errors import UsageError
from gpuwhy.model.multi_gpu import allreduce as ar

GiB = 2**30


# --------------------------------------------------------------------------- the arithmetic


def test_busbw_factor_is_nccl_tests_2_n_minus_1_over_n():
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n; for 8 ranks 2 x 7 / 8 = 1.75
    assert ar.busbw_factor(8) == 1.75
    assert ar.busbw_factor(2) == 1.0      # 2 x 1 / 2
    assert ar.busbw_factor(4) == 1.5      # 2 x 3 / 4
    assert ar.busbw_factor(1) == 0.0      # one rank: nothing crosses a link
    with pytest.raises(ValueError, match="at least 1 rank, got 0"):
        ar.busbw_factor(0)


def test_algbw_and_busbw_of_one_gib_in_3_ms():
    # 2**30 B / 3e-3 s = 357.913941 GB/s; x 1.75 on 8 GPUs = 626.349397 GB/s
    assert ar.algbw_gbs(GiB, 3e-3) == pytest.approx(1073741824 / 3e-3 / 1e9)
    assert ar.algbw_gbs(GiB, 3e-3) == pytest.approx(357.913941, rel=1e-9)
    assert ar.busbw_gbs(GiB, 3e-3, 8) == pytest.approx(626.349397, rel=1e-9)
    assert ar.busbw_gbs(GiB, 3e-3, 2) == pytest.approx(357.913941, rel=1e-9)
    with pytest.raises(ValueError, match="above zero, got 0"):
        ar.algbw_gbs(8, 0.0)


def test_the_size_sweep_doubles_from_8_bytes_to_the_largest():
    sizes = ar.sweep_sizes()
    assert sizes[0] == 8 and sizes[-1] == GiB and len(sizes) == 28  # 2**3 .. 2**30
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    assert ar.sweep_sizes(8) == [8] and ar.sweep_sizes(64) == [8, 16, 32, 64]
    assert ar.sweep_sizes(63) == [8, 16, 32]  # never past the largest
    with pytest.raises(ValueError, match="below the smallest"):
        ar.sweep_sizes(7)


@pytest.mark.parametrize("value,ok", [(8, True), (16, True), (GiB, True), (16 * GiB, True), (4, False), (1.5 * GiB, False),
                                      (24, False), (12, False), (32 * GiB, False)])
def test_max_size_is_a_power_of_two_from_8_bytes_to_16_gib(value, ok):
    if ok:
        assert ar.check_max_size(value) == value
    else:
        with pytest.raises(UsageError, match="power of two from 8 B|above 16 GiB"):
            ar.check_max_size(value)


def test_dtype():
    assert ar.check_dtype(None) == "bf16" and ar.check_dtype("FP32") == "fp32"
    assert ar.DTYPE_BYTES == {"bf16": 2, "fp32": 4}  # 16 and 32 bits
    with pytest.raises(UsageError, match=r"--dtype 'fp64' is not one of: bf16, fp32 \(for --allreduce\)"):
        ar.check_dtype("fp64")


def test_the_correctness_pattern_sums():
    assert [ar.rank_value(r) for r in range(6)] == [1, 2, 3, 4, 1, 2]
    assert ar.expected_sum(1) == 1 and ar.expected_sum(2) == 3 and ar.expected_sum(8) == 20  # (1+2+3+4) x 2
    # exact in bf16 up to EXACT_RANKS_BF16 ranks: every partial sum is a whole number <= 256
    assert ar.EXACT_RANKS_BF16 == 103 and ar.expected_sum(103) == 25 * 10 + 1 + 2 + 3 == 256 < ar.expected_sum(104)
    # the per-element factors are distinct powers of two (scaling by one keeps a sum exact)
    assert ar.PATTERN == (1, 2, 4)


def test_each_iteration_counts_at_its_slowest_rank():
    ms = 1e-3
    t = ar.slowest_rank([[1 * ms, 2 * ms, 3 * ms], [2 * ms, 1 * ms, 1 * ms]], 1024, 512)
    # per iteration: max(1,2)=2, max(2,1)=2, max(3,1)=3 ms -> median 2 ms
    assert t.time_s == pytest.approx(2 * ms) and t.min_s == pytest.approx(2 * ms) and t.max_s == pytest.approx(3 * ms)
    # rank medians 2 ms and 1 ms: spread 2/1 - 1 = 100%
    assert t.rank_median_min_s == pytest.approx(ms) and t.rank_median_max_s == pytest.approx(2 * ms)
    assert t.rank_spread == pytest.approx(1.0)
    # cv of (2, 2, 3) ms: mean 7/3, population stdev sqrt(2/9) -> 0.20203
    assert t.cv == pytest.approx((2 / 9) ** 0.5 / (7 / 3))
    assert t.algbw_gbs == pytest.approx(1024 / 2e-3 / 1e9) and t.busbw_gbs == pytest.approx(t.algbw_gbs * 1.0)
    assert t.iters == 3 and t.elements == 512
    with pytest.raises(ValueError, match="same number of iterations"):
        ar.slowest_rank([[ms, ms], [ms]], 8, 4)
    with pytest.raises(ValueError, match="not a positive number"):
        ar.slowest_rank([[ms, 0.0]], 8, 4)
    with pytest.raises(ValueError, match="no ranks"):
        ar.slowest_rank([], 8, 4)
    with pytest.raises(ValueError, match="same number of iterations"):
        ar.slowest_rank([[], []], 8, 4)
    one = ar.slowest_rank([[ms], [2 * ms]], 8, 4)
    assert one.cv == 0.0 and one.time_s == 2 * ms and one.iters == 1


def test_the_nvlink_limit():
    # H100 SXM: 18 NVLink 4 links x 25 GB/s each way = 450 GB/s
    assert ar.allreduce_limit_gbs(25.0, 18) == 450.0
    assert ar.allreduce_limit_gbs(0.5, 1) == 0.5
    for rate, links in ((25.0, 0), (0.0, 18), (-25.0, 18)):
        with pytest.raises(ValueError, match="at least one link"):
            ar.allreduce_limit_gbs(rate, links)
    assert ar.Limit(450.0, "x").fraction(360.0) == pytest.approx(0.8)
    assert ar.Limit(None, "x").fraction(360.0) is None
    from gpuwhy.device.sheet import sheet_for

    h200 = sheet_for("H200").sheet
    assert ar.sheet_limit(h200) is ar.UNKNOWN_LIMIT  # the bundled sheets carry no NVLink figure
    with_link = type("S", (), {"name": "X", "nvlink_gbs": 450.0})()
    assert ar.sheet_limit(with_link).gbs == 450.0 and "X sheet" in ar.sheet_limit(with_link).source


def test_the_nearest_measured_gpu_count():
    assert ar.nearest_count([2, 8], 8) == 8
    assert ar.nearest_count([2, 8], 4) == 2      # |4-2| = 2 < |8-4| = 4
    assert ar.nearest_count([2, 8], 5) == 8      # a tie (3, 3) goes to the larger count
    assert ar.nearest_count([2, 4], 3) == 4
    with pytest.raises(ValueError, match="no measured GPU counts"):
        ar.nearest_count([], 2)
    entries = {"2": {"latency_s": 2e-5, "date": "D2"}, "8": {"latency_s": 3e-5, "date": "D8", "latency_bytes": 8}}
    assert ar.measured_latency(entries, 8, "P") == (3e-5, "measured: the 8 B all-reduce over 8 GPUs (bench --allreduce, D8, P)")
    t, src = ar.measured_latency(entries, 3, "P")
    assert t == 2e-5 and src.endswith("; 3 GPUs not measured, 2 is the nearest count measured")
    assert ar.measured_latency({}, 2, "P") is None
    # keys that are no GPU count, and entries without a time, are passed over
    assert ar.measured_latency({"x": {"latency_s": 1.0}, "4": {"latency_s": None}, **entries}, 4, "P")[0] == 2e-5
    assert ar.measured_latency({"x": {"latency_s": 1.0}}, 2, "P") is None


# --------------------------------------------------------------------------- the ranks' processes


def test_rank_env_sets_the_rendezvous_and_turns_nvls_off():
    from gpuwhy.engine.ranks import NVLS_OFF, rank_env

    base = {"NCCL_NVLS_ENABLE": "1", "PATH": "/bin", "OMP_NUM_THREADS": "4"}
    env = rank_env(base, 2, 4, 29500)
    assert {k: env[k] for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")} == {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "2",
        "LOCAL_WORLD_SIZE": "4"}
    assert NVLS_OFF == {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    assert all(env[k] == v for k, v in NVLS_OFF.items())  # the caller's NCCL_NVLS_ENABLE=1 is overridden
    assert env["OMP_NUM_THREADS"] == "4" and rank_env({}, 0, 1, 1)["OMP_NUM_THREADS"] == "1"
    assert env["PYTHONPATH"].split(":")[0] == str(Path(__import__("gpuwhy").__file__).resolve().parents[1])
    assert base["NCCL_NVLS_ENABLE"] == "1"  # the caller's mapping is not changed
    with pytest.raises(ValueError, match="rank 4 is outside 0..3"):
        rank_env(base, 4, 4, 1)


_DUMP = "import json, os, sys; json.dump(dict(os.environ), open(os.path.join(sys.argv[1], 'env-' + os.environ['RANK'] + '.json'), 'w'))"


def test_real_child_processes_get_the_environment(tmp_path, monkeypatch):
    from gpuwhy.engine.ranks import run_ranks

    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    run = run_ranks([sys.executable, "-c", _DUMP, str(tmp_path)], 3, tmp_path, timeout_s=60)
    assert run.ok and [e.code for e in run.exits] == [0, 0, 0]
    envs = [json.loads((tmp_path / f"env-{r}.json").read_text()) for r in range(3)]
    assert [e["RANK"] for e in envs] == ["0", "1", "2"] and {e["WORLD_SIZE"] for e in envs} == {"3"}
    assert len({e["MASTER_PORT"] for e in envs}) == 1
    for e in envs:
        assert (e["NCCL_NVLS_ENABLE"], e["TORCH_SYMM_MEM_DISABLE_MULTICAST"], e["NVSHMEM_DISABLE_NVLS"]) == ("0", "1", "1")


def test_a_failing_rank_stops_the_others_and_a_hung_run_is_stopped(tmp_path):
    from gpuwhy.engine.ranks import run_ranks

    script = "import os, sys, time; r = int(os.environ['RANK']); print('boom on', r) if r == 1 else None; sys.exit(5) if r == 1 else time.sleep(60)"
    run = run_ranks([sys.executable, "-c", script], 3, tmp_path, timeout_s=60, interval_s=0.02)
    assert not run.ok and not run.timed_out
    bad = run.first_failure()
    assert bad.rank == 1 and bad.code == 5 and bad.last_line() == "boom on 1"
    assert run.exits[0].code is None and run.exits[2].code is None  # stopped by gpuwhy, not left running
    run = run_ranks([sys.executable, "-c", "import time; time.sleep(60)"], 2, tmp_path, timeout_s=0.3)
    assert run.timed_out and not run.ok and run.first_failure() is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="PyTorch is installed here")
def test_the_real_worker_without_pytorch_says_so(tmp_path):
    from gpuwhy.engine.ranks import python_module, run_ranks

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"devices": [0], "dtype": "bf16", "sizes_bytes": [8], "warmup": 1, "iters": 2,
                               "timeout_s": 10, "out_dir": str(tmp_path)}))
    run = run_ranks(python_module("gpuwhy.engine.allreduce_worker", str(cfg)), 1, tmp_path, timeout_s=60)
    assert run.exits[0].code == 3
    err = json.loads((tmp_path / "error-0.json").read_text())
    assert err["kind"] == "no_torch" and err["message"].startswith("PyTorch cannot be imported")


def test_the_real_worker_through_the_real_starter_on_a_stand_in_torch(cli, monkeypatch, tmp_path):
    """The worker module itself (fill, check, agree, time_gpu with PyTorch-style events, gather,
    result file), started as a real process, over tests/fake_torch (numpy, one rank)."""
    import tempfile

    from conftest import one_line
    from fakes import Machine, h200_node
    from gpuwhy.bench import allreduce

    h200_node(Machine(monkeypatch, tmp_path), 1)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(allreduce, "torch_missing", lambda: None)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent / "fake_torch"))
    code, out, err = cli("bench", "--allreduce", "--max-size", "64", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["smoke_test"] and doc["engine"]["torch_version"] == "0.0.0+fake" and doc["engine"]["nccl_version"] == "2.99.0"
    assert [r["size_bytes"] for r in doc["rows"]] == [8, 16, 32, 64] and [r["elements"] for r in doc["rows"]] == [4, 8, 16, 32]
    assert all(r["iters"] == allreduce.ITERS and r["time_s"] > 0 for r in doc["rows"])
    assert not list(tmp_path.glob("gpuwhy-allreduce-*"))  # removed after a good run
    # a wrong sum: element 5 holds c_5 = 4 (pattern 1, 2, 4 repeating) x v_0 = 1 x 1 rank; the stand-in adds 1
    monkeypatch.setenv("FAKE_TORCH_WRONG", "1")
    code, out, err = cli("bench", "--allreduce", "--max-size", "64")
    assert "all-reduce gave a wrong sum on rank 0 at 16 B: element 5 is 5.0, expected 4.0 (logs in" in one_line(code, err, 4)


# --------------------------------------------------------------------------- the run, on a fake node


@pytest.fixture
def node(monkeypatch, tmp_path):
    """``node(n, ranks=FakeRanks(), torch=True)``: n fake H200s, the fake rank starter, a private profile cache."""
    import tempfile

    from fakes import Machine, h200_node
    from gpuwhy.bench import allreduce
    from gpuwhy.engine import ranks as ranks_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a failed run's kept folder
    machine = Machine(monkeypatch, tmp_path)

    def make(n: int, ranks: FakeRanks | None = None, torch: bool = True) -> FakeRanks:
        h200_node(machine, n)
        fake = ranks or FakeRanks()
        monkeypatch.setattr(ranks_mod, "popen", fake)
        monkeypatch.setattr(allreduce, "torch_missing", lambda: None if torch else "PyTorch is not importable here; install it: x")
        return fake

    return make


def test_eight_gpus_end_to_end(cli, node, tmp_path):
    from gpuwhy.profiles import list_profiles

    fake = node(8)
    code, out, err = cli("bench", "--allreduce", "--max-size", "1MiB", "--json")
    assert code == 0, err
    doc = json.loads(out)  # its schema: tests/test_schema.py
    # one process per GPU, world size 8, NVLS off, each rank's CUDA device in the config
    assert len(fake.envs) == 8 and [e["RANK"] for e in fake.envs] == [str(r) for r in range(8)]
    assert {e["WORLD_SIZE"] for e in fake.envs} == {"8"}
    assert all(e["NCCL_NVLS_ENABLE"] == "0" and e["NVSHMEM_DISABLE_NVLS"] == "1" for e in fake.envs)
    assert fake.argvs[0][1:3] == ["-m", "gpuwhy.engine.allreduce_worker"]
    assert doc["gpus"] == 8 and [d["cuda_ordinal"] for d in doc["devices"]] == list(range(8))
    assert doc["busbw_factor"] == 1.75 and doc["dtype"] == "bf16" and doc["element_bytes"] == 2
    rows = doc["rows"]
    assert [r["size_bytes"] for r in rows] == ar.sweep_sizes(2**20)
    # the slowest rank (7, +14%) at its median iteration (x1.01): 1 MiB takes
    # (20 us + 2**20 x 1.75 / 400e9) x 1.14 x 1.01 = (20 us + 4.5875 us) x 1.1514
    t = (20e-6 + 2**20 * 1.75 / 400e9) * 1.14 * 1.01
    assert rows[-1]["time_s"] == pytest.approx(t) and doc["largest_busbw_gbs"] == pytest.approx(2**20 / t / 1e9 * 1.75)
    assert doc["latency_bytes"] == 8 and doc["latency_s"] == pytest.approx((20e-6 + 8 * 1.75 / 400e9) * 1.14 * 1.01)
    assert rows[-1]["rank_spread"] == pytest.approx(0.14)  # rank 7's median / rank 0's - 1
    assert doc["limit_gbs"] is None and doc["limit_source"].startswith("limit unknown")
    # saved in every GPU's profile
    assert len(doc["saved"]) == 8
    for i in range(8):
        (p,) = list_profiles(f"GPU-0a1b2c3d-0000-4000-8000-{0x200 + i:012x}")
        e = p.allreduce_by_gpus["8"]
        assert e["latency_s"] == pytest.approx(doc["latency_s"]) and e["busbw_gbs"] == pytest.approx(doc["largest_busbw_gbs"])
        assert e["largest_bytes"] == 2**20 and e["dtype"] == "bf16" and p.sheet == "H200 SXM"


def test_the_text_view_fits_80_columns(cli, node):
    node(2)
    code, out, err = cli("bench", "--allreduce", "-i", "0,1", "--max-size", "64KiB", "--dtype", "fp32")
    assert code == 0, err
    assert max(len(x) for x in out.splitlines()[:-1]) <= 80, out  # the summary line, last, is one line to grep
    assert "2 x NVIDIA H200 (-i 0,1)" in out and "algbw x 1 for n = 2 (nccl-tests" in out
    assert out.strip().splitlines()[-1].startswith("gpuwhy bench --allreduce: 2 GPUs, fp32: busbw ")
    assert "largest (64 KiB): busbw" in out and "limit unknown" in out


def test_one_gpu_says_nothing_to_all_reduce(cli, node):
    fake = node(1, torch=False)
    code, out, err = cli("bench", "--allreduce")
    assert code == 0, err
    assert out.strip().splitlines()[-1] == "1 GPU: nothing to all-reduce across"
    assert "smoke test skipped: PyTorch is not importable" in err and not fake.envs
    node(1)
    code, out, err = cli("bench", "--allreduce", "--max-size", "64", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["smoke_test"] and doc["gpus"] == 1 and doc["busbw_factor"] == 0.0 and doc["saved"] == []
    assert [r["busbw_gbs"] for r in doc["rows"]] == [0.0] * 4 and doc["limit_fraction"] is None
    assert doc["summary"].startswith("1 GPU: nothing to all-reduce across; smoke test on one rank: 8 B in ")


def test_one_gpu_smoke_test_without_nccl_is_skipped_and_a_failing_one_fails(cli, node, tmp_path):
    from conftest import one_line

    node(1, FakeRanks(error=(0, "no_nccl", "PyTorch 2.11 has no torch.distributed NCCL backend")))
    code, out, err = cli("bench", "--allreduce", "--max-size", "64")
    assert code == 0, err
    assert out.strip().splitlines()[-1] == "1 GPU: nothing to all-reduce across"
    assert "smoke test skipped: bench --allreduce needs torch.distributed with NCCL on the GPU: PyTorch 2.11 has no" in err
    assert not list(tmp_path.glob("gpuwhy-allreduce-*"))  # nothing kept for missing software
    node(1, FakeRanks(error=(0, "error", "rank 0: RuntimeError: CUDA error")))
    code, out, err = cli("bench", "--allreduce", "--max-size", "64")
    assert one_line(code, err, 4).startswith("gpuwhy: error: all-reduce failed: rank 0: RuntimeError: CUDA error (logs in ")
    (kept,) = tmp_path.glob("gpuwhy-allreduce-*")  # a failed run's logs are kept and named
    assert str(kept) in err and (kept / "rank-0.log").read_text() == "rank 0 of 1\n"


def test_several_gpus_without_pytorch_exit_3(cli, node):
    from conftest import one_line

    fake = node(2, torch=False)
    code, out, err = cli("bench", "--allreduce")
    assert one_line(code, err, 3).endswith("needs torch.distributed with NCCL: PyTorch is not importable here; install it: x")
    assert not fake.envs


@pytest.mark.parametrize("fake,code,message", [
    (FakeRanks(error=(1, "no_nccl", "PyTorch 2.11 has no torch.distributed NCCL backend")), 3,
     r"needs torch.distributed with NCCL on the GPU: PyTorch 2.11 has no torch.distributed NCCL backend; install it: pip install torch"),
    (FakeRanks(error=(0, "error", "rank 0: RuntimeError: NCCL error")), 4, r"all-reduce failed: rank 0: RuntimeError: NCCL error \(logs in "),
    (FakeRanks(wrong=(1, 64)), 4, r"wrong sum on rank 1 at 64 B: element 5 is 7.0, expected 6.0 \(logs in "),
])
def test_failures_are_one_line(cli, node, fake, code, message):
    import re

    from conftest import one_line

    node(2, fake)
    c, out, err = cli("bench", "--allreduce", "--max-size", "1KiB")
    assert re.search(message, one_line(c, err, code))


@pytest.mark.parametrize("args,message", [
    (["--max-size", "1000"], "--max-size must be a power of two from 8 B"),
    (["--dtype", "fp64"], "--dtype 'fp64' is not one of: bf16, fp32 (for --allreduce)"),
    (["--csv", "x.csv"], "--allreduce runs alone; drop"),
    (["-i", "0,0"], "names GPU"),
])
def test_bad_options(cli, node, args, message):
    from conftest import one_line

    fake = node(2)
    code, out, err = cli("bench", "--allreduce", *args)
    assert message in one_line(code, err, 2) and not fake.envs


# --------------------------------------------------------------------------- the profile and llm


def _entry(latency_s=25e-6, busbw=350.0, date="2026-12-05T10:00:00+00:00"):
    from gpuwhy.profiles import allreduce_entry

    return allreduce_entry(busbw_gbs=busbw, largest_bytes=GiB, latency_s=latency_s, latency_bytes=8, dtype="bf16", date=date)


def test_profile_round_trip_and_carry(tmp_path):
    from gpuwhy.profile_sections import ALLREDUCE, AllreduceRun
    from gpuwhy.profiles import DeviceProfile, carry_sections, latest_profile, record, save_profile

    uuid = "GPU-0a1b2c3d-0000-4000-8000-000000000200"
    record(ALLREDUCE, uuid, AllreduceRun(2, _entry()), folder=tmp_path, name="NVIDIA H200", sheet="H200 SXM")
    record(ALLREDUCE, uuid, AllreduceRun(8, _entry(31e-6, 420.0, "2026-12-05T11:00:00+00:00")), folder=tmp_path,
           name="NVIDIA H200")
    p = latest_profile(uuid, tmp_path)
    assert set(p.allreduce_by_gpus) == {"2", "8"} and p.allreduce_by_gpus["8"]["latency_s"] == 31e-6
    assert p.allreduce_date == "2026-12-05T11:00:00+00:00"
    assert DeviceProfile.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    # a later memory-only bench profile keeps them
    later = DeviceProfile(uuid=uuid, name="NVIDIA H200", date="2026-12-06T00:00:00+00:00", dram_bandwidth_gbs=4400.0)
    carried = carry_sections(later, tmp_path)
    assert carried.allreduce_by_gpus == p.allreduce_by_gpus
    save_profile(carried, tmp_path)
    assert latest_profile(uuid, tmp_path).allreduce_by_gpus["2"]["busbw_gbs"] == 350.0


@pytest.mark.parametrize("value,message", [
    ({"1": _entry()}, "GPU count of 2 or more"),
    ({"2": {**_entry(), "busbw_gbs": -1.0}}, r"allreduce_by_gpus.2.busbw_gbs = -1 GB/s is not a plausible figure"),
    ({"2": {**_entry(), "latency_s": None}}, "allreduce_by_gpus.2.latency_s must be a number of s"),
    ({"2": {**_entry(), "dtype": 2}}, "allreduce_by_gpus.2.dtype must be text"),
    ([1, 2], "must be an object of GPU count"),
])
def test_a_profile_refuses_bad_allreduce_figures(value, message):
    from gpuwhy.profiles import DeviceProfile

    with pytest.raises(ValueError, match=message):
        DeviceProfile.from_dict({"uuid": "GPU-1", "name": "NVIDIA H200", "date": "2026", "allreduce_by_gpus": value})


def _llm(cli, *args):
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H200", *args, "--json")
    assert code == 0, err
    return json.loads(out)["scaling"]


def test_llm_uses_this_hosts_measured_allreduce(cli, tmp_path, monkeypatch):
    from gpuwhy.profile_sections import ALLREDUCE, AllreduceRun
    from gpuwhy.profiles import record

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    s = _llm(cli, "--num-gpus", "2")  # nothing measured: the assumed 10 us
    assert s["allreduce_latency_s"] == 10e-6 and s["allreduce_source"].startswith("assumed, not measured")
    uuid = "GPU-0a1b2c3d-0000-4000-8000-000000000200"
    record(ALLREDUCE, uuid, AllreduceRun(2, _entry(25e-6)), name="NVIDIA H200", sheet="H200 SXM")
    s = _llm(cli, "--num-gpus", "2")
    assert s["allreduce_latency_s"] == 25e-6
    assert s["allreduce_source"] == (f"measured: the 8 B all-reduce over 2 GPUs (bench --allreduce, 2026-12-05T10:00:00+00:00, "
                                     f"profile of NVIDIA H200 {uuid})")
    # llama-3-8b: 32 layers, 32 query heads x 128 = 4096 wide. At batch 1 each all-reduce moves 4096 x 2 B = 8 KiB;
    # over 2 GPUs a ring moves 2(2-1)/2 = 1x that per GPU at the measured 350 GB/s bus bandwidth: 23.4 ns.
    # 2 x 32 x (25 us + 8192 / 350e9 s) = 1.6015 ms per step
    assert s["allreduce_busbw_gbs"] == 350.0
    assert s["allreduces_per_step"] == 64 and s["allreduce_time_s"] == pytest.approx(64 * (25e-6 + 8192 / 350e9), rel=1e-12)
    s8 = _llm(cli, "--num-gpus", "2", "--batch", "64")  # 64 tokens: 512 KiB each, 1.5 us of transfer
    assert s8["allreduce_time_s"] == pytest.approx(64 * (25e-6 + 64 * 8192 / 350e9), rel=1e-12)
    s = _llm(cli, "--num-gpus", "4")
    assert s["allreduce_latency_s"] == 25e-6 and s["allreduce_source"].endswith("; 4 GPUs not measured, 2 is the nearest count measured")
    s = _llm(cli, "--num-gpus", "2", "--allreduce-latency", "5us")  # what the user gives wins
    assert s["allreduce_latency_s"] == pytest.approx(5e-6) and s["allreduce_source"] == "--allreduce-latency 5us"
    assert s["allreduce_busbw_gbs"] is None and s["allreduce_time_s"] == pytest.approx(64 * 5e-6)
    code, out, err = cli("llm", "--model", "llama-3-8b", "--gpu", "H100", "--num-gpus", "2", "--json")
    assert json.loads(out)["scaling"]["allreduce_latency_s"] == 10e-6  # an H200's figure is not an H100's


def test_allreduce_allowance_latency_plus_transfer_at_the_bus_bandwidth():
    from gpuwhy.model.llm.roofline import AttentionShape
    from gpuwhy.model.llm.scaling import Scaling, allreduce_message_bytes, allreduce_time

    shape = AttentionShape(layers=32, kv_heads=8, head_dim=128, heads=32)
    assert allreduce_message_bytes(4, shape) == 4 * 32 * 128 * 2  # 4 tokens x 4096 wide x 2 B = 32 KiB
    assert allreduce_message_bytes(4, AttentionShape(layers=2, kv_heads=8, head_dim=64)) == 4 * 8 * 64 * 2  # MHA: kv heads
    assert allreduce_message_bytes(4, None) == 0.0
    # 8 GPUs: a ring moves 2 x 7/8 = 1.75 x the message per GPU; 1 MiB at 350 GB/s = 5.24 us, plus 30 us
    n, t = allreduce_time(8, shape, 30e-6, 2**20, 350.0)
    assert n == 64 and t == pytest.approx(64 * (30e-6 + 2**20 * 1.75 / 350e9), rel=1e-12)
    assert allreduce_time(8, shape, 30e-6, 2**20, None) == (64, pytest.approx(64 * 30e-6))  # no bandwidth: latency
    assert allreduce_time(1, shape, 30e-6, 2**20, 350.0) == (0, 0.0) and allreduce_time(8, None, 30e-6) == (0, 0.0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError, match="the all-reduce bus bandwidth must be above 0 GB/s"):
            Scaling(num_gpus=2, allreduce_busbw_gbs=bad)


def test_the_nvlink_limit_from_the_topology_is_the_slowest_gpus_links():
    from gpuwhy.model.multi_gpu.allreduce import UNKNOWN_LIMIT, topology_limit
    from gpuwhy.model.multi_gpu.topology import GpuPlace, NvLinkEnd

    def gpu(i, links, version=6):  # NVML's 6 is NVLink 4.0: 25 GB/s per link per direction
        return GpuPlace(i, "NVIDIA H100", nvlinks=tuple(NvLinkEnd(k, version, None, "switch") for k in range(links)))

    lim = topology_limit([gpu(0, 18), gpu(1, 18)])
    assert lim.gbs == 18 * 25.0 and "18 links on GPU 0" in lim.source  # 450 GB/s one way (900 both ways)
    assert topology_limit([gpu(0, 18), gpu(1, 12)]).gbs == 12 * 25.0  # the ring runs at its slowest GPU
    assert topology_limit([gpu(0, 18), gpu(1, 0)]) == UNKNOWN_LIMIT  # one GPU on PCIe only: no NVLink limit
    assert topology_limit([gpu(0, 18), gpu(1, 18, version=8)]) == UNKNOWN_LIMIT  # NVLink 6.0: no figure yet
    assert topology_limit([gpu(0, 18)]) == UNKNOWN_LIMIT  # one GPU: nothing to all-reduce across
    assert topology_limit([gpu(0, 18, 7), gpu(1, 18, 7)]).gbs == 900.0  # NVLink 5 (B200): 50 GB/s a link
