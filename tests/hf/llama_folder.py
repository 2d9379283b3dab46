#!/usr/bin/env python3
"""Saves small random Llama-family decoders the way transformers and sentence-transformers save e5-mistral,
gte-Qwen2 and their kind, for tests/hf/test_hf_parity.cpp. The Llama tokenizer is transformers 5's LlamaTokenizer
(SentencePiece-style BPE with byte fallback: a Metaspace that turns spaces into "▁" and prepends one before the
text's first part, no split; <s> $A </s>, as e5-mistral appends </s> to pool it) over a vocabulary and merges the
tokenizers library trains on TOKENIZER_DIR's WordPiece words as text (alphabet cut to 200 characters, so CJK and
emoji take byte fallback); </s> pads.
  OUT/llama:   a LlamaModel (attention and MLP biases on, 4 query heads over 2 key/value heads of head_dim 16 beside a
               hidden size of 32), last-token pooling, Normalize;
  OUT/mistral: a MistralModel (no biases, sliding_window 48 over 128 positions), mean pooling, no Normalize;
  OUT/qwen2:   a Qwen2Model (q/k/v biases) with qwen_tokenizer.py's Qwen2-split byte-level BPE, last-token pooling;
  OUT/legacy:  the Llama tokenizer's tokenizer.json as the hub's Llama 2 and Mistral files have it (no pre-tokenizer,
               a Prepend "▁" then Replace " " -> "▁" normaliser) under PreTrainedTokenizerFast.
Base models, framed as their pretraining framed texts (no eos), the start of an embedding model's fine-tune:
  OUT/base:      the Llama model with the Llama tokenizer as base Llama 2 and Mistral frame: <s> $A; mean pooling;
  OUT/qwen3base: the Qwen2 model with the Qwen2-split tokenizer as Qwen3-0.6B-Base has it: a ByteLevel
                 post-processor, no special token added ($A); mean pooling;
  OUT/llama3:    a LlamaModel with a Llama 3-split byte-level tokenizer as Llama 3's: <|begin_of_text|> $A by a
                 Sequence of a ByteLevel and a TemplateProcessing post-processor, <|end_of_text|> its eos (and pad);
                 last-token pooling, Normalize.
Each folder is a SentenceTransformer saved with .save (max_seq_length 40); OUT/NAME/hf the transformers model.
With TEXTS.json, also OUT/ids.json: {"plain": [...], "legacy": [...], "base": [...], "qwen3base": [...],
"llama3": [...]}: the ids transformers' tokenizers (the tokenizers library for the legacy file) give each text,
untruncated.
Usage: llama_folder.py OUT TOKENIZER_DIR [TEXTS.json]"""
import json
import os
import sys

import torch
from sentence_transformers import SentenceTransformer, models
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers import models as tok_models
from tokenizers import trainers
from transformers import (LlamaConfig, LlamaModel, LlamaTokenizer, MistralConfig, MistralModel,
                          PreTrainedTokenizerFast, Qwen2Config, Qwen2Model)

from qwen_tokenizer import LLAMA3, QWEN2, tokenizer as qwen_tokenizer  # beside this file
from random_folder import perturb

SPECIAL = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]


def llama_bpe(words):
    """The vocabulary and merges the tokenizers library trains (once: its ties may fall otherwise on another run)."""
    bpe = Tokenizer(tok_models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    trainer = trainers.BpeTrainer(vocab_size=1500, min_frequency=2, limit_alphabet=200, show_progress=False,
                                  special_tokens=SPECIAL)
    bpe.train_from_iterator([" ".join(words[i:i + 8]) for i in range(0, len(words), 8)], trainer=trainer)
    return json.loads(bpe.to_str())["model"]


def llama_tokenizer(model, add_eos_token=True):
    tok = LlamaTokenizer(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], add_bos_token=True,
                         add_eos_token=add_eos_token)
    tok.pad_token = "</s>"
    return tok


