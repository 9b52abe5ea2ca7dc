"""`gpuwhy check`: :mod:`.policy` (pure: thresholds, verdicts, JUnit) and :mod:`.observe`
(runs the health reads and quick measurements on the GPU)."""
