"""What tests/hf's folder scripts share (distilbert_folder.py, mpnet_folder.py): a random model's weights made
larger than the initialiser's, then saved the way transformers and sentence-transformers save."""
import json
import os

import torch
from sentence_transformers import SentenceTransformer, models
from tokenizers import ByteLevelBPETokenizer


def byte_level_bpe(tokenizer_dir, special_tokens=()):
    """A byte-level BPE of 1000 tokens (special_tokens first) trained on TOKENIZER_DIR's WordPiece vocabulary,
    twenty words a line (roberta_folder.py, modernbert_folder.py)."""
    words = json.load(open(os.path.join(tokenizer_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    words = sorted(words, key=words.get)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([" ".join(words[i:i + 20]) for i in range(0, len(words), 20)], vocab_size=1000,
                            min_frequency=2, special_tokens=list(special_tokens), show_progress=False)
    return bpe


def perturb(model):
    """Adds noise larger than the initialiser's 0.02, so that every tensor matters to the output."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)


def save_both(model, tok, out, max_seq_length, dim):
    """OUT/hf: model.save_pretrained + tok.save_pretrained; OUT/st: a SentenceTransformer of it (mean pooling,
    Normalize, max_seq_length) saved with .save."""
    hf = os.path.join(out, "hf")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    st = SentenceTransformer(modules=[models.Transformer(hf, max_seq_length=max_seq_length),
                                      models.Pooling(dim, "mean"), models.Normalize()], device="cpu")
    st.save(os.path.join(out, "st"))
