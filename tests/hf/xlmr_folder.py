#!/usr/bin/env python3
"""Saves a small random XLM-R the way transformers and sentence-transformers do, for tests/hf/test_hf_parity.cpp:
a SentencePiece Unigram model (sentencepiece's trainer, its default nmt_nfkc normalisation, so the tokenizer carries
SentencePiece's real precompiled charsmap) trained on TOKENIZER_DIR's WordPiece vocabulary and multilingual lines,
converted by transformers' XLMRobertaTokenizer; OUT/hf (XLMRobertaModel.save_pretrained + the tokenizer:
tokenizer.json) and OUT/st (a SentenceTransformer of it: mean pooling, Normalize, max_seq_length 40, saved with
.save). OUT/hub/tokenizer.json is the same tokenizer in the layout of the XLM-R files on the Hugging Face hub
(normaliser Precompiled then Replace " {2,}" -> " ", Metaspace alone, add_prefix_space). With TEXTS.json, also
OUT/ids.json: {"converted": [...], "hub": [...]}: each text's ids, <s> and </s> included, untruncated.
Usage: xlmr_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import io
import json
import os
import sys
import tempfile

import sentencepiece as spm
import torch
from tokenizers import Tokenizer
from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizer

from random_folder import perturb, save_both  # beside this file

LINES = ["naïve café Ünïcödé straße", "東京は日本の首都です", "Москва — столица России", "한국어 텍스트", "नमस्ते दुनिया",
         "مرحبا بالعالم", "ｆｕｌｌｗｉｄｔｈ ①②③ ﬁ", "Ελληνικά γράμματα", "emoji 😀👍🏽 🇫🇷"]


def main():
    out, tokenizer_dir = sys.argv[1:3]
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    words = sorted(words, key=words.get)
    lines = [" ".join(words[i:i + 15]) for i in range(0, len(words), 15)] + LINES * 3
    model_file = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model_file, vocab_size=1500,
                                   model_type="unigram", character_coverage=0.9995, bos_id=-1, eos_id=-1, unk_id=0,
                                   pad_id=-1, minloglevel=2)
    files = tempfile.mkdtemp()
    with open(os.path.join(files, "sentencepiece.bpe.model"), "wb") as f:
        f.write(model_file.getvalue())
    tok = XLMRobertaTokenizer.from_pretrained(files)
    torch.manual_seed(5)
    config = XLMRobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=64, max_position_embeddings=66, type_vocab_size=1, pad_token_id=1,
                              bos_token_id=0, eos_token_id=2)
    model = XLMRobertaModel(config, add_pooling_layer=False)
    perturb(model)
    save_both(model, tok, out, max_seq_length=40, dim=32)

    tj = json.load(open(os.path.join(out, "hf", "tokenizer.json"), encoding="utf-8"))
    precompiled = tj["normalizer"]
    assert precompiled["type"] == "Precompiled", precompiled
    tj["normalizer"] = {"type": "Sequence", "normalizers": [
        precompiled, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    tj["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    os.makedirs(os.path.join(out, "hub"))
    with open(os.path.join(out, "hub", "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        hub = Tokenizer.from_file(os.path.join(out, "hub", "tokenizer.json"))
        ids = {"converted": [tok(t)["input_ids"] for t in texts],
               "hub": [hub.encode(t).ids for t in texts]}
        with open(os.path.join(out, "ids.json"), "w") as f:
            json.dump(ids, f)


if __name__ == "__main__":
    main()
