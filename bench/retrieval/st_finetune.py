"""The sentence-transformers side of bench/retrieval/finetune.sh: fine-tunes a model folder on a BEIR training split
with SentenceTransformerTrainer and MultipleNegativesRankingLoss, the pairs ragmig trains on (one per qrels row
with score > 0; the passage is "title text"), no duplicate positives in a batch, and ragmig's schedule: AdamW,
linear warm-up then linear decay, weight decay on all but biases and LayerNorm, gradient clipping, the same batch,
steps, lengths, precision and threads. With --pairs (a `ragmig mine` file: {query, positive, negatives[]} rows) and
--hard-negatives H, each example also carries H of its mined negatives, drawn afresh for every pass over the data as
ragmig's sampler draws them each step; MultipleNegativesRankingLoss then scores every query against all positives
and all hard negatives of the batch, as ragmig's loss does. Saves the model folder and prints one JSON line
(seconds, samples/s)."""
import argparse
import gzip
import json
import os
import random
import time

import torch


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def find(folder, name):
    for candidate in (os.path.join(folder, name), os.path.join(folder, name + ".gz")):
        if os.path.exists(candidate):
            return candidate
    raise SystemExit(f"{folder}: no {name}[.gz]")


def pairs(beir, split):
    docs = {str(d["_id"]): d for d in read_jsonl(find(beir, "corpus.jsonl"))}
    queries = {str(q["_id"]): q["text"] for q in read_jsonl(find(beir, "queries.jsonl"))}
    anchors, positives = [], []
    with open(os.path.join(beir, "qrels", split + ".tsv"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            cols = line.rstrip("\n").split("\t")
            if i == 0 and not cols[-1].lstrip("-").isdigit():
                continue  # header
            qid, did, score = cols[0], cols[1], int(cols[2])
            if score <= 0:
                continue
            d = docs[did]
            title = (d.get("title") or "").strip()
            anchors.append(queries[qid])
            positives.append(f"{title} {d['text']}" if title else d["text"])
    return anchors, positives


def mined(path, hard_negatives, steps, batch, seed):
    """Columns anchor, positive, negative_1..H: one copy of the examples per pass the run makes over them, each copy
    with its own draw of H mined negatives per example (another example's positive where one has fewer than H)."""
    rows = read_jsonl(path)
    for i, r in enumerate(rows, 1):
        if not isinstance(r.get("query"), str) or not isinstance(r.get("positive"), str):
            raise SystemExit(f"{path}:{i}: expected string fields query and positive")
    rng = random.Random(seed)
    passes = -(-steps * batch // len(rows))
    columns = {"anchor": [], "positive": [], **{f"negative_{j + 1}": [] for j in range(hard_negatives)}}
    for _ in range(passes):
        for r in rows:
            own = list(r.get("negatives") or r.get("neg") or [])
            picks = rng.sample(own, hard_negatives) if len(own) >= hard_negatives else own
            while len(picks) < hard_negatives:
                other = rng.choice(rows)["positive"]
                if other != r["positive"]:
                    picks.append(other)
            columns["anchor"].append(r["query"])
            columns["positive"].append(r["positive"])
            for j, text in enumerate(picks):
                columns[f"negative_{j + 1}"].append(text)
    return columns, len(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--beir", help="a BEIR folder: one pair per qrels row of --split")
    ap.add_argument("--pairs", help="instead of --beir: a ragmig pairs JSONL with mined negatives")
    ap.add_argument("--hard-negatives", type=int, default=0, help="mined negatives per example (with --pairs)")
    ap.add_argument("--split", default="train")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--max-passage-tokens", type=int, default=256)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the trainer's bf16 autocast (pass what ragmig chose, for a like-for-like run)")
    a = ap.parse_args()
    if (a.beir is None) == (a.pairs is None):
        ap.error("give exactly one of --beir and --pairs")
    torch.set_num_threads(a.threads)

    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments, losses
    from sentence_transformers.training_args import BatchSamplers

    if a.pairs:
        columns, examples = mined(a.pairs, a.hard_negatives, a.steps, a.batch, a.seed)
    else:
        anchors, positives = pairs(a.beir, a.split)
        columns, examples = {"anchor": anchors, "positive": positives}, len(anchors)
    model = SentenceTransformer(a.model, device="cpu")
    model.max_seq_length = a.max_passage_tokens
    args = SentenceTransformerTrainingArguments(
        output_dir=a.out + ".trainer", max_steps=a.steps, per_device_train_batch_size=a.batch, learning_rate=a.lr,
        warmup_steps=a.warmup, lr_scheduler_type="linear", weight_decay=0.01, max_grad_norm=1.0, seed=a.seed,
        batch_sampler=BatchSamplers.NO_DUPLICATES, use_cpu=True, report_to="none", save_strategy="no",
        logging_steps=max(1, a.steps // 10), dataloader_drop_last=True, bf16=a.precision == "bf16")
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=Dataset.from_dict(columns),
        loss=losses.MultipleNegativesRankingLoss(model, scale=1.0 / a.temperature))
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    model.save(a.out)
    print(json.dumps({"seconds": seconds, "samples_per_s": a.steps * a.batch / seconds, "pairs": examples,
                      "hard_negatives": a.hard_negatives,
                      "precision": a.precision}))


if __name__ == "__main__":
    main()
