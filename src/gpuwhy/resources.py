"""Where the bundled data lives: spec sheets, remedies, model shapes, kernel sources, sample inputs.

In an installed wheel the repository's ``specs/``, ``microbench/`` and ``examples/`` folders
are shipped inside the package as ``gpuwhy/_specs``, ``gpuwhy/_microbench`` and ``gpuwhy/_examples``
(see ``[tool.setuptools]`` in pyproject.toml). Run from a checkout
(``PYTHONPATH=src`` or an editable install) they are read in place.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def bundled_dir(name: str) -> Path:
    """Return the folder of bundled data ``name`` (``"specs"``, ``"microbench"`` or ``"examples"``).

    Raises:
        FileNotFoundError: if neither the installed copy nor the checkout copy exists
            (a broken installation).
    """
    for candidate in (_PKG / f"_{name}", _PKG.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpuwhy's bundled folder {name!r} is missing; reinstall gpuwhy")
