"""The pointer chase of the latency ladder, as plain arrays: working-set sizes, the visiting
order of a random single cycle, and the addresses each node holds.

One node per 128-byte cache line (:data:`NODE_BYTES`), every line of the working set
used, consecutive nodes never in neighbouring lines (so no spatial locality or next-line
prefetch helps). Sizes are bytes; addresses are 64-bit device addresses. Pure numpy:
``gpuwhy bench --latency`` (:mod:`gpuwhy.bench.latency`) uploads and walks them.
"""

from __future__ import annotations

import numpy as np

#: Cache line of NVIDIA GPUs' L1 and L2 (bytes): 128-byte lines of four 32-byte
#: sectors (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory").
LINE_BYTES = 128
#: One chase node per cache line; each holds a 64-bit address.
NODE_BYTES = LINE_BYTES
ELEM_BYTES = 8
STRIDE_ELEMS = NODE_BYTES // ELEM_BYTES
MIN_BYTES = 4 * 1024
#: Working sets sampled 8 per octave here (the L1 edge of every NVIDIA GPU
#: since Volta: 128-256 KiB of L1 per SM).
L1_WINDOW = (64 * 1024, 512 * 1024)
DENSE_PER_OCTAVE, SPARSE_PER_OCTAVE = 8, 2


# ----------------------------------------------------------- sizes ----


