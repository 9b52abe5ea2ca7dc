"""`gpuwhy occupancy`: the CUDA Occupancy Calculator's rules, checked by hand on several architectures.

Every expected value below is worked out from the documented rules (the CUDA C++
Programming Guide's per-compute-capability limits and the calculator's allocation
rules, cuda_occupancy.h), which the case's comment states:

- warps per block W = ceil(T / 32); threads limit = max warps per SM // W
- registers: per warp ceil(R x 32 / 256) x 256; per sub-partition 65536 / 4 = 16384;
  warps = (16384 // per warp) x 4; blocks = warps // W
- shared memory: per block ceil((S + reserve) / unit) x unit (reserve 1 KiB and unit
  128 B from sm_80; 0 and 256 B on sm_7x); blocks = carveout // that
- blocks = min(threads, blocks cap, registers, shared memory); occupancy = blocks x W / max warps
"""

import json
import os

import pytest

from conftest import run_cli
from gpuwhy.errors import SpecError, UsageError
from gpuwhy.model.kernels.occupancy import (
    active_blocks,
    arch_limits,
    limits_from_data,
    load_arch_limits,
    occupancy,
    arch_key,
    register_thresholds,
)

TABLE = load_arch_limits()


def occ(arch, t, r, s=0, carveout=None):
    return occupancy(arch_limits(arch, TABLE), t, r, s, carveout)


# (arch, threads, registers, shared bytes, carveout KiB) -> (blocks, warps, occupancy %, binding)
CASES = [
    # sm_90, 256 threads, 32 regs: W = 8; threads 64 // 8 = 8; regs 32x32 = 1024 per warp,
    # 16384 // 1024 = 16 x 4 = 64 warps // 8 = 8; smem (0 + 1024) -> 233472 // 1024 = 228; cap 32 -> 8 blocks, 64 warps, 100%
    (("sm_90", 256, 32, 0, None), (8, 64, 100.0, {"threads", "registers"})),
    # sm_90, 256 threads, 64 regs: 2048 per warp, 16384 // 2048 = 8 x 4 = 32 warps // 8 = 4 blocks -> 32 / 64 = 50%
    (("sm_90", 256, 64, 0, None), (4, 32, 50.0, {"registers"})),
    # sm_90, 256 threads, 33 regs: 33 x 32 = 1056 rounds up to 1280; 16384 // 1280 = 12 x 4 = 48 warps // 8 = 6 -> 75%
    (("sm_90", 256, 33, 0, None), (6, 48, 75.0, {"registers"})),
    # sm_80, 128 threads, 40 regs, 48 KiB: regs 1280 -> 12 x 4 = 48 // 4 = 12; smem 49152 + 1024 = 50176 (a multiple of 128),
    # 167936 // 50176 = 3 -> 3 blocks x 4 warps = 12 / 64 = 18.75%
    (("sm_80", 128, 40, 48 * 1024, None), (3, 12, 18.75, {"shared memory"})),
    # sm_80, 256 threads, 32 regs, 20 KiB, carveout 64 KiB: (20480 + 1024) = 21504; 65536 // 21504 = 3 -> 24 / 64 = 37.5%
    (("sm_80", 256, 32, 20 * 1024, 64), (3, 24, 37.5, {"shared memory"})),
    # same without a carveout preference: 167936 // 21504 = 7 (threads allow 8) -> 56 / 64 = 87.5%
    (("sm_80", 256, 32, 20 * 1024, None), (7, 56, 87.5, {"shared memory"})),
    # sm_86, 1024 threads, 32 regs: W = 32; threads 48 // 32 = 1; regs 64 warps // 32 = 2 -> 1 block, 32 / 48 = 66.7%
    (("sm_86", 1024, 32, 0, None), (1, 32, 100.0 * 32 / 48, {"threads"})),
    # sm_75, 32 threads, 16 regs: threads 32 // 1 = 32 but at most 16 blocks per SM on Turing -> 16 / 32 = 50%
    (("sm_75", 32, 16, 0, None), (16, 16, 50.0, {"blocks"})),
    # sm_89, 96 threads, 128 regs: W = 3; 4096 per warp, 16384 // 4096 = 4 x 4 = 16 warps // 3 = 5 -> 15 / 48 = 31.25%
    (("sm_89", 96, 128, 0, None), (5, 15, 31.25, {"registers"})),
    # sm_70, 256 threads, 32 regs, 20000 B: no reserve, unit 256: 20224; 98304 // 20224 = 4 -> 32 / 64 = 50%
    (("sm_70", 256, 32, 20000, None), (4, 32, 50.0, {"shared memory"})),
    # sm_120, 512 threads, 48 regs, 32 KiB: regs 1536 -> 10 x 4 = 40 // 16 = 2; smem 33792 -> 102400 // 33792 = 3;
    # threads 48 // 16 = 3 -> 2 blocks, 32 / 48 = 66.7%
    (("sm_120", 512, 48, 32 * 1024, None), (2, 32, 100.0 * 32 / 48, {"registers"})),
    # sm_100, 128 threads, 24 regs, 1 KiB: regs 768 -> 21 x 4 = 84 // 4 = 21; smem 2048 -> 114; threads 16; cap 32 -> 16, 100%
    (("sm_100", 128, 24, 1024, None), (16, 64, 100.0, {"threads"})),
    # sm_87, 64 threads, 255 regs: 8160 -> 8192 per warp, 16384 // 8192 = 2 x 4 = 8 warps // 2 = 4 -> 8 / 48 = 16.7%
    (("sm_87", 64, 255, 0, None), (4, 8, 100.0 * 8 / 48, {"registers"})),
    # sm_90, 100 threads (not a multiple of 32): W = 4; threads 64 // 4 = 16; regs 64 // 4 = 16 -> 16 blocks, 64 warps, 100%
    (("sm_90", 100, 32, 0, None), (16, 64, 100.0, {"threads", "registers"})),
]


