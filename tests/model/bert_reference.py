#!/usr/bin/python3
# An independent reference of the BERT forward pass for model tests: plain torch (no transformers), reading
# and writing safetensors with struct+json. Mirrors Hugging Face's modeling_bert.py (post-LN, exact GELU).
# usage: bert_reference.py CONFIG_JSON INPUT_SAFETENSORS OUTPUT_SAFETENSORS
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32}
NAMES = {v: k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = blob[8 + n :]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = DTYPES[entry["dtype"]]
        if end == begin:
            t = torch.empty(entry["shape"], dtype=dtype)
        else:
            t = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype).reshape(entry["shape"])
        out[name] = t
    return out


def write_safetensors(path, tensors):
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def layer_norm(x, w, prefix, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w[prefix + ".weight"], w[prefix + ".bias"], eps)


def linear(x, w, prefix):
    return torch.nn.functional.linear(x, w[prefix + ".weight"], w[prefix + ".bias"])


def bert(cfg, w, ids, mask):
    b, l = ids.shape
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    eps = cfg["layer_norm_eps"]
    pos = torch.arange(l).unsqueeze(0)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)]
        + w["embeddings.position_embeddings.weight"][pos]
    )
    x = layer_norm(x, w, "embeddings.LayerNorm", eps)
    ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    act = torch.nn.functional.relu if cfg["hidden_act"] == "relu" else torch.nn.functional.gelu
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def split(t):
            return t.view(b, l, heads, d).permute(0, 2, 1, 3)

        q = split(linear(x, w, p + "attention.self.query"))
        k = split(linear(x, w, p + "attention.self.key"))
        v = split(linear(x, w, p + "attention.self.value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(b, l, heads * d)
        a = layer_norm(linear(ctx, w, p + "attention.output.dense") + x, w, p + "attention.output.LayerNorm", eps)
        h = act(linear(a, w, p + "intermediate.dense"))
        x = layer_norm(linear(h, w, p + "output.dense") + a, w, p + "output.LayerNorm", eps)
    return x


def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    t = read_safetensors(sys.argv[2])
    with torch.no_grad():
        out = bert(cfg, t, t["input_ids"], t["attention_mask"])
    write_safetensors(sys.argv[3], {"last_hidden_state": out.to(torch.float32)})


if __name__ == "__main__":
    main()
