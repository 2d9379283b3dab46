#!/usr/bin/env python3
"""sentence-transformers' truncate_dim, for tests/serve/serve_clients_test.cpp. Prints one JSON object: the size
SentenceTransformer(FOLDER) embeds at and its encode(TEXTS, normalize_embeddings=True) rows.
Usage: st_truncate.py FOLDER TEXTS.json [SOURCE DIM]   (with SOURCE and DIM: first save SentenceTransformer(SOURCE,
       truncate_dim=DIM) as FOLDER)"""
import json
import sys

from sentence_transformers import SentenceTransformer


def main():
    folder, texts = sys.argv[1], json.load(open(sys.argv[2]))
    if len(sys.argv) == 5:
        SentenceTransformer(sys.argv[3], device="cpu", truncate_dim=int(sys.argv[4])).save(folder)
    model = SentenceTransformer(folder, device="cpu")
    rows = model.encode(texts, normalize_embeddings=True).tolist()
    print(json.dumps({"dim": model.get_sentence_embedding_dimension(), "rows": rows}))


if __name__ == "__main__":
    main()
