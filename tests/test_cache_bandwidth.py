"""The cache-ceiling benchmark without a GPU: the expected sums its checks compare with, the
kernels compiled for real, and the bookkeeping (checks before timing, a wrong kernel caught,
every buffer freed, the rows and the profile) on the fake device of tests/fakes.py, whose
numpy stand-ins follow microbench/cache.cu. The fake proves the bookkeeping, never a figure.
"""

from __future__ import annotations

import numpy as np
import pytest

from fakes import FakeGpu, capture, install
from gpuwhy.bench import cache_bandwidth as C
from gpuwhy.errors import MeasurementError


def test_expected_sums_follow_the_kernels_index_pattern():
    v = C.smem_pattern(seed=7)
    assert v.shape == (C.SMEM_VECS, 4) and v.dtype == np.uint32
    assert int(v[1, 2]) == ((4 * 1 + 2) * 2654435761 + 7) & 0xFFFFFFFF
    for block in (256, 512, 1024):
        want = C.expected_sm_sums(v, block, reps=5)
        t = 37
        direct = sum(int(v[(t + j * block) % C.SMEM_VECS].astype(np.uint64).sum()) for j in range(8 * 5)) & 0xFFFFFFFF
        assert int(want[t]) == direct
    with pytest.raises(ValueError):
        C.expected_sm_sums(v, 128, 1)  # 8 x 128 is not a multiple of 2048 vectors
    w = np.array([0xFFFFFFFF, 2, 3], dtype=np.uint32)
    assert C.expected_l2_sum(w, 3) == (3 * (0xFFFFFFFF + 5)) & 0xFFFFFFFF