@pytest.mark.parametrize("args,expected", CASES, ids=[f"{a[0]}-{a[1]}t-{a[2]}r-{a[3]}B-{a[4]}" for a, _ in CASES])
def test_calculator_values(args, expected):
    o = occ(*args)
    blocks, warps, pct, binding = expected
    assert o.active_blocks == blocks
    assert o.active_warps == warps
    assert o.occupancy_pct == pytest.approx(pct)
    assert set(o.binding) == binding


def test_register_allocation_granularity_and_hardware_check():
    # 1024 threads x 128 registers: 4096 per warp x 32 warps = 131072 > 65536 per block: cannot launch at all.
    o = occ("sm_90", 1024, 128)
    assert o.active_blocks == 0 and o.occupancy_pct == 0
    assert any("launch fails" in w for w in o.warnings)
    # 64 registers per thread x 1024 threads = 65536: exactly the per-block maximum, one block fits.
    assert occ("sm_90", 1024, 64).active_blocks == 1
    # 65 registers round up to 2304 per warp: 73728 > 65536, none fits.
    assert occ("sm_90", 1024, 65).active_blocks == 0
    # The hardware check rounds warps up to a multiple of 4: 800 threads = 25 warps x 2560 (80 regs) = 64000 <= 65536,
    # but 28 x 2560 = 71680 > 65536: no block (equivalently 16384 // 2560 = 6 warps per sub-partition x 4 = 24 < 25).
    assert occ("sm_90", 800, 80).active_blocks == 0
    # 992 threads = 31 warps at 64 regs: 32 x 2048 = 65536 fits; one block.
    assert occ("sm_90", 992, 64).active_blocks == 1


def test_shared_memory_reserve_and_unit():
    lim = arch_limits("sm_90", TABLE)
    # 0 B of shared memory still costs the 1 KiB reserve on sm_90: 233472 // 1024 = 228 blocks by shared memory.
    assert occ("sm_90", 32, 16).by_resource[3].blocks == 228
    # 100 B + 1024 = 1124 rounds up to 1152 (9 x 128).
    assert occ("sm_90", 32, 16, 100).shared_mem_per_block_allocated == 1152
    # sm_75 has neither reserve nor 128-B unit: 100 B rounds up to 256.
    assert occ("sm_75", 32, 16, 100).shared_mem_per_block_allocated == 256
    # The opt-in maximum (227 KiB) plus the reserve fills the 228 KiB SM: one block.
    assert active_blocks(lim, 128, 32, 227 * 1024) == 1
    o = occ("sm_90", 128, 32, 100 * 1024)
    assert any("opt in" in n for n in o.notes)


