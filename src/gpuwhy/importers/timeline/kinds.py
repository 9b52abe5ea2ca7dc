"""GPU work by kind, from kernel-name families, and communication overlapped with compute.

Families are told by lower-case substrings of the full kernel name, first
match wins (so an NCCL kernel is communication however else it is named):

- communication: ``nccl``, ``rccl``, ``allreduce``/``all_reduce``,
  ``allgather``/``all_gather``, ``reduce_scatter``, ``alltoall``, ``sendrecv``,
  ``cross_device_reduce`` (vLLM's custom all-reduce);
- attention: ``flash``, ``fmha``, ``attention``, ``attn``, ``sdpa``, ``mha``;
- convolution: ``convolution``, ``conv2d`` (1d, 3d), ``dgrad``, ``wgrad``, ``fprop``,
  ``winograd``, ``implicit_gemm``;
- GEMM: ``gemm``, ``gemv``, ``nvjet``, ``cublas``, ``cutlass``, ``xmma``, ``matmul``,
  ``splitkreduce``, Triton templates ``triton_tem``;
- normalization: ``layer_norm``, ``rms_norm``, ``group_norm``, ``batch_norm`` (with or
  without the underscore), ``bn_fw``, ``bn_bw``;
- reduction: ``reduce``, ``softmax``, ``sum_``, ``mean``, ``argmax``, ``topk``,
  ``cumsum``, ``scan``, ``sort``, Triton ``triton_red``/``triton_per``;
- elementwise: ``elementwise``, ``functor``, ``multi_tensor_apply``, ``pointwise``,
  ``copy``, ``fill``, ``triton_poi``;
- other kernels; and the memcpy and memset events as their own kinds.
"""

from __future__ import annotations

import numpy as np

from .intervals import Coverage, union
from .results import CommOverlap, KernelKind

_FAMILIES = (
    ("communication", ("nccl", "rccl", "allreduce", "all_reduce", "allgather", "all_gather", "reduce_scatter",
                       "reducescatter", "alltoall", "all_to_all", "sendrecv", "cross_device_reduce")),
    ("attention", ("flash", "fmha", "attention", "attn", "sdpa", "mha_", "_mha")),
    ("convolution", ("convolution", "conv1d", "conv2d", "conv3d", "_conv_", "conv_kernel", "dgrad", "wgrad", "fprop",
                     "winograd", "implicit_gemm", "implicit_convolve")),
    ("gemm", ("gemm", "gemv", "nvjet", "cublas", "cutlass", "xmma", "matmul", "splitkreduce", "triton_tem")),
    ("normalization", ("layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm", "groupnorm", "batch_norm",
                       "batchnorm", "instance_norm", "bn_fw", "bn_bw")),
    ("reduction", ("reduce", "softmax", "sum_", "mean", "argmax", "argmin", "topk", "cumsum", "scan", "sort",
                   "triton_red", "triton_per")),
    ("elementwise", ("elementwise", "functor", "multi_tensor_apply", "pointwise", "copy", "fill", "triton_poi")),
)
KIND_ORDER = tuple(f for f, _ in _FAMILIES) + ("other", "memcpy", "memset")


def kernel_kind(name: str) -> str:
    """The family of a kernel name (see the module docstring); ``other`` when none matches."""
    n = name.lower()
    for fam, keys in _FAMILIES:
        if any(k in n for k in keys):
            return fam
    return "other"


def kinds_of(names: list[str], name_id: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Index into :data:`KIND_ORDER` per event (``kind`` 0 kernel, 1 memcpy, 2 memset)."""
    table = np.asarray([KIND_ORDER.index(kernel_kind(n)) for n in names] or [0], dtype=np.int64)
    out = table[name_id] if name_id.size else np.empty(0, dtype=np.int64)
    out = np.where(kind == 1, KIND_ORDER.index("memcpy"), out)
    return np.where(kind == 2, KIND_ORDER.index("memset"), out)


def by_kind(kind_idx: np.ndarray, dur_us: np.ndarray) -> tuple[KernelKind, ...]:
    """Count and summed time per kind, largest time first (kinds with no event left out)."""
    total = float(dur_us.sum())
    cnt = np.bincount(kind_idx, minlength=len(KIND_ORDER))
    tim = np.bincount(kind_idx, weights=dur_us, minlength=len(KIND_ORDER))
    rows = [KernelKind(KIND_ORDER[i], int(cnt[i]), float(tim[i]) * 1e-6, 100.0 * float(tim[i]) / total if total > 0 else 0.0)
            for i in range(len(KIND_ORDER)) if cnt[i]]
    return tuple(sorted(rows, key=lambda r: (-r.time_s, -r.count)))


def comm_overlap(kind_idx: np.ndarray, st: np.ndarray, en: np.ndarray) -> CommOverlap | None:
    """Communication kernel time overlapped with compute kernels (all other kernels), or None without communication."""
    comm = kind_idx == KIND_ORDER.index("communication")
    if not comm.any():
        return None
    compute = ~comm & (kind_idx < KIND_ORDER.index("memcpy"))
    ca, cb = union(st[comm], en[comm])
    comp = Coverage(*union(st[compute], en[compute]))
    comm_us = float((cb - ca).sum())
    over = float(comp.within(ca, cb).sum())
    return CommOverlap(kernels=int(comm.sum()), comm_s=comm_us * 1e-6, overlapped_s=over * 1e-6,
                       exposed_s=(comm_us - over) * 1e-6, overlap_pct=100.0 * over / comm_us if comm_us > 0 else 0.0)


__all__ = ["KIND_ORDER", "by_kind", "comm_overlap", "kernel_kind", "kinds_of"]
