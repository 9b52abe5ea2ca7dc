"""A GPT-2-small-shaped model (12 layers, d_model 768, 12 heads, 50257 tokens) in plain PyTorch, for `gpuwhy run` checks.

Usage: python3 gpt2_small.py decode|prefill [--batch B] [--seq S] [--steps N]
- decode: greedy token-by-token generation at --batch (default 1), eager, no KV cache
  beyond the growing prompt (each step runs the model on the last 64 tokens);
- prefill: forward passes over --batch x --seq tokens (default 32 x 1024), bf16.
Each step is marked with torch.profiler.record_function("ProfilerStep#N").
"""

import argparse

import torch
from torch import nn
from torch.profiler import record_function


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50257, d=768, h=12, layers=12, ctx=1024):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        s = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(s, device=idx.device))
        mask = torch.triu(torch.full((s, s), float("-inf"), device=idx.device), 1)
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["decode", "prefill"])
    ap.add_argument("--batch", type=int)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = GPT().cuda().eval()
    with torch.no_grad():
        if a.mode == "decode":
            b = a.batch or 1
            toks = torch.randint(0, 50257, (b, 16), device="cuda")
            for i in range(a.steps):
                with record_function(f"ProfilerStep#{i}"):
                    logits = model(toks[:, -64:])
                    nxt = logits[:, -1].argmax(-1, keepdim=True)
                    toks = torch.cat([toks, nxt], 1)
            print("decoded", toks.shape[1] - 16, "tokens at batch", b)
        else:
            b = a.batch or 32
            model = model.to(torch.bfloat16)
            x = torch.randint(0, 50257, (b, a.seq), device="cuda")
            for i in range(a.steps):
                with record_function(f"ProfilerStep#{i}"):
                    y = model(x)
            torch.cuda.synchronize()
            print("prefill", tuple(y.shape))


if __name__ == "__main__":
    main()
