"""An in-process CUPTI activity trace of any CUDA program in Python (JAX, CuPy, Triton, Numba,
cuda-python, PyTorch): kernels, copies, memsets, runtime and driver API calls, synchronisation and
NVTX ranges, through NVIDIA's ``cupti-python`` package (``python3 -m pip install 'gpuwhy[cupti]'``).

CUPTI fills buffers of records on its own threads and hands each full buffer to a callback; the
callback copies every record's fields into a plain dict at once (the record objects point into the
buffer, which CUPTI reuses when the callback returns), in the form
:mod:`gpuwhy.importers.cupti.records` turns into a Chrome trace. Times are CUPTI's (ns).

While tracing, a program that imports JAX gets ``jax.jit`` wrapped (:mod:`gpuwhy.engine.jax_costs`):
each call of a jitted function is recorded with XLA's cost analysis of its executable.

``start``, ``stop``, then ``capture()``: :func:`gpuwhy.api.run_program.cupti_profiler` writes it as a trace.
"""

from __future__ import annotations

import glob
import os
import re
import sys
import threading

from ..errors import NoDeviceError

#: The one pip line that adds the tracer.
INSTALL = ("python3 -m pip install 'gpuwhy[cupti]' (cupti-python and the CUPTI library of the driver's CUDA major "
           "version)")
#: Buffer handed to CUPTI (bytes): 8 MiB, as NVIDIA's samples use; records beyond a full buffer
#: wait for the next one, and CUPTI counts what it had to drop.
BUFFER_BYTES = 8 * 1024 * 1024


class NoCupti(NoDeviceError):
    """``cupti-python`` cannot be imported or CUPTI cannot start here (exit 3, the message says what to install)."""


#: Runtime and driver calls made many times a kernel that launch, copy or wait on nothing: the budget
#: reads none of them, and recording each costs the program time (on an H100, PyTorch made 13 runtime
#: calls a kernel, most of them these; docs/results/2026-12-07-diagnosis.md, call 5). Left unrecorded;
#: their few microseconds fall in the host time between calls. Names without CUPTI's version suffix.
QUIET_CALLS = frozenset({
    "cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaGetDeviceCount", "cudaDeviceGetAttribute",
    "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo", "cudaPointerGetAttributes", "cudaGetDeviceProperties",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaFuncGetAttributes", "cudaGetFuncBySymbol", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion",
    "cuGetProcAddress", "cuDeviceGetAttribute", "cuKernelGetName", "cuCtxGetCurrent", "cuCtxGetDevice",
    "cuDeviceGet", "cuDeviceGetCount", "cuFuncGetAttribute", "cuKernelGetAttribute", "cuPointerGetAttribute",
    "cuPointerGetAttributes", "cuStreamIsCapturing", "cuStreamGetCaptureInfo", "cuModuleGetLoadingMode",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
})


def quiet_calls(cupti) -> list[tuple[str, int]]:
    """``(domain, cbid)`` of every runtime (``"runtime"``) and driver (``"driver"``) call in
    :data:`QUIET_CALLS`, every version of each, from cupti-python's cbid enums."""
    out = []
    for domain, enum in (("runtime", getattr(cupti, "runtime_api_trace_cbid", None)),
                         ("driver", getattr(cupti, "driver_api_trace_cbid", None))):
        for member in (enum or ()):
            if re.sub(r"_v\d+$", "", member.name) in QUIET_CALLS:
                out.append((domain, int(member)))
    return out


def _kinds(cupti):
    K = cupti.ActivityKind
    return [K.CONCURRENT_KERNEL, K.MEMCPY, K.MEMSET, K.RUNTIME, K.DRIVER, K.SYNCHRONIZATION, K.MARKER]


def nvtx_injection_path() -> str | None:
    """The CUPTI library NVTX should load to report its ranges (``NVTX_INJECTION64_PATH``): the one of the
    ``nvidia-cuda-cupti`` wheel beside the interpreter, None when none is found."""
    for base in sys.path:
        hits = sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib", "libcupti.so*"))
                      + glob.glob(os.path.join(base, "nvidia", "cuda_cupti", "lib", "libcupti.so*")))
        if hits:
            return hits[0]
    return None


