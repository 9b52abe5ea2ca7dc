"""What a GEMM's shape costs on tensor cores: alignment, tile quantization, wave quantization. Pure maths.

The rules are those of NVIDIA's "Matrix Multiplication Background User's Guide"
(https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html):

- **Alignment.** Tensor cores are used most efficiently when M, N and K are
  multiples of 16 bytes of the operand type: 8 elements of fp16/bf16, 16 of
  fp8/int8, 4 of tf32, 2 of fp64 (section "Tensor Core Requirements"); fp4's 32
  elements follow the same 16-byte rule. fp32 on CUDA cores has no such rule.
- **Tile quantization.** The output is computed in tiles of TM x TN; a dimension
  that is not a multiple of its tile leaves part of the last tiles doing work
  that is thrown away: efficiency = M N / (ceil(M/TM) TM x ceil(N/TN) TN).
- **Wave quantization.** With one tile per SM at a time, the tiles run in waves
  of (SM count) tiles; the last wave may be partly empty: waves = tiles / SMs,
  the last wave runs (tiles mod SMs) / SMs full, and the GPU's SM-time is used
  tiles / (ceil(waves) x SMs).

The tile is a *typical* one, stated, not the one cuBLAS will pick for the shape
(it picks among many by heuristics): 128x256 on Hopper and datacenter Blackwell
(a tile the guide lists among cuBLAS's and the size CUTLASS's Hopper examples
use for large bf16 GEMMs), 128x128 on Volta, Turing, Ampere, Ada and consumer
Blackwell. Give another with ``tile``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...archs import parse_arch
from ...errors import UsageError
from .shapes import Gemm, element_bytes
from ...units import fmt_num

GUIDE_URL = "https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html"

#: Elements per 16 bytes: the dimension multiple at which tensor cores run best, per dtype.
ALIGN_ELEMENTS: dict[str, int] = {"fp16": 8, "bf16": 8, "fp8": 16, "int8": 16, "tf32": 4, "fp64_tensor": 2, "fp4": 32}

#: The typical output tile (TM, TN) per compute-capability major version (see the module docstring).
TYPICAL_TILES: dict[int, tuple[int, int]] = {7: (128, 128), 8: (128, 128), 9: (128, 256), 10: (128, 256), 12: (128, 128)}
DEFAULT_TILE = (128, 128)


@dataclass(frozen=True)
class Misalignment:
    """One GEMM dimension that is not a multiple of ``multiple`` elements.

    ``down`` and ``up`` are the aligned sizes either side (``down`` 0 when the
    dimension is below one multiple); ``nearest`` the closer of the two (``up`` on a tie or when ``down`` is 0).
    """

    dim: str
    size: int
    multiple: int
    down: int
    up: int

    @property
    def nearest(self) -> int:
        """The aligned size closest to ``size``."""
        return self.down if self.down and self.size - self.down < self.up - self.size else self.up

    def sentence(self, dtype: str) -> str:
        """E.g. "K = 4095 is not a multiple of 8 (16 bytes of fp16): the nearest aligned size is 4096"."""
        near = self.nearest
        pad = "" if near == self.up else f" (pad up to {self.up:,})"
        return (f"{self.dim} = {self.size:,} is not a multiple of {self.multiple} ({16} bytes of {dtype}): "
                f"tensor cores lose efficiency; the nearest aligned size is {near:,}{pad}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"dim": self.dim, "size": self.size, "multiple": self.multiple, "down": self.down, "up": self.up, "nearest": self.nearest}


def alignment(gemm: Gemm, dtype: str) -> tuple[int | None, tuple[Misalignment, ...]]:
    """``(multiple, misaligned dimensions)`` of ``gemm`` for ``dtype``; multiple None
    (and nothing misaligned) for a dtype without a tensor-core rule (fp32, fp64 on CUDA cores).

    Raises:
        UsageError: an unknown dtype.
    """
    element_bytes(dtype)
    mult = ALIGN_ELEMENTS.get(dtype)
    if mult is None:
        return None, ()
    bad = []
    for dim, size in zip(("M", "N", "K"), (gemm.m, gemm.n, gemm.k)):
        if size % mult:
            down = size // mult * mult
            bad.append(Misalignment(dim, size, mult, down, down + mult))
    return mult, tuple(bad)


def typical_tile(compute_capability: str) -> tuple[tuple[int, int], str]:
    """``((TM, TN), why)``: the typical tile for a sheet's compute capability ("9.0"),
    and the words that state it."""
    try:
        major = parse_arch(compute_capability).major_minor[0]
    except UsageError:
        return DEFAULT_TILE, f"a typical {DEFAULT_TILE[0]}x{DEFAULT_TILE[1]} tile (compute capability {compute_capability!r} is not NVIDIA's; assumed)"
    tile = TYPICAL_TILES.get(major, DEFAULT_TILE)
    return tile, f"a typical {tile[0]}x{tile[1]} tile for compute capability {compute_capability} (stated, not what cuBLAS picks; --tile to change)"


@dataclass(frozen=True)
class Waves:
    """``tiles`` output tiles run ``per_wave`` at a time (one per SM).

    ``waves`` = tiles / per_wave (31.04), ``full_waves`` the whole ones, ``last_wave_fill``
    0-1 (how full the last wave runs; 1 when the tiles divide evenly), ``efficiency``
    0-1 = tiles / (ceil(waves) x per_wave).
    """

    tiles: int
    per_wave: int

    @property
    def waves(self) -> float:
        """Waves, fractional."""
        return self.tiles / self.per_wave

    @property
    def wave_count(self) -> int:
        """Waves launched (the last partial one included)."""
        return math.ceil(self.tiles / self.per_wave)

    @property
    def last_wave_fill(self) -> float:
        """How full the last wave runs, 0-1."""
        rem = self.tiles % self.per_wave
        return 1.0 if rem == 0 else rem / self.per_wave

    @property
    def efficiency(self) -> float:
        """Share of the SM-time of all waves that does work, 0-1."""
        return self.tiles / (self.wave_count * self.per_wave)

    def sentence(self) -> str:
        """E.g. "4,097 tiles on 132 SMs = 31.04 waves: the last wave runs 4% full"."""
        s = f"{self.tiles:,} tiles on {self.per_wave:,} SMs = {self.waves:.2f} waves"
        if self.tiles % self.per_wave == 0:
            return s + ": every wave runs full"
        return (s + f": the last wave runs {100 * self.last_wave_fill:.0f}% full "
                f"({100 * self.efficiency:.1f}% of the SM-time does work)")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (fractions 0-1)."""
        return {"tiles": self.tiles, "per_wave": self.per_wave, "waves": self.waves, "wave_count": self.wave_count,
                "last_wave_fill": self.last_wave_fill, "efficiency": self.efficiency}


