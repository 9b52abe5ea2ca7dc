"""`gpuwhy occupancy`: the printed figures of one case, worked out from the CUDA Occupancy Calculator's rules
(tests/test_occupancy.py states them) for sm_90: 64 warps, 32 blocks, 65536 registers (16384 per
sub-partition, allocated per warp in units of 256) and 233472 B of shared memory per SM, 1 KiB reserved per block.
"""

from __future__ import annotations

import re


def test_h200_256_threads_64_registers(cli, monkeypatch):
    # 256 threads = 8 warps. Registers: 64 x 32 = 2048 per warp (a multiple of 256); 16384 // 2048 = 8 warps per
    # sub-partition x 4 = 32 warps // 8 = 4 blocks -> 32 of 64 warps = 50%, 32 x 32 = 1024 threads; a block holds
    # 8 x 2048 = 16384 registers. Threads allow 64 // 8 = 8 blocks; shared memory (0 + 1024 B) 233472 // 1024 = 228.
    # One wave: 4 x 132 SMs = 528 blocks. At 48 registers: 1536 per warp, 16384 // 1536 = 10 x 4 = 40 // 8 = 5 blocks,
    # 40 / 64 = 62.5%; at 32: 1024 per warp, 16 x 4 = 64 // 8 = 8 blocks, 100%.
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("occupancy", "--block-size", "256", "--registers", "64", "--gpu", "H200")
    assert code == 0, err
    text = " ".join(re.sub("[│┃]", " ", out).split())
    for shown in (
        "occupancy 50.0% (32 of 64 warps per SM)",
        "active per SM 4 blocks, 32 warps, 1024 threads",
        "binding limit registers",
        "per block 8 warps, 16384 registers (2048 per warp), 1024 B shared memory allocated",
        "one wave 528 blocks (4 x 132 SMs)",
        "threads 8 64 warps per SM / 8 warps per block = 8",
        "blocks 32 at most 32 blocks per SM on sm_90",
        "registers * 4 64 x 32 = 2048 registers per warp",
        "shared memory 228 0 B + 1024 B reserved = 1024 B per block; 233472 B per SM / 1024 B = 228",
        "at most 48 registers per thread: 5 blocks, 62.5%",
        "at most 32 registers per thread: 8 blocks, 100.0%",
    ):
        assert shown in text, shown
