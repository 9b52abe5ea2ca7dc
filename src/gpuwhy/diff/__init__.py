"""What changed between two runs of one program, and why: pure maths over two time budgets.

:mod:`.side` holds what one run gives a comparison (its per-step budget, kernels, operators,
remedies, the GPU it ran on), read from any source by :mod:`gpuwhy.api.diff_sides`;
:mod:`.budget` splits the change of step time into the budget's shares (signed, summing to the
change); :mod:`.align` pairs kernels (name, grid, block) and operators and finds what appeared
and disappeared; :mod:`.predict` scores a `gpuwhy run` document's predicted ceilings against
what the second run achieved; :mod:`.compare` puts it together into one :class:`DiffResult`.

Pure: no I/O, no GPU. It sits beside :mod:`gpuwhy.verdict` (whose causes it names) and below
every reader and use case.
"""
