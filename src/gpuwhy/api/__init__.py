"""The use cases: one module per use case, each a function taking a typed request (a frozen
dataclass, validated: bad values raise :class:`~gpuwhy.errors.UsageError`) and returning the result
object the renderers take. The CLI parses its options into the request, calls the function and
hands the result to :func:`gpuwhy.render.output.show`; the package face (:mod:`gpuwhy`) calls the
same functions. Nothing here imports the CLI or the renderers.

- :mod:`.classify` (and :mod:`.classify_request`, :mod:`.examples`), :mod:`.measure`: a workload on the roofline.
- :mod:`.roofline`, :mod:`.compare`, :mod:`.occupancy`, :mod:`.mfu`, :mod:`.llm` (and :mod:`.llm_request`).
- :mod:`.specs`, :mod:`.sheets` (which sheet a command judges against), :mod:`.probe`, :mod:`.main_job`.
- :mod:`.bench`, :mod:`.check`, :mod:`.fleet`, :mod:`.report`; :mod:`.readers` (ncu exports and traces).
- :mod:`.run_program`, :mod:`.run`, :mod:`.run_kernels`: `gpuwhy run`.
- :mod:`.options`: option checks several use cases share; :mod:`.libraries`: CUDA libraries that cannot be used.
"""
