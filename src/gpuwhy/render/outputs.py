"""Files gpuwhy writes at the user's request: the guard lives in :mod:`gpuwhy.outputs`
(below every layer, so check/ and cli/ use the same one)."""

from __future__ import annotations

from ..outputs import MARK, writable_output

__all__ = ["MARK", "writable_output"]
