"""The spec-sheet use cases: `gpuwhy specs list|show|validate` and :func:`gpuwhy.load_spec`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..units import fmt_counted


@dataclass(frozen=True)
class SheetList:
    """Every sheet in use (bundled, ``--specs`` folders, ``GPUWHY_SPECS``), in the library's order."""

    sheets: tuple[Any, ...]

    def __iter__(self):
        return iter(self.sheets)

    def to_dict(self) -> dict:
        return {"sheets": [s.to_dict() for s in self.sheets]}


def list_sheets(spec_dirs: Iterable[str] = ()) -> SheetList:
    """`gpuwhy specs list`.

    Raises:
        SpecError: a malformed sheet.
    """
    from ..specs import library

    return SheetList(tuple(library(spec_dirs)))


def show_sheet(name: str, spec_dirs: Iterable[str] = ()):
    """`gpuwhy specs show NAME`: the :class:`~gpuwhy.specs.Sheet` ``name`` matches (a conflict noted).

    Raises:
        UsageError: an unknown or ambiguous name. SpecError: a malformed sheet.
    """
    from ..device.sheet import sheet_for
    from .sheets import noted

    return noted(sheet_for(name, spec_dirs=spec_dirs)).sheet


def load_spec(name: str, spec_dirs: Iterable[str] = ()):
    """:func:`gpuwhy.load_spec`: the sheet ``name`` matches, nothing noted.

    Raises:
        UsageError: no name, or an unknown or ambiguous one. SpecError: a malformed sheet.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError

    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"load_spec needs a GPU name such as 'H200' (see `gpuwhy specs list`), got {name!r}")
    return sheet_for(name, spec_dirs=spec_dirs).sheet


@dataclass(frozen=True)
class SheetValidation:
    """`gpuwhy specs validate`: the files that passed (``checked``) and ``(file, error)`` of each that did not."""

    checked: tuple[str, ...]
    bad: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict:
        return {"ok": not self.bad, "files": list(self.checked), "errors": [{"file": f, "error": e} for f, e in self.bad]}

    def error(self, summary: bool):
        """The :class:`~gpuwhy.errors.SpecError` to exit with after the output, or None when every
        sheet passed: ``summary`` (``--json``) counts them and names the first; else the last
        error alone (the terminal view printed the others)."""
        from ..errors import SpecError

        if not self.bad:
            return None
        if summary:
            return SpecError(f"{len(self.bad)} of {fmt_counted(len(self.bad) + len(self.checked), 'sheet')} invalid; the first: {self.bad[0][1]}")
        return SpecError(self.bad[-1][1])


def validate_sheets(paths: Sequence[str] | None = None) -> SheetValidation:
    """Check sheet files, or the files in folders (``*.yaml``), against the schema; with no
    ``paths`` every sheet in use. Every file is checked: one bad file does not stop the rest.

    Raises:
        UsageError: no sheet found to check.
    """
    from pathlib import Path

    from ..errors import GpuwhyError, UsageError
    from ..specs import library, load_yaml, validate_sheet

    checked: list[str] = []
    bad: list[tuple[str, str]] = []
    if paths:
        for p in map(Path, paths):
            if not p.exists():
                bad.append((str(p), f"{p}: no such file or folder"))
                continue
            files = sorted(p.glob("*.yaml")) if p.is_dir() else [p]
            for f in files:
                try:
                    validate_sheet(load_yaml(f), str(f), "validate")
                except GpuwhyError as exc:
                    bad.append((str(f), str(exc)))
                else:
                    checked.append(str(f))
    else:
        checked = [s.path for s in library()]
    if not checked and not bad:
        raise UsageError(f"no *.yaml spec sheets found in {', '.join(paths or ['the spec folders'])}; nothing was validated")
    return SheetValidation(tuple(checked), tuple(bad))
