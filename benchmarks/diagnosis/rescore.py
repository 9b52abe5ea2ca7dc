"""Score recorded diagnosis-benchmark runs again, on this machine (no GPU): each ``run_all.py`` JSON with the
folder its documents were kept in (``--docs``; the tarball ``device_diagnosis.sh`` writes, unpacked), the
rows rebuilt by ``score.score_program`` from the recorded figures, and one table over all of them.

    python3 benchmarks/diagnosis/rescore.py RESULTS.json:DOCS_DIR [RESULTS.json:DOCS_DIR ...] [--json OUT]

What is re-read: the plain runs' ``DIAG_RESULT`` figures (from the JSON), each ``gpuwhy run`` document
(``DOCS/NAME.gpuwhy.json``) and the profiled runs' ``DIAG_RESULT`` lines (``DOCS/NAME.gpuwhy.err`` and
``.gpuwhy-fixed.err``, parsed by the current ``score.parse_diag_result``). Nothing is measured again: a
verdict the engine would now give differently needs the program run again.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import score  # noqa: E402


def rescore(results: Path, docs: Path) -> list[dict]:
    """The rows of one recorded run, rebuilt."""
    data = json.loads(results.read_text())
    by_name = {p.name: p for p in score.PROGRAMS}
    rows = []
    for old in data["rows"]:
        entry = by_name[old["program"]]
        runs = old.get("runs") or {}
        planted = [r["result"] for r in runs.get("planted", []) if r.get("result")]
        fixed = [r["result"] for r in runs.get("fixed", []) if r.get("result")]
        doc_file = docs / f"{entry.name}.gpuwhy.json"
        doc, doc_error = None, None
        try:
            doc = json.loads(doc_file.read_text())
        except (OSError, ValueError) as exc:
            doc_error = f"no gpuwhy document ({exc})"

        def profiled(suffix: str):
            try:
                return score.parse_diag_result((docs / f"{entry.name}.{suffix}.err").read_text())
            except OSError:
                return None

        row = score.score_program(entry, doc, planted, fixed, doc_error=doc_error,
                                  profiled=(profiled("gpuwhy"), profiled("gpuwhy-fixed")))
        row["source"] = str(results)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", metavar="RESULTS.json:DOCS_DIR")
    ap.add_argument("--json", default=None, help="write the rows and summary here")
    a = ap.parse_args(argv)
    rows: list[dict] = []
    for pair in a.pairs:
        res, _, docs = pair.partition(":")
        if not docs:
            ap.error(f"{pair!r}: give RESULTS.json:DOCS_DIR")
        rows += rescore(Path(res), Path(docs))
    summary = score.summarize(rows)
    print(score.format_table(rows, summary))
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
