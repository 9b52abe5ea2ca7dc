"""Which spec sheet a use case judges against, said the way every command says it.

A name/PCI-id conflict of the sheet chosen is told at once (:func:`gpuwhy.notices.note`);
a family name's choice (``H100`` is the H100 SXM) is kept by :mod:`gpuwhy.device.sheet`
for the end of the command (:func:`take_family_notes`).
"""

from __future__ import annotations

from typing import Iterable


def noted(choice):
    """``choice`` (a :class:`~gpuwhy.device.sheet.SheetChoice`) after its conflict, if any, is noted."""
    from ..notices import note

    if choice.conflict:
        note(choice.conflict)
    return choice


def chosen_sheet(gpu=None, spec_dirs: Iterable[str] | None = None):
    """The :class:`~gpuwhy.specs.Sheet` of ``gpu`` (a name, as ``--gpu`` takes it, or a Sheet),
    else of the GPU in this machine (:func:`gpuwhy.device.probe.gpu_sheet`).

    Raises:
        UsageError: an unknown name, or no ``gpu`` and no GPU (the message says to pass --gpu).
    """
    from ..device.probe import gpu_sheet

    return noted(gpu_sheet(gpu, tuple(spec_dirs or ()))).sheet


def named_sheet(name, spec_dirs: Iterable[str] = ()):
    """The :class:`~gpuwhy.specs.Sheet` a GPU name matches (:func:`gpuwhy.device.sheet.sheet_for`).

    Raises:
        UsageError: an unknown or ambiguous name.
        SpecError: a malformed sheet.
    """
    from ..device.sheet import sheet_for

    return noted(sheet_for(name, spec_dirs=spec_dirs)).sheet


def take_family_notes() -> list[str]:
    """The family notes of the GPU names resolved since the last call (each once), forgotten after."""
    from ..device.sheet import take_family_notes as take

    return take()
