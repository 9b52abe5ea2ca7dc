"""Long reads show a status on a terminal: `gpuwhy trace` and `gpuwhy ncu` put a transient
"reading ..." line on stderr when it is a terminal, and nothing when stderr is piped or the output
is --json/--csv (the documents stay byte for byte what they were)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def _with_tty_stderr(*args: str) -> tuple[int, str, str]:
    """Run gpuwhy with stderr on a pseudo-terminal and stdout on a pipe: (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="100", TERM="xterm")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([sys.executable, "-m", "gpuwhy", *args], stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read().decode()
    code = p.wait(timeout=60)
    os.close(master)
    return code, out, seen.decode(errors="replace")


@pytest.mark.parametrize("args, what", [
    (("trace", "--example", "dataloader"), "reading the trace"),
    (("ncu", "--example", "h200-gemm-add"), "reading the ncu export"),
])
def test_a_status_on_a_terminal_only(args, what):
    code, out, tty = _with_tty_stderr(*args)
    assert code == 0 and out.strip(), tty
    assert what in tty and any(f in tty for f in ("dataloader.json.gz", "h200-gemm-add.csv.gz")), tty
    assert what not in out  # never on stdout
    code, out, tty = _with_tty_stderr(*args, "--json")
    assert code == 0 and json.loads(out)["kind"] == args[0]
    assert what not in tty
    code, out, tty = _with_tty_stderr(*args, "--csv")
    assert code == 0 and what not in tty and what not in out
    r = run_cli(*args)  # stderr piped: no status
    assert r.returncode == 0 and what not in r.stderr and what not in r.stdout
