"""Which spec sheet a use case judges against, said the way every command says it: the
:class:`~gpuwhy.device.sheet.SheetChoice` of :func:`gpuwhy.device.sheet.sheet_for` (a name) or
:func:`gpuwhy.device.probe.gpu_sheet` (a name, else this machine's GPU), through :func:`noted`.

A name/PCI-id conflict of the sheet chosen is told at once (:func:`gpuwhy.notices.note`); a
family name's choice (``H100`` is the H100 SXM), which travels in ``SheetChoice.family``, is
told at the end of the command (:func:`gpuwhy.notices.note_later`).
"""

from __future__ import annotations


def noted(choice):
    """``choice`` (a :class:`~gpuwhy.device.sheet.SheetChoice`) after its conflict, if any, is
    noted now and its family note kept for the end."""
    from ..notices import note, note_later

    if choice.conflict:
        note(choice.conflict)
    if choice.family:
        note_later(choice.family)
    return choice


def note_family(name: str, spec_dirs=()) -> None:
    """Keep for the end the family note of a GPU name a command was given (``--gpu H100``), wherever
    in the command the name is used; a name no sheet matches notes nothing (the command says so)."""
    from ..device.sheet import sheet_for
    from ..errors import GpuwhyError

    try:
        choice = sheet_for(name, spec_dirs=tuple(spec_dirs))
    except GpuwhyError:
        return
    noted(choice)
