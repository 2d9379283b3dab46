#!/usr/bin/env bash
# Issue 15's GPU checklist in one go, on the lent GPU machine, after `bash .gpu/build.sh && . /opt/b/env.sh`
# (scripts/gpu-prepare.sh fills .gpu/ here first). Each stage has its own time limit and log under $OUT, so a
# slow stage costs only itself; a summary line per stage goes to stdout.
#   bash .gpu/build.sh && . /opt/b/env.sh && bash scripts/gpu-check.sh
set -u
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
B=${BUILD:-/opt/b}
R=$B/src/apps/ragmig
stage() {  # stage NAME SECONDS COMMAND...: runs it with a limit, logs to $OUT/NAME.log, prints rc and wall time
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: rc=$? in $((SECONDS - t0)) s"
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c 'import torch, transformers, sentence_transformers as st; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "sentence-transformers", st.__version__)' 2>&1 | tee "$OUT/versions.txt"
stage ctest-cuda 120 bash -c "cd $B && ctest -L cuda -j4 --output-on-failure"
grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT|\(Subprocess' "$OUT/ctest-cuda.log"
# BERT-base from scratch on SQuAD, bf16, GradCache: 40 steps with a checkpoint every 10 (pruning keeps the newest).
stage train-bert-base 90 "$R" train examples/train-bert-base-gpu.toml --run-dir /tmp/bb --set train.max_steps=40 \
  --set train.batch_size=256 --set train.checkpoint_every=10 --set train.log_every=10 --set 'eval.split=""'
ls /tmp/bb >> "$OUT/train-bert-base.log" 2>&1
grep -h '"progress"' /tmp/bb/events.jsonl | tail -2 | cut -c1-400
ls /tmp/bb | tr '\n' ' '; echo
grep -h '"start"' /tmp/bb/events.jsonl | head -1 | cut -c1-600
stage bench-dp 150 "$B/bench/dp/bench_dp" --device cuda
cat "$OUT/bench-dp.log"
stage ctest-hf 100 bash -c "cd $B && ctest -L hf -j4 --output-on-failure"
grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT' "$OUT/ctest-hf.log"
stage ctest-all "${ALL_LIMIT:-200}" bash -c "cd $B && ctest -j16 --output-on-failure -LE 'cuda|hf' --timeout 180"
grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT|\(Timeout|Not Run' "$OUT/ctest-all.log" | head -40
