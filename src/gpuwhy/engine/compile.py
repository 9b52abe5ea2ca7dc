"""NVRTC -> cubin for one exact GPU architecture, with a disk cache. No GPU needed.

gpuwhy never ships or loads PTX: an NVRTC newer than the driver emits PTX the
driver rejects, and PTX JIT hides which machine code runs. Every kernel is
compiled to a cubin for the device's exact architecture (``sm_90``, or
``sm_90a`` where a kernel needs Hopper-only instructions) and loaded with
``cuda.core.ObjectCode.from_cubin``.

Cache: ``$XDG_CACHE_HOME/gpuwhy/cubin/`` (default ``~/.cache/gpuwhy/cubin/``),
one file per (source hash, arch, NVRTC version, options); ``GPUWHY_NO_CACHE=1``
turns it off. Files are written atomically (temporary file + rename), so
concurrent runs are safe.

Typical use (another engineer adding ``microbench/compute.cu``)::

    from gpuwhy.engine.compile import compile_file
    mod = compile_file("compute.cu", "sm_90", defines={"UNROLL": 8})
    mod.cubin        # bytes: an ELF cubin for sm_90
    mod.kernel_names # kernel entry points read from the cubin's symbol table

Errors: :class:`~gpuwhy.errors.NoDeviceError` when NVRTC cannot be loaded (exit 3:
the package to install, the path searched); :class:`~gpuwhy.errors.UsageError` for an architecture this NVRTC cannot
target (the message names the NVRTC needed) or a malformed arch string;
:class:`~gpuwhy.errors.MeasurementError` when NVRTC rejects a bundled source
(the message carries the first compiler error line).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..archs import Arch, parse_arch
from ..device.driver import load_nvrtc
from ..errors import MeasurementError, UsageError
from ..resources import bundled_dir

#: First CUDA (NVRTC) release that can target each architecture, and the last one
#: for architectures CUDA has dropped. Source: the CUDA Toolkit release notes
#: (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/): sm_90 arrived in
#: 11.8, sm_100/sm_120 in 12.8, sm_121 in 12.9, sm_110 (Thor, renamed from sm_101)
#: in 13.0; CUDA 13.0 dropped sm_50..sm_72.
FIRST_NVRTC = {
    50: "6.0", 52: "6.5", 53: "7.0", 60: "8.0", 61: "8.0", 62: "8.0", 70: "9.0", 72: "10.0",
    75: "10.0", 80: "11.0", 86: "11.1", 87: "11.4", 89: "11.8", 90: "11.8",
    100: "12.8", 101: "12.8", 103: "12.9", 110: "13.0", 120: "12.8", 121: "12.9",
}
LAST_NVRTC_MAJOR = {50: 12, 52: 12, 53: 12, 60: 12, 61: 12, 62: 12, 70: 12, 72: 12}

#: Options every gpuwhy kernel is compiled with (besides ``-arch``); part of the cache key.
BASE_OPTIONS = ("-std=c++17",)


@dataclass(frozen=True)
class CompiledModule:
    """One source compiled for one architecture.

    Attributes:
        name: the source's file name (``memory.cu``).
        arch: the target, e.g. ``sm_90`` or ``sm_90a``.
        cubin: the ELF cubin bytes (never PTX).
        key: the cache key (hex sha256 of source, arch, NVRTC version and options).
        nvrtc_version: ``(major, minor)`` of the NVRTC that built it.
        options: the NVRTC options besides the architecture.
        cached: True when it came from the disk cache.
        log: NVRTC's log (warnings), empty on a cache hit.
        kernel_names: kernel entry points in the cubin (see :func:`cubin_kernels`).
    """

    name: str
    arch: str
    cubin: bytes
    key: str
    nvrtc_version: tuple[int, int]
    options: tuple[str, ...]
    cached: bool
    log: str = ""
    kernel_names: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class CompileReport:
    """One row of ``gpuwhy bench --compile-only``: a bundled source for one arch."""

    source: str
    arch: str
    ok: bool
    cubin_bytes: int
    kernels: tuple[str, ...]
    cached: bool
    seconds: float
    nvrtc: str
    message: str = ""
    skipped: bool = False

    def to_dict(self) -> dict:
        """Plain data for ``--json`` (``seconds`` is compile wall time, s)."""
        return {
            "source": self.source,
            "arch": self.arch,
            "ok": self.ok,
            "skipped": self.skipped,
            "cubin_bytes": self.cubin_bytes,
            "kernels": list(self.kernels),
            "cached": self.cached,
            "seconds": self.seconds,
            "nvrtc": self.nvrtc,
            "message": self.message,
        }


def nvrtc_version() -> tuple[int, int]:
    """``(major, minor)`` of the NVRTC library cuda-bindings loads.

    Raises:
        NoDeviceError: no NVRTC library can be loaded (:func:`gpuwhy.device.driver.load_nvrtc`: the
            package to install and where it was searched; exit 3).
    """
    err, major, minor = load_nvrtc().nvrtcVersion()
    if int(err) != 0:
        raise UsageError(f"NVRTC failed to report its version ({err}); reinstall nvidia-cuda-nvrtc")
    return int(major), int(minor)


def supported_archs() -> tuple[int, ...]:
    """Compute capabilities (as ``major*10+minor``, e.g. 90) this NVRTC can target.

    Raises:
        NoDeviceError: no NVRTC library (see :func:`nvrtc_version`).
    """
    err, archs = load_nvrtc().nvrtcGetSupportedArchs()
    if int(err) != 0:
        raise UsageError(f"NVRTC failed to list its architectures ({err}); reinstall nvidia-cuda-nvrtc")
    return tuple(int(a) for a in archs)


def check_arch(arch: str) -> str:
    """Normalise ``arch`` and make sure this NVRTC can target it; returns e.g. ``"sm_90"``.

    Raises:
        UsageError: naming the architecture, the NVRTC in use, the archs it supports
            and the NVRTC release needed.
    """
    a = parse_arch(arch)
    cc, name = a.cc, a.name
    have = supported_archs()
    if cc in have:
        return name
    major, minor = nvrtc_version()
    listed = ", ".join(f"sm_{c}" for c in have)
    if cc in LAST_NVRTC_MAJOR and major > LAST_NVRTC_MAJOR[cc]:
        need = f"NVRTC {LAST_NVRTC_MAJOR[cc]}.x (CUDA {major} dropped sm_{cc}): pip install 'nvidia-cuda-nvrtc-cu{LAST_NVRTC_MAJOR[cc]}'"
    elif have and cc < min(have):
        need = f"an older NVRTC (this one starts at sm_{min(have)}); gpuwhy's kernels target sm_75 and newer"
    elif cc in FIRST_NVRTC:
        need = f"NVRTC {FIRST_NVRTC[cc]} or newer: pip install -U nvidia-cuda-nvrtc"
    else:
        need = "an NVRTC newer than this one that lists it: pip install -U nvidia-cuda-nvrtc"
    raise UsageError(f"NVRTC {major}.{minor} cannot build {name} (it supports {listed}); {name} needs {need}")


def cache_dir() -> Path:
    """The user cache folder for gpuwhy (``$XDG_CACHE_HOME/gpuwhy`` or ``~/.cache/gpuwhy``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuwhy"


def _cache_enabled() -> bool:
    return os.environ.get("GPUWHY_NO_CACHE", "") in ("", "0")


def cache_key(source: str, arch: str, nvrtc: tuple[int, int], options: tuple[str, ...]) -> str:
    """sha256 over the source text, the arch, the NVRTC version and the options (hex)."""
    h = hashlib.sha256()
    for part in (source, arch, f"nvrtc-{nvrtc[0]}.{nvrtc[1]}", *options):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def cubin_sm(cubin: bytes) -> int:
    """The SM version an ELF cubin was built for (``90`` for sm_90 and sm_90a).

    Read from ``e_flags``: bits 8-15 in the CUDA ELF ABI version 8 and later
    (NVRTC 12.x/13.x, ``e_ident[EI_ABIVERSION] >= 8``), bits 0-7 before.

    Raises:
        ValueError: if ``cubin`` is not a CUDA ELF file (``e_machine`` 190, EM_CUDA).
    """
    import struct

    if cubin[:4] != b"\x7fELF" or struct.unpack_from("<H", cubin, 0x12)[0] != 190:
        raise ValueError("not a CUDA ELF cubin")
    (flags,) = struct.unpack_from("<I", cubin, 0x30)
    return (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF


def cubin_kernels(cubin: bytes) -> tuple[str, ...]:
    """Names of the kernel entry points in an ELF cubin, sorted.

    Read from the ELF symbol table: function symbols (``STT_FUNC``) that carry
    the CUDA entry flag (``st_other & 0x10``, ``STO_CUDA_ENTRY`` in the CUDA
    ELF ABI). Device functions are not listed. Mangled C++ names appear as
    mangled; gpuwhy's kernels are ``extern "C"``.

    Raises:
        ValueError: if ``cubin`` is not a 64-bit little-endian ELF file.
    """
    import struct

    if cubin[:4] != b"\x7fELF" or cubin[4] != 2 or cubin[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF cubin")
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names: set[str] = set()
    for _name, typ, _flags, _addr, off, size, link, _info, _align, entsize in secs:
        if typ != 2:  # SHT_SYMTAB
            continue
        strtab = secs[link][4]
        step = entsize or 24
        for j in range(size // step):
            st_name, st_info, st_other, _shndx, _value, _size = struct.unpack_from("<IBBHQQ", cubin, off + j * step)
            if st_info & 0xF == 2 and st_other & 0x10:  # STT_FUNC, STO_CUDA_ENTRY
                end = cubin.index(b"\0", strtab + st_name)
                names.add(cubin[strtab + st_name : end].decode())
    return tuple(sorted(names))


def _options(defines: Mapping[str, object] | None, extra: tuple[str, ...]) -> tuple[str, ...]:
    opts = list(BASE_OPTIONS)
    for k in sorted(defines or {}):
        opts.append(f"-D{k}={defines[k]}")
    opts.extend(extra)
    return tuple(opts)


def compile_source(
    source: str,
    arch: str,
    *,
    name: str = "kernel.cu",
    defines: Mapping[str, object] | None = None,
    extra_options: tuple[str, ...] = (),
    use_cache: bool | None = None,
) -> CompiledModule:
    """Compile CUDA C++ ``source`` to a cubin for ``arch`` (checked first), through the cache.

    Args:
        source: CUDA C++ text; kernels should be ``extern "C"`` so names need no mangling.
        arch: ``sm_XX`` or ``sm_XXa``.
        name: a label for logs and error messages.
        defines: macros, passed as ``-DKEY=VALUE`` (part of the cache key).
        extra_options: further NVRTC options (part of the cache key).
        use_cache: override ``GPUWHY_NO_CACHE``.

    Raises:
        UsageError: unsupported arch (see :func:`check_arch`).
        MeasurementError: NVRTC rejected the source.
    """
    arch = check_arch(arch)
    ver = nvrtc_version()
    opts = _options(defines, tuple(extra_options))
    key = cache_key(source, arch, ver, opts)
    cache = _cache_enabled() if use_cache is None else use_cache
    path = cache_dir() / "cubin" / f"{Path(name).stem}-{arch}-{key[:24]}.cubin"
    if cache and path.is_file():
        data = path.read_bytes()
        if data[:4] == b"\x7fELF":
            return CompiledModule(name, arch, data, key, ver, opts, True, "", cubin_kernels(data))
    cubin, log = _nvrtc_cubin(source, arch, name, opts)
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cubin")
            with os.fdopen(fd, "wb") as fh:
                fh.write(cubin)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache folder only costs a recompile next time
    return CompiledModule(name, arch, cubin, key, ver, opts, False, log, cubin_kernels(cubin))


def _out_buffer(size: int) -> bytes:
    """A fresh bytes object for NVRTC to write ``size`` bytes into.

    Never ``b" " * size``: for size 1 (an empty log is one NUL) CPython returns its
    shared single-byte object, and NVRTC's write would turn every ``b" "`` in the
    process into ``b"\\x00"`` (single spaces then vanish from printed text).
    Objects of two or more bytes made by repetition are always new.
    """
    return b"\0" * max(2, int(size) + 1)


class _Worker(threading.Thread):
    """One call on a daemon thread, so that the main thread can wait in slices."""

    def __init__(self, fn, args):
        super().__init__(daemon=True, name="gpuwhy-nvrtc")
        self.fn, self.args, self.value, self.error = fn, args, None, None

    def run(self) -> None:
        try:
            self.value = self.fn(*self.args)
        except BaseException as exc:  # handed to the caller
            self.error = exc


def _interruptible(fn, *args):
    """``fn(*args)``, with Ctrl-C answered at once: NVRTC releases the interpreter while it
    compiles (seconds for the tensor-core sources), so it runs on a worker thread and the main
    thread waits in 50 ms slices, where KeyboardInterrupt is raised. Returns ``(value, worker)``;
    the worker is still running when the wait was interrupted (its program must not be freed)."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args), None
    w = _Worker(fn, args)
    w.start()
    while w.is_alive():
        w.join(0.05)
    if w.error is not None:
        raise w.error
    return w.value, w


def _nvrtc_cubin(source: str, arch: str, name: str, opts: tuple[str, ...]) -> tuple[bytes, str]:
    """Run NVRTC (through cuda.bindings, which needs no driver) and return (cubin, log).

    Raises:
        KeyboardInterrupt: Ctrl-C during the compile (within 50 ms, see :func:`_interruptible`).
    """
    nvrtc = load_nvrtc()

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    if int(err) != 0:
        raise MeasurementError(f"NVRTC could not create a program for {name} ({err})")
    interrupted = False
    try:
        args = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in opts)]
        try:
            (cerr,), _ = _interruptible(nvrtc.nvrtcCompileProgram, prog, len(args), args)
        except KeyboardInterrupt:
            interrupted = True
            raise
        _, log_size = nvrtc.nvrtcGetProgramLogSize(prog)
        log_buf = _out_buffer(log_size)
        nvrtc.nvrtcGetProgramLog(prog, log_buf)
        log = log_buf[:log_size].rstrip(b"\0 ").decode(errors="replace")
        if int(cerr) != 0:
            first = next((ln for ln in log.splitlines() if "error" in ln), log.strip().splitlines()[0] if log.strip() else str(cerr))
            raise MeasurementError(f"NVRTC failed to compile {name} for {arch}: {first.strip()}")
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        buf = _out_buffer(size)
        (gerr,) = nvrtc.nvrtcGetCUBIN(prog, buf)
        buf = buf[:size]
        if int(gerr) != 0 or size == 0 or buf[:4] != b"\x7fELF":
            raise MeasurementError(f"NVRTC produced no cubin for {name} ({arch}); gpuwhy never falls back to PTX")
        want = parse_arch(arch).cc
        if cubin_sm(bytes(buf)) != want:
            raise MeasurementError(f"NVRTC built {name} for sm_{cubin_sm(bytes(buf))} when asked for {arch}")
        return bytes(buf), log
    finally:
        if not interrupted:  # an interrupted compile still runs on its thread: leave its program be
            nvrtc.nvrtcDestroyProgram(prog)


def bundled_sources() -> list[Path]:
    """Every kernel source shipped with gpuwhy (``microbench/*.cu``), sorted by name."""
    return sorted(bundled_dir("microbench").glob("*.cu"))


def source_path(file_name: str) -> Path:
    """Path of the bundled source ``file_name`` (e.g. ``memory.cu``).

    Raises:
        UsageError: no such bundled source (the message lists them).
    """
    p = bundled_dir("microbench") / file_name
    if not p.is_file():
        have = ", ".join(s.name for s in bundled_sources())
        raise UsageError(f"no bundled kernel source {file_name!r}; have: {have}")
    return p


def compile_file(
    file_name: str, arch: str, *, defines: Mapping[str, object] | None = None, use_cache: bool | None = None
) -> CompiledModule:
    """Compile the bundled ``microbench/<file_name>`` for ``arch`` (see :func:`compile_source`).

    A source whose first lines contain ``// gpuwhy: arch-specific`` is built for
    the ``a`` target (``sm_90`` -> ``sm_90a``): it uses instructions that only
    exist on that exact chip.
    """
    src = source_path(file_name).read_text()
    a = parse_arch(arch)
    if not a.suffix and "// gpuwhy: arch-specific" in src[:2000]:
        a = Arch(a.cc, "a")
    return compile_source(src, a.name, name=file_name, defines=defines, use_cache=use_cache)


_NEEDS = re.compile(r"//\s*gpuwhy:\s*needs\s+(\S+)\s*(\([^)]*\))?")


def needs_arch(source: str) -> tuple[int, str] | None:
    """``(cc, why)`` from a ``// gpuwhy: needs sm_80 (why)`` line near the top of a source, or None;
    ``cc`` as :attr:`gpuwhy.archs.Arch.cc` (80).

    The oldest architecture whose instructions the source uses (``mma.sync m16n8k16``
    needs sm_80): ``--compile-only`` skips it, and says why, for an older target.

    Raises:
        UsageError: a needs line whose architecture :func:`~gpuwhy.archs.parse_arch` cannot read.
    """
    m = _NEEDS.search(source[:2000])
    return (parse_arch(m.group(1), what="a `// gpuwhy: needs` line's architecture").cc, m.group(2) or "") if m else None


def compile_all(arch: str, *, use_cache: bool | None = None) -> list[CompileReport]:
    """Compile every bundled source for ``arch`` (``gpuwhy bench --compile-only``).

    A source that tests an architecture-specific feature macro
    (``__CUDA_ARCH_FEAT_SM90_ALL`` and the like) is also compiled for the ``a``
    target of ``arch`` (``sm_90`` -> ``sm_90a``; architectures from sm_90 on).
    A module with no kernel for a target (a source that compiles to nothing
    outside its architecture) is reported ok with a message saying so.
    A source marked ``// gpuwhy: needs sm_XX`` (:func:`needs_arch`) is reported skipped, with
    the reason, for an older ``arch``. A source NVRTC rejects is reported (``ok=False`` and the message), not
    raised; an unsupported ``arch`` raises :class:`UsageError` before anything
    compiles.
    """
    import time

    arch = check_arch(arch)
    a = parse_arch(arch)
    ver = "%d.%d" % nvrtc_version()
    reports = []
    for path in bundled_sources():
        text = path.read_text()
        need = needs_arch(text)
        if need is not None and a.cc < need[0]:
            reports.append(CompileReport(path.name, arch, True, 0, (), False, 0.0, ver,
                                         f"skipped: needs sm_{need[0]}{' ' + need[1] if need[1] else ''}", skipped=True))
            continue
        targets = [arch]
        if not a.suffix and a.cc >= 90 and "__CUDA_ARCH_FEAT_SM" in text:
            targets.append(Arch(a.cc, "a").name)
        for target in targets:
            t0 = time.perf_counter()
            try:
                mod = compile_source(text, target, name=path.name, use_cache=use_cache)
                msg = "" if mod.kernel_names else f"no kernels for {target} (the source targets other architectures)"
                reports.append(
                    CompileReport(path.name, mod.arch, True, len(mod.cubin), mod.kernel_names, mod.cached,
                                  time.perf_counter() - t0, ver, msg)
                )
            except MeasurementError as exc:
                reports.append(CompileReport(path.name, target, False, 0, (), False, time.perf_counter() - t0, ver, str(exc)))
    return reports
