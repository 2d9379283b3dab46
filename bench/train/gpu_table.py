#!/usr/bin/env python3
"""The table of bench/train/gpu.sh: reads its folder (peak.json, each ragmig run's events.jsonl, st-*.json).

Model FLOP utilisation counts real tokens only: per token 6x the encoder's matmul weights (forward and backward)
plus attention 12 x layers x hidden x n for a sequence of n tokens (n taken as the mean real tokens of a query
and passage pair's side, which undercounts long passages slightly), over the bf16 matmul peak measured in the run.
Throughput is over the progress events after step 10 (warm-up, and the profiled steps 6-10).
"""
import json
import os
import sys

H, LAYERS, INTER = 768, 12, 3072
LINEAR = LAYERS * (4 * H * H + 2 * H * INTER)


def flops_per_token(tokens_per_sample):
    n = tokens_per_sample / 2  # mean length of one side
    return 6 * LINEAR + 12 * LAYERS * H * n


def ragmig_row(folder):
    path = os.path.join(folder, "events.jsonl")
    if not os.path.exists(path):
        return None
    ev = [json.loads(l) for l in open(path)]
    prog = [e for e in ev if e.get("event") == "progress" and e["step"] > 10]
    if not prog:
        return None
    secs = sum(5 * e["batch_size"] / e["samples_per_s"] for e in prog)
    samples = sum(5 * e["batch_size"] for e in prog)
    tokens = sum(e["tokens_per_s"] * 5 * e["batch_size"] / e["samples_per_s"] for e in prog)
    start = next((e for e in ev if e.get("event") == "start"), {})
    return {"samples_per_s": samples / secs, "tokens_per_s": tokens / secs,
            "padding": sum(e["padding"] for e in prog) / len(prog),
            "memory_gib": max(e.get("memory_mb", 0) for e in prog) / 1024,
            "varlen": prog[-1].get("varlen_attention"), "optimizer_step": start.get("optimizer_step"),
            "loss": prog[-1]["loss"]}


def main():
    out = sys.argv[1]
    peak = json.load(open(os.path.join(out, "peak.json")))
    tf = peak["tflops"] * 1e12
    print(f"\n{peak['gpu']}, torch {peak['torch']}: bf16 matmul peak {peak['tflops']:.0f} TFLOP/s (8192^3)")
    print(f"{'row':<18} {'samples/s':>10} {'tokens/s':>10} {'pad %':>6} {'GiB':>6} {'MFU':>6} {'vs ST':>6}  notes")
    st = {}
    for b in (512, 128):
        p = os.path.join(out, f"st-{b}.json")
        if os.path.exists(p) and os.path.getsize(p):
            st[b] = json.loads(open(p).read().strip().splitlines()[-1])
    rows = [("b512", 512), ("b128", 128), ("b512-apart", 512), ("b128-apart", 128), ("b512-bf16res", 512),
            ("b128-bf16res", 128), ("b512-padded", 512), ("b512-shuffled", 512), ("b512-gradcache", 512),
            ("b512-gradcache256", 512)]
    plain = ragmig_row(os.path.join(out, "b512"))
    for name, b in rows:
        r = ragmig_row(os.path.join(out, name))
        if not r:
            print(f"{name:<18} (no result)")
            continue
        # GradCache's price: its time per sample over plain training's at the same batch (issue 16: <= 1.5x).
        price = f" {plain['samples_per_s'] / r['samples_per_s']:.2f}x plain's time per sample" \
            if plain and "gradcache" in name else ""
        # A pass per tower against one pass over both (the row without "-apart", same batch).
        joint = ragmig_row(os.path.join(out, name[:-len("-apart")])) if name.endswith("-apart") else None
        if joint:
            price = f" one pass {joint['samples_per_s'] / r['samples_per_s']:.2f}x this"
        # The residual stream in bf16 against autocast's fp32 one (the row without "-bf16res", same batch).
        fp32_stream = ragmig_row(os.path.join(out, name[:-len("-bf16res")])) if name.endswith("-bf16res") else None
        if fp32_stream:
            price = f" {r['samples_per_s'] / fp32_stream['samples_per_s']:.2f}x the fp32 stream's samples/s, loss " \
                f"{fp32_stream['loss']:.3f} there"
        mfu = r["tokens_per_s"] * flops_per_token(r["tokens_per_s"] / r["samples_per_s"]) / tf
        vs = f"{r['samples_per_s'] / st[b]['samples_per_s']:.2f}x" if b in st else "-"
        print(f"{name:<18} {r['samples_per_s']:>10.0f} {r['tokens_per_s']:>10.0f} {100 * r['padding']:>6.1f} "
              f"{r['memory_gib']:>6.1f} {100 * mfu:>5.1f}% {vs:>6}  varlen={r['varlen']} step={r['optimizer_step']} "
              f"loss={r['loss']:.3f}{price}")
    for b, s in st.items():
        mfu = s["tokens_per_s"] * flops_per_token(s["tokens_per_s"] / s["samples_per_s"]) / tf
        print(f"{'ST b' + str(b):<18} {s['samples_per_s']:>10.0f} {s['tokens_per_s']:>10.0f} {'':>6} "
              f"{s['peak_mem_gib']:>6.1f} {100 * mfu:>5.1f}% {'1.00x':>6}  {s['impl']}")


if __name__ == "__main__":
    main()
