#!/usr/bin/env python3
"""Saves a small random ModernBERT the way transformers and sentence-transformers do, for
tests/hf/test_hf_parity.cpp: a byte-level BPE trained on TOKENIZER_DIR's WordPiece vocabulary as text, laid out as
ModernBERT's (GPT-NeoX's / OLMo's) tokenizer.json: an NFC normaliser; ModernBERT's special tokens added after
training (ids past model.vocab; [CLS] $A [SEP] by a TemplateProcessing post-processor, [MASK] taking the whitespace
before it, [unused0] and [unused1]); GPT-NeoX's runs of 2 to 8 spaces as added, not special tokens. And a
ModernBertModel of three layers (global, sliding, sliding: global_attn_every_n_layers 3,
as the real ones) whose sliding window (local_attention 8) is shorter than the texts, with biases in the norms and
linear layers switched on where ModernBERT's configs allow them off. OUT/hf (save_pretrained) and OUT/st (a
SentenceTransformer of it: mean pooling, Normalize, max_seq_length 40, saved with .save). With TEXTS.json, also
OUT/ids.json: {"plain": [ids of each text]} as the tokenizers library encodes them, [CLS] and [SEP] included,
untruncated.
Usage: modernbert_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

import torch
from tokenizers import AddedToken, normalizers, processors
from transformers import ModernBertConfig, ModernBertModel, PreTrainedTokenizerFast

from random_folder import byte_level_bpe, perturb, save_both  # beside this file

SPECIAL = ["[UNK]", "[CLS]", "[SEP]", "[PAD]"]


def main():
    out, tokenizer_dir = sys.argv[1:3]
    bpe = byte_level_bpe(tokenizer_dir)
    bpe.normalizer = normalizers.NFC()
    bpe.add_special_tokens(SPECIAL + [AddedToken("[MASK]", lstrip=True, rstrip=False)])
    bpe.add_tokens([AddedToken(" " * n, normalized=True, special=False) for n in range(8, 1, -1)])
    bpe.add_special_tokens(["[unused0]", "[unused1]"])
    cls, sep = bpe.token_to_id("[CLS]"), bpe.token_to_id("[SEP]")
    bpe.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, unk_token="[UNK]", cls_token="[CLS]",
                                  sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]",
                                  model_input_names=["input_ids", "attention_mask"])
    torch.manual_seed(9)
    config = ModernBertConfig(vocab_size=bpe.get_vocab_size(), hidden_size=32, num_hidden_layers=3,
                              num_attention_heads=4, intermediate_size=48, max_position_embeddings=64,
                              local_attention=8, pad_token_id=bpe.token_to_id("[PAD]"), cls_token_id=cls,
                              sep_token_id=sep, bos_token_id=cls, eos_token_id=sep, norm_bias=True,
                              attention_bias=True, mlp_bias=True)
    model = ModernBertModel(config)
    perturb(model)
    save_both(model, tok, out, max_seq_length=40, dim=32)
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        ids = {"plain": [tok(t)["input_ids"] for t in texts]}
        json.dump(ids, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
