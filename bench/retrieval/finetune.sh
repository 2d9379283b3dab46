#!/usr/bin/env bash
# bench/retrieval: fine-tunes one pretrained folder with ragmig and with sentence-transformers (st_finetune.py:
# MultipleNegativesRankingLoss, the same pairs, batch, steps, schedule, lengths, precision and threads), in the
# same run on the same LibTorch, then measures BM25, the zero-shot model, both fine-tunes and ragmig's hybrid on
# the test split with `ragmig eval` (which embeds exactly as sentence-transformers does: tests/hf).
# Usage: bench/retrieval/finetune.sh [CONFIG] [STEPS] [SEED]   (default: examples/finetune-scifact-minilm.toml, its
# steps, seed 42: both trainers' seed). Environment: BUILD (build), PYTHON (.venv/bin/python), OUT (a new temporary
# folder), CACHE ($OUT/cache: point runs of other seeds at one cache to embed BM25's and the zero-shot corpus once),
# WARMUP (the config's train.warmup_steps), PAIRS and HARD_NEGATIVES (1): both trainers take the examples and their
# mined negatives from PAIRS, a `ragmig mine` file of the config's BEIR training split, instead of the qrels.
set -euo pipefail
cd "$(dirname "$0")/../.."
CONFIG=${1:-examples/finetune-scifact-minilm.toml}
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-finetune.XXXXXX)}
RAGMIG="$BUILD/src/apps/ragmig"
key() { "$PYTHON" -c "import sys, tomllib; c = tomllib.load(open(sys.argv[1], 'rb')); print(c$1)" "$CONFIG"; }
BEIR=$(key "['data']['beir']")
INIT=$(key "['model']['init']")
STEPS=${2:-$(key "['train']['max_steps']")}
SEED=${3:-42}
CACHE=${CACHE:-$OUT/cache}
BATCH=$(key "['train']['batch_size']")
LR=$(key "['train']['lr']")
WARMUP=${WARMUP:-$(key "['train']['warmup_steps']")}
PAIRS=${PAIRS:-}
HARD_NEGATIVES=${HARD_NEGATIVES:-1}
if [ -n "$PAIRS" ]; then
  RAGMIG_DATA=(--set 'data.beir=""' --set "data.pairs=\"$PAIRS\"" --set train.hard_negatives="$HARD_NEGATIVES" --set 'eval.split=""')
  ST_DATA=(--pairs "$PAIRS" --hard-negatives "$HARD_NEGATIVES")
else
  RAGMIG_DATA=()
  ST_DATA=(--beir "$BEIR")
fi
TEMP=$(key "['train']['temperature']")
PLEN=$(key "['data']['max_passage_tokens']")
MODEL_DIR=$("$RAGMIG" models --json | "$PYTHON" -c "import json, sys; r = sys.argv[1]; print(next((m['path'] for m in json.load(sys.stdin)['models'] if 'package:' + m['name'] == r), r))" "$INIT")
echo "bench/retrieval: $CONFIG, $STEPS steps of $BATCH pairs from $INIT${PAIRS:+ with $HARD_NEGATIVES of the negatives in $PAIRS}; results in $OUT" >&2

now() { date +%s.%N; }
t0=$(now); "$RAGMIG" train "$CONFIG" --run-dir "$OUT/ragmig" --set train.max_steps="$STEPS" --set train.checkpoint_every=0 \
  --set train.seed="$SEED" --set train.warmup_steps="$WARMUP" "${RAGMIG_DATA[@]}" >&2; t1=$(now)
# sentence-transformers in the precision ragmig chose (its start event: bf16 where the CPU runs it faster).
PRECISION=$("$PYTHON" -c "import json, sys; print(next(j['precision'] for j in map(json.loads, open(sys.argv[1])) if j['event'] == 'start'))" "$OUT/ragmig/events.jsonl")
"$PYTHON" bench/retrieval/st_finetune.py --model "$MODEL_DIR" "${ST_DATA[@]}" --out "$OUT/st" --steps "$STEPS" --batch "$BATCH" \
  --lr "$LR" --warmup "$WARMUP" --temperature "$TEMP" --max-passage-tokens "$PLEN" --precision "$PRECISION" --seed "$SEED" \
  > "$OUT/st-train.json"; t2=$(now)

evaluate() {  # NAME RETRIEVER [MODEL [EVAL OPTIONS...]]
  local name=$1 retriever=$2 model=${3:-}
  shift $(( $# < 3 ? $# : 3 ))
  "$RAGMIG" eval --data "$BEIR" --split test --retriever "$retriever" ${model:+--model "$model"} \
    --max-passage-tokens "$PLEN" --cache "$CACHE" --json --quiet --out "$OUT/$name.json" "$@" > /dev/null
}
evaluate bm25 bm25
evaluate zero-shot dense "$MODEL_DIR"
evaluate ragmig dense "$OUT/ragmig/model"
evaluate st dense "$OUT/st"
evaluate ragmig-rrf hybrid "$OUT/ragmig/model" --fusion "RRF(k=60)"
evaluate ragmig-linear hybrid "$OUT/ragmig/model" --fusion "Linear(alpha=0.5)"
"$PYTHON" - "$OUT" "$t0" "$t1" "$t2" "$STEPS" "$BATCH" <<'PY'
import json, sys
out, t0, t1, t2, steps, batch = sys.argv[1], *map(float, sys.argv[2:5]), int(sys.argv[5]), int(sys.argv[6])
r = {n: json.load(open(f"{out}/{n}.json")) for n in ["bm25", "zero-shot", "ragmig", "st", "ragmig-rrf", "ragmig-linear"]}
st = json.loads(open(f"{out}/st-train.json").read().strip().splitlines()[-1])  # its trainer logs lines before it
wall = {"ragmig": t1 - t0, "st": t2 - t1}
print(f"{'':<34} {'nDCG@10':>8} {'R@100':>7} {'train wall s':>13} {'samples/s':>10}")
for name, label in [("bm25", "BM25"), ("zero-shot", "zero-shot"), ("ragmig", "ragmig fine-tune"),
                    ("st", "sentence-transformers fine-tune"), ("ragmig-rrf", "ragmig fine-tune + BM25, RRF(60)"),
                    ("ragmig-linear", "ragmig fine-tune + BM25, Linear(0.5)")]:
    w = wall.get(name)
    print(f"{label:<34} {r[name]['ndcg@10']:>8.4f} {r[name]['recall@100']:>7.4f} "
          f"{(f'{w:.0f}' if w else ''):>13} {(f'{steps * batch / w:.2f}' if w else ''):>10}")
print(f"ragmig - sentence-transformers nDCG@10: {r['ragmig']['ndcg@10'] - r['st']['ndcg@10']:+.4f}; "
      f"wall time ragmig / sentence-transformers: {wall['ragmig'] / wall['st']:.2f}, both {st['precision']} "
      f"(ST's own training loop alone: {st['seconds']:.0f} s)")
PY
