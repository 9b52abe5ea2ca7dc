"""decode_b1: batch-1 greedy decoding of a small random transformer with a KV cache, eager.

Planted cause ``launch_overhead``. A GPT-style model (12 layers, d_model 768, 12 heads, a
32,000-token vocabulary, plain ``torch.nn`` modules, fp32, randomly initialised) decodes
one token per step from a preallocated KV cache: the step writes this position's keys and
values with ``index_copy_`` at a position held in a GPU tensor, attends over the whole
cache with a mask (fixed shapes), and picks the next token with ``argmax`` on the GPU
(no ``.item()``). About 230 small kernels a token, each a few microseconds on the GPU
against several times that on the host (module calls, dispatch, launch): the GPU mostly
waits for the host to launch.

Fixed twin (remedy ``cuda_graph``): the same decode step captured once in a CUDA graph
(``torch.cuda.CUDAGraph``; the token, the position and the cache are static buffers the
step updates itself) and replayed once per step. Same kernels, same tokens: the generated
tokens are compared by the runner with the planted run's (their sum, exact), and in-process
the twin's tokens are compared with an eager decode from the same start.
"""

from __future__ import annotations

import math

import diag_common as dc

NAME = "decode_b1"


def add(ap):
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=32000)


def build(a, ctx: int):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d: int, h: int) -> None:
            super().__init__()
            self.h, self.dh = h, d // h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.act = nn.GELU(approximate="tanh")

        def forward(self, x, pos, mask, kc, vc):
            # x: [1, 1, d]; kc, vc: [1, h, ctx, dh]; pos: [1] int64 on the GPU; mask: [ctx] bool
            q, k, v = self.qkv(self.ln1(x)).split(self.h * self.dh, dim=-1)
            q = q.view(1, 1, self.h, self.dh).transpose(1, 2)
            kc.index_copy_(2, pos, k.view(1, 1, self.h, self.dh).transpose(1, 2))
            vc.index_copy_(2, pos, v.view(1, 1, self.h, self.dh).transpose(1, 2))
            s = (q @ kc.transpose(-1, -2)) * (1.0 / math.sqrt(self.dh))
            s = s.masked_fill(~mask, float("-inf"))
            o = (torch.softmax(s, dim=-1) @ vc).transpose(1, 2).reshape(1, 1, self.h * self.dh)
            x = x + self.proj(o)
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d = a.d_model
            self.tok, self.pos = nn.Embedding(a.vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block(d, a.heads) for _ in range(a.layers))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, a.vocab, bias=False)
            self.register_buffer("ar", torch.arange(ctx))

        def step(self, tok, pos, kcs, vcs, out_tokens):
            """One decode step on static buffers: reads tok [1, 1] and pos [1], writes the caches,
            the next token into tok and out_tokens[pos], and advances pos."""
            x = self.tok(tok) + self.pos(pos).view(1, 1, -1)
            mask = self.ar <= pos
            for b, kc, vc in zip(self.blocks, kcs, vcs):
                x = b(x, pos, mask, kc, vc)
            nxt = self.head(self.ln(x))[:, -1].argmax(-1, keepdim=True)
            tok.copy_(nxt)
            out_tokens.index_copy_(0, pos, nxt.view(1))
            pos.add_(1)

    return Decoder()


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    total = a.warmup + a.steps
    ctx = max(64, 16 * math.ceil((total + 1) / 16))
    torch.manual_seed(0)
    dev = "cuda"
    model = build(a, ctx).to(dev).eval()
    dh = a.d_model // a.heads

    def fresh_state():
        tok = torch.full((1, 1), 7, dtype=torch.long, device=dev)
        pos = torch.zeros(1, dtype=torch.long, device=dev)
        kcs = [torch.zeros(1, a.heads, ctx, dh, device=dev) for _ in range(a.layers)]
        vcs = [torch.zeros(1, a.heads, ctx, dh, device=dev) for _ in range(a.layers)]
        out = torch.zeros(ctx, dtype=torch.long, device=dev)
        return tok, pos, kcs, vcs, out

    def reset(state):
        tok, pos, kcs, vcs, out = state
        tok.fill_(7)
        pos.zero_()
        for c in kcs + vcs:
            c.zero_()
        out.zero_()

    with torch.no_grad():
        state = fresh_state()
        if a.fixed:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
                for _ in range(3):
                    model.step(*state)
            torch.cuda.current_stream().wait_stream(side)
            reset(state)  # the warm-up decoded three tokens: start again
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model.step(*state)  # captured, not run: the state is still the fresh one
        else:
            model.step(*state)  # cuBLAS initialisation outside the steps
            reset(state)
        torch.cuda.synchronize()

        steps = dc.Steps(a)
        for i in steps:
            if a.fixed:
                graph.replay()
            else:
                model.step(*state)
        tokens = state[4][:total].clone()

        ref_state = fresh_state()
        for _ in range(total):
            model.step(*ref_state)
        ref = ref_state[4][:total]
    if not torch.equal(tokens, ref):
        first = int((tokens != ref).nonzero()[0])
        dc.fail(f"tokens differ from an eager decode from step {first} on")
    check = f"{total} tokens equal to an eager decode from the same start"
    res = steps.result(NAME, a.fixed, check, checksum=float(tokens.sum()), checksum_rtol=0.0,
                       layers=a.layers, d_model=a.d_model, ctx=ctx,
                       distinct_tokens=int(tokens.unique().numel()))
    dc.emit(res)


if __name__ == "__main__":
    main()
