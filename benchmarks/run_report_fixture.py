"""The `gpuwhy run` document of a recorded H200 trace, for the run report's screenshots (no GPU, no PyTorch).

Usage (repo root): ``PYTHONPATH=src python3 benchmarks/run_report_fixture.py TRACE OUT.json``
then ``gpuwhy report --run OUT.json --out OUT.html`` and ``benchmarks/report_screenshot.sh``.

The window, budget, timeline and kernels are what `gpuwhy run` computes from the trace
(the whole trace from its first GPU work, as a run without --skip-first/--steps judges
it). No program is run here: the document names the program that recorded the trace
(tests/fixtures/real/EXPORTS.md), its exit code as recorded there (0), and no wall time
(null: not known), and a note says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpuwhy.api.run import TOP_KERNELS, RunResult, budget_of, to_json
from gpuwhy.api.run_program import ProgramRun
from gpuwhy.importers.kineto import read_timeline
from gpuwhy.importers.timeline.activities import crop
from gpuwhy.importers.timeline.analyze import analyze
from gpuwhy.importers.timeline.window import choose_window
from gpuwhy.render.jsonout import document
from gpuwhy.units import fmt_num


def main(trace: str, out: str) -> None:
    tl = read_timeline(trace)
    window = choose_window(tl, from_first_gpu=True)
    report = analyze(crop(tl, window.start_us, window.end_us), source=trace, top=100_000,
                     timeline_us=(window.start_us, window.end_us))
    gpu, budget, rows = budget_of(report, window)
    program = ProgramRun(("python3", "benchmarks/make_real_exports.py", "OUT"), 0, None, Path(trace))
    notes = (f"window: {window.how}, {fmt_num(window.seconds)} s",
             f"made by benchmarks/run_report_fixture.py from the trace {trace}, recorded on an H200 by "
             "benchmarks/make_real_exports.py (tests/fixtures/real/EXPORTS.md); no program was run for this page, "
             "and the wall time of the recording is not known")
    doc = document("run", to_json(RunResult(program, window, report, gpu, budget, notes, tuple(rows[:TOP_KERNELS]))))
    Path(out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: run_report_fixture.py TRACE OUT.json")
    main(sys.argv[1], sys.argv[2])
