#!/usr/bin/env bash
# bench/retrieval/lora.sh: LoRA beside full fine-tuning of the same pretrained base, in the same run: both train
# on the same pairs, batch, steps, schedule and threads (examples/lora-scifact-minilm.toml and
# examples/finetune-scifact-minilm.toml), then `ragmig eval` scores both on SciFact's test split. Prints
# trainable parameters, AdamW state (two float32 moments per trainable parameter), the newest checkpoint's
# size, training samples/s and wall time, nDCG@10 and R@100.
# Usage: bench/retrieval/lora.sh [STEPS]   Environment: BUILD (build), PYTHON (.venv/bin/python), OUT (a new temp folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/ragmig-lora.XXXXXX)}
RAGMIG="$BUILD/src/apps/ragmig"
STEPS=${1:-58}
echo "bench/retrieval/lora: $STEPS steps each; results in $OUT" >&2

run() {  # NAME CONFIG
  local t0 t1
  t0=$(date +%s.%N)
  "$RAGMIG" train "$2" --run-dir "$OUT/$1" --set train.max_steps="$STEPS" --quiet >&2
  t1=$(date +%s.%N)
  echo "$t0 $t1" > "$OUT/$1.wall"
  "$RAGMIG" eval --data ../shared/data/beir/scifact --split test --retriever dense --model "$OUT/$1/model" \
    --max-passage-tokens 256 --cache "$OUT/cache" --json --quiet --out "$OUT/$1.json" > /dev/null
}
run full examples/finetune-scifact-minilm.toml
run lora examples/lora-scifact-minilm.toml

"$PYTHON" - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def events(name):
    return [json.loads(l) for l in open(f"{out}/{name}/events.jsonl")]
rows = {}
for name in ["full", "lora"]:
    ev = events(name)
    start = next(e for e in ev if e["event"] == "start")
    progress = [e for e in ev if e["event"] == "progress"]
    t0, t1 = map(float, open(f"{out}/{name}.wall").read().split())
    steps, batch = progress[-1]["step"], 32
    ckpt = max(os.path.getsize(p) for p in glob.glob(f"{out}/{name}/checkpoints/*.pt"))
    model_bytes = sum(os.path.getsize(p) for p in glob.glob(f"{out}/{name}/model/**/*.safetensors", recursive=True))
    r = json.load(open(f"{out}/{name}.json"))
    rows[name] = dict(trainable=start.get("trainable_parameters", start["parameters"]), total=start["parameters"],
                      adam_mb=2 * 4 * start.get("trainable_parameters", start["parameters"]) / 2**20,
                      ckpt_mb=ckpt / 2**20, saved_mb=model_bytes / 2**20, wall=t1 - t0,
                      sps=sum(p["samples_per_s"] for p in progress) / len(progress),
                      ndcg=r["ndcg@10"], recall=r["recall@100"], precision=start["precision"])
print(f"{'SciFact test':<22} {'trainable':>11} {'AdamW MB':>9} {'ckpt MB':>8} {'saved MB':>9} {'samples/s':>10} "
      f"{'wall s':>7} {'nDCG@10':>8} {'R@100':>7}")
for name, label in [("full", "full fine-tune"), ("lora", "LoRA r=16, all linear")]:
    x = rows[name]
    print(f"{label:<22} {x['trainable']:>11,} {x['adam_mb']:>9.1f} {x['ckpt_mb']:>8.1f} {x['saved_mb']:>9.1f} "
          f"{x['sps']:>10.2f} {x['wall']:>7.0f} {x['ndcg']:>8.4f} {x['recall']:>7.4f}")
f, l = rows["full"], rows["lora"]
print(f"LoRA / full: trainable x{l['trainable'] / f['trainable']:.4f}, samples/s x{l['sps'] / f['sps']:.2f}, "
      f"nDCG@10 {l['ndcg'] - f['ndcg']:+.4f} (precision {f['precision']})")
print(json.dumps({"bench": "lora", "rows": rows}))
PY
