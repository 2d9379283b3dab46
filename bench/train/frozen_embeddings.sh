#!/usr/bin/env bash
# bench/train/frozen_embeddings.sh: what `model.freeze_embeddings` saves when fine-tuning a multilingual encoder,
# whose embedding table is most of its weights, in the same run: a random model of multilingual-e5-small's shape
# (XLM-R, 250,037 x 384 embeddings, 12 layers of 384, FFN 1,536: 117.5 M weights, 96 M of them the table; the
# tokenizer of tests/hf/xlmr_folder.py) fine-tuned on SciFact for STEPS steps of batch 16 (queries 32, passages 128
# tokens), once with every weight trained and once with the tables frozen: samples/s over the steps after the
# first, peak RSS, and the ratios.
# Usage: bench/train/frozen_embeddings.sh [RAGMIG_BINARY] [STEPS]  (defaults: build/src/apps/ragmig, 10)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
ragmig="${1:-$here/build/src/apps/ragmig}"
steps="${2:-10}"
python="${RAGMIG_PYTHON:-$here/.venv/bin/python}"
data="${RAGMIG_DATA_DIR:-$here/../shared/data}/beir/scifact"
[[ -x "$ragmig" ]] || { echo "frozen_embeddings.sh: $ragmig is not built (make build)" >&2; exit 2; }
[[ -d "$data" ]] || { echo "frozen_embeddings.sh: $data is missing" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$here/tests/hf" && "$python" xlmr_folder.py "$work/tok" "$here/tests/hf/fixture/hf") > "$work/tok.log" 2>&1 ||
  { cat "$work/tok.log" >&2; exit 1; }
"$python" - "$work/model" "$work/tok/hf" <<'PY' > /dev/null 2>&1
import shutil, sys, torch
from transformers import XLMRobertaConfig, XLMRobertaModel
torch.manual_seed(0)
config = XLMRobertaConfig(vocab_size=250037, hidden_size=384, num_hidden_layers=12, num_attention_heads=12,
                          intermediate_size=1536, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                          bos_token_id=0, eos_token_id=2)
XLMRobertaModel(config, add_pooling_layer=False).save_pretrained(sys.argv[1])
for f in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copy(f"{sys.argv[2]}/{f}", sys.argv[1])
PY
cat > "$work/train.toml" <<TOML
[data]
beir = "$data"
max_query_tokens = 32
max_passage_tokens = 128
[model]
init = "$work/model"
[train]
max_steps = $steps
batch_size = 16
lr = 2e-5
warmup_steps = 0
log_every = 1
checkpoint_every = 0
[eval]
split = ""
TOML
declare -A rate rss
for frozen in false true; do
  /usr/bin/time -f "%M" -o "$work/rss-$frozen" "$ragmig" train "$work/train.toml" --run-dir "$work/run-$frozen" --quiet \
    --set model.freeze_embeddings=$frozen
  rate[$frozen]=$("$python" -c "
import json, sys
p = [json.loads(l) for l in open(sys.argv[1]) if '\"progress\"' in l]
print(f'{sum(e[\"samples_per_s\"] for e in p[1:]) / len(p[1:]):.1f}')" "$work/run-$frozen/events.jsonl")
  rss[$frozen]=$(( $(cat "$work/rss-$frozen") / 1024 ))
done
printf "%-26s %12s %14s\n" "" "samples/s" "peak RSS MiB"
printf "%-26s %12s %14s\n" "every weight trained" "${rate[false]}" "${rss[false]}"
printf "%-26s %12s %14s\n" "model.freeze_embeddings" "${rate[true]}" "${rss[true]}"
"$python" -c "print(f'frozen / trained: {float(\"${rate[true]}\") / float(\"${rate[false]}\"):.2f}x samples/s, '
              f'{int(\"${rss[true]}\") / int(\"${rss[false]}\"):.2f}x memory')"
