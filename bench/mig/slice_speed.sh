#!/usr/bin/env bash
# The speed of ragmig's own retriever jobs on each MIG slice size (issue 17), measured on a whole GPU without
# touching its MIG settings: each run gets the share of the SMs that a slice of g compute slices has, through
# MPS's active-thread percentage (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, under a private MPS control daemon that
# this script starts and stops; the GPU's compute mode and MIG mode are left as they are).
#
# Job types (bf16, SQuAD pairs, queries <= 32 / passages <= 256 tokens, as examples/train-bert-base-gpu.toml):
#   ragmig_minilm_b64, ragmig_minilm_b256        MiniLM-L6's shape (6 x 384), batch 64 / 256
#   ragmig_bert_base_b64, ragmig_bert_base_b256  BERT-base's shape (12 x 768), batch 64 / 256
# Writes $OUT/ragmig-slices.txt in MISO's table format (seconds per step per MIG profile of this GPU; a profile
# is listed only where the run's peak memory fits in it) for `ragmig sim --throughputs`, whose sweep:N then
# draws these types (src/sim/sweep.h), and prints the table (bench/mig/slice_table.py).
#   bash bench/mig/slice_speed.sh        (RAGMIG=path/to/ragmig, BEIR=squad-train folder, OUT=log folder,
#                                         STEPS=20 of which the first 10 are warm-up, BUDGET_S=480,
#                                         SLICES="7 1 2 3 4": the slice sizes, in this order)
# On the lent GPU machine: bash .gpu/build.sh && . /opt/b/env.sh && RAGMIG=/opt/b/src/apps/ragmig bash bench/mig/slice_speed.sh
set -u
cd "$(dirname "$0")/../.."
R=${RAGMIG:-build/src/apps/ragmig}
BEIR=${BEIR:-../shared/data/beir/squad-train}
OUT=${OUT:-/tmp/bench-slices}
STEPS=${STEPS:-20}
DEADLINE=$((SECONDS + ${BUDGET_S:-480}))  # runs that would start after this are skipped
mkdir -p "$OUT"

python3 -c 'import json, torch; p = torch.cuda.get_device_properties(0)
print(json.dumps({"gpu": torch.cuda.get_device_name(0), "sms": p.multi_processor_count,
                  "memory_mib": p.total_memory // 2**20}))' > "$OUT/gpu.json" || exit 1
gpu=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["gpu"])' "$OUT/gpu.json")
"$R" mig profiles --gpu "$gpu" --json > "$OUT/profiles.json" || { echo "ragmig has no MIG profiles of '$gpu'"; exit 1; }
cat "$OUT/gpu.json"

# The SM share of a slice of g compute slices: SMs of the g-slice instance / SMs of the GPU (NVIDIA's MIG user
# guide: H100/H200 instances have 16, 32, 60, 64 and 132 SMs, A100's 14, 28, 42, 56 and 98); g/7 otherwise.
percent() {
  python3 - "$1" "$OUT/gpu.json" <<'PY'
import json, math, sys
g, gpu = int(sys.argv[1]), json.load(open(sys.argv[2]))
known = {132: {1: 16, 2: 32, 3: 60, 4: 64, 7: 132}, 108: {1: 14, 2: 28, 3: 42, 4: 56, 7: 98}}
sms = known.get(gpu["sms"], {}).get(g, gpu["sms"] * g / 7)
print(min(100, math.ceil(100 * sms / gpu["sms"])))
PY
}

command -v nvidia-cuda-mps-control > /dev/null || { echo "nvidia-cuda-mps-control not found: MPS is needed"; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=$OUT/mps-pipe CUDA_MPS_LOG_DIRECTORY=$OUT/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || { echo "the MPS control daemon did not start"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT

run() {  # run TYPE G BATCH [--set ...]: STEPS steps of TYPE on the SM share of a g-slice, progress every 5
  local type=$1 g=$2 batch=$3 t0=$SECONDS pct
  shift 3
  local name=$type-${g}g
  if [ $SECONDS -gt $DEADLINE ]; then echo "== $name: skipped (time)"; return; fi
  pct=$(percent "$g")
  rm -rf "${OUT:?}/$name"
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout "${RUN_LIMIT:-90}" "$R" train examples/train-bert-base-gpu.toml \
    --run-dir "$OUT/$name" --quiet --set "data.beir=\"$BEIR\"" --set "data.max_examples=$((batch * (STEPS + 2)))" \
    --set "train.max_steps=$STEPS" --set train.batch_size="$batch" --set 'train.accumulation="none"' \
    --set train.log_every=5 --set train.checkpoint_every=0 --set train.warmup_steps=5 --set 'eval.split=""' "$@" \
    > "$OUT/$name.log" 2>&1
  echo "== $name ($pct % of the SMs): rc=$? in $((SECONDS - t0)) s"
}
minilm=(--set model.hidden_size=384 --set model.layers=6 --set model.intermediate_size=1536)
# The whole GPU and the smallest slice first: the two ends of each type's curve, then the sizes between.
for g in ${SLICES:-7 1 2 3 4}; do
  run ragmig_minilm_b64 "$g" 64 "${minilm[@]}"
  run ragmig_minilm_b256 "$g" 256 "${minilm[@]}"
  run ragmig_bert_base_b64 "$g" 64
  run ragmig_bert_base_b256 "$g" 256
done
python3 bench/mig/slice_table.py "$OUT"
