#!/usr/bin/env bash
# bench/retrieval/loss_terms.sh: the loss's terms (train.loss_directions, loss_partition, hardness_*) beside plain
# InfoNCE, fine-tuning the same pretrained base in the same run: every variant trains
# examples/finetune-scifact-minilm.toml (same pairs, batch, steps, schedule, seed, threads) and is scored on SciFact's
# test split by `ragmig eval` (nDCG@10, R@100). Prints each variant's scores, the ratio to InfoNCE's nDCG@10 and its
# training wall time, for SEEDS seeds (the differences between variants are of the order of the seeds' spread).
# Usage: bench/retrieval/loss_terms.sh [STEPS] [SEEDS]   (defaults: the config's 58 steps; seed 42)
# Environment: BUILD (build), PYTHON (.venv/bin/python), OUT (a new temporary folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-loss-terms.XXXXXX)}
RAGMIG="$BUILD/src/apps/ragmig"
CONFIG=examples/finetune-scifact-minilm.toml
STEPS=${1:-58}
SEEDS=${2:-42}
echo "bench/retrieval/loss_terms: $STEPS steps of $CONFIG per variant, seeds $SEEDS; results in $OUT" >&2

# name, then its --set assignments
VARIANTS=(
  "infonce"
  "symmetric --set train.loss_directions=[\"query_to_doc\",\"doc_to_query\"] --set train.loss_partition=per_direction"
  "gte-four-joint --set train.loss_directions=[\"query_to_doc\",\"query_to_query\",\"doc_to_query\",\"doc_to_doc\"]"
  "hardness-in-batch-9 --set train.hardness_mode=in_batch_negatives --set train.hardness_strength=9"
)
for seed in ${SEEDS//,/ }; do
  for v in "${VARIANTS[@]}"; do
    read -r -a args <<< "$v"
    name="${args[0]}-s$seed"
    t0=$(date +%s.%N)
    "$RAGMIG" train "$CONFIG" --run-dir "$OUT/$name" --set train.max_steps="$STEPS" --set train.checkpoint_every=0 \
      --set train.seed="$seed" --quiet "${args[@]:1}" >&2
    t1=$(date +%s.%N)
    echo "$t0 $t1" > "$OUT/$name.wall"
    "$RAGMIG" eval --data ../shared/data/beir/scifact --split test --retriever dense --model "$OUT/$name/model" \
      --max-passage-tokens 256 --no-cache --json --quiet --out "$OUT/$name.json" > /dev/null
  done
done

"$PYTHON" - "$OUT" "$SEEDS" "${VARIANTS[@]}" <<'PY'
import json, statistics, sys
out, seeds, variants = sys.argv[1], sys.argv[2].split(","), [v.split()[0] for v in sys.argv[3:]]
def run(name, seed):
    r = json.load(open(f"{out}/{name}-s{seed}.json"))
    t0, t1 = map(float, open(f"{out}/{name}-s{seed}.wall").read().split())
    return r["ndcg@10"], r["recall@100"], t1 - t0
base = {s: run("infonce", s)[0] for s in seeds}
print(f"{'SciFact test (seed)':<30} {'nDCG@10':>8} {'R@100':>7} {'vs InfoNCE':>11} {'train wall s':>13}")
for v in variants:
    rows = [run(v, s) for s in seeds]
    for s, (n, r, w) in zip(seeds, rows):
        print(f"{v + ' (' + s + ')':<30} {n:>8.4f} {r:>7.4f} {n / base[s]:>10.3f}x {w:>13.0f}")
    if len(seeds) > 1:
        print(f"{v + ' (mean)':<30} {statistics.mean(x[0] for x in rows):>8.4f} {statistics.mean(x[1] for x in rows):>7.4f}")
PY
