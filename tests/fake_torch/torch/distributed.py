"""torch.distributed for one rank (see the package docstring): every collective is local."""

from __future__ import annotations

import os


class ReduceOp:
    SUM, MIN, MAX = "sum", "min", "max"


_world = [0]


def is_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return True


def init_process_group(backend, rank=0, world_size=1, timeout=None, device_id=None) -> None:
    if world_size != 1:
        raise RuntimeError("the fake torch.distributed runs one rank only")
    _world[0] = world_size


def all_reduce(t, op=ReduceOp.SUM) -> None:
    from . import _tick

    if os.environ.get("FAKE_TORCH_WRONG") == "1" and t.a.size > 5:
        t.a[5] += 1
    _tick()


def all_gather_object(out: list, obj) -> None:
    out[0] = obj


def destroy_process_group() -> None:
    _world[0] = 0
