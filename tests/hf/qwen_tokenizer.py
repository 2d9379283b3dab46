#!/usr/bin/env python3
"""Saves byte-level BPE tokenizers laid out as Qwen's, for tests/hf/test_hf_parity.cpp: trained by the tokenizers
library on TOKENIZER_DIR's WordPiece vocabulary as text, with an NFC normaliser, a Split by Qwen2's pattern
(OUT/qwen2) or Llama 3's (OUT/llama3) before a ByteLevel without its own, Qwen's special tokens added after
training (ids past model.vocab: <|endoftext|>, <|im_start|>, <|im_end|>) and Qwen3-Embedding's post-processor,
$A <|endoftext|>; tokenizer_config.json as transformers saves Qwen's (eos <|im_end|>, pad <|endoftext|>, no unk).
With TEXTS.json, OUT/ids.json: {"qwen2": [...], "llama3": [...]}, the ids transformers gives each text.
Usage: qwen_tokenizer.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
         r"""\s+(?!\S)|\s+""")
LLAMA3 = QWEN2.replace(r"\p{N}|", r"\p{N}{1,3}|")


def tokenizer(pattern, words):
    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), "isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator([" ".join(words[i:i + 20]) for i in range(0, len(words), 20)], trainer=trainer)
    bpe.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    eos = bpe.token_to_id("<|endoftext|>")
    bpe.post_processor = processors.TemplateProcessing(single="$A <|endoftext|>",
                                                       pair="$A <|endoftext|> $B:1 <|endoftext|>:1",
                                                       special_tokens=[("<|endoftext|>", eos)])
    return PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   model_input_names=["input_ids", "attention_mask"])


def main():
    out, tokenizer_dir = sys.argv[1:3]
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    words = sorted(words, key=words.get)
    ids = {}
    for name, pattern in (("qwen2", QWEN2), ("llama3", LLAMA3)):
        tok = tokenizer(pattern, words)
        tok.save_pretrained(os.path.join(out, name))
        if len(sys.argv) > 3:
            ids[name] = [tok(t)["input_ids"] for t in json.load(open(sys.argv[3], encoding="utf-8"))]
    if ids:
        json.dump(ids, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
