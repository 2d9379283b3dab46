#!/usr/bin/env bash
# bench/train on a GPU (issue 16), one run: ragmig's trainer at the BERT-base shape on SQuAD pairs (queries <= 32,
# passages <= 256 tokens, bf16: examples/train-bert-base-gpu.toml) beside sentence-transformers on the same
# data, lengths, batch and precision (bench/train/st_bench_gpu.py), and the GPU's bf16 matmul peak measured here.
# Rows: batch 512 and 128 as ragmig trains (unpadded, length-grouped, queries and passages in one forward pass),
# the same with a pass per tower (train.towers_in_one_pass = false) and with a bf16 residual stream
# (train.bf16_residual = true), batch 512 padded (train.unpad = "off"),
# batch 512 on shuffled batches (ST's batching), GradCache at batch 512 (chunks of 64, and of 256); then a table with
# samples/s, real tokens/s, padding, peak memory, model FLOP utilisation on real tokens and the ratios
# (bench/train/gpu_table.py), and the Kineto profile of five steps summed by kernel kind (trace_table.py).
#   bash bench/train/gpu.sh            (RAGMIG=path/to/ragmig, BEIR=squad-train folder, OUT=log folder, STEPS=30,
#                                      ROWS="b512 st512 b128 st128 b512-padded b512-shuffled b512-gradcache
#                                      b512-gradcache256 b512-apart b128-apart b512-bf16res b128-bf16res": a subset)
# On the lent GPU machine: bash .gpu/build.sh; . /opt/b/env.sh; RAGMIG=/opt/b/src/apps/ragmig bash bench/train/gpu.sh
set -u
cd "$(dirname "$0")/../.."
R=${RAGMIG:-build/src/apps/ragmig}
BEIR=${BEIR:-../shared/data/beir/squad-train}
OUT=${OUT:-/tmp/bench-train-gpu}
STEPS=${STEPS:-30}
DEADLINE=$((SECONDS + ${BUDGET_S:-420}))  # rows that would start after this are skipped
mkdir -p "$OUT"
python3 - > "$OUT/peak.json" <<'PY'
import json, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(3): a @ b
torch.cuda.synchronize(); t = time.perf_counter(); n = 20
for _ in range(n): a @ b
torch.cuda.synchronize()
print(json.dumps({"tflops": 2 * 8192**3 * n / (time.perf_counter() - t) / 1e12, "gpu": torch.cuda.get_device_name(),
                  "torch": torch.__version__}))
PY
cat "$OUT/peak.json"
ROWS=" ${ROWS:-b512 st512 b128 st128 b512-padded b512-shuffled b512-gradcache b512-gradcache256 b512-apart b128-apart
  b512-bf16res b128-bf16res} "
row() {  # row NAME BATCH [--set ...]: a ragmig run of STEPS steps, progress every 5 (the first 10 are warm-up)
  local name=$1 batch=$2 t0=$SECONDS
  shift 2
  [[ $ROWS == *" $name "* ]] || return 0
  if [ $SECONDS -gt $DEADLINE ]; then echo "== $name: skipped (time)"; return; fi
  rm -rf "$OUT/$name"
  timeout "${ROW_LIMIT:-120}" "$R" train examples/train-bert-base-gpu.toml --run-dir "$OUT/$name" --quiet \
    --set "data.beir=\"$BEIR\"" --set "data.max_examples=$((batch * (STEPS + 2)))" --set "train.max_steps=$STEPS" \
    --set train.batch_size="$batch" --set 'train.accumulation="none"' --set train.log_every=5 \
    --set train.checkpoint_every=0 --set train.warmup_steps=10 --set 'eval.split=""' "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: rc=$? in $((SECONDS - t0)) s"
}
st() {  # st BATCH: sentence-transformers, same shape
  local t0=$SECONDS
  [[ $ROWS == *" st$1 "* ]] || return 0
  if [ $SECONDS -gt $DEADLINE ]; then echo "== st-$1: skipped (time)"; return; fi
  timeout "${ROW_LIMIT:-120}" python3 bench/train/st_bench_gpu.py --beir "$BEIR" --batch "$1" --steps 20 \
    > "$OUT/st-$1.json" 2> "$OUT/st-$1.log"
  echo "== st-$1: rc=$? in $((SECONDS - t0)) s"
}
row b512 512 --set "train.profile_trace=\"$OUT/b512-trace.json\""
st 512
row b128 128
st 128
row b512-padded 512 --set 'train.unpad="off"'
row b512-shuffled 512 --set train.length_grouping=0
row b512-gradcache 512 --set 'train.accumulation="gradcache"' --set train.chunk_size=64
row b512-gradcache256 512 --set 'train.accumulation="gradcache"' --set train.chunk_size=256
row b512-apart 512 --set train.towers_in_one_pass=false
row b128-apart 128 --set train.towers_in_one_pass=false
row b512-bf16res 512 --set train.bf16_residual=true
row b128-bf16res 128 --set train.bf16_residual=true
python3 bench/train/gpu_table.py "$OUT"
[ -f "$OUT/b512-trace.json" ] && python3 bench/train/trace_table.py "$OUT/b512-trace.json" --steps 5
