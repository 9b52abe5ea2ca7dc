"""torch.profiler traces: the public names of :mod:`gpuwhy.importers.trace`, kept under their old module.

``from gpuwhy.importers.torch_trace import load_trace`` keeps working; the code
lives in the :mod:`gpuwhy.importers.trace` package.
"""

from __future__ import annotations

from .trace import *
from .trace import __all__  # noqa: F401
