"""`gpuwhy bench --p2p` without a GPU: the byte conventions and matrices (model/p2p.py), the
check pattern against the arithmetic of microbench/p2p.cu, the SM copy kernel's machine
code, and runs on fake nodes of 1, 2, 4 and 8 GPUs (tests/fake_node.py), which prove the
bookkeeping (peer access before every peer read, each copy checked, pairs without peer
access never measured), never a figure."""

from __future__ import annotations

import json
import re

import pytest

from gpuwhy.errors import MeasurementError
from gpuwhy.model.multi_gpu.p2p import (
    MEASURED, NO_PEER, NOT_MEASURED, assemble_matrix, bidirectional_gbs, fraction, pattern_words, unidirectional_gbs,
)


@pytest.fixture
def small(monkeypatch):
    """Short runs: the fake moves every byte in Python."""
    from gpuwhy.bench import p2p

    monkeypatch.setattr(p2p, "NBYTES", 1 << 16)
    monkeypatch.setattr(p2p, "CHASE_BYTES", 1 << 16)
    monkeypatch.setattr(p2p, "CHASE_STEPS", 64)
    return p2p


def _node(monkeypatch, tmp_path, n, **kw):
    from fake_node import install_node

    return install_node(monkeypatch, tmp_path, n, l2=16384, **kw)  # the chase spans max(CHASE_BYTES, 2 x L2)


# --------------------------------------------------------------------------- arithmetic


def test_byte_conventions():
    assert unidirectional_gbs(2**30, 0.010) == pytest.approx(107.374, abs=1e-3)  # 1,073,741,824 B / 10 ms
    assert bidirectional_gbs(2**30, 0.010) == pytest.approx(214.748, abs=1e-3)  # both ways: twice the bytes
    for nbytes, seconds in ((1, 0.0), (0, 1.0), (-1, 1.0), (1, -1e-3)):
        with pytest.raises(ValueError, match="must be above 0"):
            unidirectional_gbs(nbytes, seconds)
    assert unidirectional_gbs(0.5, 0.5) == 1e-9  # fractions of a byte or a second are still figures
    assert fraction(45.0, 50.0) == 0.9 and fraction(None, 50.0) is None and fraction(45.0, None) is None
    assert fraction(45.0, 0.0) is None and fraction(0.4, 0.8) == 0.5


def test_matrix_assembly():
    m = assemble_matrix(3, {(0, 1): 40.0, (1, 0): 41.0, (2, 2): 900.0}, {(0, 2): NO_PEER})
    assert m.values == ((None, 40.0, None), (41.0, None, None), (None, None, 900.0))
    assert m.status[0] == (NOT_MEASURED, MEASURED, NO_PEER) and m.status[2][2] == MEASURED
    with pytest.raises(ValueError, match=r"pair \(0, 3\) is outside 0..2"):
        assemble_matrix(3, {(0, 3): 1.0})
    with pytest.raises(ValueError, match=r"pair \(3, 0\) is outside 0..2"):
        assemble_matrix(3, {}, {(3, 0): NO_PEER})
    with pytest.raises(ValueError, match=r"pair \(-1, 0\) is outside 0..2"):
        assemble_matrix(3, {(-1, 0): 1.0})
    with pytest.raises(ValueError, match="has a value but its status is 'no peer access'"):
        assemble_matrix(2, {(0, 1): 1.0}, {(0, 1): NO_PEER})


def _hash(i: int, seed: int) -> int:
    """microbench/p2p.cu's pattern(), step by step in Python integers (32-bit wrap-around)."""
    m = 0xFFFFFFFF
    x = (i & m) ^ (((i >> 32) * 0x9E3779B9) & m) ^ seed
    x ^= x >> 16
    x = (x * 0x7FEB352D) & m
    x ^= x >> 15
    x = (x * 0x846CA68B) & m
    x ^= x >> 16
    return x


def test_pattern_words_are_the_kernels_hash():
    assert int(pattern_words(1, 0)[0]) == 0  # 0 stays 0 through every step
    for seed in (0, 1, 0x70327033):
        got = pattern_words(5, seed, start=2**32 - 2)  # across the 32-bit boundary of the index
        assert [int(v) for v in got] == [_hash(2**32 - 2 + k, seed) for k in range(5)]
    a, b = pattern_words(1000, 1), pattern_words(1000, 2)
    assert (a != b).mean() > 0.99 and len(set(a.tolist())) > 990  # seeds and offsets tell the words apart


