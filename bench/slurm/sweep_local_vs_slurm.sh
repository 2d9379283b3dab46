#!/usr/bin/env bash
# A 16-trial tiny sweep (examples/sweep-squad-tiny.toml with trials = 16) on this machine's CPU slots and on a
# Slurm cluster (--backend slurm), side by side: wall time of each and whether their
# results.json agree trial by trial. Needs a running Slurm whose configuration SLURM_CONF names; on one machine,
# as root, build/tests/slurm/with_slurm starts the tests' one-node cluster around it. From the repository root:
#   build/tests/slurm/with_slurm -- bench/slurm/sweep_local_vs_slurm.sh [build/src/apps/ragmig]
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
# Slurm as on this node (2 slots: trials start as slots free), and as on a shared cluster whose partition has
# more GRES than the sweep may take: all 16 trials start in one pass, as one job array capped at 2 running.
slurm_t=$(timed slurm --backend slurm --cpu-slots 2)
array_t=$(timed array --backend slurm --cpu-slots 16 --array-limit 2)
python3 - "$out" "$local_t" "$slurm_t" "$array_t" <<'PY'
import glob, json, sys
out = sys.argv[1]
seconds = [float(t.split()[1]) - float(t.split()[0]) for t in sys.argv[2:5]]
local = json.load(open(f"{out}/local/results.json"))["trials"]
print(f"16-trial sweep, local backend: {seconds[0]:.1f} s")
for name, s, what in [("slurm", seconds[1], "Slurm, 2 slots"), ("array", seconds[2], "Slurm, 16 slots, --array-limit 2")]:
    trials = json.load(open(f"{out}/{name}/results.json"))["trials"]
    same = sum(x["metric"] == y["metric"] and x["state"] == y["state"] for x, y in zip(local, trials))
    # What went to Slurm: each attempt's job id ("123", or "123_4" for an array task) lies beside it.
    ids = [open(p).read().strip() for p in glob.glob(f"{out}/{name}/**/*.slurm-id", recursive=True)]
    in_arrays = [i for i in ids if "_" in i]
    print(f"  {what}: {s:.1f} s ({s / seconds[0]:.2f}x); results.json trials equal: {same}/{len(local)}; "
          f"{len(ids)} attempts in {len({i.split('_')[0] for i in ids})} sbatch submissions "
          f"({len(in_arrays)} as tasks of {len({i.split('_')[0] for i in in_arrays})} job arrays)")
PY
