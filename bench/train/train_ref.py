"""The reference side of bench_train: the same BERT dual encoder, InfoNCE loss and AdamW step as ragmig's
C++ trainer, written in plain PyTorch (the project venv's torch: the LibTorch ragmig links), timed the same
way, on the token ids bench_train writes (padded here to each batch's longest); attention through
F.scaled_dot_product_attention as ragmig runs it (--plain: written out), fp32 or (--bf16) under autocast.
--qwen3: transformers' Qwen3Model of the shape (SDPA, --kv-heads key/value heads of --head-dim) pooled at each
row's last token, as sentence-transformers trains Qwen3-Embedding.
Prints one JSON line."""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class Layer(nn.Module):
    def __init__(self, h, heads, inter, p, sdpa):
        super().__init__()
        self.heads, self.p, self.sdpa = heads, p, sdpa
        self.q, self.k, self.v = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.o, self.ln1 = nn.Linear(h, h), nn.LayerNorm(h, eps=1e-12)
        self.i, self.out, self.ln2 = nn.Linear(h, inter), nn.Linear(inter, h), nn.LayerNorm(h, eps=1e-12)

    def forward(self, x, add_mask):
        b, l, h = x.shape
        split = lambda t: t.view(b, l, self.heads, h // self.heads).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.sdpa:
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=add_mask, dropout_p=self.p if self.training else 0.0)
        else:
            att = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + add_mask
            ctx = F.dropout(att.softmax(-1), self.p, self.training) @ v
        ctx = ctx.transpose(1, 2).reshape(b, l, h)
        x = self.ln1(x + F.dropout(self.o(ctx), self.p, self.training))
        return self.ln2(x + F.dropout(self.out(F.gelu(self.i(x))), self.p, self.training))


class Bert(nn.Module):
    def __init__(self, vocab, h, layers, heads, inter, p, sdpa, max_pos=512):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, h), nn.Embedding(max_pos, h), nn.Embedding(2, h)
        self.ln, self.p = nn.LayerNorm(h, eps=1e-12), p
        self.layers = nn.ModuleList(Layer(h, heads, inter, p, sdpa) for _ in range(layers))

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.word(ids) + self.pos(pos) + self.token_type(torch.zeros_like(ids))
        x = F.dropout(self.ln(x), self.p, self.training)
        add_mask = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, add_mask)
        m = mask.unsqueeze(-1).float()
        return F.normalize((x * m).sum(1) / m.sum(1).clamp_min(1e-9), dim=-1)


class Qwen3(nn.Module):
    def __init__(self, a):
        super().__init__()
        from transformers import Qwen3Config, Qwen3Model
        self.model = Qwen3Model(Qwen3Config(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                                            num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                                            head_dim=a.head_dim, intermediate_size=a.inter,
                                            attn_implementation="sdpa"))

    def forward(self, ids, mask):
        h = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
        last = (torch.arange(ids.shape[1]) * mask).argmax(1)
        return F.normalize(h[torch.arange(ids.shape[0]), last].float(), dim=-1)


def padded(seqs):
    """Ids and mask, padded with 0 to the longest sequence."""
    longest = max(len(x) for x in seqs)
    ids = torch.tensor([x + [0] * (longest - len(x)) for x in seqs])
    mask = torch.tensor([[1] * len(x) + [0] * (longest - len(x)) for x in seqs])
    return ids, mask


def main():
    ap = argparse.ArgumentParser()
    for name in ["vocab", "hidden", "layers", "heads", "inter", "warmup", "threads"]:
        ap.add_argument("--" + name, type=int, required=True)
    ap.add_argument("--batches", required=True, help='JSON: [{"q": [[ids]], "p": [[ids]]}, ...], one per timed step')
    ap.add_argument("--plain", action="store_true", help="attention written out (matmul, softmax) instead of SDPA")
    ap.add_argument("--bf16", action="store_true", help="the step under torch.autocast('cpu', bfloat16)")
    ap.add_argument("--profile", help="write the autograd profiler's chrome trace of the timed steps here")
    ap.add_argument("--qwen3", action="store_true", help="transformers' Qwen3Model, last-token pooling")
    ap.add_argument("--kv-heads", type=int, default=0)
    ap.add_argument("--head-dim", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Qwen3(a) if a.qwen3 else Bert(a.vocab, a.hidden, a.layers, a.heads, a.inter, 0.1, not a.plain)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    batches = [(*padded(b["q"]), *padded(b["p"])) for b in json.load(open(a.batches))]

    def step(q_ids, q_mask, p_ids, p_mask):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            q, p = model(q_ids, q_mask), model(p_ids, p_mask)
            loss = F.cross_entropy(q @ p.t() * 20.0, torch.arange(q.shape[0]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(a.warmup):
        step(*batches[0])
    if a.profile:  # the per-op trace of the timed steps (then timed again without it), as bench_train's C++ side
        with torch.autograd.profiler.profile() as prof:
            for b in batches:
                step(*b)
        prof.export_chrome_trace(a.profile)
    t0 = time.perf_counter()
    for b in batches:
        step(*b)
    secs = time.perf_counter() - t0
    samples = sum(b[0].shape[0] for b in batches)
    print(json.dumps({"samples_per_s": samples / secs, "seconds": secs, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
