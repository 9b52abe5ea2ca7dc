"""A stand-in for ``python3`` that test_score.py hands to run_all.py (``--python``): no torch, no GPU.

- ``fake_python.py PROGRAM.py --steps N --warmup W [--fixed] [calib args]`` prints a DIAG_RESULT line
  with the step time of FAKE_TIMES (planted / fixed, seconds); a program named in FAKE_CRASH exits 1
  with a DIAG_CHECK_FAILED line; one in FAKE_DIFFER gives its twin another checksum; a calibrating
  program run without its calibration option reports ``calib_args``, and every result says which
  calibration options it was given (``got_args``).
- ``fake_python.py -m gpuwhy run ... -- python3 PROGRAM.py ...`` prints the document FAKE_DOCS maps the
  program to (a file in this folder; none: a document without a diagnosis) and, on stderr, the
  program's DIAG_RESULT line as ``gpuwhy run --json`` does.
- FAKE_SLEEP (seconds) makes each plain run take that long.
"""

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_TIMES = {  # program: (planted step s, fixed step s)
    "python_work": (0.0102, 0.0011),
    "pageable_h2d": (0.020, 0.005),
    "l2_resident": (0.0011, 0.0003),
    "d2h_sync": (0.0026, 0.0014),
}
FAKE_DOCS = {"python_work": "right.json", "pageable_h2d": "low_ceiling.json", "l2_resident": "l2_at_dram.json"}
CALIB = {"d2h_sync": "--host-units", "item_gate": "--host-units", "stream_wait": "--scan-rows"}


def result(name, argv):
    fixed = "--fixed" in argv
    planted_s, fixed_s = FAKE_TIMES.get(name, (0.002, 0.001))
    step = fixed_s if fixed else planted_s
    steps = int(argv[argv.index("--steps") + 1])
    d = {"program": name, "fixed": fixed, "steps": steps, "step_s_median": step, "stretch_s": step * steps,
         "step_s_mean": step, "check": "fake", "checksum": 42.0 + (1.0 if fixed and name in os.environ.get(
             "FAKE_DIFFER", "").split(",") else 0.0), "checksum_rtol": 1e-6,
         "got_args": [a for a in argv if a.startswith("--") and a not in ("--steps", "--warmup", "--fixed")]}
    opt = CALIB.get(name)
    if opt and opt not in argv:
        d["calib_args"] = [opt, "17"]
    return d


def main():
    argv = sys.argv[1:]
    if argv[:2] == ["-m", "gpuwhy"]:
        rest = argv[argv.index("--") + 1:]
        prog_args = rest[2:]
        name = Path(rest[1]).stem
        doc = FAKE_DOCS.get(name)
        text = (HERE / doc).read_text() if doc else json.dumps({"gpuwhy": "fake", "kind": "run", "budget": {}})
        sys.stderr.write("DIAG_RESULT " + json.dumps(result(name, prog_args)) + "\n")
        sys.stdout.write(text)
        return 0
    name = Path(argv[0]).stem
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    if name in os.environ.get("FAKE_CRASH", "").split(","):
        sys.stderr.write("Traceback ...\nDIAG_CHECK_FAILED fake failure\n")
        return 1
    print("some program output")
    print("DIAG_RESULT " + json.dumps(result(name, argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
