"""item_gate: a training step that reads the gradient norm with ``.item()`` and branches on it.

Planted cause ``host_sync``. Each step trains an MLP (4096 -> 8192 -> 4096, batch 16384, bf16
autocast, fp32 weights: about 12 ms of GPU work on an H100, mostly GEMMs, then elementwise and
optimizer kernels; large enough that the host launches a step in a fraction of its GPU time,
traced or not) and computes the gradient norm on the GPU. The host reads it with
``total_norm.item()`` and clips the gradients in a Python ``if`` (a host scalar), steps the
SGD optimizer, then does the step's host bookkeeping (learning-rate schedule and a metrics
record in plain Python, shorter than the GPU work less the launch time: see calibration)
before it launches the next step. The ``.item()`` waits for the whole forward and backward;
the host work after it is gated by the sync, so the GPU idles while the host catches up.

Fixed twin (remedy ``remove_syncs``): the clip coefficient stays on the GPU,
``clamp(max_norm / (norm + 1e-6), max=1)`` multiplied into the gradients (the branch becomes
arithmetic, as ``torch.nn.utils.clip_grad_norm_`` does), and the norm is read with ``.item()``
only every 10th step for the log. The same bookkeeping runs every step, now while the GPU
works. The training is the same up to how the clip coefficient is rounded (a Python double
against an fp32 tensor): how far the weights moved (sum of |w - w0|) is compared by the
runner with the planted run's within 1e-3, and in-process the loss is recomputed after the
last update and must not have grown.

Calibration: without ``--host-units`` the program times one training step's GPU work G and the
host's time L to launch it, and picks the units so the bookkeeping takes ``--ratio`` (0.8) times
G - L: in the twin it fits beside the GPU work, so the sync was all that held the step back (an
earlier version planted bookkeeping as long as G: with L on top the twin was host-bound, and
host work, not the sync, was the larger cause). It reports ``calib_args`` and the runner passes
them to every later run.
"""

from __future__ import annotations

import math
import time

import diag_common as dc

NAME = "item_gate"


def add(ap):
    ap.add_argument("--host-units", type=int, default=None, help="bookkeeping units per step (default: calibrate)")
    ap.add_argument("--ratio", type=float, default=0.8, help="calibration target: host bookkeeping / (GPU step - launch time)")
    ap.add_argument("--log-every", type=int, default=10, help="the twin reads the norm every this many steps")
    ap.add_argument("--d", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=16384)


def bookkeeping(step: int, units: int) -> float:
    """The step's host-side bookkeeping in plain Python (a cosine schedule and a metrics record), holding
    the host ``units`` x :data:`diag_common.HOST_UNIT_S` in all (the same wall time on any core)."""
    t0 = time.perf_counter()
    acc = 0.0
    rec = {}
    for k in range(64):
        t = (step * 64 + k) % 1000 / 1000.0
        lr = 0.5 * (1.0 + math.cos(math.pi * t)) * 3e-4
        rec["lr%d" % k] = lr
        acc += lr
    dc.hold_host(t0, units * dc.HOST_UNIT_S)
    return acc + len(rec) * 1e-9 + units * 1e-9


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch
    from torch import nn

    dev = "cuda"
    d, hidden, batch = a.d, a.hidden, a.batch

    def init_state():
        torch.manual_seed(0)
        mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)).to(dev)
        opt = torch.optim.SGD(mlp.parameters(), lr=1e-3, momentum=0.9, foreach=True)
        x = torch.randn(batch, d, device=dev)
        target = torch.randn(batch, d, device=dev)
        return mlp, opt, x, target

    def forward_backward(mlp, x, target):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = (mlp(x).float() - target).pow(2).mean()
        loss.backward()
        grads = [p.grad for p in mlp.parameters()]
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        return loss.detach(), grads, norm

    mlp, opt, x, target = init_state()
    _, grads, norm = forward_backward(mlp, x, target)
    max_norm = 0.5 * norm.item()  # setup, outside the steps: clipping is active on most steps
    opt.zero_grad(set_to_none=True)

    calib = None
    units = a.host_units
    if units is None:
        def one_step():
            loss, g, nrm = forward_backward(mlp, x, target)
            opt.step()
            opt.zero_grad(set_to_none=True)

        x_s = dc.gpu_time(one_step, reps=5)
        l_s = dc.launch_time(one_step, reps=5)
        u_s = dc.HOST_UNIT_S
        units = max(1, round(a.ratio * max(x_s - l_s, 0.0) / u_s))
        calib = {"gpu_step_s": x_s, "launch_s": l_s, "unit_s": u_s, "units": units}
    mlp, opt, x, target = init_state()  # calibration trained the model: start again from the seed
    p0 = [p.detach().clone() for p in mlp.parameters()]
    torch.cuda.synchronize()

    losses = []
    host_acc = 0.0
    clipped = 0
    logged = []
    steps = dc.Steps(a)
    for i in steps:
        loss, grads, norm = forward_backward(mlp, x, target)
        if not a.fixed:
            gn = norm.item()  # the planted sync: waits for the forward and backward
            if gn > max_norm:
                torch._foreach_mul_(grads, max_norm / (gn + 1e-6))
                clipped += 1
        else:
            coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
            torch._foreach_mul_(grads, coef)
            if steps.measured(i) % a.log_every == 0:
                logged.append(norm.item())  # read for the log every log_every steps only
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss)
        host_acc += bookkeeping(i, units)
    final = float(losses[-1])
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        again = float((mlp(x).float() - target).pow(2).mean())
    if not (math.isfinite(final) and math.isfinite(again) and again < final * 1.05):
        dc.fail(f"training went wrong: last loss {final!r}, recomputed after the step {again!r}")
    check = f"loss after the last step {again:.6g} <= 1.05 x the last step's {final:.6g}"
    moved = float(sum((p.detach() - q).abs().double().sum() for p, q in zip(mlp.parameters(), p0)))
    extra = {"host_units": units, "clipped_steps": clipped, "final_loss": final, "host_acc": host_acc,
             "logged_norms": logged, **dc.calibration_fields(calib, units)}
    res = steps.result(NAME, a.fixed, check, checksum=moved, checksum_rtol=1e-3, **extra)
    dc.emit(res)


if __name__ == "__main__":
    main()
