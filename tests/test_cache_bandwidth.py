"""The cache-ceiling benchmark without a GPU: the expected sums its checks compare with,
proved against numpy mirrors of the kernels' loops (the l2_copy result for any schedule of
the blocks); the kernels compiled for real, with every load counted in the machine code;
figures above the 128 B/clk/SM limit refused; and the bookkeeping (checks before timing, a
wrong kernel caught and reported as its family only, every buffer freed, the rows, the
profile and the L2 verdict it feeds) on the fake device of tests/fakes.py, whose numpy
stand-ins follow microbench/cache.cu. The fake proves the bookkeeping, never a figure.
"""

from __future__ import annotations

import numpy as np
import pytest

from fakes import FakeGpu, capture, install
from gpuwhy.bench import cache_bandwidth as C
from gpuwhy.errors import MeasurementError


# ------------------------------------------------------------------------------
# numpy mirrors of the kernels' loops in microbench/cache.cu, statement by statement: the
# host's expectations (C.expected_*) are proved against these, not against themselves.


def simulate_sm_read(vectors: np.ndarray, block: int, reps: int) -> np.ndarray:
    """smem_read / l1_read: each thread's sum, walking its loads as the kernel's loop does
    (byte addresses; d = v[0].x & zero with zero = 0)."""
    nv = vectors.shape[0]
    groups = nv // 32 // 8
    step = groups * 32 * 16
    out = np.zeros(block, np.uint32)
    for t in range(block):
        lane, warp = t & 31, t >> 5
        base = lane * 16
        acc, d = 0, 0
        for r in range(reps):
            at = base + ((warp + r + d) & (groups - 1)) * (32 * 16)
            first = None
            for k in range(8):
                v = vectors[(at + k * step) // 16]
                first = v if first is None else first
                acc += int(v.astype(np.uint64).sum())
            d = int(first[0]) & 0
        out[t] = acc & 0xFFFFFFFF
    return out


def simulate_l2_copy(a_words: np.ndarray, grid: int, block: int, u_count: int, passes: int, shift: int,
                     store_rotated: bool = False) -> list[list[tuple[int, int, np.ndarray]]]:
    """l2_copy: every thread's stores (pass, vector index, value) in its program order.

    ``store_rotated`` stores at the rotated index (the kernel before the fix) instead of
    the thread's own index."""
    a = a_words.reshape(-1, 4)
    nvec = a.shape[0]
    T = grid * block
    threads = []
    for g in range(T):
        mine = []
        for p in range(passes):
            rot = (p * shift) % nvec
            k = g
            while k < nvec:
                for u in range(u_count):
                    i = k + u * T
                    if i < nvec:
                        j = i + rot
                        j = j - nvec if j >= nvec else j
                        mine.append((p, j if store_rotated else i, a[j] + np.uint32(p)))
                k += T * u_count
        threads.append(mine)
    return threads


def apply_stores(threads, nvec: int, order: str) -> np.ndarray:
    """b after the stores land in one legal order: each thread's in program order, the threads
    interleaved by ``order``: ``passes`` (every thread's pass 0, then pass 1, ...: lockstep),
    ``threads`` (thread 0 all its passes, then thread 1, ...) or ``reverse`` (the last thread first)."""
    b = np.full((nvec, 4), 0xFFFFFFFF, np.uint32)
    if order == "passes":
        seq = sorted(((p, g, n) for g, st in enumerate(threads) for n, (p, _, _) in enumerate(st)))
        for p, g, n in seq:
            _, i, v = threads[g][n]
            b[i] = v
        return b.reshape(-1)
    for st in (threads if order == "threads" else threads[::-1]):
        for _, i, v in st:
            b[i] = v
    return b.reshape(-1)


def test_shared_and_l1_sums_follow_the_kernels_loop():
    v = C.smem_pattern(seed=7)
    assert v.shape == (C.SMEM_VECS, 4) and v.dtype == np.uint32
    assert int(v[1, 2]) == ((4 * 1 + 2) * 2654435761 + 7) & 0xFFFFFFFF
    rng = np.random.default_rng(3)
    l1 = rng.integers(0, 2**32, size=(C.L1_VECS, 4), dtype=np.uint64).astype(np.uint32)
    for vecs in (v, l1):
        for block, reps in ((256, 11), (1024, 3), (64, 1), (96, 17)):
            assert np.array_equal(C.expected_sm_sums(vecs, block, reps), simulate_sm_read(vecs, block, reps)), (block, reps)
    # a long run without looping: 2^30 reps wrap mod 2^32 exactly
    big = C.expected_sm_sums(v, 32, 2**30 + 5)
    per_rep = [int(C.expected_sm_sums(v, 32, r)[0]) for r in range(1, 9)]
    group = [(per_rep[i] - (per_rep[i - 1] if i else 0)) & 0xFFFFFFFF for i in range(8)]  # rep i's sum, lane 0
    full, rest = divmod(2**30 + 5, 8)
    assert int(big[0]) == (full * sum(group) + sum(group[:rest])) & 0xFFFFFFFF
    with pytest.raises(ValueError, match=r"^2048 vectors must be a multiple of 256 and block 48 of whole warps$"):
        C.expected_sm_sums(v, 48, 1)  # not whole warps
    with pytest.raises(ValueError, match=r"^100 vectors must be a multiple of 256 and block 64 of whole warps$"):
        C.expected_sm_sums(v[:100], 64, 1)  # not whole groups of 8 chunks
    w = np.array([0xFFFFFFFF, 2, 3], dtype=np.uint32)
    assert C.expected_l2_sum(w, 3) == (3 * (0xFFFFFFFF + 5)) & 0xFFFFFFFF


@pytest.mark.parametrize("grid,block,u_count", [(3, 32, 4), (2, 64, 8), (5, 32, 2)])
def test_l2_copy_result_is_the_same_whatever_the_schedule(grid, block, u_count):
    """The H200 run failed `l2_copy_u4 (1056 x 256) wrote a wrong result`: the kernel stored
    at the rotated index, so b[j] had a different writer in each pass and a slow block's pass 1
    could land after a fast block's pass 2. Now each thread stores at its own index."""
    rng = np.random.default_rng(1)
    nvec = 3 * 1024 + 17  # remainders in every loop
    a = rng.integers(0, 2**32, size=nvec * 4, dtype=np.uint64).astype(np.uint32)
    shift = C.SHIFT_VECS % nvec
    threads = simulate_l2_copy(a, grid, block, u_count, 3, shift)
    writers: dict[int, set] = {}
    for g, st in enumerate(threads):
        for _, i, _ in st:
            writers.setdefault(i, set()).add(g)
    assert len(writers) == nvec and all(len(w) == 1 for w in writers.values())  # one writer per vector
    assert sum(len(st) for st in threads) == 3 * nvec  # every vector once per pass
    want = C.expected_l2_copy(a, 3, shift)
    for order in ("passes", "threads", "reverse"):
        assert np.array_equal(apply_stores(threads, nvec, order), want), order
    # the old kernel: the result depends on the order, and the old expectation a + 2 holds only in lockstep
    old = simulate_l2_copy(a, grid, block, u_count, 3, shift, store_rotated=True)
    results = {order: apply_stores(old, nvec, order) for order in ("passes", "threads", "reverse")}
    assert np.array_equal(results["passes"], a + np.uint32(2))
    assert not np.array_equal(results["threads"], results["reverse"])
    # the timed run's check: a different pass count and a rotation that wraps
    assert np.array_equal(C.expected_l2_copy(a, 7, shift), apply_stores(simulate_l2_copy(a, 1, 32, 4, 7, shift),
                                                                         nvec, "threads"))
    with pytest.raises(ValueError, match=r"^passes=0 must be >= 1 and \d+ words a multiple of 4$"):
        C.expected_l2_copy(a, 0, shift)


def _row(level, op, gbs, clk=1980.0):
    from gpuwhy.engine.timing import Measurement

    t = 1e-3
    m = Measurement(t, t, t, t, 0.0, 5)
    return C.CacheRow(level, op, "k", 2**20, int(gbs * 1e9 * t), m, 264, 1024, 100, clk, None, clk)


def test_a_figure_above_the_clock_limit_is_refused():
    # the H200 run: 130,225 GB/s from smem_read against 128 B/clk x 132 SMs x 1,980 MHz = 33,454 GB/s
    why = C.over_limit(_row("shared", "read", 130_225), 132, 1980.0)
    assert why and "3.89x" in why and "33,454 GB/s" in why and "128 B/clk/SM x 132 SMs x 1,980 MHz" in why
    assert "not reported" in why
    assert C.over_limit(_row("shared", "read", 32_000), 132, 1980.0) is None  # 96%: a real figure
    assert C.over_limit(_row("shared", "read", 33_454 * 1.029), 132, 1980.0) is None  # inside the 3% for sampling
    assert C.over_limit(_row("L1", "read", 33_454 * 1.04), 132, 1980.0)  # L1: the same SRAM, the same limit
    assert C.over_limit(_row("L2", "read", 40_000), 132, 1980.0)  # no level feeds the SMs faster than they load
    assert C.over_limit(_row("L2", "read+write", 40_000), 132, 1980.0) is None  # 20,000 of it read
    assert C.over_limit(_row("shared", "read", 130_225), 132, None) is None  # no clock: nothing to check against


def test_sizes_and_calibration():
    l2 = 60 * 2**20
    assert C.l2_working_sets(l2) == [l2 // 8, l2 // 4, l2 // 2]
    assert all(s % 512 == 0 for s in C.l2_working_sets(50_000_001))
    assert C.passes_for(2e-3, 1e-4, 4) == 80 and C.passes_for(2e-3, 0.0, 4) == 4


def test_cache_kernels_compile_with_every_load_in_the_machine_code(kernel_cache, monkeypatch):
    """The H200 run measured shared memory at 3.9x its limit: ptxas had hoisted the
    loop-invariant shared loads out of the rep loop (2 LDS.128 left for 64 loads in
    smem_read_b1024; 16 and 32 loads in b512 and b256). Now each rep's addresses depend on
    the rep and on a loaded value, the rep loop is not unrolled, and every kernel's machine
    code has exactly the loads its source makes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(kernel_cache))  # the session's cubins: compile_all's builds are these
    from gpuwhy.engine.compile import compile_file
    from sass import opcode_counts, text_sections

    for arch in ("sm_90", "sm_120"):
        mod = compile_file("cache.cu", arch)
        code = text_sections(mod.cubin)
        for u in (2, 4, 8):
            assert f"l2_read_u{u}" in mod.kernel_names and f"l2_copy_u{u}" in mod.kernel_names
            assert opcode_counts(code[f"l2_read_u{u}"])["LDG"] == u, (arch, u)
            assert opcode_counts(code[f"l2_copy_u{u}"]) == {"LDG": u, "LDS": 0, "STG": u}, (arch, u)
        for b in (256, 512, 1024):
            assert opcode_counts(code[f"smem_read_b{b}"]) == {"LDG": 0, "LDS": C.LOADS_PER_REP, "STG": 1}, (arch, b)
            assert opcode_counts(code[f"l1_read_b{b}"]) == {"LDG": C.LOADS_PER_REP, "LDS": 0, "STG": 1}, (arch, b)
        assert set(f"{k}_b{b}" for k in ("smem_read", "l1_read") for b in C.SM_BLOCKS) <= set(mod.kernel_names)


def test_the_loads_are_inside_the_rep_loops(tmp_path, monkeypatch):
    """With nvdisasm (skipped without): all 8 loads of smem_read/l1_read sit in the loop
    body, and the opcode table of tests/sass.py agrees with nvdisasm's mnemonics."""
    from sass import OPCODES, disassemble, loop_bodies, nvdisasm, text_sections

    tool = nvdisasm()
    if tool is None:
        pytest.skip("no nvdisasm (a CUDA toolkit, or pip install nvidia-cuda-nvdisasm; or set GPUWHY_NVDISASM)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    import struct

    from gpuwhy.engine.compile import compile_file

    cubin = compile_file("cache.cu", "sm_90").cubin
    listing = disassemble(tool, cubin, tmp_path)
    raw = text_sections(cubin)
    for name, op in [(f"smem_read_b{b}", "LDS") for b in (256, 512, 1024)] + [(f"l1_read_b{b}", "LDG") for b in (256, 512, 1024)]:
        bodies = loop_bodies(listing[name])
        inside = max((sum(t.split()[0 if not t.startswith("@") else 1].startswith(op) for t in body) for body in bodies),
                     default=0)
        assert inside == C.LOADS_PER_REP, (name, inside)
    for name, lines in listing.items():
        for off, txt in lines:
            if off < 0:
                continue
            mnemonic = txt.split()[1] if txt.startswith("@") else txt.split()[0]
            code = struct.unpack_from("<Q", raw[name], off)[0] & 0xFFF
            for op, value in OPCODES.items():
                assert (code == value) == (mnemonic.split(".")[0] == op), (name, off, txt)


class CacheFake(FakeGpu):
    """FakeGpu with numpy stand-ins for cache.cu (block sizes from the kernel name, or 256)."""

    def __init__(self, **kw):
        super().__init__(l2=8 * 2**20, **kw)
        self.speed = {}  # kernel family -> bytes/s (default 20 TB/s)

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
        elif name.startswith("l2_copy"):  # b[i] = a[(i + last rotation) mod n] + passes - 1 (see simulate_l2_copy)
            nvec, passes, shift = int(args[2]), int(args[3]), int(args[4])
            a = self.view(args[0], np.uint32, nvec * 4).reshape(nvec, 4)
            rot = ((passes - 1) * shift) % nvec
            self.view(args[1], np.uint32, nvec * 4)[:] = (np.roll(a, -rot, axis=0) + np.uint32(passes - 1)).reshape(-1)
            moved = 2 * nvec * 16 * passes
        else:
            block = int(name.rsplit("_b", 1)[1])
            if name.startswith("smem"):
                reps, seed = int(args[1]), int(args[2])
                assert int(args[3]) == 0  # the kernels' `zero`
                vecs, out = C.smem_pattern(seed), self.view(args[0], np.uint32, grid * block)
            else:
                reps = int(args[2])
                assert int(args[3]) == 0
                vecs, out = self.view(args[0], np.uint32, C.L1_VECS * 4).reshape(C.L1_VECS, 4), self.view(args[1], np.uint32, grid * block)
            out[:] = np.tile(C.expected_sm_sums(vecs, block, reps), grid)
            moved = grid * block * reps * 8 * 16
        if name == self.bug:
            target = {"l2_read": 4, "l2_copy": 1, "smem_read": 0, "l1_read": 1}[name.rsplit("_", 1)[0]]
            self.view(args[target], np.uint32, 1)[0] += np.uint32(1)
        self.clock += 3e-6 + moved / self.speed.get(name.rsplit("_", 1)[0], 20e12)


def test_run_caches_on_the_fake(monkeypatch, tmp_path):
    gpu = install(monkeypatch, CacheFake(), tmp_path)
    from gpuwhy.engine.context import open_device

    with open_device(None) as ctx:
        run = C.run_caches(ctx, sample=lambda: (1980.0, 500.0, 0))
        live = list(ctx._live)
    assert not live  # every buffer freed
    rows, checks, notes = run.rows, run.checks, run.notes
    assert run.failures == []
    levels = [(r.level, r.op) for r in rows]
    assert levels == [("L2", "read")] * 3 + [("L2", "read+write"), ("shared", "read"), ("L1", "read")]
    assert [r.working_set_bytes for r in rows[:3]] == [2**20, 2**21, 2**22]
    sh, l1 = rows[4], rows[5]
    # the clock-derived limit: 128 B/clk/SM x 132 SMs x 1980 MHz, for shared memory and L1 (one SRAM)
    assert sh.clock_limit_gbs == pytest.approx(128 * 132 * 1980e6 / 1e9) and sh.sm_clock_mhz == 1980.0
    assert l1.clock_limit_gbs == sh.clock_limit_gbs and sh.sm_clock_max_mhz == 1980.0
    assert all(r.gbs > 0 for r in rows) and rows[3].clock_limit_gbs is None
    # bytes counted exactly: 8 loads of 16 bytes per thread per rep
    assert sh.bytes_moved == sh.grid * sh.block * sh.repeat * 8 * 16
    assert any("l2_read" in c for c in checks) and any("smem_read" in c for c in checks)
    assert any("128 B/clk/SM" in n for n in notes)
    # the candidates were checked before the timed launches
    first_timed = gpu.launches.index("l2_read_u4")
    assert first_timed >= 0


@pytest.mark.parametrize("bug,family", [("l2_read_u4", ("L2", "read")), ("l2_copy_u4", ("L2", "read+write")),
                                        ("smem_read_b1024", ("shared", "read")), ("l1_read_b512", ("L1", "read"))])
@pytest.mark.parametrize("how", ["bug", "fault"])
def test_a_wrong_kernel_reports_its_family_only(monkeypatch, tmp_path, bug, family, how):
    """A wrong result (or a CUDA error) in one family makes that family "not reported" with
    why; the other families are still measured (the H200 run lost all of them, and the DRAM
    sweep's JSON, to one wrong l2_copy result)."""
    gpu = CacheFake()
    setattr(gpu, how, bug)
    install(monkeypatch, gpu, tmp_path)
    from gpuwhy.engine.context import open_device

    with open_device(None) as ctx:
        run = C.run_caches(ctx)
        assert not ctx._live
    assert [(f.level, f.op) for f in run.failures] == [family]
    assert ("wrong" in run.failures[0].reason) if how == "bug" else ("illegal" in run.failures[0].reason.lower())
    got = {(r.level, r.op) for r in run.rows}
    assert got == {("L2", "read"), ("L2", "read+write"), ("shared", "read"), ("L1", "read")} - {family}


def test_a_figure_above_the_limit_is_not_reported(monkeypatch, tmp_path):
    """A shared-memory kernel 'measuring' 130 TB/s on 132 SMs at 1,980 MHz (the H200 run) is refused."""
    gpu = CacheFake()
    gpu.speed["smem_read"] = 130e12
    install(monkeypatch, gpu, tmp_path)
    from gpuwhy.engine.context import open_device

    with open_device(None) as ctx:
        run = C.run_caches(ctx, sample=lambda: (1980.0, 500.0, 0))
    assert [(f.level, f.op) for f in run.failures] == [("shared", "read")]
    assert "33,454 GB/s" in run.failures[0].reason and "not reported" in run.failures[0].reason
    assert [r.level for r in run.rows] == ["L2"] * 4 + ["L1"]
    # without a clock sample the GPU's highest clock is the limit's clock
    with open_device(None) as ctx:
        run = C.run_caches(ctx, clock_ceiling_mhz=1980.0)
    assert [(f.level, f.op) for f in run.failures] == [("shared", "read")]
    res = C.CacheResult(ctx.info, tuple(run.rows), tuple(run.checks), {}, tuple(run.notes), "2026-12-02",
                        failures=tuple(run.failures))
    assert "shared memory not reported" in res.summary_line() and res.best("shared") is None
    doc = res.to_dict()
    assert doc["best_gbs"]["shared_read"] is None and doc["not_reported"][0]["level"] == "shared"
    assert isinstance(res.failure, MeasurementError) and "1 cache ceiling not reported" in str(res.failure)


def test_bench_caches_cli_saves_the_profile(monkeypatch, tmp_path, cli):
    install(monkeypatch, CacheFake(), tmp_path)
    import json

    code, out, err = cli("bench", "--caches", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "bench-caches" and len(doc["rows"]) == 6 and doc["not_reported"] == []
    assert doc["best_gbs"]["L2_read"] > 0 and "32 banks" in doc["shared_limit_rule"]
    from gpuwhy.profiles import latest_profile

    p = latest_profile("GPU-1234abcd-0000-0000-0000-000000000000")
    assert p is not None and p.l2_read_bandwidth_gbs == pytest.approx(doc["best_gbs"]["L2_read"])
    assert p.shared_bandwidth_gbs and p.l1_bandwidth_gbs and p.cache_date
    code, out, err = cli("bench", "--caches")
    assert code == 0 and "cache ceilings" in out and "shared memory" in out
    code, out, err = cli("bench", "--caches", "--sweep")
    assert code == 2 and "--sweep already includes them" in err


def test_bench_caches_cli_reports_and_saves_the_rest_when_one_family_fails(monkeypatch, tmp_path, cli):
    gpu = CacheFake()
    gpu.bug = "l2_copy_u4"
    install(monkeypatch, gpu, tmp_path)
    import json

    code, out, err = cli("bench", "--caches", "--json")
    assert code == 4 and err.count("\n") <= 2 and "not reported" in err and "l2_copy_u4" in err
    doc = json.loads(out)  # the document is still written, in its published shape
    from test_schema import check_document

    check_document(doc)
    assert [r["level"] for r in doc["rows"]] == ["L2"] * 3 + ["shared", "L1"]
    assert doc["not_reported"][0]["op"] == "read+write" and doc["best_gbs"]["L2_read_write"] is None
    from gpuwhy.profiles import latest_profile

    p = latest_profile("GPU-1234abcd-0000-0000-0000-000000000000")
    assert p.l2_read_bandwidth_gbs == pytest.approx(doc["best_gbs"]["L2_read"]) and p.l2_read_write_bandwidth_gbs is None
    assert p.shared_bandwidth_gbs and p.l1_bandwidth_gbs
    code, out, err = cli("bench", "--caches")
    assert code == 4 and "not reported" in out and "L2 read+write not reported" in out


def test_render_caches_fits_80_columns(monkeypatch, tmp_path):
    gpu = CacheFake()
    gpu.bug = "l2_copy_u2"
    install(monkeypatch, gpu, tmp_path)
    from gpuwhy.engine.context import open_device
    from gpuwhy.render.hierarchy_view import render_caches

    with open_device(None) as ctx:
        run = C.run_caches(ctx)
        info = ctx.info
    res = C.CacheResult(info, tuple(run.rows), tuple(run.checks), {}, tuple(run.notes), "2026-12-02",
                        failures=tuple(run.failures))
    monkeypatch.setenv("COLUMNS", "80")
    out, err = capture(render_caches, res)
    lines = out.splitlines()
    assert lines[-1].startswith("caches: L2 read ")  # the one line to paste (never wrapped)
    assert "L2 read+write not reported" in lines[-1]
    assert any("read+write" in x and "not" in x for x in lines[:-1])  # the table's row (its cell may wrap)
    assert "L2 read+write not reported: l2_copy_u2" in err.replace("\n", " ")
    assert "shared memory" in out and "clock limit: 128 B/clk/SM x 132 SMs x" not in out  # no clock sampled here
    assert max(len(x) for x in lines[:-1]) <= 80 and "…" not in out
    assert any("level" in x and "GB/s" in x for x in lines[:6])  # a table, not the key/value fallback


def test_the_l2_figure_saved_beside_a_failed_family_judges_l2_resident_work(monkeypatch, tmp_path):
    """The H200 run's l2_resident measure read "L2 roof unknown": one wrong l2_copy result had
    aborted the sweep before any L2 figure was saved. Now the L2 read figure is saved with
    the failed family beside it, and an L2-resident kernel on that GPU is judged against it."""
    import json
    from pathlib import Path

    from gpuwhy.api.classify import run_classify
    from gpuwhy.engine.timing import Measurement
    from gpuwhy.model.roofline.classify import Workload
    from gpuwhy.profile_sections import CACHES
    from gpuwhy.profiles import DeviceProfile, latest_profile, record, save_profile

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fixture = Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json"
    h200 = DeviceProfile.from_dict(json.loads(fixture.read_text()))
    save_profile(h200)
    ws = 15 * 2**20
    wl = Workload(flops=50 * ws / 4, bytes=50 * ws, time_s=110e-6, name="l2_resident")
    before = run_classify(wl, "H200", measured=True, working_set=ws)
    assert before.verdict.ceilings.level != "L2" and "L2 roof of the H200 SXM is unknown" in " ".join(before.hierarchy.lines)
    t = Measurement(1e-3, 1e-3, 1e-3, 1e-3, 0.0, 5)
    l2 = C.CacheRow("L2", "read", "l2_read_u8", 30 * 2**20, int(9237e9 * 1e-3), t, 1056, 256, 300, 1980.0, None, 1980.0)
    res = C.CacheResult(h200, (l2,), (), {"sm_clock_mhz": 1980.0}, (), "2026-12-02T01:13:12+00:00",
                        failures=(C.CacheFailure("L2", "read+write", "l2_copy_u4 (1056 x 256) wrote a wrong result"),))
    assert record(CACHES, h200.uuid, res) is not None
    p = latest_profile(h200.uuid)
    assert p.l2_read_bandwidth_gbs == pytest.approx(9237.0) and p.l2_read_write_bandwidth_gbs is None
    # the l2_resident case of benchmarks/hierarchy_measure.py: 15 MiB x 50 passes in 110 us (7,154 GB/s)
    v = run_classify(wl, "H200", measured=True, working_set=ws).verdict
    assert v.ceilings.level == "L2" and v.ceilings.bandwidth == pytest.approx(9237e9) and v.regime == "memory"
    assert 70 < v.memory_sol_pct < 85


def test_the_peer_table_fails_a_figure_above_the_limit():
    """benchmarks/bench_l2_peers.py said "yes" to shared memory at 3.89x its limit (it only
    checked >= 0.90): the check is now 0.90..1.03, and a level gpuwhy refused fails it."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_l2_peers.py"
    spec = importlib.util.spec_from_file_location("bench_l2_peers", path)
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    # the H200 run of 2026-12-02 (devlogs/2026-12-02-call2/hierarchy/x/l2_peers.json)
    res = {"gpuwhy": [10640.2, 9237.1, 9204.6], "cupy": [8962.8, 8870.7, 8908.7], "torch": [2698.3, 2677.6, 2711.3],
           "shared": [130224.9, 130150.5, 131064.8], "shared_limit": [33454.08] * 3, "clock": [1980.0] * 3,
           "l1": [30000.0] * 3, "l1_limit": [33454.08] * 3}
    checks = {c["what"]: c for c in peers.build_checks(res, 30 * 2**20, 132, "__ldcg, 4 loads/iter")}
    assert checks["L2 read, 30 MiB"]["ok"] and checks["L2 read, 30 MiB"]["ratio"] == pytest.approx(1.0369, abs=1e-4)
    assert checks["shared memory vs clock limit"]["ok"] is False  # 3.89x: broken, not fast
    assert checks["L1 vs clock limit"]["ok"] is True
    res["shared"] = [31500.0, 31600.0, 31400.0]  # 94%: the target
    assert peers.build_checks(res, 30 * 2**20, 132, "")[3]["ok"] is True
    res["shared"] = [None] * 3  # refused by gpuwhy: not reported, and the check fails
    res["l1"] = [36000.0] * 3
    c = peers.build_checks(res, 30 * 2**20, 132, "")
    assert c[3]["ok"] is False and c[3]["gpuwhy_gbs"] is None and c[4]["ok"] is False


def test_bench_sweep_keeps_the_dram_figures_when_a_cache_family_fails(monkeypatch, tmp_path, cli):
    """The H200's `bench --sweep --json` wrote an empty file when l2_copy failed: now the DRAM
    sweep and the other cache levels are in the document and the profile, and the run exits 4."""
    import json

    gpu = CacheFake()
    gpu.bug = "l2_copy_u4"
    install(monkeypatch, gpu, tmp_path)
    from dataclasses import replace

    from gpuwhy.bench import mode_runs, runner

    monkeypatch.setattr(mode_runs, "measure_compute", lambda req, precisions: [])  # the fake has no compute kernels
    # One DRAM kernel (a --kernel would skip the caches) at two sizes: 2^10 and 2^22 fp32 elements, whose
    # copy's working set 2 x 2^22 x 4 B = 32 MiB is 4 x the fake's 8 MiB L2, the least that gives a sustained
    # DRAM figure (results.DRAM_FACTOR). The quick sizes' 2^28 (1 GiB numpy copies) took 30 s here.
    full = runner.run_bench
    monkeypatch.setattr(runner, "run_bench", lambda opts, progress=None: full(
        replace(opts, kernels=("copy",), mode="quick", sizes=(2**10, 2**22)), progress))
    code, out, err = cli("bench", "--sweep", "--json")
    doc = json.loads(out)
    assert code == 4 and "not reported" in err
    from test_schema import check_document

    check_document(doc)
    assert doc["rows"] and doc["caches"]["not_reported"][0]["op"] == "read+write"
    assert doc["caches"]["best_gbs"]["L2_read"] > 0 and doc["caches"]["best_gbs"]["shared_read"] > 0
    from gpuwhy.profiles import latest_profile

    p = latest_profile("GPU-1234abcd-0000-0000-0000-000000000000")
    assert p.dram_bandwidth_gbs and p.l2_read_bandwidth_gbs and p.l2_read_write_bandwidth_gbs is None
