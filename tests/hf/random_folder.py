"""What tests/hf's folder scripts share (distilbert_folder.py, mpnet_folder.py): a random model's weights made
larger than the initialiser's, then saved the way transformers and sentence-transformers save."""
import os

import torch
from sentence_transformers import SentenceTransformer, models


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
