"""Every JSON and CSV input read with a UTF-8 byte-order mark as without one, and an input that is
not the expected format refused by naming the file and what was expected, never echoing its content
(issue 31: `gpuwhy trace /etc/shadow` printed the file's first bytes)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"
BOM = b"\xef\xbb\xbf"
SECRET = "root:$6$s3cr3tHash:19000:0:99999:7:::"


def _with_bom(src: Path, dst: Path, packed: bool = False) -> Path:
    data = BOM + src.read_bytes()
    dst.write_bytes(gzip.compress(data) if packed else data)
    return dst


@pytest.mark.parametrize("packed", [False, True], ids=["json", "json.gz"])
def test_a_trace_with_a_bom_reads_as_without(cli, tmp_path, packed):
    src = FIX / "trace" / "flows_only.json"
    p = _with_bom(src, tmp_path / ("t.json.gz" if packed else "t.json"), packed)
    code, out, err = cli("trace", str(p), "--json")
    assert code == 0, err
    code0, out0, _ = cli("trace", str(src), "--json")
    strip = lambda d: {k: v for k, v in json.loads(d).items() if k not in ("source", "gpuwhy")}  # noqa: E731
    assert strip(out) == strip(out0)


@pytest.mark.parametrize("args, src", [
    (["ncu", "{}", "--gpu", "H200 SXM", "--json"], FIX / "ncu" / "raw_na.csv"),
    (["check", "--recorded", "{}", "--json"], Path("docs/results/raw/2026-12-01-h200-refactor/check.json")),
    (["roofline", "--gpu", "H200 SXM", "--measured", "--profile", "{}", "--json"], FIX / "profiles" / "h200-2026-11-29.json"),
], ids=["ncu-csv", "check-recorded", "profile"])
def test_other_json_and_csv_inputs_with_a_bom(cli, tmp_path, args, src):
    from conftest import ROOT

    src = src if src.is_absolute() else ROOT / src
    p = _with_bom(src, tmp_path / src.name)
    code, out, err = cli(*[a.replace("{}", str(p)) for a in args])
    code0, out0, err0 = cli(*[a.replace("{}", str(src)) for a in args])
    assert (code, err.replace(str(p), "X")) == (code0, err0.replace(str(src), "X")), err
    assert code0 in (0, 1) and "BOM" not in err


@pytest.mark.parametrize("args", [["trace"], ["check", "--recorded"], ["roofline", "--gpu", "H200 SXM", "--measured", "--profile"],
                                  ["ncu"], ["fleet", "summarize"], ["bench", "--quick", "--baseline"]],
                         ids=lambda a: " ".join(a))
def test_a_file_of_the_wrong_kind_is_named_never_echoed(cli, tmp_path, args):
    p = tmp_path / "shadow"
    p.write_text(SECRET + "\n")
    code, out, err = cli(*args, str(p))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "shadow" in err and "s3cr3t" not in err + out and "root:" not in err + out
