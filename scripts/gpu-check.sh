#!/usr/bin/env bash
# The GPU checklist of issues 15, 16 and 17 in one device call, on the lent GPU machine, after
# `bash .gpu/build.sh && . /opt/b/env.sh` (scripts/gpu-prepare.sh fills .gpu/ here first):
#   bash .gpu/build.sh && . /opt/b/env.sh && bash scripts/gpu-check.sh
# A session's device time is short (15 min in all, starts included; 10 min a call), so the stages share one
# budget, BUDGET_S seconds from the start (default 420: with the ~2 min build, one call), and run in STAGES' order,
# each within its own limit and what is left of the budget; a stage with under 20 s left is skipped (the two
# benchmarks start no run that could outlast their stage). Each logs to $OUT/NAME.log; a summary line per stage
# goes to stdout.
#   cuda    ctest -L cuda (issue 15)
#   modern  a ModernBERT from scratch on the GPU, unpadded (varlen flash attention with the sliding window), 30 steps
#   train   BERT-base from scratch, bf16, GradCache, TRAIN_STEPS=40 steps, a checkpoint every quarter (pruning keeps
#           the newest)
#   slices  bench/mig/slice_speed.sh: ragmig's job types per MIG slice size (issue 17's last measurement); its
#           STEPS as SLICE_STEPS
#   bench   bench/train/gpu.sh: training speed beside sentence-transformers, MFU (issue 16)
#   dp      bench_dp --device cuda (issue 15, point 5)
#   hf      ctest -L hf
#   all     the rest of the suite
# A stage's limit can be set as NAME_S (CUDA_S, MODERN_S, TRAIN_S, SLICES_S, BENCH_S, DP_S, HF_S, ALL_S); with
# BUILT_MARK set, the stages that run test binaries (cuda, hf, all) first wait for that file (scripts/gpu-lease.sh
# builds the tests beside the benchmarks).
# e.g. STAGES="slices bench" BUDGET_S=480 bash scripts/gpu-check.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
B=${BUILD:-/opt/b}
R=$B/src/apps/ragmig
DEADLINE=$((SECONDS + ${BUDGET_S:-420}))
stage() {  # stage NAME SECONDS COMMAND...: runs it within min(SECONDS, what is left) as $STAGE_LIMIT; logs, prints rc
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  [ $((DEADLINE - SECONDS)) -lt "$limit" ] && limit=$((DEADLINE - SECONDS))
  if [ "$limit" -lt 20 ]; then echo "== $name: skipped (budget spent)"; return; fi
  STAGE_LIMIT=$limit timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: rc=$? in $((SECONDS - t0)) s (limit $limit s)"
}
built() {  # waits (within the budget) for the tests' build where BUILT_MARK names its marker file
  [ -z "${BUILT_MARK:-}" ] && return
  local t0=$SECONDS
  while [ ! -e "$BUILT_MARK" ] && [ $SECONDS -lt $DEADLINE ]; do sleep 2; done
  echo "== waited $((SECONDS - t0)) s for the tests' build"
}
export R B OUT
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c 'import torch, transformers, sentence_transformers as st; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "sentence-transformers", st.__version__)' > "$OUT/versions.txt" 2>&1 &  # beside the first stage
for s in ${STAGES:-cuda modern train slices bench dp hf all}; do
  case $s in
    cuda)
      built; stage ctest-cuda "${CUDA_S:-120}" bash -c "cd $B && ctest -L cuda -j4 --output-on-failure"
      grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT|\(Subprocess' "$OUT/ctest-cuda.log" ;;
    modern)
      rm -rf /tmp/mb
      stage train-modernbert "${MODERN_S:-60}" "$R" train examples/train-squad-tiny.toml --run-dir /tmp/mb \
        --set train.device='"cuda"' \
        --set model.architecture='"modernbert"' --set data.max_passage_tokens=256 --set model.max_position=256 \
        --set train.max_steps=30 --set train.log_every=10 --set 'eval.split=""'
      grep -h '"progress"' /tmp/mb/events.jsonl | tail -1 | cut -c1-500 ;;
    train)
      rm -rf /tmp/bb
      stage train-bert-base "${TRAIN_S:-90}" "$R" train examples/train-bert-base-gpu.toml --run-dir /tmp/bb \
        --set train.max_steps="${TRAIN_STEPS:-40}" --set train.checkpoint_every=$((${TRAIN_STEPS:-40} / 4)) \
        --set train.batch_size=256 --set train.log_every=10 --set 'eval.split=""'
      cp /tmp/bb/events.jsonl "$OUT/train-bert-base.events.jsonl" 2>/dev/null
      grep -h '"progress"' /tmp/bb/events.jsonl | tail -2 | cut -c1-400
      ls /tmp/bb /tmp/bb/checkpoints 2>&1 | tr '\n' ' '; echo
      grep -h '"start"' /tmp/bb/events.jsonl | head -1 | cut -c1-600 ;;
    slices)
      stage slices "${SLICES_S:-240}" bash -c \
        'RUN_LIMIT=${RUN_LIMIT:-60}; OUT=$OUT/slices STEPS=${SLICE_STEPS:-20} RUN_LIMIT=$RUN_LIMIT \
          BUDGET_S=$((STAGE_LIMIT - RUN_LIMIT - 15)) RAGMIG=$R bash bench/mig/slice_speed.sh'
      tail -25 "$OUT/slices.log" ;;
    bench)
      stage train-gpu "${BENCH_S:-240}" bash -c \
        'ROW_LIMIT=${ROW_LIMIT:-90}; OUT=$OUT/train-gpu ROW_LIMIT=$ROW_LIMIT BUDGET_S=$((STAGE_LIMIT - ROW_LIMIT - 20)) \
          RAGMIG=$R bash bench/train/gpu.sh'
      tail -30 "$OUT/train-gpu.log" ;;
    dp)
      stage bench-dp "${DP_S:-150}" stdbuf -oL "$B/bench/dp/bench_dp" --device cuda ${DP_ARGS:-}
      cat "$OUT/bench-dp.log" ;;
    hf)
      built; stage ctest-hf "${HF_S:-100}" bash -c "cd $B && ctest -L hf -j4 --output-on-failure"
      grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT' "$OUT/ctest-hf.log" ;;
    all)
      built
      stage ctest-all "${ALL_S:-200}" bash -c "cd $B && OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE \
        ctest -j16 --output-on-failure -LE 'cuda|hf' --timeout 180"
      grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT|\(Timeout|Not Run' "$OUT/ctest-all.log" | head -40 ;;
    *) echo "== $s: unknown stage (cuda modern train slices bench dp hf all)" ;;
  esac
done
