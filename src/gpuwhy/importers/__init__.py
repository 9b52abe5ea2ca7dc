"""Readers of what profilers write.

- :mod:`gpuwhy.importers.ncu` -- ``ncu --csv`` exports (raw and details pages)
  into per-kernel roofline verdicts.
- :mod:`gpuwhy.importers.trace` -- Chrome-trace JSON from ``torch.profiler``
  (kineto) into a per-GPU timeline: busy, idle by cause, per step, the verdict
  (:mod:`gpuwhy.importers.torch_trace` keeps the old import path).
- :mod:`gpuwhy.importers.kernel_names` -- the kernel-name helpers both share.
"""

from __future__ import annotations

from .kernel_names import demangle, display_names, short_kernel_name, template_hint

__all__ = ["demangle", "display_names", "short_kernel_name", "template_hint"]