def test_p2p_copy_keeps_four_16_byte_loads_in_flight():
    """In the SASS of p2p_copy: 128-bit LDG and STG (width field 6 at bits 9-11 of the second
    word, checked here against 32-, 64- and 128-bit references), at least UNROLL + 1 of each."""
    import struct

    from gpuwhy.engine.compile import compile_file, compile_source
    from sass import text_sections

    ref = '''extern "C" __global__ void k32(const unsigned* a, unsigned* b){ b[threadIdx.x] = a[threadIdx.x]; }
extern "C" __global__ void k128(const uint4* a, uint4* b){ b[threadIdx.x] = a[threadIdx.x]; }'''

    def widths(code: bytes) -> list[tuple[int, int]]:
        out = []
        for o in range(0, len(code) - 15, 16):
            lo, hi = struct.unpack_from("<QQ", code, o)
            if lo & 0xFFF in (0x981, 0x986):
                out.append((lo & 0xFFF, (hi >> 9) & 7))
        return out

    for arch in ("sm_80", "sm_90", "sm_120"):
        refs = text_sections(compile_source(ref, arch, name="ref.cu", use_cache=False).cubin)
        assert widths(refs["k32"]) == [(0x981, 4), (0x986, 4)] and widths(refs["k128"]) == [(0x981, 6), (0x986, 6)]
        code = text_sections(compile_file("p2p.cu", arch).cubin)["p2p_copy"]
        w = widths(code)
        loads, stores = [x for op, x in w if op == 0x981], [x for op, x in w if op == 0x986]
        assert set(loads) == {6} and set(stores) == {6}, (arch, w)
        assert len(loads) >= 5 and len(stores) >= 5  # 4 in the unrolled loop, 1 in the tail


# --------------------------------------------------------------------------- on fake nodes


def test_two_gpus_every_pair_measured_and_checked(monkeypatch, tmp_path, cli, small):
    from test_schema import check_document

    node = _node(monkeypatch, tmp_path, 2)
    code, out, err = cli("bench", "--p2p", "--json")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    n = small.NBYTES
    assert doc["bytes_per_copy"] == n and [g["index"] for g in doc["gpus"]] == [0, 1]
    assert node.enabled == {(1, 0), (0, 1)}  # each reader was given access to the other's memory
    assert {(s, d) for s, d, _ in node.peer_copies} == {(0, 0), (1, 1), (0, 1), (1, 0)}
    ce = doc["matrices"]["ce_unidirectional_gbs"]
    assert ce["status"] == [["measured", "measured"], ["measured", "measured"]] and all(v for r in ce["values"] for v in r)
    bi = doc["matrices"]["sm_bidirectional_gbs"]
    assert bi["values"][0][0] is None and bi["values"][0][1] == bi["values"][1][0] > 0
    one = next(c for c in doc["copies"] if (c["src_index"], c["dst_index"], c["method"], c["direction"]) == (0, 1, "ce", "uni"))
    assert one["gbs"] == pytest.approx(n / one["time"]["median_s"] / 1e9)  # bytes copied one way / time
    both = next(c for c in doc["copies"] if c["direction"] == "bidir" and c["method"] == "ce")
    assert both["gbs"] == pytest.approx(2 * n / both["time"]["median_s"] / 1e9)  # bytes both ways / time
    assert doc["convention"].endswith("bidirectional = bytes moved both ways together / time")
    # both ways: per copy a wait for the other GPU's poison, its start (fork) and its end (join)
    assert node.waits and len(node.waits) % 3 == 0
    lat = doc["matrices"]["chase_latency_s"]["values"]
    assert lat[0][1] == pytest.approx(30e-9)  # the fake's chase: 30 ns a step
    # each GPU's buffers (source, destination, counter, chain, state, records) made on that GPU, all freed
    per_gpu = [[b for d, b in node.alloc_log if d == g] for g in (0, 1)]
    assert per_gpu[0] == per_gpu[1] and per_gpu[0][:2] == [n, n] and len(per_gpu[0]) >= 6
    assert node.owner == {}


def test_pairs_without_peer_access_are_marked_never_measured(monkeypatch, tmp_path, cli, small):
    node = _node(monkeypatch, tmp_path, 4, can_peer=lambda r, o: (r < 2) == (o < 2))  # two islands
    code, out, err = cli("bench", "--p2p", "--json")
    assert code == 0, err
    doc = json.loads(out)
    st = doc["matrices"]["sm_unidirectional_gbs"]["status"]
    assert st[0] == ["measured", "measured", "no peer access", "no peer access"]
    assert doc["matrices"]["sm_unidirectional_gbs"]["values"][0][2] is None
    assert doc["matrices"]["chase_latency_s"]["status"][3][1] == "no peer access"
    assert doc["matrices"]["ce_bidirectional_gbs"]["status"][1][2] == "no peer access"
    assert not any({s, d} == {0, 2} for s, d, _ in node.peer_copies)
    assert all((r < 2) == (o < 2) for r, o in node.enabled)
    code, out, err = cli("bench", "--p2p")
    assert code == 0 and "n/p = no peer access (cuDeviceCanAccessPeer: no): not measured" in " ".join(out.split())


def test_a_wrong_copy_is_a_measurement_error(monkeypatch, tmp_path, cli, small):
    node = _node(monkeypatch, tmp_path, 2)
    node.corrupt_peer = True
    code, out, err = cli("bench", "--p2p")
    assert code == 4 and out == "" and len(err.strip().splitlines()) == 1
    # one flipped byte in every copy: one wrong word per copy, every copy checked (warm-up and estimate included)
    m = re.search(r"the sm copy GPU 0 -> GPU 1 left (\d+) wrong 32-bit words \(of 16,384 per copy, over (\d+) copies\)", err)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) >= 1 + 3 + 3


