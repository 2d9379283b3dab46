#!/usr/bin/python3
"""Xapian 1.4 (Debian's python3-xapian) as the BM25 reference of bench/eval/bm25_scale.sh.

  xapian_bm25.py index BEIR_DIR DB          index title + text (English stemmer), one process
  xapian_bm25.py search BEIR_DIR DB K       search the judged queries of qrels/test.tsv, print one JSON line

BM25 with ragmig's defaults (k1 0.9, b 0.4; Xapian's k3 1 counts a repeated query word, as Lucene does),
queries parsed as OR of their stemmed words. nDCG@10 and Recall@20 are computed here (trec_eval's
definitions, graded qrels) so the line stands beside ragmig eval's.
"""
import gzip
import json
import math
import sys
import time

import xapian


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def first_existing(base):
    import os
    return base if os.path.exists(base) else base + ".gz"


def index(beir, db_path):
    t0 = time.time()
    db = xapian.WritableDatabase(db_path, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    tg.set_stemmer(xapian.Stem("english"))
    n = 0
    for row in rows(first_existing(beir + "/corpus.jsonl")):
        doc = xapian.Document()
        tg.set_document(doc)
        tg.index_text((row.get("title") or "") + " " + row["text"])
        doc.set_data(str(row["_id"]))
        db.add_document(doc)
        n += 1
    db.commit()
    db.close()
    print(json.dumps({"documents": n, "index_seconds": time.time() - t0}))


def search(beir, db_path, k):
    qrels = {}
    with open(beir + "/qrels/test.tsv", encoding="utf-8") as f:
        for i, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if i == 0 and not parts[2].strip().lstrip("-").isdigit():
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = [(str(r["_id"]), r["text"]) for r in rows(first_existing(beir + "/queries.jsonl")) if str(r["_id"]) in qrels]
    db = xapian.Database(db_path)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(0.9, 0, 1, 0.4, 0.5))
    qp = xapian.QueryParser()
    qp.set_stemmer(xapian.Stem("english"))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_database(db)
    qp.set_default_op(xapian.Query.OP_OR)
    # Each query scored as it is answered: holding 9,150 x 1,000 ids in Python would weigh more than Xapian.
    ndcg = recall = 0.0
    t0 = time.time()
    for qid, text in queries:
        enquire.set_query(qp.parse_query(text))
        docs = [m.document.get_data().decode() for m in enquire.get_mset(0, k)]
        judged = qrels[qid]
        gains = [judged.get(d, 0) for d in docs[:10]]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        ndcg += dcg / idcg if idcg > 0 else 0.0
        relevant = {d for d, g in judged.items() if g > 0}
        recall += len(relevant.intersection(docs[:20])) / len(relevant) if relevant else 0.0
    seconds = time.time() - t0
    n = max(len(queries), 1)
    print(json.dumps({"queries": len(queries), "search_seconds": seconds, "ndcg@10": ndcg / n, "recall@20": recall / n}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "index":
        index(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "search":
        search(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
