#!/usr/bin/env python3
"""LoRA adapters on the Python side, for tests/hf/test_hf_parity.cpp:
  make BASE OUT          peft makes a LoRA adapter on BASE (random A and B, seeded: init_lora_weights=False)
                         targeting query, key, value and every dense layer, and saves it to OUT
  embed BASE ADAPTER TEXTS.json OUT.json
                         peft.PeftModel.from_pretrained(AutoModel(BASE), ADAPTER) embeds the texts as
                         sentence-transformers would (BASE's pooling, normalisation and max_seq_length)
Both run offline: BASE is a local folder."""
import json
import os
import sys

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModel, AutoTokenizer


def make(base, out):
    torch.manual_seed(7)
    model = AutoModel.from_pretrained(base, add_pooling_layer=False)
    config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["query", "key", "value", "dense"],
                        init_lora_weights=False)
    get_peft_model(model, config).save_pretrained(out)


def embed(base, adapter, texts_path, out_path):
    texts = json.load(open(texts_path, encoding="utf-8"))
    pooling = json.load(open(os.path.join(base, "1_Pooling", "config.json")))
    modules = json.load(open(os.path.join(base, "modules.json")))
    max_len = json.load(open(os.path.join(base, "sentence_bert_config.json")))["max_seq_length"]
    cls = pooling.get("pooling_mode") == "cls" or pooling.get("pooling_mode_cls_token", False)
    normalize = any(m["type"].endswith("Normalize") for m in modules)
    tok = AutoTokenizer.from_pretrained(base)
    model = PeftModel.from_pretrained(AutoModel.from_pretrained(base, add_pooling_layer=False), adapter).eval()
    b = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
    with torch.no_grad():
        h = model(**b).last_hidden_state
    if cls:
        e = h[:, 0]
    else:
        m = b["attention_mask"].unsqueeze(-1).float()
        e = (h * m).sum(1) / m.sum(1)
    e = torch.nn.functional.normalize(e, dim=-1) if normalize else e
    with open(out_path, "w") as f:
        json.dump({"peft": e.tolist()}, f)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:4])
    elif sys.argv[1] == "embed":
        embed(*sys.argv[2:6])
    else:
        sys.exit("usage: peft_adapter.py make BASE OUT | embed BASE ADAPTER TEXTS.json OUT.json")
