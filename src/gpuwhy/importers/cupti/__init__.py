"""CUPTI activity records (from `gpuwhy run --tracer cupti`) as a Chrome trace the timeline reader reads."""
