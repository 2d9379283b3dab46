# Sourced by bench/retrieval/mined.sh, pretrain.sh and ance.sh: `stage NAME COMMAND...` runs a command with its output
# in $OUT/NAME.log and its wall seconds in WALL[NAME] (stops the bench, with the log's tail, if it fails);
# `write_walls` saves WALL as $OUT/wall.txt ("NAME SECONDS" lines) for the summary table; `evaluate NAME RETRIEVER
# [MODEL [OPTIONS...]]` stages `ragmig eval` on $BEIR's test split into $OUT/NAME.json (cache ${CACHE:-$OUT/cache}).
declare -A WALL
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@" > "$OUT/$name.log" 2>&1 || { echo "stage $name failed: $OUT/$name.log" >&2; tail -5 "$OUT/$name.log" >&2; exit 1; }
  WALL[$name]=$((SECONDS - t0))
}
write_walls() {
  local n
  for n in "${!WALL[@]}"; do echo "$n ${WALL[$n]}"; done > "$OUT/wall.txt"
}
evaluate() {
  local name=$1 retriever=$2 model=${3:-}
  shift $(( $# < 3 ? $# : 3 ))
  stage "eval-$name" "$RAGMIG" eval --data "$BEIR" --split test --retriever "$retriever" ${model:+--model "$model"} \
    --cache "${CACHE:-$OUT/cache}" --json --quiet --out "$OUT/$name.json" "$@"
}
