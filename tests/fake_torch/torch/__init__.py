"""A stand-in for the few pieces of PyTorch that gpuwhy's all-reduce worker
(gpuwhy/engine/allreduce_worker.py) uses, over numpy, for one rank: tests put this folder on
the ranks' PYTHONPATH to run the real worker through the real process starter without PyTorch
or a GPU. Not PyTorch: bf16 is held as float32; events read the host clock.
``FAKE_TORCH_WRONG=1`` makes every all-reduce of more than 5 elements add 1 to element 5."""

from __future__ import annotations

import time

import numpy as np

from . import cuda, distributed  # noqa: F401

__version__ = "0.0.0+fake"
bfloat16, float32, int32 = np.float32, np.float32, np.int32


class device:  # noqa: N801 - torch's name
    def __init__(self, kind: str, index: int = 0):
        self.type, self.index = kind, index


class Tensor:
    def __init__(self, a):
        self.a = a

    def repeat(self, k: int) -> "Tensor":
        return Tensor(np.tile(self.a, k))

    def __getitem__(self, i):
        return Tensor(self.a[i]) if isinstance(i, slice) else Tensor(self.a[i:i + 1].reshape(()))

    def copy_(self, other: "Tensor") -> "Tensor":
        self.a[...] = other.a
        return self

    def mul_(self, k) -> "Tensor":
        self.a *= k
        return self

    def __mul__(self, k) -> "Tensor":
        return Tensor(self.a * k)

    def __ne__(self, other) -> "Tensor":  # type: ignore[override]
        return Tensor(self.a != other.a)

    def nonzero(self) -> "Tensor":
        return Tensor(np.nonzero(self.a)[0])

    def item(self):
        return self.a.reshape(-1)[0].item()


def tensor(values, dtype=float32, device=None) -> Tensor:
    return Tensor(np.array(values, dtype=dtype))


def empty_like(t: Tensor) -> Tensor:
    return Tensor(np.empty_like(t.a))


def equal(a: Tensor, b: Tensor) -> bool:
    return a.a.shape == b.a.shape and bool(np.array_equal(a.a, b.a))


def _tick() -> None:
    """Let the host clock move, so an event pair around a call is never 0 apart."""
    t = time.perf_counter()
    while time.perf_counter() == t:
        pass
