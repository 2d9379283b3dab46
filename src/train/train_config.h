// Every setting of `ragmig train`, with in-code defaults, and the table that binds each one to its TOML key
// (`data.*`, `model.*`, `train.*`, `eval.*`). The table gives loading, --set overrides and --help text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config_table.h"
#include "model/bert_config.h"

namespace ragmig::train {

struct DataConfig {
  std::string beir;             ///< BEIR folder with corpus, queries and qrels/<split>.tsv
  std::string split = "train";  ///< qrels split that gives the training pairs (or that a pairs file's query ids are of)
  std::string pairs;            ///< alternative to beir: a pairs file (text::read_pairs: JSONL or TSV)
  std::string pretrain;         ///< "" (judged pairs) | crop | ict: pairs made from raw text (text/pretrain_pairs.h)
  std::string corpus;           ///< pretrain: raw text (JSONL with "text", or one document per line) instead
                                ///< of data.beir's corpus
  int64_t holdout_queries = 0;  ///< leave out N queries (seeded by id) for `ragmig eval --fusion auto` to choose on
  int64_t max_examples = 0;     ///< use only the first N examples (0 = all)
  int64_t max_query_tokens = 32;
  int64_t max_passage_tokens = 128;
};

struct ModelConfig {
  std::string init;               ///< model folder to start from (fine-tuning); empty = from scratch
  std::string vocab;              ///< vocab.txt for a model from scratch; empty = build one from the data
  int64_t vocab_size = 8000;      ///< size of a built vocabulary
  /// A new model's family: "bert" (post-LN, learned positions) or "modernbert" (pre-LN, rotary positions,
  /// a sliding window of 128 in two layers of three, gated MLP: ModernBertConfig's defaults but the sizes).
  std::string architecture = "bert";
  int64_t hidden_size = 128;
  int64_t layers = 2;
  int64_t heads = 2;
  int64_t intermediate_size = 512;
  int64_t max_position = 512;
  double dropout = 0.1;
  /// mean | cls | max | mean_sqrt_len_tokens | lasttoken; unset: model.init's (mean for a new model).
  std::optional<std::string> pooling;
  std::optional<bool> normalize;  ///< L2-normalise embeddings; unset: model.init's (true for a new model)
  /// Frame texts with the tokenizer's eos at the end (true) or without (false), as e5-mistral and Qwen3-Embedding
  /// append it to pool it; unset: as model.init's tokenizer frames them. SentencePiece BPE and Qwen's / Llama 3's
  /// byte-level BPE only (their folders record it).
  std::optional<bool> add_eos_token;
  bool shared_towers = true;      ///< one encoder for queries and passages, or two
  /// Keep model.init's token, position and token-type embedding tables as they are: no gradients and no AdamW
  /// state for them (XLM-R's 250,002 x 768 table is 70 % of its weights).
  bool freeze_embeddings = false;
  /// A new Dense layer after pooling, hidden size -> dense_dim (sentence-transformers' Dense module: smaller
  /// embeddings); 0 = none. With model.init, the folder must have none of its own.
  int64_t dense_dim = 0;
  std::string dense_activation = "tanh";  ///< identity | tanh | relu | gelu | sigmoid | silu
  /// Put before every query / passage (text/prompts.h); unset: model.init's prompts (none from scratch).
  std::optional<std::string> query_prompt, passage_prompt;
};

struct TrainOptions {
  int64_t max_steps = 1000;
  int64_t batch_size = 64;            ///< query-passage pairs per optimiser step
  std::string accumulation = "none";  ///< none | plain | gradcache
  int64_t chunk_size = 32;            ///< micro-batch (plain) or embedding chunk (gradcache)
  int64_t hard_negatives = 0;         ///< hard negatives per query, taken from the data
  int64_t length_grouping = 50;       ///< batches per length-sorted group (less padding); 0 = plain shuffled batches
  std::string unpad = "auto";         ///< on | off | auto (on on GPUs): the encoder computes on real tokens only (model/unpad.h)
  bool towers_in_one_pass = true;     ///< shared unpadded towers: a step's queries and passages in one pass
  bool bf16_residual = false;         ///< under bf16 autocast, BERT's residual stream in bf16 (BertModel)
  bool activation_checkpointing = false;  ///< each layer run again in backward (BertModel)
  double lr = 5e-4;
  double weight_decay = 0.01;
  int64_t warmup_steps = 100;
  double max_grad_norm = 1.0;         ///< 0 = no clipping
  double temperature = 0.05;
  bool learn_temperature = false;
  /// Matryoshka: the loss summed over these leading sizes of the embeddings (contrastive_loss.h); {} = off.
  std::vector<int64_t> matryoshka_dims;
  /// The loss's terms (contrastive_loss.h's LossTerms; sentence-transformers' MultipleNegativesRankingLoss names):
  /// query_to_doc (InfoNCE, always), doc_to_query, query_to_query, doc_to_doc.
  std::vector<std::string> loss_directions = {"query_to_doc"};
  std::string loss_partition = "joint";  ///< joint (one softmax) | per_direction (one per direction, averaged)
  std::string hardness_mode = "none";    ///< none | in_batch_negatives | hard_negatives | all_negatives
  double hardness_strength = 0;          ///< alpha of the hardness weighting
  int64_t seed = 42;
  int64_t threads = 0;                ///< intra-op threads (0 = all cores)
  std::string device = "auto";        ///< auto | cpu | cuda | cuda:N
  std::string precision = "auto";     ///< auto (bf16 where it is the faster: model/precision.h) | fp32 | bf16
  std::string optimizer = "adamw";    ///< adamw | sgd (plain SGD: the localsgd == sync check)
  int64_t checkpoint_every = 200;     ///< 0 = only on SIGTERM and at the end
  int64_t keep_checkpoints = 2;
  int64_t log_every = 10;
  /// How the LR follows a batch size changed while the job runs (control.json): sqrt | linear | none
  /// (train/batch_resize.h). The schedule's LR is for batch_size.
  std::string resize_lr = "sqrt";
  std::string profile_trace;     ///< a Chrome trace of profile_steps steps after the first progress event ("" = none)
  int64_t profile_steps = 5;
  int64_t debug_oom_step = 0;   ///< tests: from this step on (0 = never), a batch larger than debug_oom_batch
  int64_t debug_oom_batch = 0;  ///< raises LibTorch's out-of-memory error, as a GPU too small for it would
};

struct EvalOptions {
  std::string split;         ///< qrels split to evaluate the final model on (e.g. test); empty = none
  int64_t k = 20;            ///< recall@k
  int64_t max_queries = 0;   ///< evaluate only the first N queries (0 = all)
  int64_t max_passages = 0;  ///< search a sub-corpus of this many passages (0 = the whole corpus)
  int64_t batch_size = 128;  ///< encoding batch
  /// Search with the leading N dimensions of each embedding, renormalised when the model normalises (a Matryoshka
  /// model at the size it will serve: a sweep's [eval] dimensions); 0 = all.
  int64_t dimensions = 0;
  /// Also evaluate after these steps (events "eval" with "step"): the rungs at which `ragmig batch` lets
  /// ASHA stop a trial. Needs eval.split.
  std::vector<int64_t> at_steps;
  /// Evaluate after the last step (result.json's recall@k). `ragmig batch` turns it off: its evaluation job
  /// scores each finished model on the whole split.
  bool at_end = true;
};

/// Data parallelism: used when the worker runs as one of several ranks (RANK/WORLD_SIZE, Slurm, or
/// `ragmig train --replicas N`). train.batch_size is then the global batch of one step over all replicas.
struct ParallelOptions {
  std::string mode = "sync";          ///< sync (gradients every step) | localsgd (parameters every K steps)
  bool global_negatives = true;       ///< sync: every query sees the whole global batch's passages
  int64_t average_every = 20;         ///< localsgd: K, steps between parameter averages
  bool average_optimizer = false;     ///< localsgd: average the optimiser moments too
  bool dynamic_batch = false;         ///< slower replicas take fewer samples of the global batch
  int64_t rebalance_every = 10;       ///< steps of timing (medians) between batch re-splits
  double min_batch_fraction = 0.25;   ///< a replica's batch stays >= this fraction of an even share
  std::string backend = "auto";       ///< auto | gloo | nccl
  double timeout_s = 120;             ///< a collective waiting longer than this means a replica is gone
  int64_t debug_slowdown_rank = -1;   ///< tests: this rank sleeps to make its steps debug_slowdown x slower
  double debug_slowdown = 2.0;
  int64_t debug_kill_rank = -1;       ///< tests: this rank SIGKILLs itself after step debug_kill_step
  int64_t debug_kill_step = 0;
};

/// LoRA: train low-rank adapters on a frozen pretrained model (model.init) instead of every weight.
struct LoraOptions {
  int64_t rank = 0;  ///< r; 0 = no LoRA (full fine-tuning)
  double alpha = 16;
  double dropout = 0.1;
  /// PEFT's target_modules: a layer is adapted if its name is one of these or ends with "." + one; none given:
  /// the family's (model::default_lora_targets: BERT's query, key, value; ModernBERT's Wqkv)
  std::vector<std::string> targets;
  bool rslora = false;  ///< scale by alpha / sqrt(r) instead of alpha / r
  /// The frozen base's weights: fp32, or bf16 (half the memory; needs train.precision bf16, whose autocast
  /// computes in bf16 anyway). The adapters and their optimiser state stay fp32.
  std::string base_precision = "fp32";
};

struct TrainConfig {
  DataConfig data;
  ModelConfig model;
  LoraOptions lora;
  TrainOptions train;
  EvalOptions eval;
  ParallelOptions parallel;
};

/// Binds every field of `cfg` to its key. `cfg` must outlive the table.
ConfigTable make_config_table(TrainConfig& cfg);

/// Checks values and combinations the types cannot express. Throws ConfigError naming the key.
void validate(const TrainConfig& cfg);

/// What `ragmig train PATH --set ...` trains with: the file, then the overrides in order, then validate(). Every
/// ConfigError names the file (or the --set) and the key. `resolved`, when given, gets the table's JSON (the run
/// folder's config.json, `--print-config`).
TrainConfig read_train_config(const std::string& path, const std::vector<std::string>& sets = {},
                              nlohmann::json* resolved = nullptr);

/// The size of the embeddings a run of `cfg` gives: model.dense_dim, else model.init's (its Dense module's
/// out_features, else its hidden_size; read from its config.json and modules.json, no weights), else
/// model.hidden_size. Throws as model::resolve_model_reference and the folder's readers do.
int64_t embedding_size(const TrainConfig& cfg);

/// The encoder a run of `cfg` trains, its shape only: model.init's config.json (no weights read), else the
/// model.* sizes (ModernBERT with ModernBertConfig's layer pattern). Throws as embedding_size().
model::BertConfig encoder_shape(const TrainConfig& cfg);

/// Checks, before any work, what the config names: its input files and folders exist, model.init is a model folder
/// (model::check_model_folder), train.profile_trace's folder exists and data.beir has eval.split's qrels. Throws
/// ConfigError naming key and path (InputFileError for a model.init that is no model folder).
void check_input_paths(const TrainConfig& cfg);

}  // namespace ragmig::train