def test_sizes_and_calibration():
    l2 = 60 * 2**20
    assert C.l2_working_sets(l2) == [l2 // 8, l2 // 4, l2 // 2]
    assert all(s % 512 == 0 for s in C.l2_working_sets(50_000_001))
    assert C.passes_for(2e-3, 1e-4, 4) == 80 and C.passes_for(2e-3, 0.0, 4) == 4


def test_cache_kernels_compile_for_hopper_and_blackwell(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from gpuwhy.engine.compile import compile_file

    for arch in ("sm_90", "sm_120"):
        names = compile_file("cache.cu", arch).kernel_names
        for u in (2, 4, 8):
            assert f"l2_read_u{u}" in names and f"l2_copy_u{u}" in names
        for b in C.SM_BLOCKS:
            assert f"smem_read_b{b}" in names and f"l1_read_b{b}" in names


class CacheFake(FakeGpu):
    """FakeGpu with numpy stand-ins for cache.cu (block sizes from the kernel name, or 256)."""

    def __init__(self, **kw):
        super().__init__(l2=8 * 2**20, **kw)

    def run(self, name, grid, args):
        if not name.startswith(("l2_", "smem_", "l1_")):
            return super().run(name, grid, args)
        self.launches.append(name)
        if name == self.fault:
            from fakes import CUDAError

            raise CUDAError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
        if name.startswith("l2_read"):
            nvec, passes = int(args[1]), int(args[2])
            words = self.view(args[0], np.uint32, nvec * 4)
            part = self.view(args[4], np.uint32, grid)
            part[:] = 0
            part[0] = np.uint32((int(words.astype(np.uint64).sum()) * passes) & 0xFFFFFFFF)
            moved = nvec * 16 * passes
        elif name.startswith("l2_copy"):
            nvec, passes = int(args[2]), int(args[3])
            a = self.view(args[0], np.uint32, nvec * 4)
            self.view(args[1], np.uint32, nvec * 4)[:] = a + np.uint32(passes - 1)
            moved = 2 * nvec * 16 * passes
        else:
            block = int(name.rsplit("_b", 1)[1])
            if name.startswith("smem"):
                reps, seed = int(args[1]), int(args[2])
                vecs, out = C.smem_pattern(seed), self.view(args[0], np.uint32, grid * block)
            else:
                reps = int(args[2])
                vecs, out = self.view(args[0], np.uint32, C.L1_VECS * 4).reshape(C.L1_VECS, 4), self.view(args[1], np.uint32, grid * block)
            out[:] = np.tile(C.expected_sm_sums(vecs, block, reps), grid)
            moved = grid * block * reps * 8 * 16
        if name == self.bug:
            target = {"l2_read": 4, "l2_copy": 1, "smem_read": 0, "l1_read": 1}[name.rsplit("_", 1)[0]]
            self.view(args[target], np.uint32, 1)[0] += np.uint32(1)
        self.clock += 3e-6 + moved / 20e12


def test_run_caches_on_the_fake(monkeypatch, tmp_path):
    gpu = install(monkeypatch, CacheFake(), tmp_path)
    from gpuwhy.engine.context import open_device

    with open_device(None) as ctx:
        rows, checks, samples, notes = C.run_caches(ctx, sample=lambda: (1980.0, 500.0, 0))
        live = list(ctx._live)
    assert not live  # every buffer freed
    levels = [(r.level, r.op) for r in rows]
    assert levels == [("L2", "read")] * 3 + [("L2", "read+write"), ("shared", "read"), ("L1", "read")]
    assert [r.working_set_bytes for r in rows[:3]] == [2**20, 2**21, 2**22]
    sh = rows[4]
    # the clock-derived limit: 128 B/clk/SM x 132 SMs x 1980 MHz
    assert sh.clock_limit_gbs == pytest.approx(128 * 132 * 1980e6 / 1e9) and sh.sm_clock_mhz == 1980.0
    assert rows[5].clock_limit_gbs is None and all(r.gbs > 0 for r in rows)
    assert any("l2_read" in c for c in checks) and any("smem_read" in c for c in checks)
    assert any("128 B/clk/SM" in n for n in notes)
    # the candidates were checked before the timed launches
    first_timed = gpu.launches.index("l2_read_u4")
    assert first_timed >= 0


@pytest.mark.parametrize("bug", ["l2_read_u4", "l2_copy_u8", "smem_read_b1024", "l1_read_b512"])
def test_a_wrong_kernel_reports_nothing(monkeypatch, tmp_path, bug):
    gpu = CacheFake()
    gpu.bug = bug
    install(monkeypatch, gpu, tmp_path)
    from gpuwhy.engine.context import open_device

    with open_device(None) as ctx:
        with pytest.raises(MeasurementError, match="wrong|no .* figure"):
            C.run_caches(ctx)
        assert not ctx._live


def test_bench_caches_cli_saves_the_profile(monkeypatch, tmp_path, cli):
    install(monkeypatch, CacheFake(), tmp_path)
    import json

    code, out, err = cli("bench", "--caches", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "bench-caches" and len(doc["rows"]) == 6
    assert doc["best_gbs"]["L2_read"] > 0 and "128 B/clk/SM" in doc["shared_limit_rule"] or "32 banks" in doc["shared_limit_rule"]
    from gpuwhy.profiles import latest_profile

    p = latest_profile("GPU-1234abcd-0000-0000-0000-000000000000")
    assert p is not None and p.l2_read_bandwidth_gbs == pytest.approx(doc["best_gbs"]["L2_read"])
    assert p.shared_bandwidth_gbs and p.l1_bandwidth_gbs and p.cache_date
    code, out, err = cli("bench", "--caches")
    assert code == 0 and "cache ceilings" in out and "shared memory" in out
    code, out, err = cli("bench", "--caches", "--sweep")
    assert code == 2 and "--sweep already includes them" in err


def test_render_caches_fits_80_columns(monkeypatch, tmp_path):
    install(monkeypatch, CacheFake(), tmp_path)
    from gpuwhy.engine.context import open_device
    from gpuwhy.render.hierarchy_view import render_caches

    with open_device(None) as ctx:
        rows, checks, _, notes = C.run_caches(ctx)
        info = ctx.info
    res = C.CacheResult(info, tuple(rows), tuple(checks), {}, tuple(notes), "2026-12-02")
    monkeypatch.setenv("COLUMNS", "80")
    out, _ = capture(render_caches, res)
    lines = out.splitlines()
    assert lines[-1].startswith("caches: L2 read ")  # the one line to paste (never wrapped)
    assert "shared memory" in out and "clock limit: 128 B/clk/SM x 132 SMs x" not in out  # no clock sampled here
    assert max(len(x) for x in lines[:-1]) <= 80 and "…" not in out
    assert any("level" in x and "GB/s" in x for x in lines[:6])  # a table, not the key/value fallback
