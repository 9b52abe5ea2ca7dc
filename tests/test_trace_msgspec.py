"""The pieces of a trace's event list are decoded by msgspec when it is installed, else by the
standard library's json: the same events in the same order either way, the same trace verdict, and
what only json accepts (NaN) still read."""

from __future__ import annotations

import builtins
import gzip
import json
from pathlib import Path

import pytest

from gpuwhy.importers.kineto import stream

REAL = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "real"


@pytest.fixture
def no_msgspec(monkeypatch):
    """msgspec made unimportable: the standard-library path."""
    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name == "msgspec" or name.startswith("msgspec."):
            raise ImportError("No module named 'msgspec' (blocked by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)


def _events(text: str) -> list:
    return [e for piece in stream.event_pieces(text, piece_chars=4096) for e in piece]


def test_the_stdlib_path(no_msgspec):
    assert stream._piece_decoder() is json.loads
    text = (REAL / "trace_dataloader.json").read_text()
    assert _events(text) == json.loads(text)["traceEvents"]


def test_the_msgspec_path_gives_the_same_events():
    pytest.importorskip("msgspec")
    decode = stream._piece_decoder()
    assert decode is not json.loads
    for name in ("trace_dataloader.json", "trace_streams.json", "trace_item_sync.json.gz"):
        path = REAL / name
        text = gzip.open(path, "rt").read() if name.endswith(".gz") else path.read_text()
        assert _events(text) == json.loads(text)["traceEvents"], name


def test_what_only_json_accepts_is_still_read():
    pytest.importorskip("msgspec")
    decode = stream._piece_decoder()
    assert decode('[{"ts": NaN, "dur": 1}]')[0]["dur"] == 1  # msgspec refuses NaN: json decodes it
    with pytest.raises(ValueError):
        decode('[{"ts": 1')  # a cut inside an event is still an error (the cut moves on)


def test_the_trace_document_is_the_same_on_both_paths(cli, monkeypatch):
    pytest.importorskip("msgspec")
    code, fast, err = cli("trace", str(REAL / "trace_streams.json"), "--json")
    assert code == 0, err
    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name))
                        if name.startswith("msgspec") else real_import(name, *a, **k))
    code, slow, err = cli("trace", str(REAL / "trace_streams.json"), "--json")
    assert code == 0, err
    assert json.loads(fast) == json.loads(slow)
