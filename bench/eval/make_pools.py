#!/usr/bin/env python3
"""BEIR folders for BM25 at index scale, built from ../shared/data (nothing downloaded).

  pool-135k: SQuAD's 18,891 paragraphs + 114,452 Wikipedia passages (133,343 documents), SQuAD's test
             questions and qrels: the judged paragraphs hide among real Wikipedia text.
  pool-1m:   pool-135k plus 8 perturbed copies of every Wikipedia passage (1,048,959 documents): each copy
             drops about 10 % of the words, swaps about 5 % of adjacent pairs and replaces about 5 % with words
             of another passage, so postings grow like a real corpus's rather than repeat one list.

Deterministic (fixed seeds): the same folders on every machine. Usage: make_pools.py DATA_DIR OUT_DIR [--only 135k]
"""
import gzip
import json
import os
import random
import shutil
import sys


def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def perturb(words, donor, rng):
    out = [w for w in words if rng.random() >= 0.10]
    for i in range(len(out) - 1):
        if rng.random() < 0.05:
            out[i], out[i + 1] = out[i + 1], out[i]
    for i in range(len(out)):
        if donor and rng.random() < 0.05:
            out[i] = donor[rng.randrange(len(donor))]
    return out


def write_pool(data, out, copies):
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp + "/qrels")
    squad = data + "/beir/squad-train"
    shutil.copy(squad + "/queries.jsonl.gz", tmp + "/queries.jsonl.gz")
    shutil.copy(squad + "/qrels/test.tsv", tmp + "/qrels/test.tsv")
    wiki = list(read_jsonl(data + "/wiki/enwiki2015-passages/corpus.jsonl.gz"))
    with open(tmp + "/corpus.jsonl", "w", encoding="utf-8") as f:
        for row in read_jsonl(squad + "/corpus.jsonl.gz"):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        for row in wiki:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        for c in range(1, copies + 1):
            rng = random.Random(1000 + c)
            for i, row in enumerate(wiki):
                donor = wiki[(i * 7919 + c * 104729) % len(wiki)]["text"].split()
                text = " ".join(perturb(row["text"].split(), donor, rng))
                f.write(json.dumps({"_id": f"{row['_id']}~{c}", "title": row["title"], "text": text}, ensure_ascii=False) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    data, out = sys.argv[1], sys.argv[2]
    only = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--only" else None
    os.makedirs(out, exist_ok=True)
    for name, copies in (("pool-135k", 0), ("pool-1m", 8)):
        if only and not name.endswith(only):
            continue
        if not os.path.exists(f"{out}/{name}/corpus.jsonl"):
            write_pool(data, f"{out}/{name}", copies)
        print(f"{out}/{name}")


if __name__ == "__main__":
    main()
