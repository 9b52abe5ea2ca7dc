"""The one reader of user files (gpuwhy.inputs): regular files only, bounded, gzip by magic; through the CLI too."""

from __future__ import annotations

import gzip
import os

import pytest
from gpuwhy.errors import UsageError
from gpuwhy.inputs import max_input_bytes, read_input, read_input_text


def test_reads_plain_and_gzip_by_magic(tmp_path):
    plain = tmp_path / "a.json"
    plain.write_bytes(b'{"x": 1}')
    packed = tmp_path / "b.txt"  # gzip detected by its bytes, not its name
    packed.write_bytes(gzip.compress(b'{"y": 2}'))
    assert read_input(plain, "a file") == b'{"x": 1}'
    assert read_input(packed, "a file") == b'{"y": 2}'
    assert read_input(packed, "a file", gunzip=False).startswith(b"\x1f\x8b")


def test_refuses_folder_missing_and_devices(tmp_path):
    with pytest.raises(UsageError, match="is a folder"):
        read_input(tmp_path, "a trace")
    with pytest.raises(UsageError, match="does not exist"):
        read_input(tmp_path / "nope.json", "a trace")
    if os.path.exists("/dev/zero"):
        with pytest.raises(UsageError, match="not a regular file"):
            read_input("/dev/zero", "a trace")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):  # must not block on open
        read_input(fifo, "a trace")


def test_size_limit_plain_gzip_and_env(tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 1000)
    assert len(read_input(big, "f", max_bytes=1000)) == 1000
    with pytest.raises(UsageError, match="over the .* input limit.*GPUWHY_MAX_INPUT_BYTES"):
        read_input(big, "f", max_bytes=999)
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"\0" * 100_000))
    assert bomb.stat().st_size < 1000
    with pytest.raises(UsageError, match="unpacks to more than"):
        read_input(bomb, "f", max_bytes=50_000)
    monkeypatch.setenv("GPUWHY_MAX_INPUT_BYTES", "999")
    assert max_input_bytes() == 999
    with pytest.raises(UsageError, match="over the"):
        read_input(big, "f")
    monkeypatch.setenv("GPUWHY_MAX_INPUT_BYTES", "lots")
    with pytest.raises(UsageError, match="not a positive number of bytes"):
        max_input_bytes()


def test_broken_gzip_and_text_decoding(tmp_path):
    broken = tmp_path / "t.json.gz"
    broken.write_bytes(gzip.compress(b"{}" * 100)[:20])
    with pytest.raises(UsageError, match="broken gzip"):
        read_input(broken, "a trace")
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf\"ID\"\xff")
    assert read_input_text(bom, "f") == '"ID"\ufffd'


@pytest.mark.parametrize("cmd", ["ncu", "trace"])
def test_cli_refuses_dev_zero_and_folders_with_exit_2(cmd, tmp_path, cli):
    for target, needle in (("/dev/zero", "not a regular file"), (str(tmp_path), "is a folder")):
        if not os.path.exists(target):
            continue
        code, out, err = cli(cmd, target)
        assert code == 2, (cmd, target, out, err)
        assert needle in err and len(err.strip().splitlines()) == 1
        assert "Traceback" not in err
