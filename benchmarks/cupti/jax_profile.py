"""benchmarks/cupti/jax_train.py under JAX's own profiler (``jax.profiler.trace`` with a Perfetto
trace): writes LOGDIR (argv[1]) as JAX does (``plugins/profile/<run>/<host>.xplane.pb`` and
``perfetto_trace.json.gz``), the traces `gpuwhy trace` reads when CUPTI is held by JAX's profiler.
argv[2]: steps (default 100)."""

import runpy
import sys

import jax

logdir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/jax-trace"
steps = sys.argv[2] if len(sys.argv) > 2 else "100"
sys.argv = ["jax_train.py", steps]
with jax.profiler.trace(logdir, create_perfetto_trace=True):
    runpy.run_path("benchmarks/cupti/jax_train.py", run_name="__main__")
print(f"jax_profile: trace written under {logdir}")