def waves(tiles: int, sms: int) -> Waves:
    """:class:`Waves` of ``tiles`` tiles on ``sms`` SMs (one tile per SM at a time).

    Raises:
        UsageError: a count that is not a whole number above zero.
    """
    for name, v in (("tiles", tiles), ("SM count", sms)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise UsageError(f"the {name} must be a whole number greater than zero, got {v!r}")
    return Waves(tiles, sms)


@dataclass(frozen=True)
class GemmAdvice:
    """What the shape of a GEMM costs on one GPU.

    Attributes:
        dtype: the operand type; ``multiple``: its alignment in elements (None: no rule).
        misaligned: the dimensions that are not multiples.
        tile: (TM, TN); ``tile_source``: how it was chosen, in words.
        tiles_m, tiles_n: tiles along M and N; ``tile_efficiency`` 0-1 (useful share of the tiles' area).
        waves: the wave quantization on ``sm_count`` SMs.
        lines: the advice in words.
    """

    dtype: str
    multiple: int | None
    misaligned: tuple[Misalignment, ...]
    tile: tuple[int, int]
    tile_source: str
    tiles_m: int
    tiles_n: int
    tile_efficiency: float
    sm_count: int
    waves: Waves
    lines: tuple[str, ...] = ()

    @property
    def efficiency(self) -> float:
        """Tile times wave efficiency, 0-1: the share of the tensor-core time the shape can use."""
        return self.tile_efficiency * self.waves.efficiency

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (efficiencies 0-1)."""
        return {"dtype": self.dtype, "alignment_elements": self.multiple, "misaligned": [m.to_dict() for m in self.misaligned],
                "tile": list(self.tile), "tile_source": self.tile_source, "tiles_m": self.tiles_m, "tiles_n": self.tiles_n,
                "tile_efficiency": self.tile_efficiency, "sm_count": self.sm_count, "waves": self.waves.to_dict(),
                "efficiency": self.efficiency, "source": GUIDE_URL, "lines": list(self.lines)}


def gemm_advice(gemm: Gemm, dtype: str, sm_count: int, compute_capability: str = "",
                tile: tuple[int, int] | None = None, tensor_cores: bool = True) -> GemmAdvice:
    """Alignment, tile and wave quantization of ``gemm`` in ``dtype`` on a GPU of
    ``sm_count`` SMs; ``tile`` (TM, TN) overrides the typical tile of ``compute_capability``.
    Without ``tensor_cores`` no alignment rule applies.

    Raises:
        UsageError: an unknown dtype, or a tile or SM count that is not a whole number above zero.
    """
    multiple, bad = alignment(gemm, dtype) if tensor_cores else (None, ())
    if tile is None:
        tile, source = typical_tile(compute_capability)
    else:
        for v in tile:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"the tile must be two whole numbers above zero, got {tile!r}")
        source = f"the {tile[0]}x{tile[1]} tile asked for"
    tm, tn = tile
    tiles_m, tiles_n = math.ceil(gemm.m / tm), math.ceil(gemm.n / tn)
    tile_eff = gemm.m * gemm.n / (tiles_m * tm * tiles_n * tn)
    w = waves(tiles_m * tiles_n * gemm.batch, sm_count)
    lines: list[str] = []
    if multiple is None:
        lines.append(f"alignment: {dtype} {'without tensor cores' if not tensor_cores else 'runs on CUDA cores'}: no tensor-core alignment rule applies")
    elif not bad:
        lines.append(f"alignment: M, N and K are multiples of {multiple} ({dtype}): tensor cores can run at full efficiency")
    lines += [f"alignment: {m.sentence(dtype)}" for m in bad]
    batch = f" x batch {gemm.batch}" if gemm.batch > 1 else ""
    lines.append(
        f"tiles: {source}: ceil({gemm.m:,}/{tm}) x ceil({gemm.n:,}/{tn}){batch} = {tiles_m:,} x {tiles_n:,}{batch} = {w.tiles:,} tiles, "
        + ("all of their area is the output" if tile_eff == 1 else f"{fmt_num(100 * tile_eff, 4)}% of their area is the output ({_pad_note(gemm, tm, tn)})")
    )
    lines.append(f"waves: {w.sentence()}")
    if tile_eff * w.efficiency < 0.9:
        lines.append(
            f"quantization: the shape uses {100 * tile_eff * w.efficiency:.0f}% of the tensor-core time "
            f"(at most {1 / (tile_eff * w.efficiency):.2f}x faster when compute-bound with a shape or tile that fills the tiles and waves)"
        )
    return GemmAdvice(dtype, multiple, bad, (tm, tn), source, tiles_m, tiles_n, tile_eff, sm_count, w, tuple(lines))


def _pad_note(gemm: Gemm, tm: int, tn: int) -> str:
    parts = []
    if gemm.m % tm:
        parts.append(f"M = {gemm.m:,} leaves the last row of tiles {100 * (gemm.m % tm) / tm:.0f}% used")
    if gemm.n % tn:
        parts.append(f"N = {gemm.n:,} leaves the last column of tiles {100 * (gemm.n % tn) / tn:.0f}% used")
    return "; ".join(parts)


__all__ = ["ALIGN_ELEMENTS", "GUIDE_URL", "GemmAdvice", "Misalignment", "TYPICAL_TILES", "Waves", "alignment", "gemm_advice",
           "typical_tile", "waves"]
