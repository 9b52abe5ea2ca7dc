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

Each piece is decoded by msgspec when it is installed (``pip install 'gpuwhy[fast]'``; about 1.7x
faster on a 302 MB trace, the same memory), else by the standard library's ``json``: the same
values either way (a piece msgspec refuses, e.g. one holding ``NaN``, which ``json`` accepts,
is decoded again by ``json``).

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
#: Characters read from a file at a time (the window over the text is about this long).
CHUNK_CHARS = 1 << 20
#: Failed cuts in a row after which the rest of the event list is parsed in one piece.
RETRIES = 3
_WS = "[ \t\n\r]*"
_CUT = re.compile(r"\}" + _WS + "," + _WS + r"\{")
_SKIP = re.compile(_WS).match
_DECODER = json.JSONDecoder()


def _piece_decoder():
    """``decode(text) -> list`` for one piece: msgspec's JSON decoder where it can be imported, with
    ``json.loads`` for what it refuses; else ``json.loads``. Both raise a ValueError for text that
    is not JSON."""
    try:
        import msgspec
    except ImportError:
        return json.loads
    fast = msgspec.json.Decoder().decode

    def decode(text: str):
        try:
            return fast(text)
        except msgspec.DecodeError:
            return json.loads(text)  # what only json accepts (NaN, Infinity), else its own error

    return decode


class NotStreamable(Exception):
    """The text is not a plain Chrome trace this reader can cut into pieces; parse it whole."""


class _Window:
    """The part of the text still to be parsed: all of it (a string), or a window over a text
    stream that is read :data:`CHUNK_CHARS` characters at a time as the parse needs more.

    ``text`` is the window; indices into it are moved back by :meth:`more`, which drops what
    lies before the index the parse still needs. ``eof`` once the whole rest is in ``text``.
    """

    def __init__(self, source, chunk: int) -> None:
        if isinstance(source, str):
            self.text, self.eof, self._read = source, True, None
        else:
            self.text, self.eof, self._read = "", False, source.read
        self._chunk = chunk

    def more(self, keep: int, at_least: int = 0) -> int:
        """Drop the text before ``keep`` and read on (at least ``at_least`` more characters, or to the
        end); return how far indices moved back (``keep``). A no-op at the end of the text.

        Raises:
            NotStreamable: the stream is not UTF-8 (the whole read then says so in one line).
        """
        if self.eof:
            return 0
        parts = [self.text[keep:]]
        got = 0
        while True:
            try:
                new = self._read(max(self._chunk, at_least - got))
            except UnicodeDecodeError:
                raise NotStreamable from None
            if not new:
                self.eof = True
                break
            parts.append(new)
            got += len(new)
            if got >= at_least:
                break
        self.text = "".join(parts)
        return keep

    def need(self, i: int, n: int) -> int:
        """Make ``text[i:i + n]`` present where the text is that long; return ``i`` as moved."""
        while len(self.text) - i < n and not self.eof:
            i -= self.more(i)
        return i

    def value(self, i: int):
        """``(the JSON value at i, the index after it, i as moved)``: the window grows (doubling)
        until the value is whole in it.

        Raises:
            NotStreamable: no valid value starts at ``i``.
        """
        while True:
            try:
                v, end = _DECODER.raw_decode(self.text, i)
                if end < len(self.text) or self.eof:
                    return v, end, i  # a number at the window's end may go on in the next chunk
            except (ValueError, RecursionError):
                if self.eof:
                    raise NotStreamable from None
            i -= self.more(i, len(self.text) - i)

    def skip(self, i: int) -> int:
        """The index past the whitespace at ``i`` (reading on while the window ends in whitespace)."""
        while True:
            i = _SKIP(self.text, i).end()
            if i < len(self.text) or self.eof:
                return i
            i -= self.more(i)

    def at(self, i: int, s: str) -> tuple[bool, int]:
        """``(text at i starts with s, i as moved)``."""
        i = self.need(i, len(s))
        return self.text.startswith(s, i), i


def event_pieces(source, piece_chars: int = PIECE_CHARS, chunk_chars: int = CHUNK_CHARS) -> Iterator[list]:
    """The events of a trace's JSON as lists, in order (their concatenation is the event list
    ``json.loads`` and :func:`~gpuwhy.importers.kineto.read.events_of` give).

    ``source`` is the whole text (a string) or a text stream (``read(n)`` gives up to ``n``
    characters, ``""`` at the end): a stream is read ``chunk_chars`` at a time, so what is held is
    one window of the text (about ``chunk_chars``) and one piece, whatever the file's size.

    Raises:
        NotStreamable: the text is not valid JSON or not in the usual shape; pieces already
            yielded are then to be discarded.
    """
    w = _Window(source, chunk_chars)
    i = w.skip(0)
    bare, i = w.at(i, "[")
    if bare:
        i = yield from _list(w, i + 1, piece_chars, bare=True)
    else:
        obj, i = w.at(i, "{")
        if not obj:
            raise NotStreamable
        i = w.skip(i + 1)
        seen = False
        while True:
            quote, i = w.at(i, '"')
            if not quote:
                raise NotStreamable
            key, i, _ = w.value(i)
            i = w.skip(i)
            colon, i = w.at(i, ":")
            if not colon:
                raise NotStreamable
            i = w.skip(i + 1)
            if key == "traceEvents":
                is_list, i = w.at(i, "[")
                if seen or not is_list:
                    raise NotStreamable  # json keeps the last of two; a non-list is refused by events_of
                seen = True
                i = yield from _list(w, i + 1, piece_chars, bare=False)
            else:
                _, i, _ = w.value(i)
            i = w.skip(i)
            comma, i = w.at(i, ",")
            if comma:
                i = w.skip(i + 1)
                continue
            close, i = w.at(i, "}")
            if not close:
                raise NotStreamable
            i += 1
            break
        if not seen:
            raise NotStreamable
    if w.skip(i) != len(w.text):
        raise NotStreamable


def _list(w: _Window, i: int, piece_chars: int, bare: bool):
    """Yield the pieces of the list whose ``[`` is just before ``i``; return the index after its ``]``."""
    a = w.skip(i)
    empty, a = w.at(a, "]")
    if empty:
        if bare:
            raise NotStreamable  # an empty list is not a trace
        return a + 1
    first = True
    decode = _piece_decoder()
    while True:
        # The window holds the next piece and some of what follows (or the rest of the list).
        a = w.need(a, 2 * piece_chars + 64)
        pos = a + piece_chars
        piece = None
        misses = 0
        while misses < RETRIES:
            m = _CUT.search(w.text, pos)
            if m is None:
                if w.eof:
                    break
                shift = w.more(a, len(w.text) - a)  # no cut in the window yet: read on (doubling)
                a, pos = a - shift, pos - shift
                continue
            try:
                piece = decode("[" + w.text[a:m.start() + 1] + "]")
                break
            except (ValueError, RecursionError):
                misses += 1
                pos = m.end()
        if piece is None:
            # The rest of the list in one piece (no cut left, or the cuts fell inside events).
            while not w.eof:
                a -= w.more(a, len(w.text) - a)
            piece, end = _decode("[" + w.text[a:], 0)
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


def _decode(text: str, i: int):
    try:
        return _DECODER.raw_decode(text, i)
    except (ValueError, RecursionError):
        raise NotStreamable from None


__all__ = ["CHUNK_CHARS", "PIECE_CHARS", "RETRIES", "NotStreamable", "event_pieces"]
