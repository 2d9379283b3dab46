#!/usr/bin/env python3
"""Saves a small random Gemma 3 the way transformers and sentence-transformers save EmbeddingGemma, for
tests/hf/test_hf_parity.cpp. The tokenizer is transformers 5's GemmaTokenizer (SentencePiece-style BPE: " " -> "▁",
no pre-tokenization, byte fallback to <0x00> ... <0xFF>; <bos> $A <eos> by add_bos_token / add_eos_token) over a
vocabulary and merges the tokenizers library trains on TOKENIZER_DIR's WordPiece words as text, with Gemma's
special tokens first (<pad> <eos> <bos> <unk> <mask>) and two more added after (<start_of_turn>, <end_of_turn>).
The model is a Gemma3TextModel read bidirectionally (use_bidirectional_attention, as EmbeddingGemma) of three layers
(sliding, full, sliding; a window of 6, so texts longer than 4 tokens see only part of themselves in sliding
layers), 4 query heads over 2 key/value heads of head_dim 16, query_pre_attn_scalar 24 and a rotary base per layer
type. OUT/hf (save_pretrained) and OUT/st (EmbeddingGemma's modules: mean pooling, a Dense 32 -> 64 and a Dense
64 -> 32, both bias-free with the identity activation, Normalize; max_seq_length 40; saved with .save). With
TEXTS.json, also OUT/ids.json: {"plain": [ids of each text]} as transformers encodes them, untruncated.
Usage: gemma3_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

import torch
from sentence_transformers import SentenceTransformer, models
from tokenizers import Tokenizer, normalizers
from tokenizers import models as tok_models
from tokenizers import trainers
from transformers import Gemma3TextConfig, Gemma3TextModel, GemmaTokenizer

from random_folder import perturb  # beside this file

SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + [f"<0x{b:02X}>" for b in range(256)]


def tokenizer(words):
    bpe = Tokenizer(tok_models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    bpe.normalizer = normalizers.Replace(" ", "\u2581")
    trainer = trainers.BpeTrainer(vocab_size=1500, min_frequency=2, limit_alphabet=200, show_progress=False,
                                  special_tokens=SPECIAL)
    bpe.train_from_iterator([" " + " ".join(words[i:i + 8]) for i in range(0, len(words), 8)], trainer=trainer)
    model = json.loads(bpe.to_str())["model"]
    tok = GemmaTokenizer(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], add_bos_token=True,
                         add_eos_token=True)
    tok.add_special_tokens({"additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"]})
    return tok


def main():
    out, tokenizer_dir = sys.argv[1:3]
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    tok = tokenizer(sorted(words, key=words.get))
    torch.manual_seed(13)
    config = Gemma3TextConfig(
        vocab_size=len(tok), hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
        head_dim=16, intermediate_size=48, max_position_embeddings=128, sliding_window=6,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"], use_bidirectional_attention=True,
        query_pre_attn_scalar=24, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 5000.0}})
    model = Gemma3TextModel(config)
    perturb(model)
    hf = os.path.join(out, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    dense = [models.Dense(in_features=i, out_features=o, bias=False, activation_function=torch.nn.Identity())
             for i, o in ((32, 64), (64, 32))]
    st = SentenceTransformer(modules=[models.Transformer(hf, max_seq_length=40), models.Pooling(32, "mean"), *dense,
                                      models.Normalize()], device="cpu")
    st.save(os.path.join(out, "st"))
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        json.dump({"plain": [tok(t)["input_ids"] for t in texts]}, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
