"""One GPU, one stream, memory that is always freed, CUDA errors as gpuwhy errors.

Usage (the whole engine API other benchmarks need)::

    from gpuwhy.engine.context import open_device
    from gpuwhy.engine.timing import time_gpu

    with open_device("0") as ctx:                      # NoDeviceError (exit 3) without a GPU
        k = ctx.kernel("compute.cu", "fma_fp32")       # NVRTC -> cubin for ctx.info.arch, cached
        with ctx.alloc(1 << 20) as buf:                # freed on every path; OOM -> DeviceOutOfMemory
            ctx.launch(k, grid, block, buf.ptr, np.int32(n))
            m = time_gpu(ctx.stream, ctx.events, lambda i: ctx.launch(k, grid, block, buf.ptr, np.int32(n)))
            out = ctx.download(buf, np.float32, n)     # syncs; CUDA errors -> MeasurementError (exit 4)

Timed loops take a launcher built once (``go = ctx.launcher(k, grid, block)``, then
``go(*args)``); host-link benchmarks take pinned host buffers (:meth:`GpuContext.pinned`),
bound async copies (:meth:`GpuContext.copier`) and a second stream
(:meth:`GpuContext.side_stream`). Outside ``engine/`` and ``device/`` nothing imports cuda.

Kernel arguments follow cuda.core's rules: a Python ``int`` is passed as a
pointer (``intptr_t``); pass sizes and scalars as numpy scalars of the C type
(``np.int32``, ``np.uint64``, ``np.float32``, ...).

Memory comes from plain ``cuMemAlloc`` (never managed memory), so every buffer
is 256-byte aligned and the 16-byte vector kernels can use it directly.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Mapping

from ..archs import parse_arch
from ..device.uuids import with_uuid_prefix
from ..errors import GpuwhyError, MeasurementError, NoDeviceError, UsageError
from ..device.cuda_version import gpu_packages_missing_here as gpu_packages_missing
from ..units import fmt_counted


class DeviceOutOfMemory(MeasurementError):
    """An allocation did not fit in the GPU's free memory (callers skip the size with a note)."""


@dataclass(frozen=True)
class DeviceInfo:
    """What the engine read off the device (cuda.core / the driver API).

    Attributes:
        index: CUDA device ordinal.
        name: as the driver reports it (``NVIDIA H200``).
        uuid: ``GPU-xxxxxxxx-...`` (NVML's form).
        arch: ``sm_90``: the cubin target for this device.
        sm_count: multiprocessors.
        l2_bytes: L2 cache size, bytes.
        total_memory_bytes: device memory, bytes.
        max_threads_per_sm: resident threads per multiprocessor.
        driver_cuda_version: ``"13.0"``: the CUDA version the driver supports.
        pci_device_id: ``"0x2335"`` or None.
    """

    index: int
    name: str
    uuid: str
    arch: str
    sm_count: int
    l2_bytes: int
    total_memory_bytes: int
    max_threads_per_sm: int
    driver_cuda_version: str
    pci_device_id: str | None = None

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return dict(self.__dict__)


def _err_name(err) -> str:
    try:
        from cuda.bindings import driver

        e, name = driver.cuGetErrorName(err)
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return str(err)


def check(result, what: str):
    """Unpack a cuda.bindings driver call's ``(CUresult, *values)``; raise on failure.

    Returns the single value, a tuple of values, or None.

    Raises:
        DeviceOutOfMemory: for CUDA_ERROR_OUT_OF_MEMORY.
        MeasurementError: for any other error, naming ``what`` and the error.
    """
    from cuda.bindings import driver

    err, *vals = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        name = _err_name(err)
        if err == driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
            raise DeviceOutOfMemory(f"{what}: {name}")
        raise MeasurementError(f"CUDA error {name} in {what}; the GPU or driver failed during the measurement")
    if not vals:
        return None
    return vals[0] if len(vals) == 1 else tuple(vals)


