"""The verdict: one vocabulary of what the GPU waits for (:mod:`.causes`), the remedies and the
shares of time each removes (:mod:`.remedies`), and the engine that turns a profiled window into
one time budget with a cause per share and a predicted effect per remedy (:mod:`.engine`).

Pure: no I/O, no GPU. It sits right above :mod:`gpuwhy.model` (whose maths it uses) and below
every reader and use case, so a trace, `gpuwhy run`, an ncu export and a classified workload all
ask the same rules.
"""
