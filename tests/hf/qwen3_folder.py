#!/usr/bin/env python3
"""Saves a small random Qwen3 the way transformers and sentence-transformers save Qwen3-Embedding, for
tests/hf/test_hf_parity.cpp: qwen_tokenizer.py's Qwen2-split tokenizer ($A <|endoftext|>) and a Qwen3Model of two
layers with grouped key/value heads (4 query heads, 2 key/value heads) of head_dim 16 (not hidden_size / heads, as
the real ones), attention biases on. OUT/hf (save_pretrained) and OUT/st (a SentenceTransformer of it: last-token
pooling, Normalize, max_seq_length 40, saved with .save). With TEXTS.json, also OUT/ids.json: {"plain": [ids of
each text]} as transformers encodes them, <|endoftext|> included, untruncated.
Usage: qwen3_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

import torch
from sentence_transformers import SentenceTransformer, models
from transformers import Qwen3Config, Qwen3Model

from qwen_tokenizer import QWEN2, tokenizer  # beside this file
from random_folder import perturb


def main():
    out, tokenizer_dir = sys.argv[1:3]
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    tok = tokenizer(QWEN2, sorted(words, key=words.get))
    torch.manual_seed(11)
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen3Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=16, intermediate_size=48, max_position_embeddings=64,
                         attention_bias=True, pad_token_id=eos, bos_token_id=eos, eos_token_id=eos)
    model = Qwen3Model(config)
    perturb(model)
    hf = os.path.join(out, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    st = SentenceTransformer(modules=[models.Transformer(hf, max_seq_length=40), models.Pooling(32, "lasttoken"),
                                      models.Normalize()], device="cpu")
    st.save(os.path.join(out, "st"))
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        json.dump({"plain": [tok(t)["input_ids"] for t in texts]}, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
