"""`gpuwhy bench` from the command line.

Without a GPU: exit 3 with one line; ``--compile-only --arch`` works. The rest
runs the whole pipeline (checks, sweep, launch overhead, rendering, JSON, CSV,
profile, memory freed on every path) against the fake CUDA device of tests/fakes.py:
numpy stands in for the kernels and a fake clock for the events. The fake proves the
bookkeeping, never a figure; GPU figures come from tests/test_bench_gpu.py.
"""

from __future__ import annotations

import json

import pytest

from conftest import gpu_available, run_cli
from fakes import install_quick

# ------------------------------------------------------------ no GPU here ----


@pytest.mark.skipif(gpu_available()[0], reason="a GPU is present")
def test_no_gpu_exits_3_with_one_line():
    r = run_cli("bench", "--quick")
    assert r.returncode == 3
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuwhy: error:") and "--compile-only" in lines[0]
    assert "Traceback" not in r.stderr


def test_compile_only_works_without_a_gpu(compiled, kernel_cache):
    # The session's cubin cache: compute_wgmma.cu for sm_90a (about 10 s of NVRTC on a 2-core machine) is
    # built once per session, by the compiled fixture (test_compute_kernels reads its log), and compile_all
    # finds it there under the same key; the other sources are built here unless a test built them first.
    compiled("compute_wgmma.cu", "sm_90a")
    r = run_cli("bench", "--compile-only", "--arch", "sm_90", "--json", env={"XDG_CACHE_HOME": str(kernel_cache)})
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "bench-compile" and doc["arch"] == "sm_90" and doc["ok"]
    (wgmma,) = [s for s in doc["sources"] if s["source"] == "compute_wgmma.cu" and s["arch"] == "sm_90a"]
    assert wgmma["cached"] and "wgmma_bf16_ss_n256" in wgmma["kernels"]
    by = {s["source"]: s for s in doc["sources"] if s["arch"] == "sm_90"}
    assert "read_vec16_f32" in by["memory.cu"]["kernels"] and by["launch.cu"]["kernels"] == ["empty_kernel", "spin_kernel"]


