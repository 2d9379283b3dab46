#!/usr/bin/env python3
"""Saves a small random DistilBERT the way transformers and sentence-transformers do, for
tests/hf/test_hf_parity.cpp: OUT/hf (DistilBertModel.save_pretrained + the tokenizer of TOKENIZER_DIR) and OUT/st
(a SentenceTransformer of it: mean pooling, Normalize, max_seq_length 24, saved with .save).
Usage: distilbert_folder.py OUT TOKENIZER_DIR"""
import os
import sys

import torch
from sentence_transformers import SentenceTransformer, models
from transformers import AutoTokenizer, DistilBertConfig, DistilBertModel


def main():
    out, tokenizer_dir = sys.argv[1:3]
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(3)
    config = DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                              max_position_embeddings=40)
    model = DistilBertModel(config)
    with torch.no_grad():  # larger than the initialiser's 0.02, so that every tensor matters to the output
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    hf = os.path.join(out, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    st = SentenceTransformer(modules=[models.Transformer(hf, max_seq_length=24), models.Pooling(32, "mean"),
                                      models.Normalize()], device="cpu")
    st.save(os.path.join(out, "st"))


if __name__ == "__main__":
    main()
