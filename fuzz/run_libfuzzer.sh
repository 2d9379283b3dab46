#!/usr/bin/env bash
# `make fuzz`: builds fuzz/ as its own project with clang (libFuzzer, ASan, UBSan; the torch-free libraries
# only) in $FUZZ_BUILD, then runs each harness for $FUZZ_SECONDS on a working copy of its seed corpus, one
# after another. Fails when any harness finds a crash, a leak, a hang (-timeout), runs out of memory
# (-rss_limit_mb) or reports undefined behaviour. Findings land in $FUZZ_BUILD/findings/NAME/, logs in
# $FUZZ_BUILD/logs/. FUZZ_TARGETS="beir qrels" runs some; FUZZ_SECONDS=30 is CI's short run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FUZZ_BUILD:-build-fuzz}
seconds=${FUZZ_SECONDS:-600}
jobs=${JOBS:-2}
all="train_config sweep job_file alert_config beir qrels pairs model_folder safetensors traces events plan_file
     run_file embed_request visible_devices bm25_index specs control throughput slurm asha_log"
targets=${FUZZ_TARGETS:-$all}

# clang 16 or newer: src/ captures structured bindings in lambdas (C++20), which clang 14 refuses.
cxx=${FUZZ_CXX:-$(command -v clang++-16 || command -v clang++ || true)}
[ -n "$cxx" ] || { echo "make fuzz: no clang++ (scripts/install-deps.sh installs clang-16)" >&2; exit 2; }
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=${cxx/clang++/clang} CXX=$cxx cmake -S fuzz -B "$build" -G Ninja
fi
cmake --build "$build" -j "$jobs" --target $(for t in $targets; do echo "fuzz_$t"; done)

# What each harness reads: its dictionary and the longest input worth trying.
dict_of() {
  case $1 in
    train_config | sweep | job_file | alert_config) echo fuzz/dict/toml.dict ;;
    traces | qrels | run_file) echo fuzz/dict/csv.dict ;;
    specs) echo fuzz/dict/specs.dict ;;
    slurm) echo fuzz/dict/slurm.dict ;;
    *) echo fuzz/dict/json.dict ;;
  esac
}
max_len_of() {
  case $1 in
    safetensors | model_folder | train_config | sweep) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
summary=()
for t in $targets; do
  corpus="$build/corpus/$t" findings="$build/findings/$t" log="$build/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$build/logs"
  cp -n fuzz/corpus/"$t"/* "$corpus"/
  echo "== fuzz_$t: ${seconds}s"
  set +e
  "$build/fuzz_$t" -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -timeout=10 -rss_limit_mb=2048 \
    -dict="$(dict_of "$t")" -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  summary+=("fuzz_$t: exit $rc, ${execs:-?} runs, ${cov:-cov: ?}, corpus $(find "$corpus" -type f | wc -l) files")
  echo "${summary[-1]}"
  if [ $rc -ne 0 ]; then
    failed+=("$t")
    grep -E "ERROR|FUZZ FINDING|runtime error|Test unit written" "$log" | head -5 || true
  fi
done
echo "== make fuzz: ${#summary[@]} harnesses, ${seconds}s each"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "make fuzz: findings in ${failed[*]} (inputs under $build/findings/, logs under $build/logs/)" >&2
  exit 1
fi
