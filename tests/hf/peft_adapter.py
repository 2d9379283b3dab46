#!/usr/bin/env python3
"""LoRA adapters on the Python side, for tests/hf/test_hf_parity.cpp:
  make BASE OUT [TARGETS]
                         peft makes a LoRA adapter on BASE (random A and B, seeded: init_lora_weights=False)
                         targeting TARGETS (comma-separated; default query, key, value and every dense layer: BERT's
                         names), and saves it to OUT
  embed BASE ADAPTER TEXTS.json OUT.json
                         peft.PeftModel.from_pretrained(AutoModel(BASE), ADAPTER) embeds the texts as
                         sentence-transformers would (BASE's pooling, normalisation and max_seq_length)
Both run offline: BASE is a local folder."""
import json
import os
import sys

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModel

from embed_folder import embed_hf  # beside this file: the same pooling and normalisation


def load_base(base):
    """AutoModel of BASE without a pooler (ModernBERT, the decoders and Gemma 3 have none to leave out)."""
    model_type = json.load(open(os.path.join(base, "config.json"))).get("model_type")
    pooler = model_type not in ("modernbert", "qwen3", "qwen2", "llama", "mistral", "gemma3_text")
    return AutoModel.from_pretrained(base, **({"add_pooling_layer": False} if pooler else {}))


def make(base, out, targets="query,key,value,dense"):
    torch.manual_seed(7)
    model = load_base(base)
    config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=targets.split(","),
                        init_lora_weights=False)
    get_peft_model(model, config).save_pretrained(out)


def embed(base, adapter, texts_path, out_path):
    texts = json.load(open(texts_path, encoding="utf-8"))
    model = PeftModel.from_pretrained(load_base(base), adapter)
    with open(out_path, "w") as f:
        json.dump({"peft": embed_hf(base, texts, model).tolist()}, f)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:5])
    elif sys.argv[1] == "embed":
        embed(*sys.argv[2:6])
    else:
        sys.exit("usage: peft_adapter.py make BASE OUT [TARGETS] | embed BASE ADAPTER TEXTS.json OUT.json")
