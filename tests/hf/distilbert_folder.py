#!/usr/bin/env python3
"""Saves a small random DistilBERT the way transformers and sentence-transformers do, for
tests/hf/test_hf_parity.cpp: OUT/hf (DistilBertModel.save_pretrained + the tokenizer of TOKENIZER_DIR) and OUT/st
(a SentenceTransformer of it: mean pooling, Normalize, max_seq_length 24, saved with .save).
Usage: distilbert_folder.py OUT TOKENIZER_DIR"""
import sys

import torch
from transformers import AutoTokenizer, DistilBertConfig, DistilBertModel

from random_folder import perturb, save_both  # beside this file


def main():
    out, tokenizer_dir = sys.argv[1:3]
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(3)
    config = DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                              max_position_embeddings=40)
    model = DistilBertModel(config)
    perturb(model)
    save_both(model, tok, out, max_seq_length=24, dim=32)


if __name__ == "__main__":
    main()