def test_theoretical_rates_from_the_topology(monkeypatch, tmp_path, cli, small):
    """Two H200s joined by 18 NVLink 4.0 links through one NVSwitch: 450 GB/s one way, 900 both."""
    links = [{"link": k, "version": 6, "remote_bus": "00000000:A0:00.0", "remote_type": 2} for k in range(18)]
    _node(monkeypatch, tmp_path, 2, nvml_extra=[{"nvlinks": links}] * 2, system_extra={"topology": {"0,1": 50}})
    code, out, err = cli("bench", "--p2p", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["matrices"]["theoretical_unidirectional_gbs"]["values"] == [[None, 450.0], [450.0, None]]
    one = next(c for c in doc["copies"] if (c["src_index"], c["dst_index"], c["direction"]) == (1, 0, "uni"))
    assert one["theoretical_gbs"] == 450.0 and one["fraction_of_theoretical"] == pytest.approx(one["gbs"] / 450.0)
    both = next(c for c in doc["copies"] if c["direction"] == "bidir")
    assert both["theoretical_gbs"] == 900.0
    assert doc["topology"]["matrix"] == [["X", "NV18"], ["NV18", "X"]]
    s = doc["slowest_pair"]
    assert s["method"] == "ce" and s["direction"] == "uni" and s["fraction_of_theoretical"] < 1


def test_one_gpu_nothing_to_pair_but_checked(monkeypatch, tmp_path, cli, small):
    from test_schema import check_document

    node = _node(monkeypatch, tmp_path, 1)
    code, out, err = cli("bench", "--p2p")
    assert code == 0, err
    assert out.splitlines()[0].startswith("GPU 0 NVIDIA H200: 1 GPU: nothing to pair")
    assert "p2p_check" in node.launches and "p2p_copy" in node.launches  # its own copies, checked
    code, out, err = cli("bench", "--p2p", "-i", "all", "--json")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert doc["summary"].startswith("gpuwhy bench --p2p: 1 GPU: nothing to pair")
    assert [len(r) for r in doc["matrices"]["ce_unidirectional_gbs"]["values"]] == [1]
    assert doc["slowest_pair"] is None


def test_eight_gpus_fit_80_columns(monkeypatch, tmp_path, cli, small):
    _node(monkeypatch, tmp_path, 8)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("bench", "--p2p")
    assert code == 0, err
    assert max(len(x) for x in out.splitlines()) <= 80
    rows = [x.split() for x in out.splitlines()]
    assert ["from", "0", "1", "2", "3", "4", "5", "6", "7"] in rows


def test_sixteen_gpus_are_listed_by_pair():
    """The matrix of 16 GPUs does not fit 80 columns: one line per ordered pair instead."""
    from gpuwhy.bench.p2p import Copy, P2pGpu, P2pResult
    from gpuwhy.render.p2p_view import _pair_table, matrix_width

    gpus = tuple(P2pGpu(i, i, f"GPU-{i}", "NVIDIA H200") for i in range(16))
    copies = tuple(Copy(s, d, "ce", "uni", MEASURED, 1, 1234.0) for s in range(16) for d in range(16))
    r = P2pResult(gpus, copies, (), 1)
    assert matrix_width(r) > 80  # 4 + 16 x (5 + 2)
    t = _pair_table(r)
    assert len(t.rows) == 16 * 16 and [c.header for c in t.columns][:3] == ["pair", "theory", "CE"]


def test_p2p_runs_alone(cli):
    code, out, err = cli("bench", "--p2p", "--quick")
    assert code == 2 and "--p2p runs alone" in err
    code, out, err = cli("bench", "--p2p", "--gpu", "H200")
    assert code == 2 and "--gpu has no effect with --p2p" in err


def test_two_open_gpus_each_work_on_their_own(monkeypatch, tmp_path):
    """With two contexts open, an allocation, upload and launch of the first lands on the first
    GPU although the second was opened (made current) last; closing counts both out."""
    import numpy as np

    from gpuwhy.engine.context import GpuContext
    from gpuwhy.engine.peer import can_access_peer, enable_peer_access, open_devices

    node = _node(monkeypatch, tmp_path, 2, can_peer=lambda r, o: r == 1)
    with open_devices([0, 1]) as (a, b):
        assert GpuContext._open == 2 and node.current == 1
        buf = a.alloc(64)
        assert node.owner_of(buf.ptr) == 0 and node.current == 0
        a.upload(buf, np.arange(16, dtype=np.uint32))
        assert node.current == 0
        assert can_access_peer(b, a) and not can_access_peer(a, b)
        enable_peer_access(b, a)
        enable_peer_access(b, a)  # already enabled: fine
        assert node.enabled == {(1, 0)} and node.current == 1
        with pytest.raises(MeasurementError, match="in enabling peer access from GPU cuda:0 to cuda:1"):
            enable_peer_access(a, b)
    assert GpuContext._open == 0 and node.owner == {}
