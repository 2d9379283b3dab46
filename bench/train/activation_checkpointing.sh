#!/usr/bin/env bash
# bench/train/activation_checkpointing.sh: what `train.activation_checkpointing` trades, in the same run: a random
# decoder of Mistral's layout (8 layers of 512, 8 query heads over 2 key/value heads, SwiGLU 1,536; the Llama
# tokenizer of tests/hf/llama_folder.py; last-token pooling) fine-tuned on SciFact for STEPS steps of batch 16
# (queries 32, passages 256 tokens), once as usual and once with each layer run again in backward: samples/s over
# the steps after the first, peak RSS, the ratios, and the last step's loss of each (the same: the same gradients).
# Usage: bench/train/activation_checkpointing.sh [RAGMIG_BINARY] [STEPS]  (defaults: build/src/apps/ragmig, 6)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
ragmig="${1:-$here/build/src/apps/ragmig}"
steps="${2:-6}"
python="${RAGMIG_PYTHON:-$here/.venv/bin/python}"
data="${RAGMIG_DATA_DIR:-$here/../shared/data}/beir/scifact"
[[ -x "$ragmig" ]] || { echo "activation_checkpointing.sh: $ragmig is not built (make build)" >&2; exit 2; }
[[ -d "$data" ]] || { echo "activation_checkpointing.sh: $data is missing" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$here/tests/hf" && "$python" llama_folder.py "$work/tok" "$here/tests/hf/fixture/hf") > "$work/tok.log" 2>&1 ||
  { cat "$work/tok.log" >&2; exit 1; }
"$python" - "$work/model" "$work/tok/llama/hf" <<'PY' > "$work/model.log" 2>&1 || { cat "$work/model.log" >&2; exit 1; }
import sys, torch
from sentence_transformers import SentenceTransformer, models
from transformers import AutoTokenizer, MistralConfig, MistralModel
tok = AutoTokenizer.from_pretrained(sys.argv[2])
torch.manual_seed(0)
config = MistralConfig(vocab_size=len(tok), hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                       num_key_value_heads=2, intermediate_size=1536, max_position_embeddings=512, sliding_window=512,
                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
MistralModel(config).save_pretrained(sys.argv[1] + "/hf")
tok.save_pretrained(sys.argv[1] + "/hf")
SentenceTransformer(modules=[models.Transformer(sys.argv[1] + "/hf", max_seq_length=256),
                             models.Pooling(512, "lasttoken"), models.Normalize()], device="cpu").save(sys.argv[1])
PY
cat > "$work/train.toml" <<TOML
[data]
beir = "$data"
max_query_tokens = 32
max_passage_tokens = 256
[model]
init = "$work/model"
[train]
max_steps = $steps
batch_size = 16
lr = 2e-5
warmup_steps = 0
log_every = 1
checkpoint_every = 0
precision = "fp32"
[eval]
split = ""
TOML
declare -A rate rss loss
for on in false true; do
  /usr/bin/time -f "%M" -o "$work/rss-$on" "$ragmig" train "$work/train.toml" --run-dir "$work/run-$on" --quiet \
    --set train.activation_checkpointing=$on
  read -r rate[$on] loss[$on] < <("$python" -c "
import json, sys
p = [json.loads(l) for l in open(sys.argv[1]) if '\"progress\"' in l]
print(f'{sum(e[\"samples_per_s\"] for e in p[1:]) / len(p[1:]):.2f}', repr(p[-1]['loss']))" "$work/run-$on/events.jsonl")
  rss[$on]=$(( $(cat "$work/rss-$on") / 1024 ))
done
printf "%-34s %10s %14s  %s\n" "" "samples/s" "peak RSS MiB" "last loss"
printf "%-34s %10s %14s  %s\n" "as usual" "${rate[false]}" "${rss[false]}" "${loss[false]}"
printf "%-34s %10s %14s  %s\n" "train.activation_checkpointing" "${rate[true]}" "${rss[true]}" "${loss[true]}"
"$python" -c "print(f'checkpointed / usual: {float(\"${rate[true]}\") / float(\"${rate[false]}\"):.2f}x samples/s, '
              f'{int(\"${rss[true]}\") / int(\"${rss[false]}\"):.2f}x peak memory')"
