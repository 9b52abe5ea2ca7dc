"""What a use case tells its reader on the way (a choice it made, a figure it assumed, a
warning), kept apart from how that is shown.

Code below the CLI (``api/``) calls :func:`note` and :func:`warn`; the CLI shows them on
stderr, each as it comes, by listening (:func:`listening`, with the console's own ``note``
and ``warn``); :func:`note_later` is a note for the end of the command (shown once, after the
output, when the command succeeds). With no listener, as in the Python API, they are dropped:
the API's results carry what they need in their own ``notes``. Import-light: the standard
library only.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Optional

#: The listener now: (note, warn, note_later) callables, or None (messages are dropped).
_listener: Optional[tuple[Callable[[str], None], Callable[[str], None], Optional[Callable[[str], None]]]] = None


def note(message: str) -> None:
    """Tell the reader ``message`` (one line, shown literally), if anyone listens."""
    if _listener is not None:
        _listener[0](message)


def warn(message: str) -> None:
    """Warn the reader with ``message`` (one line, shown literally), if anyone listens."""
    if _listener is not None:
        _listener[1](message)


def note_later(message: str) -> None:
    """Tell the reader ``message`` at the end of the command (a family name's choice, "'H100' is
    the H100 SXM sheet; ..."), if anyone listens for that."""
    if _listener is not None and _listener[2] is not None:
        _listener[2](message)


@contextlib.contextmanager
def listening(on_note: Callable[[str], None], on_warn: Callable[[str], None],
              on_later: Optional[Callable[[str], None]] = None) -> Iterator[None]:
    """Within the block, hand every :func:`note` to ``on_note``, every :func:`warn` to ``on_warn``
    and every :func:`note_later` to ``on_later`` (dropped without one); the listener before is
    restored after it (nested calls stack)."""
    global _listener
    before = _listener
    _listener = (on_note, on_warn, on_later)
    try:
        yield
    finally:
        _listener = before
