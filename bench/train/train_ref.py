"""The reference side of bench_train: the same BERT dual encoder, InfoNCE loss and AdamW step as ragmig's
C++ trainer, written in plain PyTorch (Debian's python3-torch), timed the same way. Prints one JSON line."""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class Layer(nn.Module):
    def __init__(self, h, heads, inter, p):
        super().__init__()
        self.heads, self.p = heads, p
        self.q, self.k, self.v = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.o, self.ln1 = nn.Linear(h, h), nn.LayerNorm(h, eps=1e-12)
        self.i, self.out, self.ln2 = nn.Linear(h, inter), nn.Linear(inter, h), nn.LayerNorm(h, eps=1e-12)

    def forward(self, x, add_mask):
        b, l, h = x.shape
        split = lambda t: t.view(b, l, self.heads, h // self.heads).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + add_mask
        att = F.dropout(att.softmax(-1), self.p, self.training)
        ctx = (att @ v).transpose(1, 2).reshape(b, l, h)
        x = self.ln1(x + F.dropout(self.o(ctx), self.p, self.training))
        return self.ln2(x + F.dropout(self.out(F.gelu(self.i(x))), self.p, self.training))


class Bert(nn.Module):
    def __init__(self, vocab, h, layers, heads, inter, p, max_pos=512):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, h), nn.Embedding(max_pos, h), nn.Embedding(2, h)
        self.ln, self.p = nn.LayerNorm(h, eps=1e-12), p
        self.layers = nn.ModuleList(Layer(h, heads, inter, p) for _ in range(layers))

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.word(ids) + self.pos(pos) + self.token_type(torch.zeros_like(ids))
        x = F.dropout(self.ln(x), self.p, self.training)
        add_mask = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, add_mask)
        m = mask.unsqueeze(-1).float()
        return F.normalize((x * m).sum(1) / m.sum(1).clamp_min(1e-9), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    for name in ["vocab", "hidden", "layers", "heads", "inter", "batch", "qlen", "plen", "steps", "warmup", "threads"]:
        ap.add_argument("--" + name, type=int, required=True)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Bert(a.vocab, a.hidden, a.layers, a.heads, a.inter, 0.1)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    q_ids = torch.randint(5, a.vocab, (a.batch, a.qlen))
    p_ids = torch.randint(5, a.vocab, (a.batch, a.plen))
    q_mask, p_mask = torch.ones_like(q_ids), torch.ones_like(p_ids)
    labels = torch.arange(a.batch)

    def step():
        opt.zero_grad()
        q, p = model(q_ids, q_mask), model(p_ids, p_mask)
        loss = F.cross_entropy(q @ p.t() * 20.0, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    secs = time.perf_counter() - t0
    print(json.dumps({"samples_per_s": a.batch * a.steps / secs, "seconds": secs, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
