"""Reading machine code (SASS) out of a cubin for the tests, with no CUDA tool.

A benchmark kernel whose loads ptxas hoisted out of its loop, merged or dropped still
computes the right sum, so only its machine code shows the fault. Volta and later encode
each instruction in 16 bytes, the opcode in the low 12 bits of the first 8 (LDG 0x981, LDS
0x984, STG 0x986 on sm_90 and sm_120; :func:`test_cache_bandwidth.test_opcode_table_matches_nvdisasm`
checks the table against nvdisasm wherever nvdisasm is installed).
:func:`nvdisasm` finds that tool when it is there (``$GPUWHY_NVDISASM``, PATH, a CUDA
toolkit, or the ``nvidia-cuda-nvdisasm`` wheel) for the tests that need control flow.
"""

from __future__ import annotations

import collections
import glob
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

OPCODES = {"LDG": 0x981, "LDS": 0x984, "STG": 0x986}


def text_sections(cubin: bytes) -> dict[str, bytes]:
    """Function name -> its machine code (the ``.text.<name>`` sections of an ELF cubin)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]

    def name(off: int) -> str:
        return cubin[names + off: cubin.index(b"\0", names + off)].decode()

    return {name(s[0])[len(".text."):]: cubin[s[4]: s[4] + s[5]] for s in secs if name(s[0]).startswith(".text.")}


def opcode_counts(code: bytes) -> dict[str, int]:
    """How many LDG, LDS and STG instructions ``code`` holds (16-byte instructions)."""
    c = collections.Counter(struct.unpack_from("<Q", code, o)[0] & 0xFFF for o in range(0, len(code) - 15, 16))
    return {k: c.get(v, 0) for k, v in OPCODES.items()}


def nvdisasm() -> str | None:
    """Path of an nvdisasm binary, or None."""
    cands = [os.environ.get("GPUWHY_NVDISASM", ""), shutil.which("nvdisasm") or ""]
    cands += sorted(glob.glob("/usr/local/cuda*/bin/nvdisasm"))
    for p in sys.path:
        cands += sorted(glob.glob(os.path.join(p, "nvidia", "cu*", "bin", "nvdisasm")))
    return next((c for c in cands if c and os.access(c, os.X_OK)), None)


def disassemble(tool: str, cubin: bytes, folder: Path) -> dict[str, list[tuple[int, str]]]:
    """Function name -> [(offset, text)] per instruction and ``("label", name)`` lines, from nvdisasm."""
    path = folder / "k.cubin"
    path.write_bytes(cubin)
    text = subprocess.run([tool, "-c", str(path)], check=True, capture_output=True, text=True).stdout
    out: dict[str, list] = {}
    cur = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(".text.") and s.endswith(":"):
            cur = out.setdefault(s[len(".text."):-1], [])
        elif cur is not None and s.startswith(".L_x_") and s.endswith(":"):
            cur.append((-1, s[:-1]))
        elif cur is not None and s.startswith("/*") and s[2:6].strip("0123456789abcdef") == "" and ";" in s:
            cur.append((int(s[2:6], 16), s[8:].split(";")[0].strip()))
    return out


def loop_bodies(listing: list[tuple[int, str]]) -> list[list[str]]:
    """The instructions between each label and a later branch back to it (one list per loop)."""
    bodies = []
    for i, (off, txt) in enumerate(listing):
        if "BRA" not in txt or "`(" not in txt:
            continue
        target = txt.split("`(")[1].split(")")[0]
        start = next((j for j, (o, t) in enumerate(listing) if o == -1 and t == target), None)
        if start is not None and start < i:
            bodies.append([t for o, t in listing[start + 1: i + 1] if o >= 0])
    return bodies