def as_gpuwhy_error(exc: BaseException, what: str = "a CUDA call") -> GpuwhyError | None:
    """The gpuwhy error for an exception raised by cuda.core (its ``CUDAError`` and
    friends; a driver function libcuda lacks, a driver older than cuda-bindings needs, is the
    :class:`NoDeviceError` :func:`gpuwhy.device.driver.missing_driver_function` words), or None
    when ``exc`` is not a CUDA error."""
    if isinstance(exc, GpuwhyError):
        return exc
    names = {c.__name__ for c in type(exc).__mro__}
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "CUDAError" in names or "CUDA_ERROR" in text or "cudaError" in text:
        if "OUT_OF_MEMORY" in text:
            return DeviceOutOfMemory(f"{what}: {text}")
        return MeasurementError(f"CUDA error in {what}: {text}")
    from ..device.driver import missing_driver_function

    missing = missing_driver_function(exc)
    return NoDeviceError(missing) if missing else None


def init_driver() -> int:
    """Initialise the CUDA driver and return the number of devices.

    Raises:
        NoDeviceError: ``CUDA_VISIBLE_DEVICES`` hiding every GPU, no cuda-bindings (the pip
            line), no driver library, cuInit failure, or no device (one line; a set
            ``CUDA_VISIBLE_DEVICES`` is explained by :func:`gpuwhy.device.visible.explain_no_device`).
    """
    import os

    from ..device.visible import cvd_hides_all_message

    hidden = cvd_hides_all_message(os.environ.get("CUDA_VISIBLE_DEVICES"))
    if hidden:
        raise NoDeviceError(hidden)
    try:
        from cuda.bindings import driver
    except ImportError:
        raise gpu_packages_missing("cuda-bindings") from None
    except Exception as exc:
        raise NoDeviceError(f"cuda-bindings cannot be loaded ({type(exc).__name__}: {exc}); reinstall it") from None
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:
        from ..device.driver import missing_driver_function

        missing = missing_driver_function(exc, "cuInit")
        if missing:
            raise NoDeviceError(missing) from None
        raise NoDeviceError("no NVIDIA driver found (libcuda cannot be loaded); `gpuwhy bench` needs a GPU; "
                            "`gpuwhy bench --compile-only --arch sm_XX` works without one") from None
    from ..device.visible import explain_no_device

    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if err != driver.CUresult.CUDA_SUCCESS:
        reason = f"cuInit: {_err_name(err)}"
        # A variable that hides or repeats GPUs fails cuInit with NO_DEVICE, or (a repeat, on the R580
        # driver) with INVALID_DEVICE: whatever cuInit says, a set variable is explained first.
        said = explain_no_device(cvd, reason) if cvd is not None else None
        if said:
            raise NoDeviceError(said)
        if _err_name(err) == "CUDA_ERROR_NO_DEVICE":
            raise NoDeviceError(f"the CUDA driver sees no GPU ({reason}); check `nvidia-smi`")
        raise NoDeviceError(f"the CUDA driver did not initialise ({_err_name(err)}); check `nvidia-smi`")
    err, n = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or n < 1:
        reason = f"cuDeviceGetCount: {_err_name(err) if err != driver.CUresult.CUDA_SUCCESS else '0 devices'}"
        raise NoDeviceError(explain_no_device(cvd, reason) or f"the CUDA driver sees no GPU ({reason}); check `nvidia-smi`")
    return int(n)


def resolve_device(spec: str | int | None, count: int) -> int:
    """The CUDA ordinal to open for ``spec``: an int is a CUDA ordinal; text is any ``-i`` form,
    read by :mod:`gpuwhy.device.select` (an index is nvidia-smi's); None is the first GPU in
    nvidia-smi's order (ordinal 0 when there is one GPU). ``count`` is the CUDA device count.
    (Without NVML an index is read as the CUDA ordinal; the device the result names says which ran.)

    Raises:
        UsageError: an ordinal out of range, or text naming no visible GPU or several
            (the engine opens one; the message lists them).
        NoDeviceError: as :func:`gpuwhy.device.select.resolve`.
    """
    if isinstance(spec, int) and not isinstance(spec, bool):
        if not 0 <= spec < count:
            raise UsageError(f"CUDA device {spec} does not exist; this process sees {fmt_counted(count, 'GPU')}: 0..{count - 1}")
        return spec
    if spec is None and count == 1:
        return 0
    from ..device.select import only_one, resolve

    text = None if spec is None or not str(spec).strip() else str(spec).strip()
    return only_one(resolve(text), text, "a measurement").cuda_ordinal