def test_carveout_rules():
    # A carveout smaller than one block is raised to the next size that holds it:
    # 40 KiB + 1 KiB = 41984 B > 32 KiB -> the 64 KiB carveout: 65536 // 41984 = 1 block.
    o = occ("sm_80", 128, 32, 40 * 1024, 32)
    assert o.shared_mem_per_sm == 64 * 1024 and o.active_blocks == 1
    # The smallest carveout that keeps 7 blocks of 21504 B (150528 B) is 164 KiB (132 KiB = 135168 B is too small).
    assert occ("sm_80", 256, 32, 20 * 1024).smallest_carveout_kib == 164
    # A larger carveout than asked is suggested when it raises occupancy.
    assert any(s.kind == "carveout" for s in occ("sm_80", 256, 32, 20 * 1024, 64).suggestions)


def test_suggestions_register_counts_and_block_sizes():
    # 256 threads x 64 regs on sm_90 (4 blocks, 50%): 48 regs -> 1536 per warp -> 10 x 4 = 40 warps -> 5 blocks (62.5%);
    # 32 regs -> 8 blocks (100%). Counts between 49 and 63 do not help (1792 per warp -> 9 x 4 = 36 warps -> 4 blocks).
    assert register_thresholds(arch_limits("sm_90", TABLE), 256, 64, 0) == [(48, 5, 62.5), (40, 6, 75.0), (32, 8, 100.0)]
    o = occ("sm_90", 256, 64)
    kinds = {(s.kind, s.value, s.blocks) for s in o.suggestions}
    assert ("registers", 48, 5) in kinds and ("registers", 32, 8) in kinds
    # Turing, 32-thread blocks are capped at 16 blocks: 64 threads or more reach 100%.
    o = occ("sm_75", 32, 16)
    bs = [s for s in o.suggestions if s.kind == "block_size"]
    assert bs and bs[0].value == 64 and bs[0].occupancy_pct == 100.0
    # Shared memory bound (sm_80, 128 threads, 48 KiB): one more block needs at most 167936 // 4 = 41984 -> 41984 - 1024 = 40960 B.
    o = occ("sm_80", 128, 40, 48 * 1024)
    sm = [s for s in o.suggestions if s.kind == "shared_memory"]
    assert sm[0].value == 40960 and sm[0].blocks == 4
    # Full occupancy: nothing to suggest.
    assert occ("sm_90", 256, 32).suggestions == ()


def test_parse_arch_forms():
    for text in ("sm_90", "SM90", "sm_90a", "90", "9.0", "compute_90"):
        assert arch_key(text) == "sm_90"
    assert arch_key("12.0") == "sm_120" and arch_key("sm_100") == "sm_100"
    with pytest.raises(UsageError, match="--arch \'hopper\' is not an SM architecture"):
        arch_key("hopper")
    with pytest.raises(UsageError, match="known: sm_70"):
        arch_limits("sm_61", TABLE)


def test_table_covers_the_architectures_with_sources():
    assert set(TABLE) == {"sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120"}
    for lim in TABLE.values():
        assert lim.source.startswith("https://docs.nvidia.com/")
        assert dict(lim.sources)["compute_capabilities"].startswith("https://docs.nvidia.com/cuda/")
        assert lim.carveouts_kib[-1] * 1024 == lim.shared_mem_per_sm_bytes
    assert TABLE["sm_80"].reserved_shared_mem_per_block_bytes == 1024 and TABLE["sm_75"].reserved_shared_mem_per_block_bytes == 0


def test_malformed_table_names_the_field():
    good = {"architectures": {"sm_90": {"name": "x", "compute_capability": "9.0"}}}
    with pytest.raises(SpecError, match="missing field"):
        limits_from_data(good, "f.yaml")
    base = TABLE
    user = {"architectures": {"sm_90": {"max_blocks_per_sm": 16}}}
    merged = limits_from_data(user, "u.yaml", "--specs", base=base)["sm_90"]
    assert merged.max_blocks_per_sm == 16 and merged.max_threads_per_sm == 2048
    with pytest.raises(SpecError, match="max_blocks_per_sm"):
        limits_from_data({"architectures": {"sm_90": {"max_blocks_per_sm": "32"}}}, "u.yaml", base=base)
    with pytest.raises(SpecError, match="sm_XX"):
        limits_from_data({"architectures": {"hopper": {}}}, "u.yaml", base=base)


