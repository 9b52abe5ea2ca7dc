"""What this JAX says a jitted training step costs (issue 29): the version, then the compiled
executable's and the lowered module's ``cost_analysis()`` for benchmarks/cupti/jax_train.py's step
(or the exception each raised), and gpuwhy's count of its jaxpr (engine/jaxpr_flops.py), as one JSON
line."""

import json
import runpy
import sys
import traceback

sys.argv = ["jax_train.py", "1"]
g = runpy.run_path("benchmarks/cupti/jax_train.py", run_name="__main__")
import jax  # noqa: E402

out = {"jax": jax.__version__, "backend": jax.default_backend()}
lowered = g["step"].lower(g["ps"], g["x"], g["y"])
for name, fn in (("compiled", lambda: lowered.compile().cost_analysis()), ("lowered", lowered.cost_analysis)):
    try:
        ca = fn()
        ca = ca[0] if isinstance(ca, (list, tuple)) and ca else ca
        out[name] = {k: ca.get(k) for k in ("flops", "bytes accessed", "transcendentals")} if ca else repr(ca)
    except Exception:  # noqa: BLE001 - the probe reports what failed
        out[name] = traceback.format_exc().splitlines()[-1]
try:
    from gpuwhy.engine.jaxpr_flops import count_flops

    got = count_flops(g["step"].trace(g["ps"], g["x"], g["y"]).jaxpr)
    out["jaxpr"] = {"flops": got.flops, "notes": list(got.notes)}
except Exception:  # noqa: BLE001 - the probe reports what failed
    out["jaxpr"] = traceback.format_exc().splitlines()[-1]
print("JAX_COSTS " + json.dumps(out))
