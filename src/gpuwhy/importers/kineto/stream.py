"""A trace's JSON text parsed one piece of its event list at a time.

``json.loads`` of a 500 MB trace builds about 2 GB of Python objects before the
first one is looked at, and frees them all at the end. Here the event list
(``traceEvents``, or a bare top-level list) is cut into pieces of about
:data:`PIECE_CHARS` characters where one event ends and the next begins (``}``,
``,``, ``{`` with only whitespace between) and each piece is parsed by ``json``
on its own, analysed and freed before the next: the same events, in the same
order, with a small fraction of the memory.

Why a cut cannot go wrong unnoticed: the first piece starts where the first
event starts; a piece that parses as a list ends where an event ends, so the
next piece starts where the next event starts. A cut that falls inside a
string or inside a nested object leaves the piece before it ending in an
unfinished value, which does not parse; the cut then moves on to the next
candidate (after :data:`RETRIES` misses the rest of the list is parsed at once).

Anything unusual (malformed text, top-level keys in an unexpected shape, a
second ``traceEvents`` key, a list with no trace events in its first piece)
raises :class:`NotStreamable`: the caller then reads the whole text the plain
way (:func:`~gpuwhy.importers.kineto.read.parse_trace_text`), which accepts or
refuses it with its usual message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from .read import looks_like_events

#: Characters per piece (about 200 events of a torch.profiler trace: parsed, scanned and freed while in cache).
PIECE_CHARS = 1 << 16
#: Failed cuts in a row after which the rest of the event list is parsed in one piece.
RETRIES = 3
_WS = "[ \t\n\r]*"
_CUT = re.compile(r"\}" + _WS + "," + _WS + r"\{")
_SKIP = re.compile(_WS).match
_DECODER = json.JSONDecoder()


class NotStreamable(Exception):
    """The text is not a plain Chrome trace this reader can cut into pieces; parse it whole."""


def _value(text: str, i: int):
    try:
        return _DECODER.raw_decode(text, i)
    except (ValueError, RecursionError):
        raise NotStreamable from None


def event_pieces(text: str, piece_chars: int = PIECE_CHARS) -> Iterator[list]:
    """The events of a trace's JSON ``text`` as lists, in order (their concatenation is the event list
    ``json.loads`` and :func:`~gpuwhy.importers.kineto.read.events_of` give).

    Raises:
        NotStreamable: the text is not valid JSON or not in the usual shape; pieces already
            yielded are then to be discarded.
    """
    i = _SKIP(text, 0).end()
    if text.startswith("[", i):
        i = yield from _list(text, i + 1, piece_chars, bare=True)
    elif text.startswith("{", i):
        i = _SKIP(text, i + 1).end()
        seen = False
        while True:
            if not text.startswith('"', i):
                raise NotStreamable
            key, i = _value(text, i)
            i = _SKIP(text, i).end()
            if not text.startswith(":", i):
                raise NotStreamable
            i = _SKIP(text, i + 1).end()
            if key == "traceEvents":
                if seen or not text.startswith("[", i):
                    raise NotStreamable  # json keeps the last of two; a non-list is refused by events_of
                seen = True
                i = yield from _list(text, i + 1, piece_chars, bare=False)
            else:
                _, i = _value(text, i)
            i = _SKIP(text, i).end()
            if text.startswith(",", i):
                i = _SKIP(text, i + 1).end()
            elif text.startswith("}", i):
                i += 1
                break
            else:
                raise NotStreamable
        if not seen:
            raise NotStreamable
    else:
        raise NotStreamable
    if _SKIP(text, i).end() != len(text):
        raise NotStreamable


def _list(text: str, i: int, piece_chars: int, bare: bool):
    """Yield the pieces of the list whose ``[`` is just before ``i``; return the index after its ``]``."""
    a = _SKIP(text, i).end()
    if text.startswith("]", a):
        if bare:
            raise NotStreamable  # an empty list is not a trace
        return a + 1
    first = True
    while True:
        m = _CUT.search(text, a + piece_chars)
        piece = None
        misses = 0
        while m is not None and misses < RETRIES:
            try:
                piece = json.loads("[" + text[a:m.start() + 1] + "]")
                break
            except (ValueError, RecursionError):
                misses += 1
                m = _CUT.search(text, m.end())
        if piece is None:
            # The rest of the list in one piece (no cut left, or the cuts fell inside events).
            piece, end = _value("[" + text[a:], 0)
            if not isinstance(piece, list):
                raise NotStreamable
            if first and not looks_like_events(piece):
                raise NotStreamable
            yield piece
            return a + end - 1
        if first and not looks_like_events(piece):
            raise NotStreamable
        first = False
        yield piece
        a = m.end() - 1


__all__ = ["PIECE_CHARS", "RETRIES", "NotStreamable", "event_pieces"]
