#!/usr/bin/env bash
# bench/train/onednn_cache.sh: what capping oneDNN's and ideep's caches (model/onednn_cache.h) saves, in one run:
# `ragmig train` on SQuAD pairs (examples/train-squad-tiny.toml, or CONFIG) for STEPS steps, batches unpadded and
# padded, each with the libraries' defaults (1,024 entries each: ONEDNN_PRIMITIVE_CACHE_CAPACITY and
# LRU_CACHE_CAPACITY) and with ragmig's caps: peak RSS, the whole run's wall time, samples/s over the progress
# windows after the first, and the ratios. Same binary, same data; only those two variables differ. (On the 2-core
# machine samples/s varies by 5-10 % from run to run; wall time over 150 steps by ~1-3 %.)
# Usage: bench/train/onednn_cache.sh [RAGMIG_BINARY] [STEPS]  (defaults: build/src/apps/ragmig, 150; CONFIG=file)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
ragmig="${1:-$here/build/src/apps/ragmig}"
steps="${2:-150}"
config="${CONFIG:-$here/examples/train-squad-tiny.toml}"
python="${RAGMIG_PYTHON:-$here/.venv/bin/python}"
[[ -x "$ragmig" ]] || { echo "onednn_cache.sh: $ragmig is not built (make build)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$here"  # the examples name their data relative to the repository

run() {  # unpad capacity -> "samples/s rss_mib wall_s"
  local name="$1-$2"
  ONEDNN_PRIMITIVE_CACHE_CAPACITY="$2" LRU_CACHE_CAPACITY="$2" /usr/bin/time -f "%M %e" -o "$work/time-$name" \
    "$ragmig" train "$config" --run-dir "$work/run-$name" --quiet --set train.max_steps="$steps" \
    --set train.checkpoint_every=0 --set train.log_every=10 --set train.unpad="\"$1\"" --set eval.split='""'
  "$python" -c "
import json, sys
p = [json.loads(l) for l in open(sys.argv[1]) if '\"progress\"' in l][1:]
rss, wall = sys.argv[2].split()
print(f'{sum(e[\"samples_per_s\"] for e in p) / max(len(p), 1):.1f}', int(rss) // 1024, wall)" \
    "$work/run-$name/events.jsonl" "$(tail -1 "$work/time-$name")"
}

cap=$(sed -n 's/.*kOneDnnCacheCapacity = \([0-9]*\);.*/\1/p' "$here/src/model/onednn_cache.h")
printf "%-9s %-17s %10s %8s %13s   %s\n" "batches" "cache capacities" "samples/s" "wall s" "peak RSS MiB" \
  "capped / default"
for unpad in on off; do
  read -r rate_d rss_d wall_d < <(run "$unpad" 1024)
  read -r rate_c rss_c wall_c < <(run "$unpad" "$cap")
  label=$([[ $unpad == on ]] && echo unpadded || echo padded)
  printf "%-9s %-17s %10s %8s %13s\n" "$label" "1024 (defaults)" "$rate_d" "$wall_d" "$rss_d"
  printf "%-9s %-17s %10s %8s %13s   %s\n" "" "$cap (ragmig's)" "$rate_c" "$wall_c" "$rss_c" \
    "$("$python" -c "print(f'{$rate_c / $rate_d:.2f}x samples/s, {$wall_c / $wall_d:.2f}x wall, '
                        f'{$rss_c / $rss_d:.2f}x memory')")"
done
