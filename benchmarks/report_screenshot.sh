#!/usr/bin/env bash
# Render a `gpuwhy report` HTML file to PNG in headless Chromium: a phone-sized and a desktop-sized screenshot.
#
# Usage (repo root):
#   bash benchmarks/report_screenshot.sh REPORT.html PREFIX
#       -> PREFIX-phone.png (412 x 2400 CSS px) and PREFIX-desktop.png (1280 x 2400)
#   bash benchmarks/report_screenshot.sh --h200
#       -> builds docs/results/2026-11-29-h200-report.html from the recorded H200 JSON
#          (docs/results/raw/2026-11-29-h200-run6/) and screenshots it to
#          docs/results/2026-11-29-h200-report-{phone,desktop}.png
#   bash benchmarks/report_screenshot.sh --run [TRACE]
#       -> the `gpuwhy run` report of a recorded H200 trace (default tests/fixtures/real/trace_decode.json.gz;
#          benchmarks/run_report_fixture.py, then `gpuwhy report --run`), screenshot to
#          docs/results/2026-12-06-run-report-{phone,desktop}.png
#
# Needs chromium (Debian: `apt-get install -y chromium`; also found as chromium-browser or google-chrome,
# or set CHROMIUM=/path). No network is used: the report is self-contained, and Chromium's background
# networking, component updates and sync are switched off. The page is opened as a file:// URL.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

find_chromium() {
  if [[ -n "${CHROMIUM:-}" ]]; then echo "$CHROMIUM"; return; fi
  for c in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return; fi
  done
  echo "report_screenshot.sh: no chromium found; apt-get install -y chromium (or set CHROMIUM=/path)" >&2
  exit 3
}

shot() {  # html, png, width, height
  local html=$1 png=$2 w=$3 h=$4 profile
  profile=$(mktemp -d)
  "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$profile" \
    --window-size="$w,$h" --screenshot="$png" "file://$(realpath "$html")" >/dev/null 2>&1
  rm -rf "$profile"
  [[ -s "$png" ]] || { echo "report_screenshot.sh: chromium wrote no $png" >&2; exit 4; }
  echo "wrote $png (${w}x${h})"
}

CHROME=$(find_chromium)

if [[ "${1:-}" == "--h200" ]]; then
  RAW=docs/results/raw/2026-11-29-h200-run6
  HTML=docs/results/2026-11-29-h200-report.html
  # Points: torch.add on 2^28 fp32 (3 GiB moved) and torch.matmul 8192^3 bf16 with the times
  # gpuwhy.measure took for them on the same H200 (tests/fixtures/real/measure.json, run 7);
  # the gemv example of `gpuwhy classify --example` without a time (placed on the roof).
  # `gpuwhy report` reads the gzipped bench file as it is.
  python3 -m gpuwhy report --out "$HTML" \
    --probe "$RAW/probe.json" --bench "$RAW/bench_sweep.json.gz" --check "$RAW/check.json" \
    --latency "$RAW/latency.json" --link "$RAW/link.json" --dtype bf16 \
    --point "torch.add-2^28:268435456:3221225472:737us" \
    --point "torch.matmul-8192-bf16:1099511627776:402653184:1.55ms" \
    --point "gemv-fp16-4096:33554432:33570816"
  PREFIX=docs/results/2026-11-29-h200-report
elif [[ "${1:-}" == "--run" ]]; then
  TRACE=${2:-tests/fixtures/real/trace_decode.json.gz}
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  python3 benchmarks/run_report_fixture.py "$TRACE" "$TMP/run.json"
  HTML="$TMP/run.html"
  python3 -m gpuwhy report --run "$TMP/run.json" --out "$HTML"
  PREFIX=docs/results/2026-12-06-run-report
else
  HTML=${1:?usage: report_screenshot.sh REPORT.html PREFIX | --h200 | --run [TRACE]}
  PREFIX=${2:?usage: report_screenshot.sh REPORT.html PREFIX | --h200 | --run [TRACE]}
fi

shot "$HTML" "$PREFIX-phone.png" 412 2400
shot "$HTML" "$PREFIX-desktop.png" 1280 2400
