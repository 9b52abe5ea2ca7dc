"""Readers of what profilers write.

- :mod:`gpuwhy.importers.ncu` -- ``ncu --csv`` exports (raw and details pages)
  into per-kernel roofline verdicts.
- :mod:`gpuwhy.importers.timeline` -- the one timeline structure (columnar GPU and
  host activities) and its analysis: per GPU busy, idle by cause, per step, the verdict.
- :mod:`gpuwhy.importers.kineto` -- Chrome-trace JSON from ``torch.profiler`` (Kineto)
  read into that timeline.
- :mod:`gpuwhy.importers.kernel_names` -- the kernel-name helpers both share.
"""

from __future__ import annotations

from .kernel_names import demangle, display_names, short_kernel_name, template_hint

__all__ = ["demangle", "display_names", "short_kernel_name", "template_hint"]
