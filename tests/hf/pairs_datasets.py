"""Training pairs as the datasets library writes them, for ragmig's pairs reader (text/pairs.h).

Usage: pairs_datasets.py OUT_DIR. Writes, with `datasets.Dataset` itself, the layouts of sentence-transformers'
training datasets: an (anchor, positive, negative) triplet set like all-nli's, (question, answer) pairs like
natural-questions', and (query, positive, negative_1..negative_12) like the mined MS MARCO sets, each with
`Dataset.to_json` (JSON lines); and MS MARCO's TSV triples with `Dataset.to_csv`, without and with a header.
OUT_DIR/expected.json maps each file to its examples as sentence-transformers' trainer takes the columns: by
their order, the first the anchor, the second the positive, the rest negatives (ragmig reads them by name).
"""
import csv
import json
import os
import sys

import datasets
from datasets import Dataset

TEXTS = ["how do plants make food?", "Photosynthesis turns light into sugar (C\u2086H\u2081\u2082O\u2086).",
         "caf\u00e9 au lait", "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059", "a \\ backslash",
         "emoji \U0001F600 and accents: na\u00efve r\u00e9sum\u00e9", "BM25 ranks documents by term weights.",
         "Plants grow in soil.", "who wrote the probabilistic relevance framework?", "Robertson and Zaragoza."]
JSON_ONLY = ["a \"quoted\" word", "two\nlines", "a\ttab"]  # TSV cannot hold these unquoted


def text(i, pool=TEXTS):
    return pool[i % len(pool)] + ("" if i < len(pool) else f" #{i}")


def layouts():
    pool = TEXTS + JSON_ONLY
    yield "triplet.jsonl", {"anchor": [text(i, pool) for i in range(6)],
                            "positive": [text(i + 3, pool) for i in range(6)],
                            "negative": [text(i + 7, pool) for i in range(6)]}
    yield "pair.jsonl", {"question": [text(i, pool) for i in range(5)], "answer": [text(i + 1, pool) for i in range(5)]}
    columns = {"query": [text(i) for i in range(4)], "positive": [text(i + 2) for i in range(4)]}
    for n in range(1, 13):  # past 9: negative_10 sorts before negative_2 as a string
        columns[f"negative_{n}"] = [text(i + n + 20) for i in range(4)]
    yield "mined.jsonl", columns
    triples = {"query": [text(i) for i in range(5)], "positive": [text(i + 4) for i in range(5)],
               "negative": [text(i + 8) for i in range(5)]}
    yield "triples.tsv", triples
    yield "triples-header.tsv", triples


def main(out):
    datasets.disable_progress_bars()
    os.makedirs(out, exist_ok=True)
    expected = {}
    for name, columns in layouts():
        ds = Dataset.from_dict(columns)
        path = os.path.join(out, name)
        if name.endswith(".tsv"):
            ds.to_csv(path, sep="\t", header="header" in name, index=False, quoting=csv.QUOTE_NONE)
        else:
            ds.to_json(path, force_ascii=False)  # JSON lines, the columns in order
        order = ds.column_names
        expected[name] = [{"query": row[order[0]], "positive": row[order[1]], "negatives": [row[c] for c in order[2:]]}
                          for row in ds]
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1])
