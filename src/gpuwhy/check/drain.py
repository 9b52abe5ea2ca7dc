"""The one-line drain reason of a failed `gpuwhy check`: what a Slurm health check or epilog hands to
``scontrol update nodename=NODE state=drain reason="..."`` (and a Kubernetes taint's message).

Pure: built from the judged reports. One line, no double quotes (they would end Slurm's quoted
reason) and no control characters; at most :data:`MAX_CHARS` characters, whole items only (a GPU's
failing check is never cut mid-number: the items that do not fit are counted as "and N more").
"""

from __future__ import annotations

import re

#: The longest drain reason written: `sinfo -R` shows the reason on one line, and the items that do
#: not fit are counted, never cut.
MAX_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _clean(text: str) -> str:
    """``text`` on one line: double quotes and backquotes become ``'``, control characters a space."""
    return " ".join(_CONTROL.sub(" ", text.replace('"', "'").replace("`", "'")).split())


def _gpu(index, uuid: str, device: str) -> str:
    """``GPU 3`` (nvidia-smi's index), else ``GPU GPU-8932f937-...`` (its UUID), else the model name."""
    if isinstance(index, int):
        return f"GPU {index}"
    return f"GPU {uuid}" if uuid else device


def drain_items(reports, observations, unmeasured=()) -> list[str]:
    """One item per failing check (``GPU 3 ecc_uncorrected: 2 volatile uncorrected errors``), per GPU on
    which nothing was checked, and per GPU whose measurement raised (``unmeasured``: ``(label,
    Outcome)`` pairs of :mod:`gpuwhy.bench.fanout`, ``GPU 5 (GPU-...)``: exit 4)."""
    items = []
    for rep, obs in zip(reports, observations):
        gpu = _gpu(getattr(obs, "nvml_index", None), rep.uuid, rep.device)
        for c in rep.checks:
            if c.status == "fail":
                items.append(f"{gpu} {c.name}: {c.value_text}" if c.value_text else f"{gpu} {c.name}")
        if rep.nothing_checked:
            items.append(f"{gpu}: nothing checked")
    for label, outcome in unmeasured:
        items.append(f"{label}: not measured (exit {outcome.exit_code})")
    return [_clean(i) for i in items]


def drain_reason(items: list[str], level: int) -> str | None:
    """``gpuwhy check -r<level>: item; item; ... and N more``, at most :data:`MAX_CHARS` characters
    (the first item is always kept, shortened at a word if it alone is too long); None for no items."""
    if not items:
        return None
    items = [_clean(i) for i in items]
    head = f"gpuwhy check -r{level}: "
    kept: list[str] = []
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        tail = f"; and {rest} more" if rest else ""
        line = head + "; ".join([*kept, item]) + tail
        if kept and len(line) > MAX_CHARS:
            break
        kept.append(item)
    left = len(items) - len(kept)
    line = head + "; ".join(kept) + (f"; and {left} more" if left else "")
    if len(line) > MAX_CHARS:  # one item alone too long: cut it at a word, marked
        line = line[: MAX_CHARS - 4].rsplit(" ", 1)[0] + " ..."
    return line