def byte_level_variant(tok, post_processor, added, **special):
    """qwen_tokenizer.py's tokenizer with `added` special tokens and another post-processor."""
    backend = Tokenizer.from_str(tok.backend_tokenizer.to_str())
    backend.add_special_tokens(added)
    backend.post_processor = post_processor
    return PreTrainedTokenizerFast(tokenizer_object=backend, model_input_names=["input_ids", "attention_mask"],
                                   **special)


def save(out, name, model, tok, pooling, normalize):
    hf = os.path.join(out, name, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    modules = [models.Transformer(hf, max_seq_length=40), models.Pooling(model.config.hidden_size, pooling)]
    SentenceTransformer(modules=modules + ([models.Normalize()] if normalize else []), device="cpu").save(
        os.path.join(out, name))


def main():
    out, tokenizer_dir = sys.argv[1:3]
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    words = sorted(words, key=words.get)
    bpe_model = llama_bpe(words)
    tok = llama_tokenizer(bpe_model)
    ids = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}

    torch.manual_seed(17)
    llama = LlamaModel(LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, head_dim=16, intermediate_size=48,
                                   max_position_embeddings=64, attention_bias=True, mlp_bias=True,
                                   rope_parameters={"rope_type": "default", "rope_theta": 500.0}, **ids))
    perturb(llama)
    save(out, "llama", llama, tok, "lasttoken", True)

    mistral = MistralModel(MistralConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=1, intermediate_size=48,
                                         max_position_embeddings=128, sliding_window=48, **ids))
    perturb(mistral)
    save(out, "mistral", mistral, tok, "mean", False)

    qwen = qwen_tokenizer(QWEN2, words)
    eos = qwen.convert_tokens_to_ids("<|endoftext|>")
    qwen2 = Qwen2Model(Qwen2Config(vocab_size=len(qwen), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, intermediate_size=48, max_position_embeddings=64,
                                   pad_token_id=eos, bos_token_id=eos, eos_token_id=eos))
    perturb(qwen2)
    save(out, "qwen2", qwen2, qwen, "lasttoken", True)

    # The hub's older layout of the same tokenizer: the legacy normaliser in tokenizer.json, read as the file says.
    legacy = Tokenizer.from_str(tok.backend_tokenizer.to_str())
    legacy.pre_tokenizer = None
    legacy.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    legacy_dir = os.path.join(out, "legacy")
    PreTrainedTokenizerFast(tokenizer_object=legacy, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                            pad_token="</s>").save_pretrained(legacy_dir)

    # Base models' framings: no eos.
    base = llama_tokenizer(bpe_model, add_eos_token=False)
    save(out, "base", llama, base, "mean", False)
    qwen3base = byte_level_variant(qwen, processors.ByteLevel(trim_offsets=False), [], eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>")
    save(out, "qwen3base", qwen2, qwen3base, "mean", False)
    llama3_words = qwen_tokenizer(LLAMA3, words)
    begin, end = "<|begin_of_text|>", "<|end_of_text|>"
    first = len(llama3_words)  # the two tokens' ids once added
    template = processors.TemplateProcessing(single=f"{begin} $A", pair=f"{begin} $A {begin}:1 $B:1",
                                             special_tokens=[(begin, first)])
    llama3_tok = byte_level_variant(llama3_words, processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                                                       template]),
                                    [begin, end], bos_token=begin, eos_token=end, pad_token=end)
    assert llama3_tok.convert_tokens_to_ids(begin) == first
    llama3 = LlamaModel(LlamaConfig(vocab_size=len(llama3_tok), hidden_size=32, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
                                    max_position_embeddings=64, bos_token_id=first, eos_token_id=first + 1,
                                    pad_token_id=first + 1))
    perturb(llama3)
    save(out, "llama3", llama3, llama3_tok, "lasttoken", True)

    if len(sys.argv) > 3:
        texts = json.load(open(sys.argv[3], encoding="utf-8"))
        ids = {name: [t(text)["input_ids"] for text in texts]
               for name, t in (("plain", tok), ("base", base), ("qwen3base", qwen3base), ("llama3", llama3_tok))}
        ids["legacy"] = [e.ids for e in legacy.encode_batch(texts)]
        json.dump(ids, open(os.path.join(out, "ids.json"), "w"))


if __name__ == "__main__":
    main()
