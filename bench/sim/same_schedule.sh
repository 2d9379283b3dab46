#!/usr/bin/env bash
# Whether two ragmig binaries schedule alike: the same simulations (Philly, Alibaba, MISO and sweep workloads on
# whole GPUs, fixed MIG slices, CPU slots and mig=auto with moves; every policy, preemptive or not, with and without
# +dynbatch) run with each, and their JSON (all but `steps` and wall time) and --timeline CSVs compared.
# For a change meant to leave decisions alone (a refactor of placement, the view, the loop).
#
#   bash bench/sim/same_schedule.sh OLD_RAGMIG NEW_RAGMIG      # 9-10 min a binary; QUICK=1 skips Philly on 200 V100s
#
# Run from the repository root (the MISO table is found in ../shared/data from there, or $RAGMIG_DATA).
# Prints one line a simulation and exits 1 when any differs; outputs stay in $OUT (default a temporary folder).
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,9p "$0"; exit 2; }
old=$1
new=$2
out=${OUT:-$(mktemp -d)}
traces=${RAGMIG_DATA:-../shared/data}/traces
sims=(
  "philly:$traces/philly-pollux.csv 1000xV100 fifo,priority,srtf,las,ljf,priority(preempt=1)"
  "philly:$traces/philly-pollux.csv 200xV100 fifo,priority,srtf,las+dynbatch"
  "openb:$traces/alibaba-openb-default.csv 64xA100-40GB fifo,priority,srtf,las"
  "miso:60 8xA100-40GB:mig=auto fifo,srtf,las --migrate"
  "miso:60 4xA100-40GB:mig=auto,2xA100-40GB fifo+dynbatch,priority"
  "sweep:40 8xH200:mig=7x1g.18gb,3xcpu fifo,srtf,las,priority"
  "sweep:40 2xH200:mig=auto fifo,las --migrate"
  "miso:100 3xA100-40GB:mig=auto srtf,las,priority --migrate"
)
differ=0
for i in "${!sims[@]}"; do
  read -r workload cluster policies extra <<<"${sims[$i]}"
  if [ -n "${QUICK:-}" ] && [ "$cluster" = 200xV100 ]; then continue; fi
  for side in old new; do
    bin=$old
    [ $side = new ] && bin=$new
    # shellcheck disable=SC2086 # $extra is zero or more options
    "$bin" sim --workload "$workload" --cluster "$cluster" --policy "$policies" $extra --json \
      --timeline "$out/$side-$i.csv" 2>/dev/null | grep -vE '"(steps|wall_s)"' >"$out/$side-$i.json"
  done
  if cmp -s "$out/old-$i.json" "$out/new-$i.json" && cmp -s "$out/old-$i.csv" "$out/new-$i.csv"; then
    echo "same     $workload $cluster $policies $extra"
  else
    echo "DIFFERS  $workload $cluster $policies $extra (diff $out/old-$i.json $out/new-$i.json)"
    differ=1
  fi
done
exit $differ
