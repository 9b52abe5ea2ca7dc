"""torch.cuda, as far as the worker uses it (see the package docstring)."""

from __future__ import annotations

import time


def is_available() -> bool:
    return True


def set_device(device) -> None:
    pass


def current_stream(device=None):
    return object()


class Event:
    def __init__(self, enable_timing: bool = False):
        self.t = None

    def record(self, stream=None) -> None:
        self.t = time.perf_counter()

    def query(self) -> bool:
        return self.t is not None

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: "Event") -> float:
        return (end.t - self.t) * 1e3


class nccl:  # noqa: N801 - torch.cuda.nccl
    @staticmethod
    def version():
        return (2, 99, 0)
