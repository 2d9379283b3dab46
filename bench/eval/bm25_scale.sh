#!/usr/bin/env bash
# BM25 at index scale, ragmig beside Xapian 1.4 in the same run: wall, queries/s and peak RSS (each phase its
# own process, measured by /usr/bin/time) on pool-135k (SQuAD paragraphs + 114k Wikipedia passages, 133,343
# documents) and pool-1m (1,048,959: perturbed copies added), 9,150 SQuAD test questions, k = 1000, one thread.
#   ragmig cold: `ragmig eval --retriever bm25 --no-cache` (index built as the corpus is read, then searched)
#   ragmig warm: the same with a cache whose index was written by an earlier run: mapped, not rebuilt
#   Xapian:      bench/eval/xapian_bm25.py index, then search (python3-xapian; skipped when absent)
# Environment: OUT (default /tmp/bm25-scale: pools, caches, Xapian databases), RAGMIG (build/src/apps/ragmig),
# DATA (../shared/data), POOLS ("135k 1m"), XAPIAN_POOLS (default "135k": 1m takes Xapian ~15 min), K, THREADS.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/bm25-scale}
RAGMIG=${RAGMIG:-build/src/apps/ragmig}
DATA=${DATA:-../shared/data}
POOLS=${POOLS:-135k 1m}
XAPIAN_POOLS=${XAPIAN_POOLS:-135k}
K=${K:-1000}
THREADS=${THREADS:-1}
mkdir -p "$OUT"
python3 bench/eval/make_pools.py "$DATA" "$OUT/pools" > /dev/null

# timed NAME CMD...: CMD's stdout to $OUT/NAME.json, "wall_s max_rss_kb" to $OUT/NAME.time.
timed() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$@" > "$OUT/$name.json"
}

has_xapian=false
/usr/bin/python3 -c 'import xapian' 2> /dev/null && has_xapian=true
$has_xapian || echo "Xapian: python3-xapian is not installed (scripts/install-deps.sh installs it): ragmig rows only"
for pool in $POOLS; do
  beir="$OUT/pools/pool-$pool"
  eval_cmd=("$RAGMIG" eval --data "$beir" --retriever bm25 --threads "$THREADS" --k "$K" --json --quiet)
  rm -rf "$OUT/cache-$pool" "$OUT"/xapian-*-"$pool".*
  timed "ragmig-cold-$pool" "${eval_cmd[@]}" --no-cache
  timed "ragmig-fill-$pool" "${eval_cmd[@]}" --cache "$OUT/cache-$pool"
  timed "ragmig-warm-$pool" "${eval_cmd[@]}" --cache "$OUT/cache-$pool"
  if $has_xapian && [[ " $XAPIAN_POOLS " == *" $pool "* ]]; then
    timed "xapian-index-$pool" /usr/bin/python3 bench/eval/xapian_bm25.py index "$beir" "$OUT/xapian-db-$pool"
    timed "xapian-search-$pool" /usr/bin/python3 bench/eval/xapian_bm25.py search "$beir" "$OUT/xapian-db-$pool" "$K"
  fi
done

python3 - "$OUT" $POOLS << 'PY'
import json, os, sys
out, pools = sys.argv[1], sys.argv[2:]
def load(name):
    if not os.path.exists(f"{out}/{name}.json") or os.path.getsize(f"{out}/{name}.json") == 0:
        return None
    wall, kb = open(f"{out}/{name}.time").read().split()[-2:]
    return json.load(open(f"{out}/{name}.json")), float(wall), int(kb) / 1024
print(f"{'pool':8} {'engine':12} {'index_s':>8} {'search_s':>8} {'wall_s':>7} {'q/s':>7} {'rss_mb':>7} {'ndcg@10':>8} {'R@20':>7}  vs Xapian (q/s, rss)")
for pool in pools:
    rows = []
    for mode in ("cold", "warm"):
        r = load(f"ragmig-{mode}-{pool}")
        d, wall, mb = r
        t = d["timings"]
        rows.append((f"ragmig {mode}", t["index"], t["search"], wall, d["queries"] / t["search"], mb, d["ndcg@10"], d["recall@20"]))
    xi, xs = load(f"xapian-index-{pool}"), load(f"xapian-search-{pool}")
    x = None
    if xi and xs:
        x = ("Xapian", xi[0]["index_seconds"], xs[0]["search_seconds"], xi[1] + xs[1], xs[0]["queries"] / xs[0]["search_seconds"],
             max(xi[2], xs[2]), xs[0]["ndcg@10"], xs[0]["recall@20"])
    for row in rows + ([x] if x else []):
        vs = f"{row[4] / x[4]:.1f}x, {row[5] / x[5]:.2f}x" if x else "-"
        print(f"{pool:8} {row[0]:12} {row[1]:8.1f} {row[2]:8.1f} {row[3]:7.1f} {row[4]:7.0f} {row[5]:7.0f} {row[6]:8.4f} {row[7]:7.4f}  {vs}")
PY
