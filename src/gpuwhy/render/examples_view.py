"""The terminal view of `gpuwhy trace|ncu|check --example list`: the sample inputs of one command."""

from __future__ import annotations


def render_sample_inputs(command: str, samples: dict[str, dict]) -> None:
    """One block per sample of ``command`` (:func:`gpuwhy.api.examples.sample_inputs`): the command
    line that reads it, what it holds, where it came from and the file."""
    import textwrap

    from .console import out

    con = out()
    for name, s in samples.items():
        con.print(f"gpuwhy {command} --example {name}", style="bold", markup=False, highlight=False, soft_wrap=True)
        for line in textwrap.wrap(s["description"], 76):  # 80 columns; a path is never cut
            con.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        for line in (f"source: {s.get('source', 'not recorded')}", f"file: {s['file']}"):
            con.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
