"""Workers for tests/test_multi_gpu.py that a worker process can import by name (kept light:
a spawned process imports this module, not the test file)."""

from __future__ import annotations

import os
import time


def span(seconds: float, value):
    """Sleep ``seconds``; return (value, pid, start, end) with wall-clock times."""
    t0 = time.time()
    time.sleep(seconds)
    return value, os.getpid(), t0, time.time()


def cpus_now(_):
    """The CPUs this process may run on."""
    return tuple(sorted(os.sched_getaffinity(0)))


def fail_measure(message: str):
    from gpuwhy.errors import MeasurementError

    raise MeasurementError(message)


def fail_bug(message: str):
    raise ValueError(message)


#: DRAM GB/s of each fake GPU by the last hex digit of its UUID (GPU 5 is the slow one).
FAKE_DRAM = {0: 4800.0, 1: 4790.0, 2: 4810.0, 3: 4805.0, 4: 4795.0, 5: 4100.0, 6: 4800.0, 7: 4798.0}


def fake_observe(device, policy, spec_dirs=(), gpu=None):
    """A stand-in for gpuwhy.check.observe.observe_device on a fake H200 node (no CUDA)."""
    from gpuwhy.check.policy import Observations

    i = int(str(device)[-1], 16)
    if i == 3 and os.environ.get("FAKE_OBSERVE_FAIL") == "3":
        from gpuwhy.errors import MeasurementError

        raise MeasurementError("CUDA error CUDA_ERROR_ECC_UNCORRECTABLE in the bandwidth run")
    obs = Observations(device="NVIDIA H200", uuid=str(device), sheet="H200 SXM", sheet_bandwidth_gbs=4800.0,
                       sheet_fp32_tflops=66.9, sheet_tensor_tflops=989.4, tensor_precision="bf16",
                       dram_bandwidth_gbs=FAKE_DRAM[i], fp32_tflops=62.0, tensor_tflops=700.0, launch_overhead_us=2.5,
                       clock_events=(), power_capped=(), ecc_uncorrected=0, remapped_rows_pending=False,
                       pcie_gen=(5, 5), pcie_width=(16, 16), other_processes=0, driver_cuda_version=13000,
                       nvrtc_version=(13, 0))
    return obs, 1.0 + i / 10
