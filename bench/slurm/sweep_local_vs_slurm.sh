#!/usr/bin/env bash
# A 16-trial tiny sweep (examples/sweep-squad-tiny.toml with trials = 16) on this machine's CPU slots and on a
# Slurm cluster (--backend slurm, 2 CPU slots per node), side by side: wall time of each and whether their
# results.json agree trial by trial. Needs a running Slurm whose configuration SLURM_CONF names (the tests'
# tests/slurm/slurm_cluster.h writes a one-node one); run from the repository root.
#   SLURM_CONF=/path/slurm.conf bench/slurm/sweep_local_vs_slurm.sh [build/src/apps/ragmig]
set -euo pipefail
ragmig=${1:-build/src/apps/ragmig}
: "${SLURM_CONF:?set SLURM_CONF to the slurm.conf of the cluster}"
out=$(mktemp -d)
sed -e 's/^trials = 8/trials = 16/' -e 's/^name = "squad-tiny"/name = "squad-tiny-16"/' \
    -e "s|^base = \"train-squad-tiny.toml\"|base = \"$PWD/examples/train-squad-tiny.toml\"|" \
    examples/sweep-squad-tiny.toml > "$out/sweep.toml"
timed() {  # state folder, extra arguments: prints "<start> <end>"
  local start
  start=$(date +%s.%N)
  "$ragmig" batch "$out/sweep.toml" --state "$out/$1" "${@:2}" > "$out/$1.log" 2>&1
  echo "$start $(date +%s.%N)"
}
local_t=$(timed local)
slurm_t=$(timed slurm --backend slurm --cpu-slots 2)
python3 - "$out" "$local_t" "$slurm_t" <<'PY'
import json, sys
out = sys.argv[1]
local, slurm = [float(t.split()[1]) - float(t.split()[0]) for t in sys.argv[2:4]]
a = json.load(open(f"{out}/local/results.json"))["trials"]
b = json.load(open(f"{out}/slurm/results.json"))["trials"]
same = sum(x["metric"] == y["metric"] and x["state"] == y["state"] for x, y in zip(a, b))
print(f"16-trial sweep: local {local:.1f} s, Slurm {slurm:.1f} s ({slurm / local:.2f}x); "
      f"results.json trials equal: {same}/{len(a)}")
PY
