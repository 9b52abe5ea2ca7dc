"""GPU-to-GPU figures as plain arithmetic: the byte conventions and the matrices (pure).

Convention (:data:`gpuwhy.model.multi_gpu.topology.CONVENTION`): GB/s is 1e9 B/s; a
**unidirectional** figure is the bytes copied one way divided by the time; a
**bidirectional** figure is the bytes moved both ways together divided by the time, so
a copy of N bytes each way that takes t reads 2N / t. (nvbandwidth's users asked whether
its figures counted one direction's bytes or both; gpuwhy's keys and headings say which.)
A matrix cell is the figure of one ordered pair, source row, destination column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: Cell states: a figure, the pair cannot reach each other's memory, not measured, failed.
MEASURED, NO_PEER, NOT_MEASURED, FAILED = "measured", "no peer access", "not measured", "failed"


def unidirectional_gbs(nbytes: float, seconds: float) -> float:
    """Bytes copied one way / time, GB/s: 1 GiB (1,073,741,824 B) in 10 ms is 107.4 GB/s.

    Raises:
        ValueError: a time or a byte count that is not above 0.
    """
    if seconds <= 0 or nbytes <= 0:
        raise ValueError(f"bytes {nbytes!r} and seconds {seconds!r} must be above 0")
    return float(nbytes) / float(seconds) / 1e9


def bidirectional_gbs(nbytes_each_way: float, seconds: float) -> float:
    """Bytes moved both ways together / time, GB/s: 2 x ``nbytes_each_way`` / ``seconds``.

    Raises:
        ValueError: as :func:`unidirectional_gbs`.
    """
    return 2.0 * unidirectional_gbs(nbytes_each_way, seconds)


def fraction(measured: float | None, theoretical: float | None) -> float | None:
    """measured / theoretical (None when either is missing or the theoretical is not above 0)."""
    if measured is None or theoretical is None or theoretical <= 0:
        return None
    return float(measured) / float(theoretical)


@dataclass(frozen=True)
class Matrix:
    """An n x n matrix of one figure: ``values[src][dst]`` (None where there is none) and
    ``status[src][dst]`` (:data:`MEASURED`, :data:`NO_PEER`, :data:`NOT_MEASURED`, :data:`FAILED`)."""

    values: tuple[tuple[float | None, ...], ...]
    status: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict:
        return {"values": [list(r) for r in self.values], "status": [list(r) for r in self.status]}


def assemble_matrix(n: int, values: Mapping[tuple[int, int], float | None],
                    status: Mapping[tuple[int, int], str] | None = None) -> Matrix:
    """The :class:`Matrix` of ``n`` GPUs from per-pair ``values`` ((src, dst) -> figure) and
    ``status`` (a pair missing from both is :data:`NOT_MEASURED`; one with a value and no
    status is :data:`MEASURED`).

    Raises:
        ValueError: a pair outside 0..n-1, or a value given for a pair whose status says it
            has none (a figure for a pair without peer access would be a fake).
    """
    status = dict(status or {})
    for (s, d) in (*values, *status):
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(f"pair ({s}, {d}) is outside 0..{n - 1}")
    rows_v, rows_s = [], []
    for s in range(n):
        rv, rs = [], []
        for d in range(n):
            v = values.get((s, d))
            st = status.get((s, d), MEASURED if v is not None else NOT_MEASURED)
            if v is not None and st != MEASURED:
                raise ValueError(f"pair ({s}, {d}) has a value but its status is {st!r}")
            rv.append(None if v is None else float(v))
            rs.append(st)
        rows_v.append(tuple(rv))
        rows_s.append(tuple(rs))
    return Matrix(tuple(rows_v), tuple(rows_s))


def pattern_words(n: int, seed: int, start: int = 0):
    """Words ``start .. start + n - 1`` of the check pattern ``p2p_fill`` writes
    (``microbench/p2p.cu``: a 32-bit hash of the word's index and a seed), as a uint32 array."""
    import numpy as np

    i = np.arange(int(start), int(start) + int(n), dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (i & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        x ^= ((i >> np.uint64(32)).astype(np.uint32) * np.uint32(0x9E3779B9))
        x ^= np.uint32(int(seed) & 0xFFFFFFFF)
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x7FEB352D)
        x ^= x >> np.uint32(15)
        x *= np.uint32(0x846CA68B)
        x ^= x >> np.uint32(16)
    return x
