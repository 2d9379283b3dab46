#!/usr/bin/env python3
"""Re-scores a TREC run written by `ragmig eval --retriever dense --model MODEL --run-out RUN` with
sentence-transformers loading MODEL unmodified (MODEL/passage for passages when the towers are separate),
and prints the largest and median |score difference| as JSON. Passages are "title text", as ragmig joins them.
(The older ../shared/tools/gpu/hf_parity.py built its tokenizer with BertTokenizerFast(vocab_file=...), which
transformers 5 ignores: every word became [UNK], hence its 0.695.)
Usage: score_run.py MODEL BEIR_DIR RUN [--nq 50] [--qlen 64] [--plen 256] (ragmig eval's default lengths)"""
import argparse, gzip, json, os
import torch
from sentence_transformers import SentenceTransformer


def rows(beir, name):
    for ext, op in ((".jsonl", open), (".jsonl.gz", gzip.open)):
        p = os.path.join(beir, name + ext)
        if os.path.exists(p):
            with op(p, "rt", encoding="utf-8") as f:
                for line in f:
                    yield json.loads(line)
            return
    raise SystemExit(f"no {name}.jsonl in {beir}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model"); ap.add_argument("beir"); ap.add_argument("run")
    ap.add_argument("--nq", type=int, default=50); ap.add_argument("--qlen", type=int, default=64)
    ap.add_argument("--plen", type=int, default=256)
    a = ap.parse_args()
    run = {}
    for line in open(a.run):
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, []).append((d, float(score)))
    qids = list(run)[: a.nq]
    need = {d for q in qids for d, _ in run[q]}
    queries = {r["_id"]: r["text"] for r in rows(a.beir, "queries") if r["_id"] in run}
    corpus = {r["_id"]: (r.get("title", "") + " " + r["text"]).strip() if r.get("title") else r["text"]
              for r in rows(a.beir, "corpus") if r["_id"] in need}
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    q_model = SentenceTransformer(a.model, device=dev)
    passage = os.path.join(a.model, "passage")
    p_model = SentenceTransformer(passage, device=dev) if os.path.isdir(passage) else q_model
    # ragmig caps its --max-*-tokens at the folder's own max_seq_length, as here (one model object may serve both).
    q_limit, p_limit = q_model.max_seq_length, p_model.max_seq_length
    q_model.max_seq_length = min(a.qlen, q_limit)
    qe = q_model.encode([queries[q] for q in qids], convert_to_tensor=True)
    p_model.max_seq_length = min(a.plen, p_limit)
    docs = sorted(need)
    pe = dict(zip(docs, p_model.encode([corpus[d] for d in docs], convert_to_tensor=True)))
    diffs = sorted(abs(float(qe[i] @ pe[d]) - s) for i, q in enumerate(qids) for d, s in run[q])
    print(json.dumps({"queries": len(qids), "pairs": len(diffs), "max": diffs[-1], "median": diffs[len(diffs) // 2]}))


if __name__ == "__main__":
    main()