def test_compile_only_human_output_lists_each_kernel(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    code, out, err = cli("bench", "--compile-only", "--arch", "sm_89")
    assert code == 0, err
    for k in ("empty_kernel", "vecadd_naive_f32", "copy_vec16_f64", "fill_random_f32"):
        assert k in out
    assert "compiled for sm_89" in out


@pytest.mark.parametrize(
    "args,needle",
    [
        (("--compile-only", "--arch", "sm_999"), "sm_999"),
        (("--compile-only", "--arch", "compute_90"), "never compute_XX PTX"),
        (("--arch", "sm_90"), "--arch applies to --compile-only"),
        (("--sweep", "--quick"), "exclude each other"),
        (("--kernel", "memcpy"), "unknown --kernel 'memcpy'"),
        (("--dtype", "fp16"), "--dtype 'fp16'"),
    ],
)
def test_usage_errors_exit_2(cli, args, needle):
    code, out, err = cli("bench", *args)
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------ fake device ----


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Install the fake device (tests/fakes.py); small sizes so the regimes still show (L2 = 256 KiB)."""
    from gpuwhy.bench import memory

    gpu = install_quick(monkeypatch, tmp_path)
    monkeypatch.setattr(memory, "sweep_sizes", lambda *a, **k: [2**10, 2**12, 2**14, 2**16, 2**18])
    return gpu


def test_fake_quick_json_document(cli, fake, tmp_path):
    code, out, err = cli("bench", "--quick", "--json")
    assert code == 0, err
    doc = json.loads(out)  # stdout holds the one JSON document and nothing else
    assert doc["kind"] == "bench" and doc["mode"] == "quick" and doc["device"]["arch"] == "sm_90"
    assert doc["sheet"]["name"] == "H200 SXM" and doc["sheet"]["memory_bandwidth_gbs"] == 4800
    rows = doc["rows"]
    assert len(rows) == 8 * 4 and len(doc["checks"]) == 8
    assert {r["regime"] for r in rows} == {"fits in L2", "DRAM"}
    for r in rows:
        assert (r["pct_of_spec"] is None) == (r["regime"] != "DRAM")
        assert r["gbs"] == pytest.approx(r["bytes_moved"] / r["median_s"] / 1e9)
    assert doc["sustained_dram_kernel"].endswith("vec16") and doc["sustained_dram_gbs"] > 0
    lo = doc["launch_overhead"]
    assert lo["event_s"] > 0 and lo["graph_per_kernel_s"] > 0 and lo["submit_s"] > 0 and lo["round_trip_s"] > 0
    assert doc["cpu_vecadd"]["elements"] == 2**14 and doc["cpu_vecadd"]["gpu_kernel"] == "vecadd-naive"
    assert "NVML unavailable" in " ".join(doc["notes"])
    assert doc["summary"].startswith("gpuwhy bench: NVIDIA H200 (sm_90")
    assert not fake.mem  # every allocation freed
    from gpuwhy.profiles import latest_profile

    prof = latest_profile("GPU-1234abcd-0000-0000-0000-000000000000")
    assert prof is not None and prof.dram_bandwidth_gbs == pytest.approx(doc["sustained_dram_gbs"])
    assert prof.launch_overhead_s == pytest.approx(lo["event_s"]) and prof.name == "NVIDIA H200"


def test_fake_sweep_human_output_and_csv(cli, fake, tmp_path):
    csv = tmp_path / "rows.csv"
    code, out, err = cli("bench", "--sweep", "--kernel", "copy", "--kernel", "vecadd-naive", "--csv", str(csv), "--no-save")
    assert code == 0, err
    for needle in ("copy-naive", "copy-vec16", "vecadd-naive", "fits in L2", "DRAM", "sustained DRAM bandwidth",
                   "launch overhead", "event-timed", "in a graph", "one CPU core", "bytes read + bytes written"):
        assert needle in out, needle
    assert "read-vec16" not in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("gpuwhy bench: NVIDIA H200") and "% of the H200 SXM sheet" in last
    import csv as csv_mod

    with open(csv, newline="") as f:
        rows = list(csv_mod.DictReader(f))
    assert len(rows) == 3 * 5 and {"gpu", "uuid", "kernel", "elements", "bytes_moved", "median_s", "gbs", "regime", "pct_of_spec"} <= set(rows[0])
    assert {r["kernel"] for r in rows} == {"copy-naive", "copy-vec16", "vecadd-naive"}
    assert all(float(r["gbs"]) > 0 and int(r["elements"]) > 0 for r in rows) and rows[0]["gpu"] == "NVIDIA H200"
    assert not (tmp_path / "cache" / "gpuwhy" / "profiles").exists()  # --no-save
    assert not fake.mem
    # the old spelling `--csv FILE` is `--csv-file FILE` now, said in a note
    assert "`bench --csv FILE` is now `bench --csv-file FILE`" in err


def test_fake_sweep_csv_on_stdout_and_csv_file(cli, fake, tmp_path):
    """`bench --csv` prints the rows as CSV on stdout, as every command's --csv; --csv-file writes them."""
    import csv as csv_mod
    import io

    file = tmp_path / "rows.csv"
    code, out, err = cli("bench", "--sweep", "--kernel", "copy", "--csv", "--csv-file", str(file), "--no-save")
    assert code == 0, err
    assert "is now" not in err
    rows = list(csv_mod.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 5 and {r["kernel"] for r in rows} == {"copy-naive", "copy-vec16"}
    assert "sustained DRAM bandwidth" not in out  # no table on stdout
    with open(file, newline="") as f:
        assert list(csv_mod.DictReader(f)) == rows
    code, out, err = cli("bench", "--sweep", "--csv", "--json", "--no-save")
    assert code == 2 and "--csv and --json exclude each other" in err
    assert json.loads(out)["kind"] == "error"  # --json given: the one error document of a failure


@pytest.mark.parametrize("bad", ["copy_vec16_f32", "read_naive_f32", "write_vec16_f32", "vecadd_naive_f32"])
def test_fake_wrong_result_exits_4_and_frees_memory(cli, fake, bad):
    fake.bug = bad
    code, out, err = cli("bench", "--quick")
    assert code == 4, err
    assert out == ""
    line = err.strip().splitlines()[-1]
    assert "gave a wrong result" in line and bad.rsplit("_", 1)[0].replace("_", "-") in line
    assert not fake.mem


def test_fake_cuda_error_exits_4_and_frees_memory(cli, fake):
    fake.fault = "copy_vec16_f32"
    code, out, err = cli("bench", "--quick", "--kernel", "copy")
    assert code == 4
    assert "ILLEGAL_ADDRESS" in err and len(err.strip().splitlines()) == 1
    assert not fake.mem


def test_fake_sizes_that_do_not_fit_are_skipped_with_a_note(cli, fake):
    fake.oom_sizes = {2**18 * 4}  # the 2^18-element fp32 arrays fail to allocate
    code, out, err = cli("bench", "--quick", "--json", "--kernel", "read-vec16", "--no-save")
    assert code == 0, err
    doc = json.loads(out)
    assert max(r["elements"] for r in doc["rows"]) == 2**16
    assert any("n=262144 skipped" in n for n in doc["notes"])
    assert not fake.mem
    fake.total = 2**20  # 1 MiB free: the 2^16 rows (256 KiB x sets) fit, 2^18 does not
    code, out, err = cli("bench", "--sweep", "--json", "--kernel", "read-vec16", "--no-save")
    doc = json.loads(out)
    assert any("n=262144 skipped" in n and "free memory" in n for n in doc["notes"])
    assert not fake.mem


def test_fake_fp64_and_device_selection(cli, fake):
    code, out, err = cli("bench", "--quick", "--dtype", "fp64", "--kernel", "vecadd", "--device", "0", "--json", "--no-save")
    assert code == 0, err
    doc = json.loads(out)
    assert {r["dtype"] for r in doc["rows"]} == {"fp64"} and doc["cpu_vecadd"]["dtype"] == "fp64"
    code, out, err = cli("bench", "--quick", "--device", "3")
    assert code == 2 and "-i 3: CUDA sees 1 GPU, ordinals 0..0" in err and "without NVML" in err
    code, out, err = cli("bench", "--quick", "--device", "GPU-1234abcd", "--kernel", "launch", "--json", "--no-save")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rows"] == [] and doc["launch_overhead"]["event_s"] > 0 and doc["sustained_dram_gbs"] is None
