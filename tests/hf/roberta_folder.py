#!/usr/bin/env python3
"""Saves a small random RoBERTa the way transformers and sentence-transformers do, for tests/hf/test_hf_parity.cpp:
a byte-level BPE (tokenizers' ByteLevelBPETokenizer, RoBERTa's special tokens) trained on TOKENIZER_DIR's WordPiece
vocabulary as text; OUT/hf (RobertaModel.save_pretrained + RobertaTokenizer.save_pretrained: tokenizer.json) and
OUT/st (a SentenceTransformer of it: mean pooling, Normalize, max_seq_length 40, saved with .save). With TEXTS.json,
also OUT/ids.json: {"plain": [ids of each text], "prefix_space": [the same with add_prefix_space=True],
"lstrip_mask": [the same with <mask> taking the whitespace before it, as roberta-base's on the hub]}, as
transformers' RobertaTokenizer encodes them, <s> and </s> included, untruncated.
Usage: roberta_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys
import tempfile

import torch
from tokenizers import AddedToken
from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

from random_folder import byte_level_bpe, perturb, save_both  # beside this file

SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def main():
    out, tokenizer_dir = sys.argv[1:3]
    bpe = byte_level_bpe(tokenizer_dir, SPECIAL)
    files = tempfile.mkdtemp()
    bpe.save_model(files)  # vocab.json + merges.txt
    tok = RobertaTokenizer.from_pretrained(files)
    torch.manual_seed(5)
    config = RobertaConfig(vocab_size=bpe.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=66, type_vocab_size=1, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2)
    model = RobertaModel(config, add_pooling_layer=False)
    perturb(model)
    save_both(model, tok, out, max_seq_length=40, dim=32)
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        prefixed = RobertaTokenizer.from_pretrained(files, add_prefix_space=True)
        masked = RobertaTokenizer.from_pretrained(files, mask_token=AddedToken("<mask>", lstrip=True, rstrip=False))
        ids = {"plain": [tok(t)["input_ids"] for t in texts], "prefix_space": [prefixed(t)["input_ids"] for t in texts],
               "lstrip_mask": [masked(t)["input_ids"] for t in texts]}
        json.dump(ids, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
