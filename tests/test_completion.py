"""Shell completion (issue 31): ``--install-completion SHELL`` installs that shell's script, a home it
cannot write is one line and exit 74 (not an internal error), and Tab completes GPU names,
precisions and example workloads."""

from __future__ import annotations

import pytest

from conftest import one_line, run_cli


def _complete(words: str, tmp_path) -> list[str]:
    n = len(words.split())
    r = run_cli(env={"_GPUWHY_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(n - 1),
                     "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")


def test_install_completion_names_its_shell(tmp_path):
    r = run_cli("--install-completion", "fish", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"})
    assert r.returncode == 0, r.stderr
    script = tmp_path / ".config" / "fish" / "completions" / "gpuwhy.fish"
    assert script.is_file() and "complete --command gpuwhy" in script.read_text()
    assert not (tmp_path / ".bashrc").exists() and not (tmp_path / ".bash_completions").exists()
    assert "fish completion installed" in r.stdout


def test_install_completion_into_a_home_it_cannot_write_is_one_line_exit_74(tmp_path):
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be\n")  # nothing under it can be made (even as root)
    r = run_cli("--install-completion", "bash", env={"HOME": str(home)})
    line = one_line(r.returncode, r.stderr, 74)
    assert "cannot install the bash completion" in line and "--show-completion bash" in line


@pytest.mark.parametrize("args", [["--install-completion", "tcsh"], ["--show-completion", "cmd.exe"],
                                  ["--install-completion", "bash", "zsh"]])
def test_an_unknown_shell_is_a_usage_error(tmp_path, args):
    r = run_cli(*args, env={"HOME": str(tmp_path)})
    assert "shell" in one_line(r.returncode, r.stderr, 2)
    assert not any(tmp_path.iterdir())


def test_show_completion_prints_the_named_shells_script():
    r = run_cli("--show-completion", "zsh")
    assert r.returncode == 0 and r.stdout.startswith("#compdef gpuwhy")


def test_tab_completes_gpu_names_dtypes_and_examples(tmp_path):
    assert {"H100 SXM", "H100 PCIe"} <= set(_complete("gpuwhy classify --gpu H1", tmp_path))
    assert _complete("gpuwhy classify --dtype bf", tmp_path)[:1] == ["bf16"]
    assert "fp64_tensor" in _complete("gpuwhy roofline --dtype fp", tmp_path)
    assert "vecadd" in _complete("gpuwhy classify --example ve", tmp_path)
    assert "H200 SXM" in _complete("gpuwhy ncu --gpu H2", tmp_path)
