#!/usr/bin/env python3
"""The Python side of bench/tokenize (bench_tokenize.cpp runs it in the same run).
  make OUT TEXTS.json   trains, on the texts, a byte-level BPE of 30,000 tokens (tokenizers' ByteLevelBPETokenizer,
                        RoBERTa's special tokens) saved by transformers' RobertaTokenizer as OUT/bpe, and a
                        SentencePiece Unigram of 16,000 pieces (sentencepiece's trainer, nmt_nfkc) converted by
                        transformers' XLMRobertaTokenizer as OUT/unigram, and a SentencePiece BPE of 16,000 tokens
                        with byte fallback in Gemma's layout (the tokenizers library's trainer, " " -> "▁") with
                        Gemma 3's 6,242 added <unusedN> tokens, saved by transformers' GemmaTokenizer as OUT/spbpe:
                        tokenizer.json + tokenizer_config.json each
  time FOLDER TEXTS.json SECONDS IDS.json
                        the folder's tokenizer.json in the tokenizers library (Rust), truncating at 512 tokens:
                        texts/s of encode() one text at a time and of encode_batch() on one thread
                        (RAYON_NUM_THREADS=1, set before the import); writes every text's ids to IDS.json and
                        prints {"loop": texts/s, "batch": texts/s, "tokens": total}"""
import io
import json
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")


def make(out, texts_path):
    import sentencepiece as spm
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer, XLMRobertaTokenizer
    texts = json.load(open(texts_path, encoding="utf-8"))
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=30000, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    files = os.path.join(out, "bpe-files")
    os.makedirs(files, exist_ok=True)
    bpe.save_model(files)
    RobertaTokenizer.from_pretrained(files).save_pretrained(os.path.join(out, "bpe"))
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=model, vocab_size=16000,
                                   model_type="unigram", character_coverage=0.9995, bos_id=-1, eos_id=-1, unk_id=0,
                                   pad_id=-1, minloglevel=2, input_sentence_size=200000, shuffle_input_sentence=True)
    files = os.path.join(out, "unigram-files")
    os.makedirs(files, exist_ok=True)
    with open(os.path.join(files, "sentencepiece.bpe.model"), "wb") as f:
        f.write(model.getvalue())
    XLMRobertaTokenizer.from_pretrained(files).save_pretrained(os.path.join(out, "unigram"))
    make_spbpe(texts).save_pretrained(os.path.join(out, "spbpe"))
    print(json.dumps({"made": out}))


def make_spbpe(texts):
    from tokenizers import Tokenizer, models, normalizers, trainers
    from transformers import GemmaTokenizer
    special = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + [f"<0x{b:02X}>" for b in range(256)]
    bpe = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    bpe.normalizer = normalizers.Replace(" ", "\u2581")
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=16000, min_frequency=2, limit_alphabet=500,
                                                       special_tokens=special, show_progress=False))
    model = json.loads(bpe.to_str())["model"]
    tok = GemmaTokenizer(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], add_bos_token=True,
                         add_eos_token=True)
    tok.add_special_tokens({"additional_special_tokens": [f"<unused{i}>" for i in range(6242)]})
    return tok


def time_folder(folder, texts_path, seconds, ids_path):
    from tokenizers import Tokenizer
    texts = json.load(open(texts_path, encoding="utf-8"))
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tok.enable_truncation(512)
    tok.no_padding()  # a folder may pad (all-MiniLM-L6-v2's tokenizer.json does); ragmig's ids are unpadded
    ids = [e.ids for e in tok.encode_batch(texts)]  # warm-up, and the ids compared with ragmig's

    def rate(fn):
        n, t0 = 0, time.perf_counter()
        while n == 0 or time.perf_counter() - t0 < seconds:
            fn()
            n += 1
        return n * len(texts) / (time.perf_counter() - t0)

    loop = rate(lambda: [tok.encode(t) for t in texts])
    batch = rate(lambda: tok.encode_batch(texts))
    json.dump(ids, open(ids_path, "w"))
    print(json.dumps({"loop": loop, "batch": batch, "tokens": sum(len(i) for i in ids)}))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    else:
        time_folder(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
