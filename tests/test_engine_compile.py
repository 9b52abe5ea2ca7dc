"""NVRTC -> cubin for every bundled kernel and the architectures CI checks; no GPU needed."""

from __future__ import annotations

import pytest

from gpuwhy.archs import parse_arch

from gpuwhy.engine import compile as C
from gpuwhy.errors import MeasurementError, UsageError

ARCHS = ["sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]

MEMORY_KERNELS = {
    f"{op}_{variant}_{sfx}"
    for op in ("read", "write", "copy", "vecadd")
    for variant in ("naive", "vec16")
    for sfx in ("f32", "f64")
} | {"fill_random_f32", "fill_random_f64"}


@pytest.fixture
def cache(kernel_cache, monkeypatch):
    """The session's cubin cache (conftest.kernel_cache): kernels the compile tests built are not built again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(kernel_cache))
    monkeypatch.delenv("GPUWHY_NO_CACHE", raising=False)
    return kernel_cache


@pytest.mark.parametrize("arch", ARCHS)
def test_every_bundled_kernel_compiles_to_a_cubin(arch, cache):
    reports = C.compile_all(arch)
    failed = [f"{r.source} ({r.arch}): {r.message}" for r in reports if not r.ok]
    assert not failed, failed
    sources = {p.name for p in C.bundled_sources()}
    assert {r.source for r in reports if r.arch == arch} == sources
    by_source = {r.source: r for r in reports if r.arch == arch}
    assert set(by_source["memory.cu"].kernels) == MEMORY_KERNELS
    assert by_source["launch.cu"].kernels == ("empty_kernel", "spin_kernel")
    for name in ("memory.cu", "launch.cu"):
        mod = C.compile_file(name, arch)
        assert mod.cubin[:4] == b"\x7fELF"  # a cubin, never PTX text
        assert C.cubin_sm(mod.cubin) == int(arch[3:])
        assert mod.arch == arch


def test_cache_miss_then_hit(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = C.compile_file("launch.cu", "sm_90")
    second = C.compile_file("launch.cu", "sm_90")
    assert not first.cached and second.cached
    assert first.cubin == second.cubin and first.key == second.key
    files = list((tmp_path / "gpuwhy" / "cubin").glob("launch-sm_90-*.cubin"))
    assert len(files) == 1
    # another option, arch or NVRTC version is another key
    other = C.compile_file("launch.cu", "sm_90", defines={"X": 1})
    assert not other.cached and other.key != first.key
    assert C.cache_key("src", "sm_90", (13, 0), ()) != C.cache_key("src", "sm_90", (13, 1), ())
    assert C.cache_key("src", "sm_90", (13, 0), ()) != C.cache_key("src", "sm_89", (13, 0), ())
    assert C.cache_key("src", "sm_90", (13, 0), ()) != C.cache_key("src2", "sm_90", (13, 0), ())


def test_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("GPUWHY_NO_CACHE", "1")
    assert not C.compile_file("launch.cu", "sm_89").cached
    assert not C.compile_file("launch.cu", "sm_89").cached
    assert not (tmp_path / "gpuwhy" / "cubin").exists()


def test_corrupt_cache_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mod = C.compile_file("launch.cu", "sm_80")
    (path,) = (tmp_path / "gpuwhy" / "cubin").glob("launch-sm_80-*.cubin")
    path.write_bytes(b"garbage")
    again = C.compile_file("launch.cu", "sm_80")
    assert not again.cached and again.cubin == mod.cubin


def test_arch_parsing():
    def cc_suffix(text):
        a = parse_arch(text)
        return a.cc, a.suffix

    assert cc_suffix("sm_90") == (90, "")
    assert cc_suffix("sm_90a") == (90, "a")
    assert cc_suffix("SM90") == (90, "")
    assert cc_suffix("120") == (120, "")
    assert cc_suffix("8.9") == (89, "")
    for bad in ("compute_90", "sm_9", "hopper", ""):
        with pytest.raises(UsageError, match="is not an SM architecture"):
            parse_arch(bad)


def test_unsupported_arch_names_the_nvrtc_needed():
    have = C.supported_archs()
    major, minor = C.nvrtc_version()
    with pytest.raises(UsageError) as exc:
        C.check_arch("sm_999")
    msg = str(exc.value)
    assert "sm_999" in msg and f"NVRTC {major}.{minor}" in msg and "newer" in msg
    assert f"sm_{have[0]}" in msg and "\n" not in msg
    if 70 not in have:  # CUDA 13 dropped Volta
        with pytest.raises(UsageError, match=r"sm_70 needs NVRTC 12\.x"):
            C.check_arch("sm_70")
    with pytest.raises(UsageError, match="older NVRTC"):
        C.check_arch("sm_20")


def test_compile_error_is_a_measurement_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(MeasurementError, match="broken.cu"):
        C.compile_source('extern "C" __global__ void k() { undeclared_thing(); }', "sm_90", name="broken.cu")


def test_arch_specific_source_also_builds_the_a_target(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    src = (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        'extern "C" __global__ void only_90a(int* p) { *p = 1; }\n'
        "#endif\n"
    )
    plain = C.compile_source(src, "sm_90", name="x.cu")
    special = C.compile_source(src, "sm_90a", name="x.cu")
    assert plain.kernel_names == () and special.kernel_names == ("only_90a",)
    assert C.cubin_sm(special.cubin) == 90


def test_cubin_kernels_rejects_non_elf():
    with pytest.raises(ValueError, match="not a 64-bit little-endian ELF cubin"):
        C.cubin_kernels(b"// PTX text")
    with pytest.raises(ValueError, match="not a CUDA ELF cubin"):
        C.cubin_sm(b"\x7fELF" + b"\0" * 60)


def test_compiling_leaves_python_bytes_intact(tmp_path):
    """NVRTC writes its log into a buffer gpuwhy hands it; that buffer must never be
    CPython's shared one-byte object (an empty log once turned every b" " into
    b"\\x00", and single spaces vanished from the printed tables). A fresh process,
    because the bug would poison the one it happens in."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    code = (
        "from gpuwhy.engine.compile import compile_file\n"
        "m = compile_file('launch.cu', 'sm_90')\n"
        "assert not m.cached and m.log == ''\n"
        "assert b' '[0] == 32 and ' '.encode()[0] == 32 and b'a b'.split() == [b'a', b'b'], repr(b' ')\n"
        "print('intact')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CACHE_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "intact", r.stderr