def test_user_limits_file_overrides(tmp_path):
    (tmp_path / "arch").mkdir()
    (tmp_path / "arch" / "limits.yaml").write_text("architectures:\n  sm_90:\n    max_blocks_per_sm: 2\n")
    t = load_arch_limits([str(tmp_path)])
    assert t["sm_90"].max_blocks_per_sm == 2 and t["sm_90"].origin == "--specs"
    assert occupancy(t["sm_90"], 64, 16, 0).active_blocks == 2


# --- the CLI ---------------------------------------------------------------------


def test_cli_json_on_h100(cli):
    code, out, err = cli("occupancy", "--block-size", "256", "--registers", "64", "--gpu", "H100 SXM", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "occupancy" and doc["arch"] == "sm_90"
    assert doc["active_blocks_per_sm"] == 4 and doc["occupancy_pct"] == 50.0 and doc["binding"] == ["registers"]
    assert doc["blocks_per_wave"] == 4 * 132
    assert [lim["resource"] for lim in doc["limits"]] == ["threads", "blocks", "registers", "shared memory"]


def test_cli_human_output(cli):
    code, out, err = cli("occupancy", "--block-size", "128", "--registers", "40", "--shared-mem", "48KiB", "--arch", "sm_80")
    assert code == 0, err
    assert "18.8%" in out and "shared memory *" in out and "50176" in out and "to raise it" in out


BAD = [
    (["--block-size", "-5", "--registers", "32", "--arch", "sm_90"], "--block-size"),
    (["--block-size=-5", "--registers", "32", "--arch", "sm_90"], "--block-size"),
    (["--block-size", "0", "--registers", "32", "--arch", "sm_90"], "--block-size"),
    (["--block-size", "2048", "--registers", "32", "--arch", "sm_90"], "above sm_90's limit of 1024"),
    (["--block-size", "1025", "--registers", "32", "--gpu", "RTX 4090"], "1024 threads per block"),
    (["--block-size", "256", "--registers", "300", "--arch", "sm_90"], "--registers 300"),
    (["--block-size", "256", "--registers", "32", "--shared-mem", "300KiB", "--arch", "sm_90"], "--shared-mem"),
    (["--block-size", "256", "--registers", "32", "--shared-mem", "-1", "--arch", "sm_90"], "--shared-mem"),
    (["--block-size", "256", "--registers", "32", "--arch", "sm_61"], "no occupancy limits for sm_61"),
    (["--block-size", "256", "--registers", "32", "--gpu", "MI300X"], "not an NVIDIA compute capability"),
    (["--block-size", "256", "--registers", "32", "--gpu", "H100", "--arch", "sm_90"], "give one of"),
    (["--block-size", "256", "--registers", "32", "--arch", "sm_90", "--carveout", "50"], "--carveout 50"),
    (["--block-size", "256", "--arch", "sm_90"], "needs --block-size T and --registers R"),
    (["--block-size", "256", "--registers", "32", "--gpu", "Z9000"], "unknown GPU"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[" ".join(a[:2]) + f"-{i}" for i, (a, _) in enumerate(BAD)])
def test_cli_bad_input_exit_2_one_line(args, needle, cli):
    code, out, err = cli("occupancy", *args)
    assert code == 2, (out, err)
    assert out == ""
    assert err.count("\n") == 1 and needle in err, err


def test_cli_bad_input_subprocess_one_line():
    p = run_cli("occupancy", "--block-size", "-5", "--registers", "32", "--arch", "sm_90")
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    p = run_cli("occupancy", "--block-size", "4096", "--registers", "32", "--arch", "sm_80")
    assert p.returncode == 2 and "above sm_80's limit of 1024" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_cli_device_without_gpu_is_one_line(cli):
    code, out, err = cli("occupancy", "--block-size", "256", "--registers", "32", "--device", "0")
    if code == 0:
        pytest.skip("a GPU is present")
    assert code in (2, 3) and err.count("\n") == 1 and ("--gpu" in err or "--arch" in err)


def test_model_module_is_pure():
    import inspect

    from gpuwhy.model.kernels import occupancy as mod

    src = inspect.getsource(mod)
    for word in ("open(", "print(", "import yaml", "pynvml", "cuda.bindings"):
        assert word not in src


# --- against the driver, on a GPU --------------------------------------------------

_TEST_KERNELS = r"""
extern "C" __global__ void occ_static_smem(float* out)
{
    __shared__ float buf[3000];                 // 12000 B of static shared memory
    buf[threadIdx.x % 3000] = (float)threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * 7u) % 3000u];
}

extern "C" __global__ void occ_dynamic_smem(float* out)
{
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[(threadIdx.x * 3u) % blockDim.x];
}

extern "C" __global__ void occ_many_registers(float* out, const float* in, int n)
{
    float a[48];
#pragma unroll
    for (int i = 0; i < 48; ++i) a[i] = in[(threadIdx.x + i * 97) % n];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
        for (int i = 0; i < 48; ++i) a[i] = a[i] * a[(i + j + 1) % 48] + 1.0f;
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 48; ++i) s += a[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


@pytest.mark.gpu
def test_matches_cuOccupancyMaxActiveBlocksPerMultiprocessor():
    """Our figure equals the driver's for NVRTC-compiled kernels (test kernels at several
    register caps, and the bundled compute_fma.cu kernels), over block sizes and dynamic
    shared memory. Set GPUWHY_OCCUPANCY_RECORD=FILE.json to keep the comparison."""
    from cuda.bindings import driver as drv

    from gpuwhy.engine.compile import compile_file, compile_source

    def ok(res):
        err, *rest = res if isinstance(res, tuple) else (res,)
        assert int(err) == 0, err
        return rest[0] if len(rest) == 1 else rest

    ok(drv.cuInit(0))
    dev = ok(drv.cuDeviceGet(0))
    A = drv.CUdevice_attribute
    major = ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    optin = ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
    arch = f"sm_{major}{minor}"
    lim = arch_limits(arch, TABLE)
    # The table's per-device figures agree with the driver's.
    assert ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev)) == lim.max_threads_per_sm
    assert ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev)) == lim.max_blocks_per_sm
    assert ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev)) == lim.shared_mem_per_sm_bytes
    assert optin == lim.shared_mem_per_block_optin_bytes
    assert ok(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev)) == lim.registers_per_sm
    ctx = ok(drv.cuDevicePrimaryCtxRetain(dev))
    ok(drv.cuCtxSetCurrent(ctx))
    modules = []
    rows = []
    try:
        builds = [compile_source(_TEST_KERNELS, arch, name="occupancy_test.cu", extra_options=(f"--maxrregcount={r}",)) for r in (32, 40, 64, 72, 255)]
        builds.append(compile_file("compute_fma.cu", arch))
        F = drv.CUfunction_attribute
        for mod in builds:
            m = ok(drv.cuModuleLoadData(mod.cubin))
            modules.append(m)
            for name in mod.kernel_names:
                f = ok(drv.cuModuleGetFunction(m, name.encode()))
                regs = ok(drv.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_NUM_REGS, f))
                static = ok(drv.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f))
                max_t = ok(drv.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f))
                ok(drv.cuFuncSetAttribute(f, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - static))
                for block in (32, 64, 96, 128, 192, 256, 384, 512, 768, 1024):
                    if block > max_t:
                        continue
                    for dyn in (0, 8 * 1024, 40 * 1024, 100 * 1024, optin - static):
                        if static + dyn > optin:
                            continue
                        driver_n = ok(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, block, dyn))
                        ours = active_blocks(lim, block, regs, static + dyn)
                        rows.append({"kernel": f"{mod.name}:{name}", "options": list(mod.options), "registers": regs,
                                     "static_smem": static, "block": block, "dynamic_smem": dyn, "driver": driver_n, "gpuwhy": ours})
    finally:
        for m in modules:
            drv.cuModuleUnload(m)
        drv.cuDevicePrimaryCtxRelease(dev)
    record = os.environ.get("GPUWHY_OCCUPANCY_RECORD")
    if record:
        with open(record, "w") as fh:
            json.dump({"arch": arch, "rows": rows}, fh, indent=1)
    bad = [r for r in rows if r["driver"] != r["gpuwhy"]]
    assert rows and not bad, bad[:5]
    assert len({r["registers"] for r in rows}) >= 4  # the caps give 32, 40, 64, 72 and the uncapped ~95 registers
