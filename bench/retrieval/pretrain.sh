#!/usr/bin/env bash
# bench/retrieval/pretrain.sh: does contrastive pre-training on the target corpus's raw text help the
# fine-tuned model? Pre-trains all-MiniLM-L6-v2 on SciFact's abstracts (data.pretrain = crop, then ict:
# examples/pretrain-scifact-minilm-crop.toml), fine-tunes each as examples/finetune-scifact-minilm.toml does,
# and scores both beside the plain fine-tune on SciFact's test split; prints a table with wall times.
# Usage: bench/retrieval/pretrain.sh   Environment: BUILD (build), OUT (a new temporary folder), PYTHON (.venv/bin/python),
#        BASELINE: an existing fine-tune's eval JSON (e.g. bench/retrieval/mined.sh's inbatch.json) instead of training one;
#        TASKS: the pre-training tasks to run (default "crop ict").
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-pretrain.XXXXXX)}
RAGMIG="$BUILD/src/apps/ragmig"
BEIR=../shared/data/beir/scifact
mkdir -p "$OUT"
echo "bench/retrieval/pretrain: results in $OUT" >&2
. bench/retrieval/stages.sh
if [ -n "${BASELINE:-}" ]; then
  cp "$BASELINE" "$OUT/finetune.json"; WALL[train-finetune]=0
else
  stage train-finetune "$RAGMIG" train examples/finetune-scifact-minilm.toml --run-dir "$OUT/finetune" \
    --set train.checkpoint_every=0 --set 'eval.split=""'
  evaluate finetune dense "$OUT/finetune/model"
fi
for task in ${TASKS:-crop ict}; do
  stage "pretrain-$task" "$RAGMIG" train examples/pretrain-scifact-minilm-crop.toml --run-dir "$OUT/$task" \
    --set "data.pretrain=\"$task\"" --set train.checkpoint_every=0
  evaluate "$task" dense "$OUT/$task/model"
  stage "train-$task-finetune" "$RAGMIG" train examples/finetune-scifact-minilm.toml --run-dir "$OUT/$task-finetune" \
    --set "model.init=\"$OUT/$task/model\"" --set train.checkpoint_every=0 --set 'eval.split=""'
  evaluate "$task-finetune" dense "$OUT/$task-finetune/model"
done
write_walls
"$PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
wall = dict(line.split() for line in open(f"{out}/wall.txt"))
print(f"{'SciFact test, all-MiniLM-L6-v2':<44} {'nDCG@10':>8} {'R@100':>7} {'train wall s':>13}")
import os
for name, label, w in [("finetune", "fine-tune (58 steps)", "train-finetune"),
                       ("crop", "crop pre-training (80 steps) alone", "pretrain-crop"),
                       ("crop-finetune", "crop pre-training, then fine-tune", "train-crop-finetune"),
                       ("ict", "ICT pre-training (80 steps) alone", "pretrain-ict"),
                       ("ict-finetune", "ICT pre-training, then fine-tune", "train-ict-finetune")]:
    if not os.path.exists(f"{out}/{name}.json"):
        continue
    j = json.load(open(f"{out}/{name}.json"))
    print(f"{label:<44} {j['ndcg@10']:>8.4f} {j['recall@100']:>7.4f} {int(wall[w]):>13}")
PY
