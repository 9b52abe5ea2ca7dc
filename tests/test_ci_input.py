"""CI-grade behaviour (issue 19): hostile or malformed files, file-vs-folder, and the guard on
files gpuwhy writes. Every reader of a user's file goes through gpuwhy.inputs; every file
gpuwhy writes through gpuwhy.outputs. No GPU.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import ROOT, one_line
from gpuwhy.errors import UsageError
from gpuwhy import inputs
from gpuwhy.inputs import JSON_SLAB, loads_json, read_json

FIX = ROOT / "tests" / "fixtures"



@pytest.fixture
def junk(tmp_path):
    """A binary file (NUL bytes, like a core dump or `head -c 1M /dev/zero > f`) and a text file that is not JSON."""
    binary = tmp_path / "junk.bin"
    binary.write_bytes(b"\x7fELF" + b"\0" * 5000 + os.urandom(2000))
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not json\n")
    return binary, text


@pytest.mark.parametrize("args", [
    ["ncu", "{f}"], ["trace", "{f}"], ["check", "--recorded", "{f}"], ["roofline", "--profile", "{f}"],
    ["report", "--out", "{tmp}/r.html", "--bench", "{f}"], ["specs", "validate", "{f}"],
    ["check", "--policy", "{f}", "--recorded", "{ok}"], ["classify", "--ncu", "{f}", "--gpu", "H200"],
], ids=lambda a: " ".join(a[:2]))
def test_hostile_input_binary_file_is_one_line_from_its_first_bytes(cli, junk, tmp_path, args):
    binary, _ = junk
    ok = tmp_path / "obs.json"
    ok.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    argv = [a.format(f=binary, tmp=tmp_path, ok=ok) for a in args]
    line = one_line(*cli(*argv)[::2])
    assert "binary file" in line and "junk.bin" in line


@pytest.mark.parametrize("args", [["trace", "{f}"], ["check", "--recorded", "{f}"], ["roofline", "--profile", "{f}"],
                                  ["report", "--out", "{tmp}/r.html", "--probe", "{f}"]], ids=lambda a: a[0])
def test_hostile_input_text_that_is_not_json_is_refused_by_its_first_bytes(cli, junk, tmp_path, args):
    _, text = junk
    line = one_line(*cli(*[a.format(f=text, tmp=tmp_path) for a in args])[::2])
    assert "is not JSON (a JSON document starts with { or [, this file does not)" in line
    assert "hello" not in line  # the file's content is never echoed (issue 31)


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_hostile_input_big_json_parsed_in_slabs_gives_json_loads_result_and_errors(tmp_path, monkeypatch, pad):
    # The slab size is read at each call: 64 KiB slabs walk the same code as the 4 MiB ones over 1/64 of the
    # text (the 4 MiB slabs' 12 MiB text took 7 s here).
    slab = JSON_SLAB // 64
    monkeypatch.setattr(inputs, "JSON_SLAB", slab)
    # Every element holds "}, {" and "]}, [{" in strings, so a cut near the slab size lands in a string in
    # two of three places; `pad` shifts where. Identical elements put the cut one element on in the same
    # place: the reader once tried a slab again at each element, JSON_SLAB characters per element (pad 0
    # and 1 with 4 MiB slabs: 1 s and over 30 s). Now a slab costs at most 2 wrong cuts, then one element
    # at a time up to the last: at most 2 slab parses per slab of text, each a json.loads of about JSON_SLAB.
    events = [{"ph": "X", "name": "k}, {x" + "x" * pad, "args": {"a": [1, {"b": "]}, [{"}]}} for _ in range(3 * slab // 40)]
    text = json.dumps({"traceEvents": events, "n": 1})
    assert len(text) > 2 * slab
    big = []
    real_loads = json.loads
    monkeypatch.setattr(inputs.json, "loads", lambda t, *a, **k: (big.append(len(t)) if len(t) > slab else None,
                                                                  real_loads(t, *a, **k))[1])
    assert loads_json(text) == real_loads(text)
    assert 1 <= len(big) <= 2 * (len(text) // slab + 1), len(big)
    monkeypatch.setattr(inputs.json, "loads", real_loads)
    with pytest.raises(ValueError, match="Expecting"):
        loads_json(text[:-1])
    f = tmp_path / "t.json"
    f.write_text(text[: len(text) // 2])
    with pytest.raises(UsageError, match="is not valid JSON"):
        read_json(f, "a trace")


@pytest.mark.parametrize("args, needle", [
    (["specs", "list", "--specs", "{file}"], "is a file, not a folder"),
    (["llm", "--model", "llama-3-8b", "--gpu", "H200", "--models", "{file}"], "is a file, not a folder"),
    (["ncu", "{dir}"], "is a folder, not a file"),
    (["trace", "{dir}"], "is a folder, not a file"),
    (["check", "--recorded", "{dir}"], "is a folder, not a file"),
    (["roofline", "--profile", "{dir}"], "is a folder, not a file"),
    (["report", "--out", "{tmp}/r.html", "--bench", "{dir}"], "is a folder, not a file"),
    (["roofline", "--gpu", "H200", "--out", "{dir}"], "is a folder, not a file"),
    (["report", "--out", "{dir}", "--gpu", "H200"], "is a folder, not a file"),
    (["roofline", "--gpu", "H200", "--out", "{file}/x.png"], "is a file, not a folder"),
], ids=lambda a: " ".join(a[:2]) if isinstance(a, list) else None)
def test_file_vs_folder_messages_say_which(cli, tmp_path, args, needle):
    f = tmp_path / "a_file.txt"
    f.write_text("x")
    d = tmp_path / "a_folder"
    d.mkdir()
    line = one_line(*cli(*[a.format(file=f, dir=d, tmp=tmp_path) for a in args])[::2])
    assert needle in line


def test_report_overwrite_guard_refuses_appended_reports_and_symlinks(cli, tmp_path):
    out = tmp_path / "r.html"
    code, _, err = cli("report", "--out", str(out), "--gpu", "H200")
    assert code == 0, err
    assert cli("report", "--out", str(out), "--gpu", "H200")[0] == 0  # its own report is replaced
    with open(out, "a") as fh:
        fh.write("<p>my notes, added by hand</p>\n")
    line = one_line(*cli("report", "--out", str(out), "--gpu", "H200")[::2])
    assert "has been changed since" in line
    assert "my notes" in out.read_text()
    mine = tmp_path / "mine.html"
    mine.write_text("<html>mine</html>\n")
    link = tmp_path / "link.html"
    link.symlink_to(mine)
    line = one_line(*cli("report", "--out", str(link), "--gpu", "H200")[::2])
    assert "symbolic link" in line and mine.read_text() == "<html>mine</html>\n"


def test_junit_overwrite_guard_is_the_same_guard(cli, tmp_path):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    junit = tmp_path / "j.xml"
    assert cli("check", "--recorded", str(rec), "--junit", str(junit))[0] == 0
    assert cli("check", "--recorded", str(rec), "--junit", str(junit))[0] == 0
    with open(junit, "a") as fh:
        fh.write("<!-- mine -->\n")
    assert "has been changed since" in one_line(*cli("check", "--recorded", str(rec), "--junit", str(junit))[::2])


def test_report_edited_in_place_is_never_overwritten(cli, tmp_path):
    # Issue 31: the guard read only the end of the page, so a report edited in place was replaced.
    out = tmp_path / "r.html"
    assert cli("report", "--out", str(out), "--gpu", "H200")[0] == 0
    assert cli("report", "--out", str(out), "--gpu", "H200")[0] == 0  # its own, unchanged report is replaced
    page = out.read_text()
    assert page.rstrip().endswith("</main></body></html>")
    edited = page.replace("<h1>", "<h1>My notes: ", 1)
    assert edited != page
    out.write_text(edited)
    line = one_line(*cli("report", "--out", str(out), "--gpu", "H200")[::2])
    assert "has been changed since" in line and str(out) in line
    assert out.read_text() == edited


@pytest.mark.parametrize("args", [
    ["report", "--out", "-", "--gpu", "H200"],
    ["run", "--out", "-", "--", "python", "-c", "pass"],
])
def test_out_dash_is_refused_not_a_file_named_dash(cli, tmp_path, monkeypatch, args):
    # Issue 31: `--out -` wrote a file (or a folder) named '-'.
    monkeypatch.chdir(tmp_path)
    assert "'-'" in one_line(*cli(*args)[::2])
    assert not (tmp_path / "-").exists()
