"""Little's law for GPU memory: how much must be in flight to reach a bandwidth.

Little's law (work in flight = throughput x latency) applied to a memory system:
to sustain ``B`` bytes/s when each request takes ``L`` seconds from issue to
data, ``B x L`` bytes must be requested and not yet returned at every moment.
Spread over the SMs, and over the threads of one SM, that gives the
occupancy (or the bytes per thread in flight) a kernel needs before the
memory system, not the program, sets its speed.

The course's worked example (reproduced by :func:`course_example`)::

    672 GB/s x 500 ns = 336,000 B = 336 KB in flight
    336 KB / 48 SMs   = 7,000 B  = 7 KB per SM
    7 KB / 4 B        = 1,750 threads per SM  > 1,536 resident threads per SM

so one 4-byte load per thread cannot keep that GPU's memory busy; wider
loads (16 B per thread: 438 threads) or several independent loads per
thread can.

Pure arithmetic: no GPU, no I/O. Units: bandwidth in GB/s (1e9 B/s, the
convention of every ``*_gbs`` field in gpuwhy), latency in seconds, bytes in
bytes (the course's "KB" is 1,000 bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Bytes each thread keeps in flight in the two cases gpuwhy reports: one
#: 32-bit load (a float) and one 128-bit vector load (a float4).
DEFAULT_BYTES_PER_THREAD = (4, 16)

#: The course's example (GB/s, s, SMs, resident threads per SM).
COURSE_EXAMPLE = {"bandwidth_gbs": 672.0, "latency_s": 500e-9, "sm_count": 48, "max_threads_per_sm": 1536}


@dataclass(frozen=True)
class ThreadNeed:
    """Threads per SM needed at ``bytes_per_thread`` bytes in flight each.

    Attributes:
        bytes_per_thread: bytes one thread has requested and not yet received.
        threads_per_sm: bytes in flight per SM / bytes_per_thread (not rounded).
        fraction_of_limit: threads_per_sm / the SM's resident-thread limit
            (above 1: not reachable by occupancy alone).
    """

    bytes_per_thread: int
    threads_per_sm: float
    fraction_of_limit: float

    @property
    def reachable(self) -> bool:
        """True when that many threads fit on one SM."""
        return self.fraction_of_limit <= 1.0

    def to_dict(self) -> dict:
        return {
            "bytes_per_thread": self.bytes_per_thread,
            "threads_per_sm": self.threads_per_sm,
            "fraction_of_limit": self.fraction_of_limit,
            "reachable": self.reachable,
        }


@dataclass(frozen=True)
class LittlesLaw:
    """Bytes in flight for ``bandwidth_gbs`` at ``latency_s`` on ``sm_count`` SMs.

    Attributes:
        bandwidth_gbs: the bandwidth to sustain, 1e9 B/s.
        latency_s: load-to-use latency of one request, s.
        sm_count: multiprocessors sharing the traffic.
        max_threads_per_sm: resident threads one SM can hold.
        needs: one :class:`ThreadNeed` per bytes-per-thread case.
        bandwidth_source, latency_source: where the two inputs came from
            (``measured by gpuwhy bench``, ``spec sheet H200 SXM``, ...).
    """

    bandwidth_gbs: float
    latency_s: float
    sm_count: int
    max_threads_per_sm: int
    needs: tuple[ThreadNeed, ...]
    bandwidth_source: str = ""
    latency_source: str = ""

    @property
    def bytes_in_flight(self) -> float:
        """bandwidth x latency, bytes (GPU-wide)."""
        return self.bandwidth_gbs * 1e9 * self.latency_s

    @property
    def bytes_in_flight_per_sm(self) -> float:
        """bytes_in_flight / sm_count, bytes."""
        return self.bytes_in_flight / self.sm_count

    def need(self, bytes_per_thread: int) -> ThreadNeed:
        """The :class:`ThreadNeed` for ``bytes_per_thread`` (computed when not precomputed)."""
        for n in self.needs:
            if n.bytes_per_thread == bytes_per_thread:
                return n
        return _need(self.bytes_in_flight_per_sm, bytes_per_thread, self.max_threads_per_sm)

    def to_dict(self) -> dict:
        return {
            "bandwidth_gbs": self.bandwidth_gbs,
            "latency_s": self.latency_s,
            "sm_count": self.sm_count,
            "max_threads_per_sm": self.max_threads_per_sm,
            "bytes_in_flight": self.bytes_in_flight,
            "bytes_in_flight_per_sm": self.bytes_in_flight_per_sm,
            "needs": [n.to_dict() for n in self.needs],
            "bandwidth_source": self.bandwidth_source,
            "latency_source": self.latency_source,
        }


def _need(per_sm: float, bytes_per_thread: int, max_threads: int) -> ThreadNeed:
    threads = per_sm / bytes_per_thread
    return ThreadNeed(int(bytes_per_thread), threads, threads / max_threads)


def littles_law(
    bandwidth_gbs: float,
    latency_s: float,
    sm_count: int,
    max_threads_per_sm: int,
    bytes_per_thread: tuple[int, ...] = DEFAULT_BYTES_PER_THREAD,
    *,
    bandwidth_source: str = "",
    latency_source: str = "",
) -> LittlesLaw:
    """Little's law for a memory system (see the module docstring).

    Args:
        bandwidth_gbs: bandwidth to sustain, GB/s (1e9 B/s); > 0.
        latency_s: load-to-use latency, s; > 0.
        sm_count: SMs; >= 1.
        max_threads_per_sm: resident-thread limit of one SM; >= 1.
        bytes_per_thread: cases to report (bytes in flight per thread), each >= 1.

    Raises:
        ValueError: a non-positive or non-finite input (the message names it).
    """
    for name, v in (("bandwidth_gbs", bandwidth_gbs), ("latency_s", latency_s)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v!r} must be a positive number")
    for name, v in (("sm_count", sm_count), ("max_threads_per_sm", max_threads_per_sm)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name}={v!r} must be a whole number >= 1")
    if not bytes_per_thread or any(int(b) != b or b < 1 for b in bytes_per_thread):
        raise ValueError(f"bytes_per_thread={bytes_per_thread!r} must be whole numbers >= 1")
    per_sm = float(bandwidth_gbs) * 1e9 * float(latency_s) / int(sm_count)
    needs = tuple(_need(per_sm, int(b), int(max_threads_per_sm)) for b in bytes_per_thread)
    return LittlesLaw(float(bandwidth_gbs), float(latency_s), int(sm_count), int(max_threads_per_sm), needs,
                      bandwidth_source, latency_source)


def course_example() -> LittlesLaw:
    """The course's example: 672 GB/s x 500 ns on 48 SMs of 1,536 threads (336 KB, 7 KB/SM, 1,750 threads)."""
    return littles_law(**COURSE_EXAMPLE, bandwidth_source="the course's example", latency_source="the course's example")
