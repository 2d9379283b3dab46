// The key table of `ragmig train` and the checks on its values.
#include "train/train_config.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.h"
#include "core/path_check.h"
#include "model/bert_config.h"
#include "model/dense_config.h"
#include "model/packaged_models.h"
#include "model/pooling_mode.h"
#include "model/st_folder.h"
#include "text/beir.h"

namespace ragmig::train {

ConfigTable make_config_table(TrainConfig& c) {
  ConfigTable t;
  t.add("data.beir", c.data.beir,
        "BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): trained on its split's pairs, or with "
        "data.pairs only evaluated on (eval.split)");
  t.add("data.split", c.data.split, "qrels split for training pairs (with data.pairs: the split of its query ids)");
  t.add("data.pairs", c.data.pairs,
        "pairs file to train on (instead of data.beir's qrels): JSONL rows {query|anchor|question, positive|pos|answer, "
        "negatives|neg|negative|negative_1..N} (ragmig mine, FlagEmbedding, sentence-transformers' datasets), "
        "or *.tsv: query<TAB>positive[<TAB>negative...] (MS MARCO's triples)");
  t.add("data.pretrain", c.data.pretrain,
        "crop | ict: pre-train on pairs made from raw text (data.beir's corpus or data.corpus); empty = judged pairs");
  t.add("data.corpus", c.data.corpus, "data.pretrain: raw text, JSONL with \"text\" or one document per line");
  t.add("data.holdout_queries", c.data.holdout_queries,
        "leave out N training queries (seeded by id), recorded in the model for `ragmig eval --fusion auto` to choose on");
  t.add("data.max_examples", c.data.max_examples, "use the first N examples only (0 = all)");
  t.add("data.max_query_tokens", c.data.max_query_tokens, "query length cap, [CLS] and [SEP] included");
  t.add("data.max_passage_tokens", c.data.max_passage_tokens, "passage length cap, [CLS] and [SEP] included");

  t.add("model.init", c.model.init,
        "model folder to fine-tune: a path, or package:NAME for one a Python package carries (`ragmig models`; empty = train from scratch)");
  t.add("model.vocab", c.model.vocab, "vocab.txt for a new model (empty = build from the data)");
  t.add("model.vocab_size", c.model.vocab_size, "size of a vocabulary built from the data");
  t.add("model.architecture", c.model.architecture,
        "a new model's family: bert | modernbert (rotary positions, sliding-window attention, gated MLP)");
  t.add("model.hidden_size", c.model.hidden_size, "hidden size of a new model");
  t.add("model.layers", c.model.layers, "transformer layers of a new model");
  t.add("model.heads", c.model.heads, "attention heads of a new model");
  t.add("model.intermediate_size", c.model.intermediate_size, "feed-forward size of a new model");
  t.add("model.max_position", c.model.max_position, "position embeddings of a new model");
  t.add("model.dropout", c.model.dropout, "dropout of a new model (hidden and attention)");
  t.add("model.pooling", c.model.pooling,
        "mean | cls | max | mean_sqrt_len_tokens | lasttoken (unset = model.init's; mean for a new model)");
  t.add("model.normalize", c.model.normalize, "L2-normalise embeddings (unset = model.init's; true for a new model)");
  t.add("model.add_eos_token", c.model.add_eos_token,
        "frame every text with the tokenizer's end-of-text token (true) or without it (false), as e5-mistral and "
        "Qwen3-Embedding append it to pool it (model.pooling = \"lasttoken\") when fine-tuned from a base decoder; "
        "saved with the model (unset = model.init's framing). SentencePiece BPE (Gemma, Llama, Mistral) and Qwen's / "
        "Llama 3's byte-level BPE only");
  t.add("model.shared_towers", c.model.shared_towers, "one encoder for queries and passages (false = two)");
  t.add("model.freeze_embeddings", c.model.freeze_embeddings,
        "keep model.init's embedding tables as they are (no gradients or optimiser state for them)");
  t.add("model.dense_dim", c.model.dense_dim,
        "add a Dense layer after pooling (sentence-transformers' Dense module), hidden size -> this many dimensions, "
        "trained with the model and saved as 2_Dense (0 = none; model.init's folder must have none)");
  t.add("model.dense_activation", c.model.dense_activation,
        "the new Dense layer's activation: identity | tanh | relu | gelu | sigmoid | silu");
  t.add("model.query_prompt", c.model.query_prompt,
        "text put before every query, e.g. \"query: \" (unset = model.init's prompt, if any; \"\" = none); saved with "
        "the model");
  t.add("model.passage_prompt", c.model.passage_prompt,
        "text put before every passage, e.g. \"passage: \" (unset = model.init's prompt, if any; \"\" = none)");

  t.add("train.max_steps", c.train.max_steps, "optimiser steps (0 = save the untrained model)");
  t.add("train.batch_size", c.train.batch_size, "query-passage pairs per step; all are in-batch negatives");
  t.add("train.accumulation", c.train.accumulation, "none | plain | gradcache");
  t.add("train.chunk_size", c.train.chunk_size, "micro-batch (plain) or embedding chunk (gradcache)");
  t.add("train.hard_negatives", c.train.hard_negatives, "hard negatives per query from the data");
  t.add("train.length_grouping", c.train.length_grouping,
        "batches of similar length, sorted in groups of this many batches and shuffled (less padding; 0 = off)");
  t.add("train.unpad", c.train.unpad,
        "on | off | auto (on on GPUs, off on CPU): compute on real tokens only, no Linear, LayerNorm or GELU on "
        "padding (attention: variable-length flash attention on GPUs that have it, else padded around the usual "
        "kernel). Measured: H200 BERT-base batch 512 1.77x; CPU tiny model 0.83x, MiniLM 1.08x");
  t.add("train.towers_in_one_pass", c.train.towers_in_one_pass,
        "with one shared tower, unpadded (train.unpad), BERT or ModernBERT (not MPNet): a step's queries and "
        "passages go through one forward pass over their real tokens (half the kernels of a pass per tower, each "
        "larger; one gradient per weight); false: a pass per tower");
  t.add("train.bf16_residual", c.train.bf16_residual,
        "with bf16 (train.precision), keep BERT's residual stream (each sublayer's sum and its LayerNorm) in bf16, "
        "as evaluation's bf16 model runs it, instead of autocast's fp32: two casts of [tokens, hidden] and fp32 adds "
        "and LayerNorms a layer fewer (not ModernBERT). CPU (MiniLM on SciFact, AMX): the same nDCG@10, +3 % "
        "samples/s, within noise; GPU: not yet measured");
  t.add("train.activation_checkpointing", c.train.activation_checkpointing,
        "keep only each layer's input for backward and run the layer again there (transformers' "
        "gradient_checkpointing): the same gradients for one more forward pass, a step's activations one layer's "
        "instead of all layers'. Every model family");
  t.add("train.lr", c.train.lr, "peak learning rate (AdamW)");
  t.add("train.weight_decay", c.train.weight_decay, "AdamW weight decay (not on biases and LayerNorm)");
  t.add("train.warmup_steps", c.train.warmup_steps, "linear warm-up steps, then linear decay to 0");
  t.add("train.max_grad_norm", c.train.max_grad_norm, "gradient clipping norm (0 = off)");
  t.add("train.temperature", c.train.temperature, "InfoNCE temperature (initial value if learned)");
  t.add("train.learn_temperature", c.train.learn_temperature, "learn the temperature");
  t.add("train.matryoshka_dims", c.train.matryoshka_dims,
        "Matryoshka loss: the loss (InfoNCE, or train.loss_directions' terms) summed over these leading sizes of the "
        "embeddings, e.g. [384, 128, 64] (include the full size to train it too), so that truncated embeddings "
        "retrieve well (`ragmig eval --dimensions`, `ragmig serve --matryoshka`); [] = off");
  t.add("train.loss_directions", c.train.loss_directions,
        "the loss's terms, as sentence-transformers' MultipleNegativesRankingLoss: query_to_doc (InfoNCE: each query's "
        "positive against every passage; always), doc_to_query (each positive against every query: the symmetric "
        "loss), query_to_query (against the other queries), doc_to_doc (against the other queries' passages)");
  t.add("train.loss_partition", c.train.loss_partition,
        "joint (one softmax over every direction's logits) | per_direction (one per direction, averaged; "
        "sentence-transformers' symmetric loss is [query_to_doc, doc_to_query] per_direction)");
  t.add("train.hardness_mode", c.train.hardness_mode,
        "none | in_batch_negatives | hard_negatives | all_negatives: add train.hardness_strength x stop_grad(cosine) "
        "to those negatives' logits, so harder ones weigh more (Lan et al. 2025: 9 for in-batch; 5 for hard)");
  t.add("train.hardness_strength", c.train.hardness_strength, "alpha of train.hardness_mode (>= 0)");
  t.add("train.seed", c.train.seed, "seed for weights, dropout and data order");
  t.add("train.threads", c.train.threads, "CPU threads (0 = all cores)");
  t.add("train.device", c.train.device, "auto | cpu | cuda | cuda:N");
  t.add("train.precision", c.train.precision,
        "auto (bf16 on CUDA and on CPUs where it runs faster than fp32, else fp32) | fp32 | bf16 (autocast)");
  t.add("train.optimizer", c.train.optimizer, "adamw | sgd (same parameter groups and weight decay)");
  t.add("train.checkpoint_every", c.train.checkpoint_every, "steps between checkpoints (0 = end and SIGTERM only)");
  t.add("train.keep_checkpoints", c.train.keep_checkpoints, "newest checkpoints kept");
  t.add("train.log_every", c.train.log_every, "steps between progress events");
  t.add("train.resize_lr", c.train.resize_lr,
        "LR rule when the scheduler changes the batch size (control.json): sqrt | linear | none");
  t.add("train.profile_trace", c.train.profile_trace,
        "write a Chrome trace (Kineto: operators and GPU kernels) of train.profile_steps steps after the first "
        "progress event to this file (bench/train/trace_table.py sums it)");
  t.add("train.profile_steps", c.train.profile_steps, "steps in train.profile_trace");
  t.add("train.debug_oom_step", c.train.debug_oom_step, "tests: from this step on (0 = never), a batch over train.debug_oom_batch is out of memory");
  t.add("train.debug_oom_batch", c.train.debug_oom_batch, "tests: see train.debug_oom_step");

  t.add("eval.split", c.eval.split, "qrels split to evaluate the final model on (empty = none)");
  t.add("eval.k", c.eval.k, "recall@k of exact dense search over the whole corpus");
  t.add("eval.max_queries", c.eval.max_queries, "evaluate the first N queries only (0 = all)");
  t.add("eval.max_passages", c.eval.max_passages,
        "search the evaluated queries' relevant passages plus the first others up to N (0 = whole corpus)");
  t.add("eval.batch_size", c.eval.batch_size, "encoding batch size");
  t.add("eval.dimensions", c.eval.dimensions,
        "search with the leading N dimensions of each embedding, as `ragmig eval --dimensions` (0 = all)");
  t.add("eval.at_steps", c.eval.at_steps, "also evaluate after these steps, e.g. [25, 75] (ASHA rungs)");
  t.add("eval.at_end", c.eval.at_end,
        "evaluate after the last step (result.json's recall@k); false where another job scores the model");

  t.add("lora.rank", c.lora.rank, "LoRA rank r: train adapters on the frozen model.init (0 = full fine-tuning)");
  t.add("lora.alpha", c.lora.alpha, "LoRA alpha: the adapter is scaled by alpha / r");
  t.add("lora.dropout", c.lora.dropout, "dropout on the adapter's input");
  t.add("lora.targets", c.lora.targets,
        "layers to adapt, PEFT's target_modules: query, key, value, attention.output.dense, intermediate.dense, "
        "output.dense (the last matches both output layers), dense (all six); ModernBERT's Wqkv, attn.Wo, mlp.Wi, "
        "mlp.Wo; none: query, key, value (ModernBERT: Wqkv)");
  t.add("lora.rslora", c.lora.rslora, "rank-stabilised LoRA: scale by alpha / sqrt(r)");
  t.add("lora.base_precision", c.lora.base_precision,
        "fp32 | bf16: the frozen base's weights (bf16 halves them; needs train.precision bf16)");
  t.add("parallel.mode", c.parallel.mode, "sync (all-reduce every step) | localsgd (average every K steps)");
  t.add("parallel.global_negatives", c.parallel.global_negatives,
        "sync: gather all replicas' embeddings so each query sees the global batch's negatives");
  t.add("parallel.average_every", c.parallel.average_every, "localsgd: steps between parameter averages (K)");
  t.add("parallel.average_optimizer", c.parallel.average_optimizer, "localsgd: also average optimiser moments");
  t.add("parallel.dynamic_batch", c.parallel.dynamic_batch,
        "split the global batch by measured replica speed (slower slices take fewer samples)");
  t.add("parallel.rebalance_every", c.parallel.rebalance_every, "steps between re-splits of the batch");
  t.add("parallel.min_batch_fraction", c.parallel.min_batch_fraction,
        "lower bound of a replica's batch as a fraction of an even share");
  t.add("parallel.backend", c.parallel.backend, "auto (NCCL between whole GPUs if built with it, else Gloo) | gloo | nccl");
  t.add("parallel.timeout_s", c.parallel.timeout_s, "collective timeout: a replica silent this long counts as gone");
  t.add("parallel.debug_slowdown_rank", c.parallel.debug_slowdown_rank, "testing: rank made slower (-1 = none)");
  t.add("parallel.debug_slowdown", c.parallel.debug_slowdown, "testing: that rank's step-time factor (sleeps)");
  t.add("parallel.debug_kill_rank", c.parallel.debug_kill_rank, "testing: rank that dies (SIGKILL) mid-run (-1 = none)");
  t.add("parallel.debug_kill_step", c.parallel.debug_kill_step, "testing: the step after which it dies (not in a resumed run)");
  return t;
}

namespace {

// Bounds past any real run (validate): LibTorch's thread pool, one step's passages, a Dense layer's output, and a
// new model's weights (1e11 weights hold 1.6 TB of fp32 training state; XLM-R XXL has 1.07e10).
constexpr int64_t kMaxThreads = 1024;
constexpr double kMaxStepPassages = 1 << 24;
constexpr int64_t kMaxDenseDim = 1 << 20;
constexpr double kMaxNewModelWeights = 1e11;

void require(bool ok, const std::string& key, const std::string& what) {
  if (!ok) throw ConfigError("config key '" + key + "': " + what);
}

// A new encoder's model.* sizes, without ModernBERT's per-layer types: validate() checks the sizes before a list of
// that many layers may be built (2^63 layers must not be).
model::BertConfig new_encoder_sizes(const ModelConfig& m) {
  model::BertConfig b;
  b.model_type = m.architecture;
  b.vocab_size = m.vocab_size;
  b.hidden_size = m.hidden_size;
  b.num_hidden_layers = m.layers;
  b.num_attention_heads = m.heads;
  b.intermediate_size = m.intermediate_size;
  b.max_position_embeddings = m.max_position;
  return b;
}

// The shape in a model folder's config.json (its transformer module's, in a sentence-transformers folder).
model::BertConfig pretrained_shape(const std::string& folder,
                                   const std::optional<model::SentenceTransformerLayout>& layout) {
  const std::string config =
      (std::filesystem::path(model::transformer_folder(folder, layout)) / "config.json").string();
  return model::bert_config_from_json(model::read_json_file(config), config);
}

}  // namespace

TrainConfig read_train_config(const std::string& path, const std::vector<std::string>& sets, nlohmann::json* resolved) {
  TrainConfig cfg;
  ConfigTable table = make_config_table(cfg);
  table.load_file(path);
  for (const auto& s : sets) table.apply_override(s);
  try {
    validate(cfg);
  } catch (const ConfigError& e) {
    throw ConfigError(path + (sets.empty() ? "" : " with its --set overrides") + ": " + e.what());
  }
  if (resolved) *resolved = table.to_json();
  return cfg;
}

void validate(const TrainConfig& c) {
  require(c.data.pretrain.empty() || c.data.pretrain == "crop" || c.data.pretrain == "ict", "data.pretrain",
          "expected crop or ict (or empty for judged pairs)");
  if (c.data.pretrain.empty()) {
    require(!c.data.beir.empty() || !c.data.pairs.empty(), "data.beir",
            "set data.beir (its qrels give the pairs), data.pairs, or both (the pairs trained on, the folder evaluated on)");
    require(c.data.corpus.empty(), "data.corpus", "raw text is read only with data.pretrain = crop or ict");
  } else {
    require(c.data.pairs.empty(), "data.pairs", "pre-training makes its own pairs: drop data.pairs or data.pretrain");
    require(c.data.beir.empty() != c.data.corpus.empty(), "data.corpus",
            "data.pretrain reads the raw text of exactly one of data.beir (its corpus) and data.corpus");
  }
  require(c.data.max_examples >= 0, "data.max_examples", "must be >= 0");
  require(c.data.holdout_queries >= 0, "data.holdout_queries", "must be >= 0");
  require(c.data.holdout_queries == 0 || c.data.pretrain.empty(), "data.holdout_queries",
          "needs judged queries; data.pretrain makes its pairs from raw text");
  require(c.data.max_query_tokens >= 3, "data.max_query_tokens", "must be >= 3");
  require(c.data.max_passage_tokens >= 3, "data.max_passage_tokens", "must be >= 3");
  require(c.model.vocab_size >= 100, "model.vocab_size", "must be >= 100");
  require(c.model.hidden_size > 0, "model.hidden_size", "must be positive");
  require(c.model.layers > 0, "model.layers", "must be positive");
  require(c.model.heads > 0, "model.heads", "must be positive");
  require(c.model.hidden_size % c.model.heads == 0, "model.heads", "must divide model.hidden_size");
  require(c.model.architecture == "bert" || c.model.architecture == "modernbert", "model.architecture",
          "expected bert or modernbert");
  require(c.model.architecture == "bert" || c.model.init.empty(), "model.architecture",
          "is a new model's; model.init's folder has its own");
  require(c.model.architecture != "modernbert" || c.model.hidden_size / c.model.heads % 2 == 0, "model.heads",
          "must leave an even head size (model.hidden_size / model.heads) for ModernBERT's rotary positions");
  require(c.model.intermediate_size > 0, "model.intermediate_size", "must be positive");
  require(c.model.max_position >= std::max(c.data.max_query_tokens, c.data.max_passage_tokens),
          "model.max_position", "must be >= data.max_query_tokens and data.max_passage_tokens");
  require(c.model.dropout >= 0 && c.model.dropout < 1, "model.dropout", "must be in [0, 1)");
  require(!c.model.pooling || model::pooling_named(*c.model.pooling).has_value(), "model.pooling",
          "expected " + model::pooling_choices());
  require(!c.model.add_eos_token || !c.model.init.empty(), "model.add_eos_token",
          "frames model.init's tokenizer; a new model's WordPiece frames [CLS] ... [SEP]");
  require(c.train.max_steps >= 0, "train.max_steps", "must be >= 0");
  require(c.train.batch_size >= 2, "train.batch_size", "must be >= 2 (in-batch negatives)");
  require(c.train.accumulation == "none" || c.train.accumulation == "plain" || c.train.accumulation == "gradcache",
          "train.accumulation", "expected none, plain or gradcache");
  require(c.train.chunk_size >= 1, "train.chunk_size", "must be >= 1 (a chunk larger than the batch is the batch)");
  require(c.train.accumulation != "plain" || c.train.chunk_size >= 2, "train.chunk_size",
          "plain accumulation needs micro-batches of at least 2 (in-batch negatives)");
  require(c.train.hard_negatives >= 0, "train.hard_negatives", "must be >= 0");
  require(c.train.resize_lr == "sqrt" || c.train.resize_lr == "linear" || c.train.resize_lr == "none",
          "train.resize_lr", "expected sqrt, linear or none");
  require(c.train.debug_oom_step >= 0 && c.train.debug_oom_batch >= 0, "train.debug_oom_step",
          "train.debug_oom_step and train.debug_oom_batch must be >= 0");
  require(c.train.unpad == "auto" || c.train.unpad == "on" || c.train.unpad == "off", "train.unpad",
          "must be \"on\", \"off\" or \"auto\"");
  require(c.train.profile_steps >= 1, "train.profile_steps", "must be >= 1");
  require(c.train.length_grouping >= 0, "train.length_grouping", "must be >= 0 (0 = off)");
  require(c.train.lr > 0, "train.lr", "must be positive");
  require(c.train.weight_decay >= 0, "train.weight_decay", "must be >= 0");
  require(c.train.warmup_steps >= 0, "train.warmup_steps", "must be >= 0");
  require(c.train.max_grad_norm >= 0, "train.max_grad_norm", "must be >= 0");
  require(c.train.temperature > 0, "train.temperature", "must be positive");
  for (size_t i = 0; i < c.train.matryoshka_dims.size(); ++i) {
    require(c.train.matryoshka_dims[i] > 0, "train.matryoshka_dims", "sizes must be positive");
    for (size_t j = 0; j < i; ++j)
      require(c.train.matryoshka_dims[j] != c.train.matryoshka_dims[i], "train.matryoshka_dims",
              "lists " + std::to_string(c.train.matryoshka_dims[i]) + " twice");
  }
  const auto& directions = c.train.loss_directions;
  const auto has = [&](const char* d) { return std::find(directions.begin(), directions.end(), d) != directions.end(); };
  for (size_t i = 0; i < directions.size(); ++i) {
    const std::string& d = directions[i];
    require(d == "query_to_doc" || d == "doc_to_query" || d == "query_to_query" || d == "doc_to_doc",
            "train.loss_directions",
            "expected query_to_doc, doc_to_query, query_to_query or doc_to_doc entries (got \"" + d + "\")");
    require(std::find(directions.begin(), directions.begin() + static_cast<std::ptrdiff_t>(i), d) ==
                directions.begin() + static_cast<std::ptrdiff_t>(i),
            "train.loss_directions", "lists " + d + " twice");
  }
  require(has("query_to_doc"), "train.loss_directions", "must include query_to_doc (the queries' positives)");
  require(c.train.loss_partition == "joint" || c.train.loss_partition == "per_direction", "train.loss_partition",
          "must be joint or per_direction");
  require(c.train.loss_partition == "joint" || (!has("query_to_query") && !has("doc_to_doc")), "train.loss_partition",
          "per_direction needs every direction to hold the positive: query_to_query and doc_to_doc need joint");
  const std::string& hm = c.train.hardness_mode;
  require(hm == "none" || hm == "in_batch_negatives" || hm == "hard_negatives" || hm == "all_negatives",
          "train.hardness_mode", "must be none, in_batch_negatives, hard_negatives or all_negatives");
  require(c.train.hardness_strength >= 0, "train.hardness_strength", "must be >= 0");
  require(hm == "none" || c.train.hardness_strength > 0, "train.hardness_strength",
          "must be positive with train.hardness_mode = " + hm + " (0 changes nothing)");
  require(hm != "hard_negatives" || c.train.hard_negatives > 0, "train.hardness_mode",
          "hard_negatives weighs the queries' own hard negatives: set train.hard_negatives");
  require(c.train.threads >= 0 && c.train.threads <= kMaxThreads, "train.threads",
          fmt::format("must be in [0, {}]", kMaxThreads));
  // Sizes no machine holds are refused here, by name, rather than by an allocation that fails (or swaps for minutes)
  // once the run has started.
  const double passages = static_cast<double>(c.train.batch_size) * (1 + static_cast<double>(c.train.hard_negatives));
  require(passages <= kMaxStepPassages, "train.hard_negatives",
          fmt::format("train.batch_size x (1 + train.hard_negatives) = {:.3g} passages a step; at most {:.3g}", passages,
                      kMaxStepPassages));
  require(c.model.dense_dim <= kMaxDenseDim, "model.dense_dim", fmt::format("must be <= {}", kMaxDenseDim));
  if (c.model.init.empty()) {
    const model::BertConfig b = new_encoder_sizes(c.model);
    const double weights = b.minimum_weight_count() +
                           static_cast<double>(c.model.hidden_size) * static_cast<double>(c.model.dense_dim);
    if (weights > kMaxNewModelWeights)
      throw ConfigError(fmt::format(
          "config keys 'model.vocab_size', 'model.hidden_size', 'model.layers', 'model.intermediate_size', "
          "'model.max_position' and 'model.dense_dim' make a model of {:.3g} weights; a new model has at most {:.3g}",
          weights, kMaxNewModelWeights));
  }
  require(c.train.device == "auto" || c.train.device == "cpu" || c.train.device.rfind("cuda", 0) == 0,
          "train.device", "expected auto, cpu, cuda or cuda:N");
  require(c.train.precision == "auto" || c.train.precision == "fp32" || c.train.precision == "bf16",
          "train.precision", "expected auto, fp32 or bf16");
  require(c.train.optimizer == "adamw" || c.train.optimizer == "sgd", "train.optimizer", "expected adamw or sgd");
  require(c.model.dense_dim >= 0, "model.dense_dim", "must be >= 0");
  require(model::activation_from_string(c.model.dense_activation).has_value(), "model.dense_activation",
          "must be identity, tanh, relu, gelu, sigmoid or silu");
  require(c.model.dense_dim == 0 || c.lora.rank == 0, "model.dense_dim",
          "a new Dense layer must train, and with lora.rank only the adapters train");
  // An adapter folder is loaded with its base's pooling, normalisation and tokenizer (as peft's are): a change of them
  // would be lost on the way, so they are set on the base instead.
  for (const auto& [key, set] : {std::pair{"model.pooling", c.model.pooling.has_value()},
                                 {"model.normalize", c.model.normalize.has_value()},
                                 {"model.add_eos_token", c.model.add_eos_token.has_value()}})
    require(!set || c.lora.rank == 0, key,
            "is model.init's with lora.rank: an adapter folder is loaded with its base's pooling, normalisation and "
            "tokenizer (save the base with it first: a run of train.max_steps = 0 without lora.rank writes "
            "model.init with the key set; or leave it unset)");
  require(!c.model.freeze_embeddings || !c.model.init.empty(), "model.freeze_embeddings",
          "needs model.init: it keeps a pretrained model's embeddings");
  require(c.lora.rank >= 0, "lora.rank", "must be >= 0");
  require(c.lora.rank == 0 || !c.model.init.empty(), "lora.rank", "needs model.init: LoRA adapts a pretrained model");
  require(c.lora.dropout >= 0 && c.lora.dropout < 1, "lora.dropout", "must be in [0, 1)");
  require(c.lora.base_precision == "fp32" || c.lora.base_precision == "bf16", "lora.base_precision", "expected fp32 or bf16");
  require(c.lora.base_precision == "fp32" || c.train.precision != "fp32", "lora.base_precision",
          "bf16 needs train.precision bf16 (or auto where that is bf16)");
  require(c.parallel.mode == "sync" || c.parallel.mode == "localsgd", "parallel.mode", "expected sync or localsgd");
  require(c.parallel.average_every >= 1, "parallel.average_every", "must be >= 1");
  require(c.parallel.rebalance_every >= 1, "parallel.rebalance_every", "must be >= 1");
  require(c.parallel.min_batch_fraction > 0 && c.parallel.min_batch_fraction <= 1, "parallel.min_batch_fraction",
          "must be in (0, 1]");
  require(c.parallel.backend == "auto" || c.parallel.backend == "gloo" || c.parallel.backend == "nccl",
          "parallel.backend", "expected auto, gloo or nccl");
  require(c.parallel.timeout_s > 0, "parallel.timeout_s", "must be positive");
  require(c.parallel.debug_slowdown >= 1, "parallel.debug_slowdown", "must be >= 1");
  require(c.train.checkpoint_every >= 0, "train.checkpoint_every", "must be >= 0");
  require(c.train.keep_checkpoints >= 1, "train.keep_checkpoints", "must be >= 1");
  require(c.train.log_every >= 1, "train.log_every", "must be >= 1");
  require(c.eval.k >= 1, "eval.k", "must be >= 1");
  require(c.eval.max_queries >= 0, "eval.max_queries", "must be >= 0");
  require(c.eval.batch_size >= 1, "eval.batch_size", "must be >= 1");
  require(c.eval.split.empty() || !c.data.beir.empty(), "eval.split", "evaluation needs data.beir");
  require(c.eval.max_passages >= 0, "eval.max_passages", "must be >= 0");
  require(c.eval.dimensions >= 0, "eval.dimensions", "must be >= 0");
  require(c.eval.at_steps.empty() || !c.eval.split.empty(), "eval.at_steps", "needs eval.split");
  for (int64_t s : c.eval.at_steps) {
    require(s >= 1, "eval.at_steps", "steps must be >= 1");
    // A sweep's rungs lie below its max_steps, which no trial changes (hpo/sweep_spec.h).
    require(s <= c.train.max_steps, "eval.at_steps",
            fmt::format("step {} is past train.max_steps = {}: it would never be evaluated", s, c.train.max_steps));
  }
}

int64_t embedding_size(const TrainConfig& c) {
  if (c.model.dense_dim > 0) return c.model.dense_dim;
  if (c.model.init.empty()) return c.model.hidden_size;
  const std::string folder = model::resolve_model_reference(c.model.init);
  const auto layout = model::read_sentence_transformer_layout(folder);
  if (layout && !layout->dense.empty()) return layout->dense.back().out_features;
  return pretrained_shape(folder, layout).hidden_size;
}

model::BertConfig encoder_shape(const TrainConfig& c) {
  if (!c.model.init.empty()) {
    const std::string folder = model::resolve_model_reference(c.model.init);
    return pretrained_shape(folder, model::read_sentence_transformer_layout(folder));
  }
  model::BertConfig b = new_encoder_sizes(c.model);
  if (b.is_modernbert())  // its layer pattern for this many layers, as the trainer builds it
    b.modernbert = model::bert_config_from_json({{"model_type", "modernbert"}, {"num_hidden_layers", c.model.layers}},
                                                "model.architecture")
                       .modernbert;
  return b;
}

void check_input_paths(const TrainConfig& c) {
  namespace fs = std::filesystem;
  auto need = [](const std::string& key, const std::string& path, bool folder) {
    if (path.empty()) return;
    if (const std::string problem = path_problem(path, folder); !problem.empty())
      throw ConfigError("config key '" + key + "': " + problem);
  };
  need("data.beir", c.data.beir, true);
  need("data.pairs", c.data.pairs, false);
  try {
    const std::string init = model::resolve_model_reference(c.model.init);
    need("model.init", init, true);
    if (!init.empty()) model::check_model_folder(init);
  } catch (const ConfigError& e) {
    if (c.model.init.rfind("package:", 0) != 0) throw;
    throw ConfigError(std::string("config key 'model.init': ") + e.what());
  } catch (const InputFileError& e) {
    throw InputFileError(std::string("config key 'model.init': ") + e.what());
  }
  need("model.vocab", c.model.vocab, false);
  // Kineto only logs a trace it cannot write: its folder is checked here.
  const fs::path parent = fs::path(c.train.profile_trace).parent_path();
  if (const std::string problem = parent.empty() ? "" : path_problem(parent, true); !problem.empty())
    throw ConfigError("config key 'train.profile_trace': " + problem);
  // The evaluation's qrels, before a training that would end on the missing file.
  if (!c.data.beir.empty() && !c.eval.split.empty())
    text::require_qrels(c.data.beir, c.eval.split, "config key 'eval.split'");
}

}  // namespace ragmig::train