def latency_sizes(
    l2_bytes: int,
    lo: int = MIN_BYTES,
    hi: int | None = None,
    *,
    l1_window: tuple[int, int] = L1_WINDOW,
    dense: int = DENSE_PER_OCTAVE,
    sparse: int = SPARSE_PER_OCTAVE,
    node_bytes: int = NODE_BYTES,
) -> list[int]:
    """Working-set sizes (bytes) for the ladder, ascending, multiples of ``node_bytes``.

    Geometric: ``sparse`` points per octave from ``lo`` to ``hi`` (default
    4 x ``l2_bytes``), ``dense`` per octave inside ``l1_window`` and inside
    [L2/4, 2 x L2] (where the L1, near/far L2 and DRAM steps fall).

    Raises:
        ValueError: ``lo`` below 5 nodes, ``hi`` < ``lo``, or a non-positive L2.
    """
    if l2_bytes <= 0:
        raise ValueError(f"l2_bytes={l2_bytes!r} must be positive")
    hi = 4 * int(l2_bytes) if hi is None else int(hi)
    if lo < 5 * node_bytes or hi < lo:
        raise ValueError(f"need {5 * node_bytes} <= lo <= hi (got lo={lo}, hi={hi})")
    windows = [l1_window, (l2_bytes / 4, 2 * l2_bytes)]

    def per_octave(x: float) -> int:
        return dense if any(a <= x * (1 + 1e-9) and x < b for a, b in windows) else sparse

    out: list[int] = []
    x = float(lo)
    while x <= hi * (1 + 1e-9):
        n = max(5, int(round(x / node_bytes))) * node_bytes
        if not out or n > out[-1]:
            out.append(n)
        x *= 2.0 ** (1.0 / per_octave(x))
    top = (hi // node_bytes) * node_bytes
    if out[-1] < top and top / out[-1] > 2 ** (0.5 / sparse):
        out.append(top)
    return out


# ------------------------------------------------------ permutation ----


def chase_order(nodes: int, rng: np.random.Generator) -> np.ndarray:
    """The order in which the chase visits ``nodes`` nodes: a permutation of 0..nodes-1.

    ``order[0] == 0`` (the walk starts at node 0); node ``order[k]`` is followed
    by ``order[k + 1]`` and the last by ``order[0]``, one cycle through every
    node. With 5 or more nodes no two consecutive visits (the wrap included)
    are neighbouring nodes, so every step jumps more than one node in memory.

    Returns: int64 array of shape ``(nodes,)``.

    Raises:
        ValueError: ``nodes`` < 1.
    """
    nodes = int(nodes)
    if nodes < 1:
        raise ValueError(f"nodes={nodes} must be >= 1")
    order = np.concatenate(([0], rng.permutation(np.arange(1, nodes, dtype=np.int64)))).astype(np.int64)
    if nodes >= 5:
        _separate_neighbours(order, rng)
    return order


def _separate_neighbours(order: np.ndarray, rng: np.random.Generator, rounds: int = 10_000) -> None:
    """Swap nodes until no consecutive pair (cyclically) are neighbours; order[0] stays 0."""
    n = order.size
    for _ in range(rounds):
        bad = np.flatnonzero(np.abs(order - np.roll(order, -1)) == 1)
        if bad.size == 0:
            return
        for i in bad:
            a = int(i) + 1 if int(i) + 1 < n else int(i)  # never move order[0]
            j = int(rng.integers(1, n))
            order[a], order[j] = order[j], order[a]
    raise ValueError(f"could not separate neighbouring nodes in a cycle of {n}")  # pragma: no cover


def cycle_from_order(order: np.ndarray, n_elems: int, stride_elems: int) -> np.ndarray:
    """The chase array of ``n_elems`` elements for a visiting ``order``.

    Node k sits at element ``k * stride_elems``; ``nxt[order[i] * stride] =
    order[i + 1] * stride`` (element index of the next node); the last node
    points back to the first. Elements between nodes are 0 and never read.

    Returns: int64 array of shape ``(n_elems,)``.

    Raises:
        ValueError: the nodes do not fit in ``n_elems`` elements.
    """
    order = np.asarray(order, dtype=np.int64)
    if stride_elems < 1 or order.size * stride_elems > n_elems:
        raise ValueError(f"{order.size} nodes at a stride of {stride_elems} do not fit in {n_elems} elements")
    pos = order * int(stride_elems)
    nxt = np.zeros(int(n_elems), dtype=np.int64)
    nxt[pos] = np.roll(pos, -1)
    return nxt


def build_cycle(n_elems: int, stride_elems: int, rng: np.random.Generator) -> np.ndarray:
    """A random single-cycle chase over ``n_elems // stride_elems`` nodes (see :func:`chase_order`).

    Nodes are every ``stride_elems``-th element (with ``stride_elems=1``: every
    element); following ``nxt`` from element 0 visits every node once and
    returns to 0. gpuwhy uses 8-byte elements and ``stride_elems = 16``, one
    node per 128-byte line.

    Returns: int64 array of shape ``(n_elems,)``.

    Raises:
        ValueError: fewer than one node, or ``stride_elems`` < 1.
    """
    if stride_elems < 1:
        raise ValueError(f"stride_elems={stride_elems} must be >= 1")
    nodes = int(n_elems) // int(stride_elems)
    return cycle_from_order(chase_order(nodes, rng), n_elems, stride_elems)


def chain_addresses(order: np.ndarray, n_elems: int, stride_elems: int, base: int, elem_bytes: int = ELEM_BYTES) -> np.ndarray:
    """The array to upload: each node holds the device address of the next node.

    ``out[order[i] * stride] = base + order[i + 1] * stride * elem_bytes``.

    Returns: uint64 array of shape ``(n_elems,)``.
    """
    order = np.asarray(order, dtype=np.int64)
    if stride_elems < 1 or order.size * stride_elems > n_elems:
        raise ValueError(f"{order.size} nodes at a stride of {stride_elems} do not fit in {n_elems} elements")
    succ = np.empty(order.size, dtype=np.int64)  # succ[k]: the node visited after node k
    succ[order] = np.roll(order, -1)
    out = np.zeros(int(n_elems), dtype=np.uint64)
    # written in memory order (a strided view), not scattered: 240 MiB chains build in a fraction of a second
    out[: order.size * int(stride_elems) : int(stride_elems)] = np.uint64(base) + (succ * (int(stride_elems) * int(elem_bytes))).astype(np.uint64)
    return out


def expected_address(order: np.ndarray, stride_elems: int, base: int, steps: int, elem_bytes: int = ELEM_BYTES) -> int:
    """Where a walk that starts at node ``order[0]`` is after ``steps`` loads."""
    return int(base) + int(order[int(steps) % len(order)]) * int(stride_elems) * int(elem_bytes)
