"""The reference side of bench_encode, on the same LibTorch as ragmig (the project venv's torch). Prints one
JSON line.
  shape: transformers' BertModel (SDPA attention; --family mpnet: MPNetModel, whose attention transformers
         computes only in plain operations; --family modernbert: ModernBertModel, SDPA, ModernBertConfig's
         defaults but the size; --family qwen3: Qwen3Model, SDPA, heads / 3 key/value heads, Qwen3Config's
         defaults but the size) of the given shape (random weights), mean pooling and L2, on batches of random
         ids where every token is real:
         {"<length>": passages/s, ...}
  text:  SentenceTransformer(--model).encode(texts) as users call it: {"passages_per_s": ...}"""
import argparse
import json
import time

import torch


def seconds_per_call(fn, min_seconds):
    fn()
    calls, t0 = 0, time.perf_counter()
    while calls < 2 or time.perf_counter() - t0 < min_seconds:
        fn()
        calls += 1
    return (time.perf_counter() - t0) / calls


def shape(a):
    from transformers import (BertConfig, BertModel, Gemma3TextConfig, Gemma3TextModel, ModernBertConfig,
                              ModernBertModel, MPNetConfig, MPNetModel, Qwen3Config, Qwen3Model)
    size = dict(hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
                intermediate_size=a.inter)
    torch.manual_seed(0)
    if a.family == "modernbert":
        model = ModernBertModel(ModernBertConfig(vocab_size=30522, pad_token_id=0, attn_implementation="sdpa", **size))
    elif a.family == "qwen3":
        model = Qwen3Model(Qwen3Config(vocab_size=30522, num_key_value_heads=a.heads // 3, head_dim=a.hidden // a.heads,
                                       attn_implementation="sdpa", **size))
    elif a.family == "gemma3":
        model = Gemma3TextModel(Gemma3TextConfig(vocab_size=30522, num_key_value_heads=a.heads // 3,
                                                 head_dim=a.hidden // a.heads, query_pre_attn_scalar=a.hidden // a.heads,
                                                 sliding_window=128, use_bidirectional_attention=True,
                                                 attn_implementation="sdpa", **size))
    elif a.family == "mpnet":
        model = MPNetModel(MPNetConfig(**size), add_pooling_layer=False)
    else:
        model = BertModel(BertConfig(attn_implementation="sdpa", **size), add_pooling_layer=False)
    model.eval()
    if a.precision == "bf16":
        model = model.to(torch.bfloat16)
    out = {}
    for length in map(int, a.lengths.split(",")):
        ids = torch.randint(1000, 30000, (a.batch, length))
        mask = torch.ones_like(ids)

        def encode():
            with torch.inference_mode():
                h = model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
                m = mask.unsqueeze(-1).float()
                torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)

        out[str(length)] = a.batch / seconds_per_call(encode, a.seconds)
    return out


def text(a):
    from sentence_transformers import SentenceTransformer
    texts = json.load(open(a.texts, encoding="utf-8"))
    model = SentenceTransformer(a.model, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16} if a.precision == "bf16" else None)
    model.max_seq_length = a.max_len
    model.encode(texts[:8], batch_size=a.batch)  # warm-up
    t0 = time.perf_counter()
    model.encode(texts, batch_size=a.batch)
    return {"passages_per_s": len(texts) / (time.perf_counter() - t0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["shape", "text"])
    for name in ["hidden", "layers", "heads", "inter", "batch", "threads", "max_len"]:
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=0)
    ap.add_argument("--lengths", default="64,128,256")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--family", default="bert", choices=["bert", "mpnet", "modernbert", "qwen3", "gemma3"])
    ap.add_argument("--model")
    ap.add_argument("--texts")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    out = shape(a) if a.mode == "shape" else text(a)
    out["torch"] = torch.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
