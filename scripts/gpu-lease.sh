#!/usr/bin/env bash
# The whole GPU checklist (issues 15, 16; 17's slice speeds on request), build included, in ONE device call of LEASE_S seconds (default 555;
# give the call a timeout_s some 30 s longer). A session's device time is 15 minutes, the machine's start included,
# so the build and the checks overlap on the machine's 16 cores:
#   1. configure, then build ragmig and bench_dp on all cores (.gpu/build.sh with BUILD_TARGETS);
#   2. the CPU lane, on cores 0-9: the rest of the build (the tests), then the suite without the `cuda` label, with
#      CUDA_VISIBLE_DEVICES="" so that no test (device "auto") takes the GPU from the benchmarks;
#   3. the GPU lane, on cores 10-15, one stage at a time so that each timing has the GPU to itself: GPU_STAGES of
#      scripts/gpu-check.sh (its `cuda` stage, the suite's `cuda` label, waits for the CPU lane's build).
# Logs go to a work folder, packed into $OUT/logs.tgz after each lane's step (a call cut short still returns what
# was done); stdout has one line per stage and the figures; $OUT/ragmig-slices.txt is the slice table, if measured.
# Here: bash scripts/gpu-prepare.sh; then the device call, with carry [".gpu"]: bash scripts/gpu-lease.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-lease}
W=${WORK:-/tmp/gpu-lease-work}
B=${BUILD:-/opt/b}
DEADLINE=$((SECONDS + ${LEASE_S:-555}))
mkdir -p "$OUT" "$W"
rm -f "$W/built"
pin() {  # pin CORES COMMAND...: on those cores where taskset exists
  local cores=$1
  shift
  if command -v taskset > /dev/null && [ "$(nproc)" -ge 16 ]; then taskset -c "$cores" "$@"; else "$@"; fi
}
pack() {  # the work folder's small text files into $OUT/logs.tgz (model weights, traces and sockets stay)
  (cd "$W" && find . -type f -size -4M \( -name '*.log' -o -name '*.json' -o -name '*.jsonl' -o -name '*.txt' \) \
    -not -name '*trace.json' -print0 | tar czf "$OUT/logs.tgz.part" --null -T - 2>/dev/null) &&
    mv "$OUT/logs.tgz.part" "$OUT/logs.tgz"
  [ -f "$W/slices/ragmig-slices.txt" ] && cp "$W/slices/ragmig-slices.txt" "$OUT/"
  return 0
}
left() { local l=$((DEADLINE - SECONDS)); echo $((l > 1 ? l : 1)); }  # timeout 0 would mean none

t0=$SECONDS
if [ -z "${SKIP_BUILD:-}" ]; then
  OUT=$W BUILD_TARGETS="ragmig bench_dp" bash .gpu/build.sh
  rc=$?
  echo "== build of ragmig and bench_dp: rc=$rc in $((SECONDS - t0)) s"
  if [ $rc != 0 ]; then  # the NCCL process group is the one part no CPU build compiles: once more without it
    grep -m10 -A6 "error" "$W/build.log" | cut -c1-300
    mv "$W/build.log" "$W/build-nccl.log"
    OUT=$W BUILD_TARGETS="ragmig bench_dp" RAGMIG_WITH_NCCL=OFF bash .gpu/build.sh
    echo "== build without NCCL: rc=$? in $((SECONDS - t0)) s"
  fi
fi
[ -f "$B/env.sh" ] && . "$B/env.sh"
if [ ! -x "$B/src/apps/ragmig" ] || [ ! -x "$B/src/apps/ragmig-torch" ]; then
  echo "== no ragmig binary: stopping"
  grep -m20 -B2 -A8 "error" "$W/build.log" 2>/dev/null | cut -c1-300
  pack
  exit 1
fi

(  # the CPU lane
  t=$SECONDS
  pin 0-9 timeout "$(left)" cmake --build "$B" -j10 -- -k 0 > "$W/build-tests.log" 2>&1
  echo "== build of the tests: rc=$? in $((SECONDS - t)) s"
  grep -m10 -A6 "error:" "$W/build-tests.log" | cut -c1-300
  touch "$W/built"
  pack
  t=$SECONDS
  # Two threads a test, as CI's 2 cores give each of its two: on 12-04 each test took all ten cores' threads
  # (spinning OpenMP waits), ten tests at once, and compute-bound tests ran 100x slower (GradCacheTest 47 s, 0.5 s
  # in CI); 14 tests were not reached before the lease ended.
  (cd "$B" && CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE pin 0-9 timeout "$(left)" \
    ctest -j10 -LE cuda --timeout 150 --output-on-failure > "$W/ctest-suite.log" 2>&1)
  echo "== suite without the cuda label (CUDA_VISIBLE_DEVICES=\"\"): rc=$? in $((SECONDS - t)) s"
  grep -E 'tests passed|tests failed|\(Failed|\(SEGFAULT|\(Timeout|\(Subprocess|Not Run' "$W/ctest-suite.log" | head -40
  pack
) > "$W/cpu-lane.txt" 2>&1 &
cpu_lane=$!

# The GPU lane: gpu-check.sh's stages in priority order (issue 16's speed, 15's checks). The speed rows: issue 16's
# targets (b512, b128 beside sentence-transformers; GradCache at chunk 256), then the bf16 residual stream at batch
# 512 (-bf16res: MFU's missing part, if it pays), then one pass's gain at batch 128 (the -apart row); the 12-04
# lease reached no row after the chunk-64 GradCache one, which is left out now. bench_dp runs BERT-base at
# batch 512, whose step grows with the batch, so that dynamic batch has a gap to close (issue 15, point 5); the
# slice speeds (issue 17, resolved) run only when asked: GPU_STAGES="... slices".
BERT_DP="--config examples/train-bert-base-gpu.toml --batch 512 --steps 40 --runs one,even,dynamic
  --set train.accumulation=\"none\" --set data.max_examples=22000"
OUT=$W BUILD=$B BUILT_MARK=$W/built BUDGET_S=$(($(left) - 10)) \
  STAGES=${GPU_STAGES:-"bench cuda dp train modern"} \
  ROWS=${ROWS:-"b512 st512 b128 st128 b512-gradcache256 b512-bf16res b128-apart"} \
  BENCH_S=${BENCH_S:-230} \
  ROW_LIMIT=${ROW_LIMIT:-45} \
  TRAIN_STEPS=${TRAIN_STEPS:-16} TRAIN_S=${TRAIN_S:-40} CUDA_S=${CUDA_S:-70} DP_S=${DP_S:-150} \
  DP_ARGS=${DP_ARGS:-$BERT_DP} SLICES=${SLICES:-"7 1 3 2 4"} SLICE_STEPS=${SLICE_STEPS:-15} \
  RUN_LIMIT=${RUN_LIMIT:-40} \
  pin 10-15 bash scripts/gpu-check.sh
pack

while kill -0 "$cpu_lane" 2> /dev/null && [ "$(left)" -gt 0 ]; do sleep 2; done
kill "$cpu_lane" 2> /dev/null
echo "---- CPU lane"
cat "$W/cpu-lane.txt"
pack
echo "== done in $((SECONDS - t0)) s; $OUT: $(ls "$OUT" | tr '\n' ' ')"