class CuptiTracer:
    """CUPTI activity tracing of this process (see the module docstring).

    Raises (from the constructor):
        NoCupti: ``cupti-python`` is not importable, or CUPTI refused an activity kind (the error is named).
    """

    def __init__(self) -> None:
        try:
            from cupti import cupti
        except ImportError as exc:
            raise NoCupti(f"the CUPTI tracer needs cupti-python, which is not importable here ({exc}): {INSTALL}") \
                from None
        except OSError as exc:  # the package is there but its CUDA library is not
            raise NoCupti(f"cupti-python could not load the CUPTI library ({exc}): {INSTALL}") from None
        self._cupti = cupti
        self._records: list[dict] = []
        self._pending: list = []  # the record lists CUPTI handed over, not yet turned into dicts
        self._buffers: list[tuple[int, int, int]] = []  # (start ns, end ns, records) of each buffer handled
        self._markers: dict[int, tuple] = {}
        self._names: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()
        self._start_ns = self._stop_ns = 0
        self._enabled: list = []
        self._devices: dict[int, str] = {}
        self.lost = 0
        self._set_nvtx = False
        self._jax = None  # the jax.jit hook (engine/jax_costs.py), installed by start

    # -- CUPTI's buffer callbacks (called on CUPTI's threads) --------------------------------------
    def _requested(self):
        return BUFFER_BYTES, 0

    def _completed(self, activities) -> None:
        # Kept as they are: each record object holds its buffer (cupti-python counts the buffer's
        # references), and turning them into dicts here would hold the GIL in the program's time.
        t0 = self._now()
        with self._lock:
            self._pending.append(activities)
            self._buffers.append((t0, self._now(), len(activities)))

    def _convert(self) -> None:
        """The buffers kept so far, as record dicts (after the run: none of it in the program's time)."""
        with self._lock:
            pending, self._pending = self._pending, []
        out = []
        for activities in pending:
            for a in activities:
                try:
                    r = self._record(a)
                except Exception:  # noqa: BLE001 - a record of a kind or version this reader does not know
                    r = None
                if r is not None:
                    out.append(r)
        with self._lock:
            self._records.extend(out)

    def _now(self) -> int:
        try:
            return int(self._cupti.get_timestamp())
        except Exception:  # noqa: BLE001
            return 0

    def _api_name(self, domain, cbid) -> str:
        key = (int(domain), int(cbid))
        name = self._names.get(key)
        if name is None:
            try:
                name = str(self._cupti.get_callback_name(domain, cbid))
            except Exception:  # noqa: BLE001
                name = f"cbid {cbid}"
            self._names[key] = name
        return name

    def _record(self, a) -> dict | None:
        c = self._cupti
        K = c.ActivityKind
        k = a.kind
        if k in (K.CONCURRENT_KERNEL, K.KERNEL):
            self._devices.setdefault(int(a.device_id), "")
            return {"k": "kernel", "start": a.start, "end": a.end, "name": a.name, "corr": a.correlation_id,
                    "device": a.device_id, "stream": a.stream_id, "grid": [a.grid_x, a.grid_y, a.grid_z],
                    "block": [a.block_x, a.block_y, a.block_z], "graph": a.graph_id}
        if k == K.MEMCPY:
            return {"k": "memcpy", "start": a.start, "end": a.end, "bytes": a.bytes, "corr": a.correlation_id,
                    "copy": c.ActivityMemcpyKind(a.copy_kind).name, "src": c.ActivityMemoryKind(a.src_kind).name,
                    "dst": c.ActivityMemoryKind(a.dst_kind).name, "device": a.device_id, "stream": a.stream_id}
        if k == K.MEMSET:
            return {"k": "memset", "start": a.start, "end": a.end, "bytes": a.bytes, "corr": a.correlation_id,
                    "device": a.device_id, "stream": a.stream_id}
        if k in (K.RUNTIME, K.DRIVER):
            domain = c.CallbackDomain.RUNTIME_API if k == K.RUNTIME else c.CallbackDomain.DRIVER_API
            return {"k": "runtime" if k == K.RUNTIME else "driver", "start": a.start, "end": a.end,
                    "name": self._api_name(domain, a.cbid), "corr": a.correlation_id, "pid": a.process_id,
                    "tid": a.thread_id}
        if k == K.SYNCHRONIZATION:
            return {"k": "sync", "start": a.start, "end": a.end, "corr": a.correlation_id, "stream": a.stream_id,
                    "type": c.ActivitySynchronizationType(a.type).name}
        if k == K.MARKER:
            return self._marker(a)
        return None

    def _marker(self, a) -> dict | None:
        """An NVTX start or end record; a range record once its end arrives (ids pair them)."""
        flags = int(a.flags_)
        F = self._cupti.ActivityFlag
        if flags & int(F.MARKER_INSTANTANEOUS):
            return None
        if flags & int(F.MARKER_START):
            tid = getattr(getattr(a.object_id, "pt", None), "thread_id", 0) or 0
            self._markers[int(a.id)] = (int(a.timestamp), str(a.name or ""), int(tid))
            return None
        begun = self._markers.pop(int(a.id), None)
        if begun is None:
            return None
        return {"k": "range", "start": begun[0], "end": int(a.timestamp), "name": begun[1], "tid": begun[2]}

    # -- the Profiler protocol ---------------------------------------------------------------------
    def start(self) -> None:
        c = self._cupti
        try:
            c.activity_register_callbacks(self._requested, self._completed)
            for kind in _kinds(c):
                try:
                    c.activity_enable(kind)
                except c.cuptiError as exc:
                    if kind == c.ActivityKind.MARKER:
                        continue  # NVTX ranges are a bonus: the budget does not need them
                    raise
                self._enabled.append(kind)
            for domain, cbid in quiet_calls(c):  # best effort: an older CUPTI records them all
                try:
                    if domain == "runtime":
                        c.activity_enable_runtime_api(cbid, 0)
                    else:
                        c.activity_enable_driver_api(cbid, 0)
                except Exception:  # noqa: BLE001
                    pass
        except Exception as exc:  # noqa: BLE001 - CUPTI's own error (another profiler holds it, no driver)
            for kind in self._enabled:
                try:
                    c.activity_disable(kind)
                except Exception:  # noqa: BLE001
                    pass
            from ..device.cuda_version import LIBRARY, driver_cuda_version

            if driver_cuda_version() is None:  # no driver: the one cause, not a list of guesses
                raise NoCupti(f"CUPTI could not start tracing: no NVIDIA driver here ({LIBRARY} cannot be loaded or "
                              f"answer; CUPTI: {exc}); run on a machine with an NVIDIA GPU and its driver") from None
            raise NoCupti(f"CUPTI could not start tracing ({exc}); another profiler (nsys, ncu, torch.profiler) "
                          "in this process holds CUPTI, or the driver is older than cupti-python's CUDA") from None
        if "NVTX_INJECTION64_PATH" not in os.environ:
            path = nvtx_injection_path()
            if path:
                os.environ["NVTX_INJECTION64_PATH"] = path  # read by NVTX at its first call in the program
                self._set_nvtx = True
        self._start_ns = int(c.get_timestamp())
        from .jax_costs import JaxHook, Recorder

        self._jax = JaxHook(Recorder(lambda: int(c.get_timestamp())))
        self._jax.install()  # jax.jit wrapped when the program imports jax (never imported here)

    def stop(self) -> None:
        c = self._cupti
        if self._jax is not None:
            self._jax.remove()
        if self._set_nvtx:  # not for what runs after (the ncu pass of --kernels has its own injection)
            os.environ.pop("NVTX_INJECTION64_PATH", None)
            self._set_nvtx = False
        self._sync_devices()
        self._stop_ns = int(c.get_timestamp())
        try:
            c.activity_flush_all(1)
        finally:
            for kind in self._enabled:
                try:
                    c.activity_disable(kind)
                except Exception:  # noqa: BLE001
                    pass
            self._enabled = []
        try:
            self.lost = int(c.activity_get_num_dropped_records(0, 0, 0) or 0)
        except Exception:  # noqa: BLE001 - not every cupti-python version returns the count this way
            self.lost = 0

    def _sync_devices(self) -> None:
        """Wait for the GPU work of every device this process used, so their records are complete."""
        try:
            from cuda.bindings import driver as drv
            from cuda.bindings import runtime as rt
        except ImportError:
            return
        try:
            err, cur = rt.cudaGetDevice()
            err, n = rt.cudaGetDeviceCount()
        except Exception:  # noqa: BLE001
            return
        for d in range(int(n or 0)):
            try:  # only the GPUs the program opened (an active primary context): no new context elsewhere
                err, _flags, active = drv.cuDevicePrimaryCtxGetState(d)
                if not active:
                    continue
                rt.cudaSetDevice(d)
                rt.cudaDeviceSynchronize()
            except Exception:  # noqa: BLE001 - a failed program may leave the GPU in an error state
                pass
        try:
            rt.cudaSetDevice(cur)
        except Exception:  # noqa: BLE001
            pass

    def _device_names(self) -> None:
        try:
            from cuda.bindings import runtime as rt
        except ImportError:
            return
        for d in list(self._devices):
            try:
                err, prop = rt.cudaGetDeviceProperties(d)
                name = prop.name
                self._devices[d] = (name.decode(errors="replace") if isinstance(name, bytes) else str(name)).strip("\x00 ")
            except Exception:  # noqa: BLE001
                pass

    def capture(self) -> dict:
        """What was recorded, after :meth:`stop`: ``start_ns``/``stop_ns`` (CUPTI's clock), ``pid``,
        ``devices`` (index -> name), ``lost`` (records CUPTI dropped), ``records`` (see the module
        docstring; the input of :func:`gpuwhy.importers.cupti.records.chrome_trace`, with the ``jit``
        calls of :mod:`gpuwhy.engine.jax_costs` where the program jitted JAX functions) and ``buffers``:
        ``(start ns, end ns, records)`` of each buffer CUPTI handed over (kept in the callback, turned
        into records here, after the run)."""
        self._convert()
        self._device_names()
        with self._lock:
            records = list(self._records)
            buffers = list(self._buffers)
        if self._jax is not None:
            records.extend(self._jax.recorder.taken())
        return {"start_ns": self._start_ns, "stop_ns": max(self._stop_ns, self._start_ns), "pid": os.getpid(),
                "devices": dict(self._devices), "lost": self.lost, "records": records, "buffers": buffers}


__all__ = ["BUFFER_BYTES", "CuptiTracer", "INSTALL", "NoCupti", "QUIET_CALLS", "nvtx_injection_path", "quiet_calls"]
