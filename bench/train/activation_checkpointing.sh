#!/usr/bin/env bash
# bench/train/activation_checkpointing.sh: what `train.activation_checkpointing` trades, in the same run: a random
# model fine-tuned on SciFact for STEPS steps of batch 16, once as usual and once with each layer run again in
# backward: samples/s over the steps after the first, peak RSS, the ratios, and the last step's loss of each (the
# same: the same gradients). FAMILY picks the model:
#   mistral    (default) Mistral's layout: 8 layers of 512, 8 query heads over 2 key/value heads, SwiGLU 1,536; the
#              Llama tokenizer of tests/hf/llama_folder.py; last-token pooling; queries 32, passages 256 tokens
#   modernbert ModernBERT's: 9 layers of 512 (a global layer, then two sliding ones of window 128), 8 heads, GeGLU
#              1,536; the byte-level BPE of tests/hf/modernbert_folder.py; mean pooling; passages 512 tokens
# Usage: bench/train/activation_checkpointing.sh [RAGMIG_BINARY] [STEPS] [FAMILY]
#        (defaults: build/src/apps/ragmig, 6, mistral)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
ragmig="${1:-$here/build/src/apps/ragmig}"
steps="${2:-6}"
family="${3:-mistral}"
python="${RAGMIG_PYTHON:-$here/.venv/bin/python}"
data="${RAGMIG_DATA_DIR:-$here/../shared/data}/beir/scifact"
[[ -x "$ragmig" ]] || { echo "activation_checkpointing.sh: $ragmig is not built (make build)" >&2; exit 2; }
[[ -d "$data" ]] || { echo "activation_checkpointing.sh: $data is missing" >&2; exit 2; }
case "$family" in
  mistral) maker=llama_folder.py tokenizer=llama/hf passage_tokens=256 ;;
  modernbert) maker=modernbert_folder.py tokenizer=hf passage_tokens=512 ;;
  *) echo "activation_checkpointing.sh: FAMILY must be mistral or modernbert, got '$family'" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$here/tests/hf" && "$python" "$maker" "$work/tok" "$here/tests/hf/fixture/hf") > "$work/tok.log" 2>&1 ||
  { cat "$work/tok.log" >&2; exit 1; }
"$python" - "$work/model" "$work/tok/$tokenizer" "$family" "$passage_tokens" <<'PY' > "$work/model.log" 2>&1 ||
import sys, torch
from sentence_transformers import SentenceTransformer, models
from transformers import AutoTokenizer, MistralConfig, MistralModel, ModernBertConfig, ModernBertModel
out, tok_dir, family, passage_tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tok = AutoTokenizer.from_pretrained(tok_dir)
torch.manual_seed(0)
if family == "mistral":
    model = MistralModel(MistralConfig(
        vocab_size=len(tok), hidden_size=512, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=2,
        intermediate_size=1536, max_position_embeddings=512, sliding_window=512, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))
    pooling = "lasttoken"
else:
    model = ModernBertModel(ModernBertConfig(
        vocab_size=len(tok), hidden_size=512, num_hidden_layers=9, num_attention_heads=8, intermediate_size=1536,
        max_position_embeddings=1024, local_attention=128, pad_token_id=tok.pad_token_id,
        cls_token_id=tok.cls_token_id, sep_token_id=tok.sep_token_id, bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id))
    pooling = "mean"
model.save_pretrained(out + "/hf")
tok.save_pretrained(out + "/hf")
SentenceTransformer(modules=[models.Transformer(out + "/hf", max_seq_length=passage_tokens),
                             models.Pooling(512, pooling), models.Normalize()], device="cpu").save(out)
PY
  { cat "$work/model.log" >&2; exit 1; }
cat > "$work/train.toml" <<TOML
[data]
beir = "$data"
max_query_tokens = 32
max_passage_tokens = $passage_tokens
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
echo "$family: batch 16, queries 32 / passages $passage_tokens tokens, $steps steps, fp32"
printf "%-34s %10s %14s  %s\n" "" "samples/s" "peak RSS MiB" "last loss"
printf "%-34s %10s %14s  %s\n" "as usual" "${rate[false]}" "${rss[false]}" "${loss[false]}"
printf "%-34s %10s %14s  %s\n" "train.activation_checkpointing" "${rate[true]}" "${rss[true]}" "${loss[true]}"
"$python" -c "print(f'checkpointed / usual: {float(\"${rate[true]}\") / float(\"${rate[false]}\"):.2f}x samples/s, '
              f'{int(\"${rss[true]}\") / int(\"${rss[false]}\"):.2f}x peak memory')"
