"""Readers of what profilers write.

- :mod:`gpuwhy.importers.ncu` -- ``ncu --csv`` exports (raw and details pages)
  into per-kernel roofline verdicts.
- :mod:`gpuwhy.importers.torch_trace` -- Chrome-trace JSON from
  ``torch.profiler`` (kineto) into a per-GPU timeline verdict (busy, idle,
  overhead-bound or not).
- :mod:`gpuwhy.importers.kernel_names` -- the kernel-name helpers both share.
"""

from __future__ import annotations

from .kernel_names import demangle, display_names, short_kernel_name, template_hint

__all__ = ["demangle", "display_names", "short_kernel_name", "template_hint"]
