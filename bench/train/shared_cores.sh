#!/usr/bin/env bash
# bench/train/shared_cores.sh: what sharing the cores costs a small `ragmig train`, with the OpenMP wait policy
# ragmig chooses (threads sleep when idle, core/cpu_threads.h) beside libgomp's own default (spin 300,000 times
# first: GOMP_SPINCOUNT=300000), in the same run. Four cases, each the wall time of the slowest of the trainers:
#   alone        one trainer on an idle machine
#   3 at once    three trainers side by side, each with one thread per core (what users start by default)
#   busy         one trainer beside one busy loop per core (another user's work)
#   3 + busy     three trainers beside the busy loops
# Usage: bench/train/shared_cores.sh [RAGMIG_BINARY] [STEPS]  (defaults: build/src/apps/ragmig, 150)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
ragmig="${1:-$here/build/src/apps/ragmig}"
steps="${2:-150}"
data="${RAGMIG_DATA_DIR:-$here/../shared/data}/beir/squad-train"
[[ -x "$ragmig" ]] || { echo "shared_cores.sh: $ragmig is not built (make build)" >&2; exit 2; }
[[ -d "$data" ]] || { echo "shared_cores.sh: $data is missing" >&2; exit 2; }
work="$(mktemp -d)"
busy=()
cleanup() { kill "${busy[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
cores="$(nproc)"

cat > "$work/tiny.toml" <<TOML
[data]
beir = "$data"
max_examples = 400
max_query_tokens = 24
max_passage_tokens = 64
[model]
vocab_size = 1500
hidden_size = 32
layers = 1
heads = 2
intermediate_size = 64
max_position = 64
[train]
max_steps = $steps
batch_size = 16
checkpoint_every = 20
seed = 7
TOML

# trainers N: wall seconds of N trainers started together, each with ragmig's default threads.
trainers() {
  local n="$1" pids=() start end
  start="$(date +%s.%N)"
  for ((i = 0; i < n; i++)); do
    rm -rf "$work/run$i"
    "$ragmig" train "$work/tiny.toml" --run-dir "$work/run$i" --quiet &
    pids+=("$!")
  done
  wait "${pids[@]}"
  end="$(date +%s.%N)"
  echo "$end - $start" | bc
}
start_busy() { for ((i = 0; i < cores; i++)); do (while :; do :; done) & busy+=("$!"); done; }
stop_busy() { kill "${busy[@]}" 2>/dev/null || true; wait "${busy[@]}" 2>/dev/null || true; busy=(); }

trainers 1 >/dev/null  # warm the page cache
declare -A t
for policy in ragmig gomp; do
  run() { if [[ $policy == gomp ]]; then GOMP_SPINCOUNT=300000 trainers "$1"; else trainers "$1"; fi; }
  t[$policy,alone]="$(run 1)"
  t[$policy,three]="$(run 3)"
  start_busy
  t[$policy,busy]="$(run 1)"
  t[$policy,threebusy]="$(run 3)"
  stop_busy
done

echo "bench/train/shared_cores.sh: $cores cores, $steps steps of a tiny model (1x32), default threads ($cores each)"
printf '%-12s %14s %18s %8s\n' case "ragmig (s)" "libgomp spin (s)" "spin/ragmig"
for c in alone three busy threebusy; do
  label="$c"; [[ $c == three ]] && label="3 at once"; [[ $c == threebusy ]] && label="3 + busy"
  printf '%-12s %14.2f %18.2f %7.2fx\n' "$label" "${t[ragmig,$c]}" "${t[gomp,$c]}" "$(echo "${t[gomp,$c]} / ${t[ragmig,$c]}" | bc -l)"
done
