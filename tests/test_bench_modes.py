"""The registry of `gpuwhy bench` modes and the engine calls the benchmarks go through, without a GPU.

Which mode a set of options picks, and the errors the registry raises, are also pinned
through the CLI (tests/test_bench_cli.py); the engine's launcher, explicit-arch kernels,
pinned buffers, bound copies and second stream run on the fake device of tests/fakes.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from fakes import FakeGpu, install
from gpuwhy.bench import modes
from gpuwhy.bench.modes import BenchRequest, choose
from gpuwhy.errors import MeasurementError, UsageError


@pytest.mark.parametrize("opts,name", [
    ({}, "quick"), ({"quick": True}, "quick"), ({"sweep": True, "kernel": ["copy"]}, "sweep"),
    ({"compute": True, "precision": ["fp32"]}, "compute"), ({"roofline": True}, "roofline"),
    ({"latency": True, "l1_bypass": True}, "latency"), ({"link": True}, "link"),
    ({"compile_only": True, "arch": "sm_90"}, "compile-only"),
    ({"allreduce": True, "dtype": "bf16", "max_size": "1GiB", "device": "all", "no_save": True}, "allreduce"),
])
def test_choose_picks_the_first_mode_the_options_name(opts, name):
    assert choose(BenchRequest(**opts)).name == name


@pytest.mark.parametrize("opts,message", [
    ({"sweep": True, "quick": True, "latency": True}, "--sweep and --quick exclude each other; pick one"),
    ({"arch": "sm_90", "latency": True}, "--arch applies to --compile-only; a measurement always compiles for the GPU's own architecture"),
    ({"arch": "", "compute": True}, "--arch applies to --compile-only"),
    ({"l1_bypass": True, "link": True}, "--cg applies to --latency"),
    ({"link": True, "latency": True}, "--latency and --link are separate runs; pick one"),
    ({"link": True, "precision": ["fp32"]}, "--latency and --link run alone; drop --sweep/--quick/--compute/--roofline/--kernel/--csv-file/--compile-only/--caches"),
    ({"roofline": True, "precision": ["fp32"]}, "--precision applies to --compute"),
    ({"compute": True, "kernel": ["read"]}, "--compute runs the compute ceilings alone; drop --sweep/--quick/--kernel"),
    ({"roofline": True, "sweep": True}, "--roofline runs the mixed-intensity sweep alone; drop --sweep/--quick/--compute/--kernel"),
    # issue 19: an option a mode does not use is refused, never silently ignored
    ({"compile_only": True, "arch": "sm_90", "kernel": ["read"]}, "--kernel has no effect with --compile-only; drop it"),
    ({"compile_only": True, "arch": "sm_90", "csv": "x.csv"}, "--csv-file has no effect with --compile-only; drop it"),
    ({"latency": True, "dtype": "fp64"}, "--dtype has no effect with --latency; drop it"),
    ({"compute": True, "csv": "x.csv"}, "--csv-file has no effect with --compute; drop it"),
    ({"link": True, "no_save": True}, "--no-save has no effect with --link; drop it"),
    ({"compute": True, "roofline": True}, "--roofline has no effect with --compute; drop it"),  # was: --roofline ignored
    ({"max_size": "1GiB", "latency": True}, "--max-size applies to --allreduce"),
    ({"allreduce": True, "latency": True}, "--allreduce runs alone; drop --sweep/--quick/--compute/--roofline/--kernel/--csv-file/"
                                           "--compile-only/--caches/--latency/--link"),
    ({"allreduce": True, "l1_bypass": True}, "--cg applies to --latency"),
])
def test_registry_errors(opts, message):
    with pytest.raises(UsageError) as ei:
        choose(BenchRequest(**opts))
    assert str(ei.value).startswith(message)


def test_every_mode_has_a_view_and_a_json_kind():
    import importlib

    names = [m.name for m in modes.MODES]
    assert names == ["allreduce", "p2p", "latency", "link", "caches", "compile-only", "compute", "roofline", "sweep", "quick"]
    assert modes.MODES[-1].flag is None  # the default comes last
    for m in modes.MODES:
        module, function = m.view.split(":")
        assert callable(getattr(importlib.import_module(f"gpuwhy.render.{module}"), function)), m.name
        assert m.json_kind.startswith("bench") and modes.mode(m.name) is m
    with pytest.raises(KeyError, match="nope"):
        modes.mode("nope")


def test_compile_run_fails_after_its_reports():
    ok = type("R", (), {"ok": True, "source": "a.cu", "message": ""})()
    bad = type("R", (), {"ok": False, "source": "b.cu", "message": "boom"})()
    assert modes.CompileRun([ok], "sm_90").failure is None
    err = modes.CompileRun([ok, bad], "sm_90").failure
    assert err.exit_code == 1 and str(err) == "1 bundled kernel source failed to compile for sm_90: b.cu: boom"


@pytest.fixture
def fake(monkeypatch, tmp_path):
    return install(monkeypatch, FakeGpu(), tmp_path)


def test_launcher_pinned_copies_and_side_stream(fake):
    from gpuwhy.engine.context import open_device

    with open_device(0) as ctx:
        go = ctx.launcher(ctx.kernel("launch.cu", "spin_kernel"), 1, 1)
        t0 = fake.clock
        go(np.uint64(5000))
        assert fake.launches[-1] == "spin_kernel" and fake.clock - t0 == pytest.approx(5e-6)
        host = ctx.pinned(4096)
        assert fake.is_pinned(host.ptr) and host.array.size == 4096
        host.array[:] = np.arange(4096) % 251
        dev = ctx.alloc(4096)
        back = np.zeros(4096, np.uint8)
        with ctx.side_stream() as side:
            ctx.copier("h2d")(dev.ptr, host.ptr, 4096, "up")
            side.fork()
            ctx.copier("d2h", side.stream)(back.ctypes.data, dev.ptr, 4096, "down")
            side.join()
        assert np.array_equal(back, host.array)
        assert side.stream.closed and side.fork_event.closed and side.join_event.closed
        with pytest.raises(ValueError, match="direction"):
            ctx.copier("d2d")
        ctx.pinned(64)  # left for the context to free
    assert not fake.pinned and not fake.mem


def test_a_kernel_for_an_explicit_arch(fake):
    from gpuwhy.engine.context import open_device

    with open_device(0) as ctx:
        assert ctx.kernel("launch.cu", "empty_kernel", arch="sm_90a").name == "empty_kernel"
        assert {k[1] for k in ctx._modules} == {"sm_90a"}  # built for the arch asked for, not the device's
        with pytest.raises(MeasurementError, match=r"launch.cu \(sm_90a\) has no kernel 'nope'; it has: empty_kernel, spin_kernel"):
            ctx.kernel("launch.cu", "nope", arch="sm_90a")
        with pytest.raises(MeasurementError, match=r"^launch.cu has no kernel 'nope'"):
            ctx.kernel("launch.cu", "nope")