def device_identity(index: int, via_torch: bool = False) -> tuple[str | None, int]:
    """``(UUID or None, L2 bytes or 0)`` of GPU ``index`` (CUDA order), read through PyTorch
    (``via_torch``: its view of the device) or cuda.core; never raises."""
    uuid, l2 = None, 0
    try:
        if via_torch:
            import torch

            p = torch.cuda.get_device_properties(index)
            u, l2 = getattr(p, "uuid", None), int(getattr(p, "L2_cache_size", 0) or 0)
        else:
            from cuda.core import Device

            d = Device(index)
            u, l2 = d.uuid, int(d.properties.l2_cache_size)
        uuid = None if u is None else str(u)
    except Exception:
        pass
    return uuid, l2


class _Allocation:
    """Memory freed once: by :meth:`free`, or on leaving a ``with`` block. Errors while
    freeing (after a failed kernel) are ignored. Subclasses name the driver call."""

    _free_call = ""  # the cuda.bindings.driver function that frees ``ptr``

    def __init__(self, ctx: "GpuContext", ptr: int, nbytes: int, live: set):
        self.ctx, self.ptr, self.nbytes, self._live_set = ctx, ptr, nbytes, live

    def free(self) -> None:
        """Free once; errors are ignored."""
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            self._live_set.discard(self)
            try:
                from cuda.bindings import driver

                getattr(driver, self._free_call)(ptr)
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.free()


class DeviceBuffer(_Allocation):
    """A ``cuMemAlloc`` allocation. Use as a context manager, or call :meth:`free`.

    Attributes: ``ptr`` (int device address, pass it as a kernel argument), ``nbytes``.
    """

    _free_call = "cuMemFree"

    def __init__(self, ctx: "GpuContext", ptr: int, nbytes: int):
        super().__init__(ctx, ptr, nbytes, ctx._live)

    def __repr__(self) -> str:
        return f"DeviceBuffer(0x{self.ptr:x}, {self.nbytes} B)"


class HostBuffer(_Allocation):
    """Page-locked host memory from ``cuMemHostAlloc`` (what PyTorch's ``pin_memory=True``
    allocates: the copy engines reach it by DMA). Use as a context manager, or call :meth:`free`.

    Attributes: ``ptr`` (int host address), ``nbytes``, ``array`` (a numpy uint8 view of the
    ``nbytes`` bytes; do not use it after :meth:`free`).
    """

    _free_call = "cuMemFreeHost"

    def __init__(self, ctx: "GpuContext", ptr: int, nbytes: int):
        import ctypes

        import numpy as np

        super().__init__(ctx, ptr, nbytes, ctx._live_host)
        self.array = np.ctypeslib.as_array((ctypes.c_uint8 * int(nbytes)).from_address(ptr))


class SideStream:
    """A second stream beside the context's, joined to it by two events (see
    :meth:`GpuContext.side_stream`). ``stream`` is the cuda.core stream."""

    def __init__(self, main):
        self.main = main
        self.stream = self.fork_event = self.join_event = None

    def open(self, device) -> None:
        """Create the stream and the two events (what was made before a failure is closed by :meth:`close`)."""
        self.stream = device.create_stream()
        self.fork_event = device.create_event()
        self.join_event = device.create_event()

    def fork(self) -> None:
        """The side stream waits for the work queued so far on the main one."""
        self.main.record(self.fork_event)
        self.stream.wait(self.fork_event)

    def join(self) -> None:
        """The main stream waits for the work queued so far on the side one."""
        self.stream.record(self.join_event)
        self.main.wait(self.join_event)

    def close(self) -> None:
        """Wait for both streams, then close the events and the side stream (errors ignored)."""
        for s in (self.main, self.stream):
            if s is not None:
                with contextlib.suppress(Exception):
                    s.sync()
        for obj in (self.fork_event, self.join_event, self.stream):
            if obj is not None:
                with contextlib.suppress(Exception):
                    obj.close()


