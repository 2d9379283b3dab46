#!/usr/bin/env python3
"""Embeds texts with a model folder the way the Python libraries do, for tests/hf/test_hf_parity.cpp:
  st: SentenceTransformer(folder).encode(texts)              (modules.json: pooling, Normalize, max_seq_length)
  hf: AutoTokenizer + AutoModel, pooled as 1_Pooling/config.json says, through a Dense module's layer (its
      config.json and model.safetensors read here, with torch.nn), L2-normalised when modules.json lists
      Normalize, truncated at sentence_bert_config.json's max_seq_length (else model_max_length)
  st_query, st_document: SentenceTransformer's encode_query / encode_document (their prompts, if any)
  st_prompts: {name: encode(texts, prompt_name=name)} for every non-empty prompt the folder has
A folder with separate towers (ragmig's passage/ beside the query tower) also gets passage_st and passage_hf.
Usage: embed_folder.py FOLDER TEXTS.json OUT.json     (TEXTS.json: a JSON list of strings)"""
import importlib
import json, os, sys
import torch
from safetensors.torch import load_file
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer


def dense(folder, e):
    """e through the Dense module in `folder` by hand: activation(linear(e)) (+ e, or its bias-free projection,
    with use_residual)."""
    config = json.load(open(os.path.join(folder, "config.json")))
    weights = load_file(os.path.join(folder, "model.safetensors"))
    module, _, cls = config.get("activation_function", "torch.nn.modules.activation.Tanh").rpartition(".")
    activation = getattr(importlib.import_module(module), cls)()
    out = activation(torch.nn.functional.linear(e, weights["linear.weight"], weights.get("linear.bias")))
    if config.get("use_residual"):
        out = out + (torch.nn.functional.linear(e, weights["residual.weight"]) if "residual.weight" in weights else e)
    return out


def embed_hf(folder, texts, model=None):
    """`model` (default: AutoModel of the folder) embeds, pooled and normalised as the folder says."""
    modules = json.load(open(os.path.join(folder, "modules.json")))
    pooling = json.load(open(os.path.join(folder, "1_Pooling", "config.json")))
    # sentence-transformers 6's pooling_mode, else the flag of 2-5 that is on.
    legacy = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
              "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens", "pooling_mode_lasttoken": "lasttoken"}
    mode = pooling.get("pooling_mode") or next((m for flag, m in legacy.items() if pooling.get(flag)), "mean")
    normalize = any(m["type"].endswith("Normalize") for m in modules)
    tok = AutoTokenizer.from_pretrained(folder)
    # sentence-transformers 6 keeps the limit in tokenizer_config.json's model_max_length, earlier ones here.
    max_len = json.load(open(os.path.join(folder, "sentence_bert_config.json"))).get("max_seq_length",
                                                                                   tok.model_max_length)
    config = json.load(open(os.path.join(folder, "config.json")))
    bert = config.get("model_type") == "bert"  # DistilBERT has neither a pooler nor token types
    model = (model or AutoModel.from_pretrained(folder, **({"add_pooling_layer": False} if bert else {}))).eval()
    b = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt",
            return_token_type_ids=bert)
    with torch.no_grad():
        h = model(**b).last_hidden_state
    m = b["attention_mask"].unsqueeze(-1).float()
    if mode == "cls":
        e = h[:, 0]
    elif mode == "lasttoken":  # each row's last token wherever the padding is
        last = (torch.arange(h.shape[1]) * b["attention_mask"]).argmax(1)
        e = h[torch.arange(h.shape[0]), last]
    elif mode == "max":
        e = h.masked_fill(m == 0, float("-inf")).max(1).values
    elif mode == "mean_sqrt_len_tokens":  # a row of padding only (an empty text, no special token) gives zeros
        e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9).sqrt()
    else:
        e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
    for module in modules:
        if module["type"].endswith("Dense"):
            with torch.no_grad():
                e = dense(os.path.join(folder, module["path"]), e)
    return torch.nn.functional.normalize(e, dim=-1) if normalize else e


def main():
    folder, texts_path, out_path = sys.argv[1:4]
    texts = json.load(open(texts_path, encoding="utf-8"))
    out = {}
    for prefix, path in (("", folder), ("passage_", os.path.join(folder, "passage"))):
        if not os.path.isdir(path):
            continue
        st = SentenceTransformer(path, device="cpu")
        out[prefix + "st"] = st.encode(texts, convert_to_tensor=True).tolist()
        out[prefix + "hf"] = embed_hf(path, texts).tolist()
        if prefix:
            continue
        out["st_query"] = st.encode_query(texts, convert_to_tensor=True).tolist()
        out["st_document"] = st.encode_document(texts, convert_to_tensor=True).tolist()
        out["st_prompts"] = {name: st.encode(texts, prompt_name=name, convert_to_tensor=True).tolist()
                             for name, prompt in st.prompts.items() if prompt}
    with open(out_path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
