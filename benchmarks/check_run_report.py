"""Checks of one `gpuwhy run --json --report` (issue 18), printed as one line: ok/FAIL, then
run_s, bins, the largest bin error (each bin's busy + idle = its length), the largest
relative share error (each share's idle part in the diagnosis = the sum of its bins; under 1e-8: float64
rounding of timestamps near 5e12 us, 2.5e-9 seen on the H100 prefill run), the busy gap
(timeline busy - (diagnosis busy + rounding left unexplained), s), <rect> in the strip against the non-empty
(bin, part) segments, whether `gpuwhy report --run` gives the same run section, whether every
kernel name is escaped, and the verdict.

Usage: python3 benchmarks/check_run_report.py RUN.json RUN.html AGAIN.html RC RC2 SECONDS
"""
import json, re, sys
doc_p, page_p, again_p, rc, rc2, secs = sys.argv[1:]

try:
    d = json.load(open(doc_p))
    from gpuwhy.importers.timeline.results import CAUSE_LABELS  # the bins name causes by label

    b, tl = d["diagnosis"], d["timeline"]  # schema 2
    bins = tl["bins"]
    worst_bin = max(abs(x["busy_s"] + sum(x["idle_s"].values()) - (x["end_s"] - x["start_s"])) for x in bins)
    tot = {c: sum(x["idle_s"][c] for x in bins) for c in tl["causes"]}
    # each share's idle part (a pageable-copy share also holds the copies' busy time) is its bins' sum;
    # the unexplained share also holds float64 rounding of the busy union, which the bins count busy
    idle = {CAUSE_LABELS.get(s["cause"], s["cause"]): s["seconds"] - s["busy_s"] for s in b["shares"]
            if s["seconds"] - s["busy_s"] > 0 and s["cause"] != "unexplained"}
    unexplained = sum(s["seconds"] for s in b["shares"] if s["cause"] == "unexplained")
    rest = unexplained - tot.get(CAUSE_LABELS.get("unexplained", "unexplained"), 0.0)
    worst_share = max([abs(tot.get(c, 0.0) - s) / s for c, s in idle.items()], default=0.0)
    busy_gap = sum(x["busy_s"] for x in bins) - (b["busy_s"] + rest)
    page, again = open(page_p).read(), open(again_p).read()
    sec = lambda t: t[t.index('<section id="run">'):t.index("</section>", t.index('<section id="run">'))]
    want = sum((x["busy_s"] > 0) + sum(v > 0 for v in x["idle_s"].values()) for x in bins)
    rects = sec(page).count("<rect ")
    raw = [k["name"] for k in d["kernels"] if "<" in k["name"] and k["name"] in page]
    ok = worst_bin < 1e-12 and worst_share < 1e-8 and rects == want and sec(page) == sec(again) and not raw \
        and abs(busy_gap) < 1e-6 and rc == "0" and rc2 == "0"
    v = b["line"][:44]
    print(f"{'ok' if ok else 'FAIL'} {secs:>6} {len(bins):4d} {worst_bin:8.1e} {worst_share:8.1e} {busy_gap:9.1e} "
          f"{rects:5d}/{want:<5d} {str(sec(page) == sec(again)):5} {str(not raw):5}  {v}")
except Exception as e:  # one line, whatever broke
    print(f"FAIL rc={rc} rc2={rc2}: {type(e).__name__}: {e}"[:150])
