"""The one timeline structure and its analysis.

Every profiler source is reduced by a reader of its own to a
:class:`~.activities.Timeline` (columnar GPU activities: kernels, copies with direction
and host memory, memsets; and host activities: API calls, operators, annotations,
Python frames); the analysis takes only that structure:

- :mod:`.clean` (strays, the capture window, each activity's launch call);
- :mod:`.track` (one GPU's work sorted, and its busy union: span, busy, idle gaps);
- :mod:`.host` (what the host was doing, as interval sets);
- :mod:`.gaps` (each idle gap classified and split by cause);
- :mod:`.steps`, :mod:`.kinds`, :mod:`.figures`, :mod:`.evidence`, :mod:`.bins`;
- :mod:`.analyze` (putting it together into a :class:`~.results.TraceReport`, each GPU's
  window judged by :func:`gpuwhy.verdict.engine.diagnose`);
- :mod:`.window` (the window to judge) and :func:`~.activities.crop`;
- :mod:`.launches` (kernel launches in launch order, for the ncu pass).
"""