class GpuContext:
    """A device made current, one non-blocking stream, an event pool, loaded modules.

    Build with :func:`open_device`. Everything it allocated is released on exit,
    on every path; a CUDA error raised inside the ``with`` block leaves it as
    :class:`~gpuwhy.errors.MeasurementError` (or :class:`DeviceOutOfMemory`).
    """

    #: GpuContexts open in this process; with more than one, the calls that act on the current
    #: context (allocations, copies to and from the host, module loads, launches) make theirs current first.
    _open = 0

    def __init__(self, index: int):
        from cuda.bindings import driver
        from cuda.core import Device

        from .timing import EventPool

        self._closed = True  # until it counts as open
        self._live: set[DeviceBuffer] = set()
        self._live_host: set[HostBuffer] = set()
        self._modules: dict = {}
        self._configs: dict = {}
        self._spin_kernel = None
        self.device = Device(index)
        self.device.set_current()
        self.cu_context = _current_context()
        self.stream = self.device.create_stream()
        self.events = EventPool(self.device)
        p = self.device.properties
        cc = self.device.compute_capability
        ver = check(driver.cuDriverGetVersion(), "cuDriverGetVersion")
        uuid = str(self.device.uuid)
        pci = None
        try:
            pci = f"0x{int(p.gpu_pci_device_id) >> 16:04x}" if p.gpu_pci_device_id else None
        except Exception:
            pci = None
        self.info = DeviceInfo(
            index=index,
            name=str(self.device.name),
            uuid=with_uuid_prefix(uuid),
            arch=parse_arch((cc[0], cc[1])).name,
            sm_count=int(p.multiprocessor_count),
            l2_bytes=int(p.l2_cache_size),
            total_memory_bytes=int(check(driver.cuMemGetInfo(), "cuMemGetInfo")[1]),
            max_threads_per_sm=int(p.max_threads_per_multiprocessor),
            driver_cuda_version=f"{ver // 1000}.{(ver % 1000) // 10}",
            pci_device_id=pci,
        )
        GpuContext._open += 1
        self._closed = False

    # ---------------------------------------------------------------- several GPUs
    def activate(self) -> None:
        """Make this device's context the calling thread's current one (``cuCtxSetCurrent``): what
        work on one of several open GPUs needs first (see :mod:`gpuwhy.engine.peer`)."""
        if self.cu_context is not None:
            from cuda.bindings import driver

            check(driver.cuCtxSetCurrent(self.cu_context), "cuCtxSetCurrent")
        else:
            self.device.set_current()

    def _current(self) -> None:
        """Make this context current when several are open (one open context is always current)."""
        if GpuContext._open > 1:
            self.activate()

    # ---------------------------------------------------------------- memory
    def mem_info(self) -> tuple[int, int]:
        """(free, total) device memory in bytes."""
        from cuda.bindings import driver

        self._current()
        return check(driver.cuMemGetInfo(), "cuMemGetInfo")

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """``cuMemAlloc`` ``nbytes`` (at least 1).

        Raises:
            DeviceOutOfMemory: it does not fit.
        """
        from cuda.bindings import driver

        self._current()
        ptr = check(driver.cuMemAlloc(max(1, int(nbytes))), f"allocating {nbytes} bytes")
        buf = DeviceBuffer(self, int(ptr), int(nbytes))
        self._live.add(buf)
        return buf

    def upload(self, buf: DeviceBuffer, array) -> None:
        """Copy a contiguous numpy array to the start of ``buf`` (waits for it)."""
        from cuda.bindings import driver

        import numpy as np

        self._current()
        a = np.ascontiguousarray(array)
        if a.nbytes > buf.nbytes:
            raise ValueError(f"{a.nbytes} bytes do not fit in {buf!r}")
        if a.nbytes:
            check(driver.cuMemcpyHtoDAsync(buf.ptr, a.ctypes.data, a.nbytes, self.stream.handle), "copying to the GPU")
        self.sync("copying to the GPU")

    def download(self, buf: DeviceBuffer, dtype, count: int):
        """``count`` elements of ``dtype`` from the start of ``buf`` as a numpy array (waits for the stream)."""
        from cuda.bindings import driver

        import numpy as np

        self._current()
        out = np.empty(int(count), dtype=dtype)
        if out.nbytes > buf.nbytes:
            raise ValueError(f"{out.nbytes} bytes are more than {buf!r} holds")
        if out.nbytes:
            check(driver.cuMemcpyDtoHAsync(out.ctypes.data, buf.ptr, out.nbytes, self.stream.handle), "copying from the GPU")
        self.sync("copying from the GPU")
        return out

    def memset(self, buf: DeviceBuffer, byte: int, nbytes: int | None = None) -> None:
        """Set ``nbytes`` (default all) of ``buf`` to ``byte`` on the stream (0xFF poisons floats with NaN)."""
        from cuda.bindings import driver

        self._current()
        n = buf.nbytes if nbytes is None else int(nbytes)
        check(driver.cuMemsetD8Async(buf.ptr, int(byte) & 0xFF, n, self.stream.handle), "cuMemsetD8Async")

    def pinned(self, nbytes: int) -> HostBuffer:
        """``cuMemHostAlloc`` ``nbytes`` of page-locked host memory (freed at the latest on close).

        Raises:
            MeasurementError: the driver refused (names the size).
        """
        from cuda.bindings import driver

        self._current()
        ptr = int(check(driver.cuMemHostAlloc(int(nbytes), 0), f"pinning {nbytes} bytes of host memory (cuMemHostAlloc)"))
        buf = HostBuffer(self, ptr, int(nbytes))
        self._live_host.add(buf)
        return buf

    def copier(self, direction: str, stream=None):
        """``copy(dst, src, nbytes, what)``: one asynchronous copy on ``stream`` (default the
        context's): ``h2d`` (``cuMemcpyHtoDAsync``, dst a device address, src a host one) or
        ``d2h`` (``cuMemcpyDtoHAsync``). The driver call and the stream handle are bound once,
        for timed loops; a failed copy raises MeasurementError naming ``what``.

        Raises:
            ValueError: another direction.
        """
        from cuda.bindings import driver

        calls = {"h2d": driver.cuMemcpyHtoDAsync, "d2h": driver.cuMemcpyDtoHAsync}
        if direction not in calls:
            raise ValueError(f"direction {direction!r} is not 'h2d' or 'd2h'")
        fn, handle = calls[direction], (stream if stream is not None else self.stream).handle

        def copy(dst: int, src: int, nbytes: int, what: str) -> None:
            check(fn(dst, src, nbytes, handle), what)

        return copy

    @contextlib.contextmanager
    def side_stream(self):
        """A :class:`SideStream` for work that overlaps the context's stream (copies both ways
        at once); both streams are waited for and the side one closed on exit, on every path."""
        side = SideStream(self.stream)
        try:
            side.open(self.device)
            yield side
        finally:
            side.close()

    # --------------------------------------------------------------- kernels
    def module(self, file_name: str, defines: Mapping[str, object] | None = None, *, arch: str | None = None):
        """The bundled ``microbench/<file_name>`` compiled for ``arch`` and loaded (cached).

        ``arch`` defaults to this device's (``sm_90``); pass an arch-specific target
        (``sm_90a``, which wgmma needs) to build for that instead.
        """
        return self._loaded(file_name, defines, arch)[0]

    def _loaded(self, file_name: str, defines, arch: str | None):
        target = arch or self.info.arch
        key = (file_name, target, tuple(sorted((defines or {}).items())))
        if key not in self._modules:
            self._current()
            from cuda.core import ObjectCode

            from .compile import compile_file, nvrtc_version

            mod = compile_file(file_name, target, defines=defines)
            try:
                obj = ObjectCode.from_cubin(mod.cubin, name=file_name)
            except Exception as exc:
                major = nvrtc_version()[0]
                hint = ""
                if major > int(self.info.driver_cuda_version.split(".")[0]):
                    hint = f"; NVRTC {major}.x is newer than the driver's CUDA {self.info.driver_cuda_version}: install nvidia-cuda-nvrtc {self.info.driver_cuda_version.split('.')[0]}.x or update the driver"
                raise MeasurementError(f"the {mod.arch} cubin of {file_name} did not load ({exc}){hint}") from None
            self._modules[key] = (obj, mod)
        return self._modules[key]

    def kernel(self, file_name: str, name: str, defines: Mapping[str, object] | None = None, *, arch: str | None = None):
        """A ``cuda.core.Kernel`` from a bundled source (compiled for ``arch``, default this
        device's, and loaded on first use; see :meth:`module`).

        Raises:
            UsageError: unknown source; MeasurementError: unknown kernel name or a load failure.
        """
        obj, mod = self._loaded(file_name, defines, arch)
        where = file_name if arch is None else f"{file_name} ({arch})"
        if name not in mod.kernel_names:
            raise MeasurementError(f"{where} has no kernel {name!r}; it has: {', '.join(mod.kernel_names)}")
        try:
            return obj.get_kernel(name)
        except Exception as exc:
            raise MeasurementError(f"loading {name} from {where} failed ({exc})") from None

    def config(self, grid, block, shmem: int = 0):
        """A cached ``cuda.core.LaunchConfig``."""
        key = (grid, block, shmem)
        cfg = self._configs.get(key)
        if cfg is None:
            from cuda.core import LaunchConfig

            cfg = self._configs[key] = LaunchConfig(grid=grid, block=block, shmem_size=shmem)
        return cfg

    def launch(self, kernel, grid, block, *args, shmem: int = 0) -> None:
        """Enqueue ``kernel`` on the stream (``cuda.core.launch``)."""
        from cuda.core import launch

        self._current()
        launch(self.stream, self.config(grid, block, shmem), kernel, *args)

    def launcher(self, kernel, grid, block, shmem: int = 0):
        """``go(*args)``: enqueue ``kernel`` on the stream with these arguments. cuda.core's
        ``launch``, the stream and the launch config are bound once (:func:`functools.partial`),
        so a timed loop pays no lookup per launch. With several GPUs open, call :meth:`activate`
        before the loop (``go`` does not)."""
        from cuda.core import launch

        return functools.partial(launch, self.stream, self.config(grid, block, shmem), kernel)

    def spin(self, ns: int = 60_000) -> None:
        """Keep the stream busy for about ``ns`` nanoseconds (``spin_kernel`` in launch.cu).

        Pass ``ctx.spin`` as ``pad`` to :func:`~gpuwhy.engine.timing.time_gpu` so
        short regions are timed on the GPU alone, not with the host's submission gap.
        """
        import numpy as np

        self._current()
        k = self._spin_kernel
        if k is None:
            k = self._spin_kernel = self.kernel("launch.cu", "spin_kernel")
        from cuda.core import launch

        launch(self.stream, self.config(1, 1), k, np.uint64(ns))

    def occupancy(self, kernel, block: int, shmem: int = 0) -> int:
        """Resident blocks per multiprocessor for ``kernel`` at ``block`` threads (at least 1)."""
        try:
            return max(1, int(kernel.occupancy.max_active_blocks_per_multiprocessor(block, shmem)))
        except Exception:
            return max(1, self.info.max_threads_per_sm // block)

    def sync(self, what: str = "waiting for the GPU") -> None:
        """Wait for the stream; a kernel fault surfaces here as MeasurementError."""
        try:
            self.stream.sync()
        except Exception as exc:
            err = as_gpuwhy_error(exc, what)
            if err is None:
                raise
            raise err from None

    # -------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Free every live device and pinned host buffer, the events and the stream (errors ignored)."""
        if not self._closed:
            self._closed = True
            if GpuContext._open > 1:
                with contextlib.suppress(Exception):
                    self.activate()
            GpuContext._open -= 1
        for buf in list(self._live):
            buf.free()
        for hbuf in list(self._live_host):
            hbuf.free()
        self.events.close()
        with contextlib.suppress(Exception):
            self.stream.close()
        self._modules.clear()
        self._spin_kernel = None

    def __enter__(self) -> "GpuContext":
        return self

    def __exit__(self, exc_type, exc, tb):
        with contextlib.suppress(Exception):
            self.stream.sync()
        self.close()
        if exc is not None and not isinstance(exc, GpuwhyError):
            err = as_gpuwhy_error(exc)
            if err is not None:
                raise err from None
        return False


def _current_context():
    """The calling thread's current CUDA context (``cuCtxGetCurrent``), or None where it cannot be read."""
    try:
        from cuda.bindings import driver

        err, ctx = driver.cuCtxGetCurrent()
        return ctx if err == driver.CUresult.CUDA_SUCCESS else None
    except Exception:
        return None


def open_device(spec: str | int | None = None) -> GpuContext:
    """Open the GPU ``spec`` (index or UUID; default 0) for measurements.

    Raises:
        NoDeviceError: no driver or no GPU (exit 3, one line).
        UsageError: an index or UUID that does not exist.
        MeasurementError: the device failed to initialise.
    """
    count = init_driver()
    index = resolve_device(spec, count)
    try:
        return GpuContext(index)
    except GpuwhyError:
        raise
    except ImportError as exc:  # cuda-bindings without cuda-core
        raise gpu_packages_missing(getattr(exc, "name", None) or "cuda-core") from None
    except Exception as exc:
        err = as_gpuwhy_error(exc, f"opening GPU {index}")
        if err is None:
            raise MeasurementError(f"opening GPU {index} failed: {type(exc).__name__}: {exc}") from None
        raise err from None


@contextlib.contextmanager
def callable_timing(index: int, *, via_torch: bool, flush_bytes: int = 0):
    """``(stream, events, between)`` for :func:`~gpuwhy.engine.timing.time_gpu` of work a user's callable enqueues
    on GPU ``index`` (CUDA order).

    With ``via_torch``: PyTorch's current stream and ``torch.cuda.Event``; else the
    device's default stream and cuda.core events (where CuPy and plain cuda.core launches
    go by default). ``between`` overwrites ``flush_bytes`` bytes of device memory (an L2
    flush outside the events), or is None for 0. Everything is released on exit.

    Raises:
        MeasurementError: the flush buffer cannot be allocated (a CUDA error).
    """
    if via_torch:
        import torch

        from .timing import TorchEvents, TorchStream

        flush = torch.empty(max(1, flush_bytes // 4), dtype=torch.int32, device=index) if flush_bytes else None
        events = TorchEvents()
        try:
            yield (TorchStream(torch.cuda.current_stream(index)), events,
                   (lambda i: flush.zero_()) if flush is not None else None)
        finally:
            events.close()
        return
    from cuda.bindings import driver
    from cuda.core import Device

    from .timing import EventPool

    dev = Device(index)
    dev.set_current()
    stream = dev.default_stream
    events = EventPool(dev)
    ptr = check(driver.cuMemAlloc(flush_bytes), "allocating the L2-flush buffer") if flush_bytes else None

    def between(i: int) -> None:
        check(driver.cuMemsetD8Async(ptr, 0, flush_bytes, stream.handle), "flushing the L2")

    try:
        yield stream, events, between if ptr is not None else None
    finally:
        events.close()
        if ptr is not None:
            driver.cuMemFree(ptr)
