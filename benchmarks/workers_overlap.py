"""Two spawned gpuwhy worker processes at once on GPU 0 (bench --quick's run and check's observe_device):
their time spans must overlap and both must measure. Run by benchmarks/device_21.sh; a file, not stdin,
because multiprocessing's spawn re-imports the main module."""
import json, time
from gpuwhy.bench.fanout import _in_processes
from gpuwhy.check.observe import observe_device
from gpuwhy.check.policy import Policy
from gpuwhy.cli.bench import run_one_gpu
from gpuwhy.device.select import resolve


def main() -> None:
    uuid = resolve("0").devices[0].uuid
    fields = {"quick": True, "no_save": True}
    t0 = time.time()
    outs = _in_processes([(0, run_one_gpu, ("quick", fields, uuid), ()), (1, observe_device, (uuid, Policy()), ())])
    wall = time.time() - t0
    q, c = outs
    print(json.dumps({
        "wall_s": wall, "quick_s": q.elapsed_s, "check_s": c.elapsed_s,
        "overlap": wall < q.elapsed_s + c.elapsed_s - 1.0,
        "quick_exit": q.exit_code, "quick_error": q.error[:120],
        "quick_dram_gbs": q.value and q.value["document"]["sustained_dram_gbs"],
        "check_exit": c.exit_code, "check_error": c.error[:120],
        "check_dram_gbs": c.value and c.value[0].dram_bandwidth_gbs,
    }))


if __name__ == "__main__":  # spawned workers import this file again
    main()
