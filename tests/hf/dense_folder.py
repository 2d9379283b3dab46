#!/usr/bin/env python3
"""Saves small random BERT retrievers with sentence-transformers' Dense module after pooling, for
tests/hf/test_hf_parity.cpp, each a SentenceTransformer saved with .save (max_seq_length 40) over one random BERT
(hidden 32) whose tokenizer is TOKENIZER_DIR's:
  OUT/labse      LaBSE's layout: CLS pooling, Dense 32 -> 32 tanh, Normalize
  OUT/distiluse  distiluse-base-multilingual's: mean pooling, Dense 32 -> 24 tanh, no Normalize
  OUT/residual   mean pooling, Dense 32 -> 20 without bias, GELU, use_residual, Normalize
  OUT/pickled    LaBSE's saved with safe_serialization=False (pytorch_model.bin files)
With TEXTS.json, also OUT/embeddings.json: {name: SentenceTransformer(OUT/name).encode(texts)} for the first three.
Usage: dense_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

import torch
from sentence_transformers import SentenceTransformer, models
from transformers import AutoTokenizer, BertConfig, BertModel

from random_folder import perturb  # beside this file

LAYOUTS = {
    "labse": ("cls", dict(out_features=32, activation_function=torch.nn.Tanh()), True),
    "distiluse": ("mean", dict(out_features=24, activation_function=torch.nn.Tanh()), False),
    "residual": ("mean", dict(out_features=20, bias=False, activation_function=torch.nn.GELU(), use_residual=True),
                 True),
}


def main():
    out, tokenizer_dir = sys.argv[1:3]
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(11)
    config = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=40)
    model = BertModel(config, add_pooling_layer=False)
    perturb(model)
    hf = os.path.join(out, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    built = {}
    for name, (pooling, dense, normalize) in LAYOUTS.items():
        modules = [models.Transformer(hf, max_seq_length=40), models.Pooling(32, pooling),
                   models.Dense(in_features=32, **dense)]
        perturb(modules[-1])
        if normalize:
            modules.append(models.Normalize())
        built[name] = SentenceTransformer(modules=modules, device="cpu")
        built[name].save(os.path.join(out, name))
    built["labse"].save(os.path.join(out, "pickled"), safe_serialization=False)
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        embeddings = {name: SentenceTransformer(os.path.join(out, name), device="cpu").encode(texts).tolist()
                      for name in LAYOUTS}
        json.dump(embeddings, open(os.path.join(out, "embeddings.json"), "w"))


if __name__ == "__main__":
    main()
