#!/usr/bin/env bash
# What a simulation costs two ragmig binaries, counted rather than timed: instructions and first-level data-cache
# read misses under valgrind's cachegrind, which are the same from run to run where wall time on a shared VM varies
# by 20 %. The scheduler's passes over a long queue are bound by memory reads, so the misses say more than the
# instructions. Both binaries run at once (cachegrind runs each on one core, ~50x slower than native); the ratio is
# new / old. Default: Philly's first 30,000 jobs on 200 V100s under fifo, where the queue grows to thousands.
#
#   bash bench/sim/pass_cost.sh OLD_RAGMIG NEW_RAGMIG [WORKLOAD CLUSTER POLICY]   # ~2 min with the default
#
# Run from the repository root (the trace is found in ../shared/data from there, or $RAGMIG_DATA).
# Pair it with same_schedule.sh, which says whether the two decide alike.
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 5 ] || { sed -n 2,10p "$0"; exit 2; }
command -v valgrind >/dev/null || { echo "pass_cost.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
old=$1
new=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ $# -eq 5 ]; then
  workload=$3 cluster=$4 policy=$5
else
  head -30001 "${RAGMIG_DATA:-../shared/data}/traces/philly-pollux.csv" >"$out/philly30k.csv"
  workload=philly:$out/philly30k.csv cluster=200xV100 policy=fifo
fi
for side in old new; do
  bin=$old
  [ $side = new ] && bin=$new
  valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$out/$side.cg" \
    "$bin" sim --workload "$workload" --cluster "$cluster" --policy "$policy" --json \
    >"$out/$side.json" 2>"$out/$side.log" &
done
wait
# cachegrind's summary lines: "I   refs:      15,246,006,792" and "D1  misses:  1,000,844,821  (  964,066,572 rd ..."
instructions() { sed -nE 's/.*I +refs: +([0-9,]+).*/\1/p' "$out/$1.log" | tr -d ,; }
read_misses() { sed -nE 's/.*D1 +misses:.*\( *([0-9,]+) rd.*/\1/p' "$out/$1.log" | tr -d ,; }
echo "sim --workload $workload --cluster $cluster --policy $policy"
for what in instructions read_misses; do
  awk -v l="$what" -v o="$($what old)" -v n="$($what new)" \
    'BEGIN { printf "%-13s old %15.0f  new %15.0f  new/old %.3f\n", l, o, n, n / o }'
done
if cmp -s <(grep -vE '"(steps|wall_s)"' "$out/old.json") <(grep -vE '"(steps|wall_s)"' "$out/new.json"); then
  echo "the same JSON (but steps and wall_s)"
else
  echo "the JSON differs: bash bench/sim/same_schedule.sh says where"
fi
