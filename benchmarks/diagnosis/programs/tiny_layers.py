"""tiny_layers: a 200-layer stack of tiny Linear+Tanh layers at batch 1, run eagerly.

Planted cause ``launch_overhead``. Each step runs one forward pass of 200 x (Linear(256, 256)
+ Tanh) on a [1, 256] input: 400 kernels of 2-3 us each on the GPU, but each op costs the
host (Python module call, dispatcher, launch) several times that, so the GPU runs a kernel,
then waits for the host to launch the next: the idle time is waiting on the host to launch.

Fixed twin (remedy ``cuda_graph``): the same forward captured once in a CUDA graph
(``torch.cuda.CUDAGraph``, static input and output buffers); each step copies its input into
the static input, replays the graph (one launch for the 400 kernels) and copies the output
out, as the planted step copies its output out. The kernels are the same, so the outputs are
the same: every step's output is kept and their sum compared by the runner with the planted
run's; in-process the last step is recomputed eagerly and compared.
"""

from __future__ import annotations

import diag_common as dc

NAME = "tiny_layers"


def add(ap):
    ap.add_argument("--layers", type=int, default=200)
    ap.add_argument("--width", type=int, default=256)


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch
    from torch import nn

    torch.manual_seed(0)
    dev = "cuda"
    mods = []
    for _ in range(a.layers):
        lin = nn.Linear(a.width, a.width)
        nn.init.normal_(lin.weight, std=1.2 / a.width**0.5)  # keeps tanh activations O(1) through the depth
        mods += [lin, nn.Tanh()]
    model = nn.Sequential(*mods).to(dev).eval()
    total = a.warmup + a.steps
    xs = torch.randn(total, 1, a.width, device=dev)
    outs = torch.empty(total, 1, a.width, device=dev)

    with torch.no_grad():
        if a.fixed:
            static_x = torch.zeros(1, a.width, device=dev)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
                for _ in range(3):
                    model(static_x)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_y = model(static_x)
        else:
            model(xs[0])  # cuBLAS initialisation outside the steps
        torch.cuda.synchronize()

        steps = dc.Steps(a)
        for i in steps:
            if a.fixed:
                static_x.copy_(xs[i])
                graph.replay()
                outs[i].copy_(static_y)
            else:
                outs[i].copy_(model(xs[i]))

        ref = model(xs[total - 1])
        check = dc.check_tensors(outs[total - 1], ref, 1e-5, "last step against an eager forward")
    res = steps.result(NAME, a.fixed, check, checksum=float(outs.double().abs().sum()), checksum_rtol=1e-5,
                       layers=a.layers, width=a.width)
    dc.emit(res)


if __name__ == "__main__":
    main()
