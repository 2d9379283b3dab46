#!/usr/bin/env python3
"""Saves a small random MPNet the way transformers and sentence-transformers do, for tests/hf/test_hf_parity.cpp:
OUT/hf (MPNetModel.save_pretrained + an MPNetTokenizer whose vocabulary is TOKENIZER_DIR's WordPiece one with
MPNet's <s> <pad> </s> <unk> before it and <mask> after it, as microsoft/mpnet-base's) and OUT/st (a
SentenceTransformer of it: mean pooling, Normalize, max_seq_length 40 - so that relative distances past the
exact buckets are bucketed logarithmically - saved with .save).
Usage: mpnet_folder.py OUT TOKENIZER_DIR"""
import json
import os
import sys

import torch
from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

from random_folder import perturb, save_both  # beside this file


def main():
    out, tokenizer_dir = sys.argv[1:3]
    wordpiece = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    tokens = ["<s>", "<pad>", "</s>", "<unk>"] + sorted(wordpiece, key=wordpiece.get) + ["<mask>"]
    tok = MPNetTokenizer(vocab={t: i for i, t in enumerate(tokens)})
    torch.manual_seed(5)
    config = MPNetConfig(vocab_size=len(tokens), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=66)
    model = MPNetModel(config, add_pooling_layer=False)
    perturb(model)
    with torch.no_grad():
        model.encoder.relative_attention_bias.weight.mul_(10)  # a bias that moves the attention visibly
    save_both(model, tok, out, max_seq_length=40, dim=32)


if __name__ == "__main__":
    main()
