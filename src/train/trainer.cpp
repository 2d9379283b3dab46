// The training loop of `ragmig train` and everything it owns in the run folder (see trainer.h).
// Bit-exact resume rests on three things: the LR is a pure function of the step, the batches a pure
// function of (seed, epoch), and the checkpoint holds weights, AdamW state, generators and data position.
// With several replicas the same loop runs on every rank: each trains on its slice of the global batch
// (data_shard.h), rank 0 writes the run folder, and every collective is reached by all ranks in step.
#include "train/trainer.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/event_log.h"
#include "core/json_errors.h"
#include "core/splitmix.h"
#include "core/stop_signal.h"
#include "model/blas_binding.h"
#include "model/cpu_allocator.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "model/onednn_cache.h"
#include "model/packaged_models.h"
#include "model/precision.h"
#include "model/varlen_attention.h"
#include "text/batch_sampler.h"
#include "text/vocab_builder.h"
#include "text/wordpiece.h"
#include "train/autocast_guard.h"
#include "train/batch_balancer.h"
#include "train/batch_resize.h"
#include "train/checkpoint_store.h"
#include "train/control_file.h"
#include "train/data_shard.h"
#include "train/dense_eval.h"
#include "train/dp_step.h"
#include "train/fused_step.h"
#include "train/lr_schedule.h"
#include "train/progress_line.h"
#include "train/resume_rule.h"
#include "train/rng_state.h"
#include "train/step_losses.h"
#include "train/step_profiler.h"
#include "train/torch_compat.h"
#include "train/training_data.h"

namespace fs = std::filesystem;

namespace ragmig::train {
namespace {

using Clock = std::chrono::steady_clock;

// `local_rank` spreads local replicas over the visible GPUs (one GPU each when the scheduler pinned them).
torch::Device pick_device(const std::string& name, int local_rank) {
  if (name == "cpu") return torch::kCPU;
  const auto gpu = [&] {
    const auto n = static_cast<int>(torch::cuda::device_count());
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(n > 0 ? local_rank % n : 0));
  };
  if (name == "auto") return torch::cuda::is_available() ? gpu() : torch::Device(torch::kCPU);
  if (!torch::cuda::is_available()) throw DeviceError("train.device = " + name + ", but CUDA is not available here");
  return name == "cuda" ? gpu() : torch::Device(name);
}

double rss_mb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The tokenizer of this run: the initial model's (of any kind, with its settings), else a WordPiece
// vocabulary: the run folder's own (resuming), a given file, or one built from the data. Reads only; the caller
// writes run/vocab.txt once the input has been checked.
text::TokenizerSpec choose_tokenizer(const TrainConfig& cfg, const std::string& run_vocab,
                                     const model::LoadedModel* init, const std::vector<text::TrainingExample>& examples,
                                     const text::BeirFolder* beir, std::string& origin) {
  if (init) {
    origin = cfg.model.init;
    return init->tokenizer;
  }
  if (fs::exists(run_vocab)) {
    origin = "run folder";
    return text::WordPieceTokenizer::from_file(run_vocab).spec();
  }
  if (!cfg.model.vocab.empty()) {
    origin = cfg.model.vocab;
    return text::WordPieceTokenizer::from_file(cfg.model.vocab).spec();
  }
  origin = "built from the training data";
  text::VocabBuilderOptions vo;
  vo.vocab_size = cfg.model.vocab_size;
  return text::word_piece_spec(text::build_wordpiece_vocab(vocabulary_texts(examples, beir), vo));
}

// model.dense_dim's layer after pooling an encoder of `hidden_size` (biased, as sentence-transformers' Dense).
model::DenseConfig dense_config(const ModelConfig& m, int64_t hidden_size) {
  return {hidden_size, m.dense_dim, true, *model::activation_from_string(m.dense_activation), false};
}

model::EncoderSpec spec_from_config(const ModelConfig& m, const text::Tokenizer& tok) {
  model::EncoderSpec spec;
  // ModernBertConfig's defaults (window, bases, its layer pattern for this many layers), these sizes.
  if (m.architecture == "modernbert")
    spec.bert = model::bert_config_from_json({{"model_type", "modernbert"}, {"num_hidden_layers", m.layers},
                                              {"mlp_dropout", m.dropout}, {"attention_dropout", m.dropout}},
                                             "model.architecture");
  spec.bert.vocab_size = tok.vocab_size();
  spec.bert.hidden_size = m.hidden_size;
  spec.bert.num_hidden_layers = m.layers;
  spec.bert.num_attention_heads = m.heads;
  spec.bert.intermediate_size = m.intermediate_size;
  spec.bert.max_position_embeddings = m.max_position;
  spec.bert.hidden_dropout_prob = m.dropout;
  spec.bert.attention_probs_dropout_prob = m.dropout;
  spec.bert.pad_token_id = tok.pad_id();
  spec.pooling = model::parse_pooling(m.pooling);
  spec.normalize = m.normalize;
  spec.shared_towers = m.shared_towers;
  if (m.dense_dim > 0) spec.dense = dense_config(m, m.hidden_size);
  return spec;
}

model::LoraSpec lora_spec(const LoraOptions& o, const std::string& model_type) {
  model::LoraSpec spec;
  spec.rank = o.rank;
  spec.alpha = o.alpha;
  spec.dropout = o.dropout;
  spec.targets = o.targets.empty() ? model::default_lora_targets(model_type) : o.targets;
  spec.rslora = o.rslora;
  return spec;
}

// The memory of a replica that does not grow with the batch, in MiB: every parameter, the gradients of the
// trained ones and AdamW's two moments for each of them (SGD here keeps none).
double state_memory_mb(model::DualEncoder& net, const TrainOptions& t) {
  double bytes = 0;
  for (const auto& p : net->parameters()) {
    const auto n = static_cast<double>(p.numel() * p.element_size());
    bytes += n;
    if (p.requires_grad()) bytes += n * (t.optimizer == "sgd" ? 1 : 3);
  }
  return bytes / (1 << 20);
}

// AdamW (or SGD) groups as BERT fine-tuning does it: no weight decay on biases and LayerNorm.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(model::DualEncoder& net, const torch::Tensor& logit_scale,
                                                        const TrainOptions& t) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : net->named_parameters()) {
    if (!item.value().requires_grad()) continue;  // frozen (the base model under LoRA)
    const std::string& name = item.key();
    bool plain = name.find("bias") != std::string::npos || name.find("LayerNorm") != std::string::npos;
    (plain ? no_decay : decay).push_back(item.value());
  }
  if (logit_scale.requires_grad()) no_decay.push_back(logit_scale);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (t.optimizer == "sgd") {
    auto opts = [&](double wd) { return std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(t.lr).weight_decay(wd)); };
    groups.emplace_back(decay, opts(t.weight_decay));
    groups.emplace_back(no_decay, opts(0.0));
    return std::make_unique<torch::optim::SGD>(std::move(groups), torch::optim::SGDOptions(t.lr));
  }
  auto opts = [&](double wd) { return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(t.lr).weight_decay(wd)); };
  groups.emplace_back(decay, opts(t.weight_decay));
  groups.emplace_back(no_decay, opts(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(t.lr));
}

// What data parallelism needs that the types cannot check before the replica count is known.
void check_parallel_config(const TrainConfig& cfg, int world) {
  const ParallelOptions& p = cfg.parallel;
  const bool global = p.mode == "sync" && p.global_negatives;
  if (global && cfg.train.accumulation == "plain")
    throw ConfigError("config key 'train.accumulation': plain micro-batches cannot see the gathered global batch; "
                      "use none or gradcache with parallel.mode = sync (or parallel.global_negatives = false)");
  const int64_t per = global ? 1 : 2;  // a local loss needs in-batch negatives of its own
  if (cfg.train.batch_size < per * world)
    throw ConfigError(fmt::format("config key 'train.batch_size': the global batch {} is too small for {} replicas "
                                  "(at least {} samples each)", cfg.train.batch_size, world, per));
}

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  torch::Tensor t;
  ar.read(key, t);
  return t.item<int64_t>();
}

Outcome train_in_run_folder(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts);

}  // namespace

Outcome run_training(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts) {
  try {
    return train_in_run_folder(cfg, resolved_config, opts);
  } catch (const PeerLost& e) {
    // Another replica is gone: this one cannot go on alone. Exit resumable; the job restarts from the newest
    // checkpoint (rank 0 writes them only whole, so none is half-written by this).
    const int rank = opts.rendezvous ? opts.rendezvous->rank : 0;
    if (rank == 0 && fs::exists(fs::path(opts.run_dir) / "events.jsonl"))
      EventLog((fs::path(opts.run_dir) / "events.jsonl").string()).append({{"event", "peer_lost"}, {"error", e.what()}});
    if (!opts.quiet) fmt::print(stderr, "ragmig train (rank {}): {}; exiting resumable\n", rank, e.what());
    return Outcome::Preempted;
  } catch (const c10::Error& e) {
    // Out of memory (a CUDA OutOfMemoryError, or the CPU allocator failing): said once, in the events, so the
    // scheduler's monitor raises its `oom` alert, and as an error that says what to change.
    const std::string what = e.what_without_backtrace();
    const bool oom = dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                     what.find("can't allocate memory") != std::string::npos ||
                     what.find("not enough memory") != std::string::npos;
    if (!oom) throw;
    const std::string first_line = what.substr(0, what.find('\n'));
    if (fs::exists(fs::path(opts.run_dir) / "events.jsonl"))
      EventLog((fs::path(opts.run_dir) / "events.jsonl").string())
          .append({{"event", "oom"}, {"error", first_line}, {"rss_mb", rss_mb()}});
    throw DeviceError("out of memory: " + first_line +
                      "; lower train.batch_size, data.max_passage_tokens or use train.accumulation = \"gradcache\"");
  }
}

namespace {

Outcome train_in_run_folder(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts) {
  validate(cfg);
  check_input_paths(cfg);
  const auto started = Clock::now();
  const fs::path run(opts.run_dir);
  const std::string run_vocab = (run / "vocab.txt").string();
  const Rendezvous* rv = opts.rendezvous && opts.rendezvous->world_size > 1 ? &*opts.rendezvous : nullptr;
  const int rank = rv ? rv->rank : 0, world = rv ? rv->world_size : 1;
  const bool lead = rank == 0;  // writes the run folder; the others only train
  auto say = [&](const std::string& line) {
    if (!opts.quiet && lead) fmt::print(stderr, "{}\n", line);
  };
  if (rv) check_parallel_config(cfg, world);

  // A folder used before keeps what decides shapes, data and batches (train/resume_rule.h): checked before
  // anything in it is written, against config.json and against the config its newest checkpoint was saved
  // with (what shaped the weights, when config.json is gone or was replaced).
  const auto changes_from = [&](const nlohmann::json& before) {
    ResumeCheck check = compare_for_resume(before, resolved_config);
    if (!check.refused.empty()) throw ConfigError(refusal_message(run.string(), check.refused));
    return std::move(check.allowed);
  };
  std::vector<ConfigChange> config_changes;
  if (const fs::path old_config = run / "config.json"; fs::exists(old_config)) {
    nlohmann::json before;
    try {
      before = nlohmann::json::parse(read_file(old_config));
    } catch (const nlohmann::json::exception& e) {
      throw DataError(old_config.string() + " is not valid JSON (" + describe_json_error(e) + "): use a new --run-dir");
    }
    config_changes = changes_from(before);
  }
  std::optional<CheckpointStore> saved;  // the folder's checkpoints, as they are before this start
  if (fs::exists(run / "checkpoints")) saved.emplace((run / "checkpoints").string(), cfg.train.keep_checkpoints);
  if (saved)
    if (const auto config = saved->newest_config()) changes_from(*config);  // refusals; changes are logged against config.json

  // A finished run started again is a no-op: the scheduler may retry a job whose exit it did not see.
  const fs::path result_path = run / "result.json";
  if (fs::exists(result_path)) {
    nlohmann::json done = nlohmann::json::parse(read_file(result_path), nullptr, /*allow_exceptions=*/false);
    if (!done.is_object() || !done.contains("step") || !done["step"].is_number_integer())
      throw DataError(result_path.string() + ": expected the JSON object a finished run writes, with an integer "
                      "\"step\" (remove the file to train this run folder on)");
    if (done["step"].get<int64_t>() == cfg.train.max_steps) {
      say("run already complete: " + result_path.string());
      if (lead) EventLog(run / "events.jsonl").append(done);
      return Outcome::Done;
    }
  }
  // A folder already past max_steps has nothing to train and no loss to report at max_steps: say so, not "done".
  const auto past_max_steps = [&](int64_t step) {
    return ConfigError(fmt::format("run folder {} is at step {}, past train.max_steps={}: set max_steps to at least {} "
                                   "to continue it, or use a new --run-dir",
                                   run.string(), step, cfg.train.max_steps, step));
  };
  if (saved) {
    const auto steps = saved->steps();
    if (!steps.empty() && steps.front() > cfg.train.max_steps) throw past_max_steps(steps.front());
  }

  // Input first: nothing is written to the run folder until the data, vocabulary and model are known good.
  const torch::Device device = pick_device(cfg.train.device, rv ? rv->local_rank : 0);
  std::unique_ptr<Communicator> comm;
  if (rv) {
    ConnectOptions co;
    co.backend = cfg.parallel.backend;
    co.timeout = std::chrono::milliseconds(static_cast<int64_t>(cfg.parallel.timeout_s * 1000));
    co.cuda_tensors = device.is_cuda();
    co.cuda_device = device.is_cuda() ? device.index() : 0;
    comm = connect(*rv, co);
  }
  const model::PrecisionChoice precision =
      model::choose_precision(cfg.train.precision, device.is_cuda(), model::cpu_has_native_bf16(), "train.precision");
  const bool bf16 = precision.precision == model::Precision::Bf16;
  std::optional<text::BeirFolder> beir;
  if (!cfg.data.beir.empty()) beir = text::read_beir(cfg.data.beir);
  const TrainingExamples loaded_examples =
      load_examples(cfg.data, beir ? &*beir : nullptr, static_cast<uint64_t>(cfg.train.seed));
  const std::vector<text::TrainingExample>& examples = loaded_examples.examples;
  std::string vocab_origin;
  // A pretrained start brings its weights and its tokenizer's settings (lower-casing, accents, CJK).
  std::optional<model::LoadedModel> init;
  if (!cfg.model.init.empty()) {
    const std::string folder = model::resolve_model_reference(cfg.model.init);
    // A new adapter names its base; an adapter folder as that base would need its own base too.
    if (cfg.lora.rank > 0 && model::is_adapter_folder(folder))
      throw ConfigError("model.init: " + folder + " is a LoRA adapter folder; to train another adapter on it, merge it "
                        "first (ragmig lora merge BASE " + cfg.model.init + " MERGED) and start from MERGED");
    init = model::load_model_folder(folder);
  }
  const std::unique_ptr<const text::Tokenizer> owned_tokenizer = text::make_tokenizer(
      choose_tokenizer(cfg, run_vocab, init ? &*init : nullptr, examples, beir ? &*beir : nullptr, vocab_origin));
  const text::Tokenizer& tokenizer = *owned_tokenizer;
  // Like its tokenizer settings, a pretrained start brings its prompts; the config's replace them.
  const text::Prompts prompts =
      text::replaced(init ? init->prompts : text::Prompts{}, cfg.model.query_prompt, cfg.model.passage_prompt);

  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  model::DualEncoder net = init ? init->model : model::DualEncoder(spec_from_config(cfg.model, tokenizer));
  if (init && cfg.model.dense_dim > 0) {
    if (const auto& own = net->spec().dense)
      throw ConfigError(fmt::format("config key 'model.dense_dim': {} has a Dense module already ({} -> {})",
                                    cfg.model.init, own->in_features, own->out_features));
    net = model::with_dense_layer(net, dense_config(cfg.model, net->spec().bert.hidden_size));
  }
  const auto& bert = net->spec().bert;
  if (tokenizer.vocab_size() > bert.vocab_size)
    throw DataError(fmt::format("vocabulary and model mismatch: {} has {} tokens, the model embeds {}", vocab_origin,
                                tokenizer.vocab_size(), bert.vocab_size));
  if (bert.max_tokens() < std::max(cfg.data.max_query_tokens, cfg.data.max_passage_tokens))
    throw ConfigError(fmt::format("data.max_passage_tokens / data.max_query_tokens exceed the model's {} positions",
                                  bert.max_tokens()));
  const model::LoraSpec lora = lora_spec(cfg.lora, bert.model_type);
  if (cfg.lora.rank > 0) {  // the start event counts the adapters' parameters among the trainable ones
    model::BertModel query = net->query_tower();
    model::attach_lora(query, lora);
    if (!net->spec().shared_towers) {
      model::BertModel passage = net->passage_tower();
      model::attach_lora(passage, lora);
    }
    // The adapters alone train: a Dense layer after pooling stays the base's, as in peft on the encoder.
    for (const auto& item : net->named_parameters())
      if (!model::is_lora_parameter(item.key())) item.value().requires_grad_(false);
  }
  const bool base_bf16 = cfg.lora.rank > 0 && cfg.lora.base_precision == "bf16";
  if (base_bf16) {
    if (!bf16)
      throw ConfigError("config key 'lora.base_precision': bf16 needs bf16 compute, and train.precision is fp32 here (" +
                        precision.reason + ")");
    torch::NoGradGuard no_grad;
    for (auto& p : net->parameters())
      if (!p.requires_grad()) p.set_data(p.to(torch::kBFloat16));
  }
  if (cfg.model.freeze_embeddings)
    for (const auto& item : net->named_parameters())
      // The embedding tables (word / position / token type; ModernBERT's tok_embeddings), not their LayerNorm.
      if (item.key().find("embeddings.") != std::string::npos && item.key().ends_with("embeddings.weight"))
        item.value().requires_grad_(false);
  net->to(device);
  net->train();
  // Prefixes of normalised embeddings are compared by cosine, as the whole ones are.
  const LossSpec loss_spec{cfg.train.matryoshka_dims, net->spec().normalize, loss_terms(cfg.train)};
  for (const int64_t d : loss_spec.dims)
    if (d > net->spec().embedding_dim())
      throw ConfigError(fmt::format("config key 'train.matryoshka_dims': {} exceeds the model's {} embedding "
                                    "dimensions", d, net->spec().embedding_dim()));
  if (cfg.eval.dimensions > net->spec().embedding_dim())
    throw ConfigError(fmt::format("config key 'eval.dimensions': {} exceeds the model's {} embedding dimensions",
                                  cfg.eval.dimensions, net->spec().embedding_dim()));
  const bool unpad = cfg.train.unpad == "on" || (cfg.train.unpad == "auto" && device.is_cuda());
  net->query_tower()->set_unpad(unpad);
  net->passage_tower()->set_unpad(unpad);
  net->query_tower()->set_bf16_residual(cfg.train.bf16_residual && bf16);
  net->passage_tower()->set_bf16_residual(cfg.train.bf16_residual && bf16);
  // What the optimiser changes and replicas keep equal: every weight, or only the adapters under LoRA.
  std::vector<torch::Tensor> trainable;
  for (const auto& p : net->parameters())
    if (p.requires_grad()) trainable.push_back(p);
  const TokenizedData data = tokenize(examples, tokenizer, cfg.data, prompts);
  const std::vector<int64_t> example_tokens = grouping_lengths(data);
  const auto batches_for = [&](int64_t epoch, int64_t batch_size) {
    return text::length_grouped_batches(data.batch_key, example_tokens, batch_size, cfg.train.length_grouping,
                                        static_cast<uint64_t>(cfg.train.seed), epoch);
  };
  auto batches = batches_for(0, cfg.train.batch_size);  // throws DataError when the data cannot fill one batch
  const int64_t distinct_keys =
      static_cast<int64_t>(std::set<int64_t>(data.batch_key.begin(), data.batch_key.end()).size());

  // Every rank has chosen its vocabulary (maybe from run/vocab.txt) before rank 0 may write that file.
  if (comm) comm->barrier();
  std::optional<EventLog> events;
  if (lead) {
    fs::create_directories(run);
    if (!init && !fs::exists(run_vocab)) text::write_vocab_txt(run_vocab, tokenizer.vocab());
    write_file_atomic(run / "config.json", resolved_config.dump(2) + "\n");
    events.emplace((run / "events.jsonl").string());
  }
  const auto emit = [&](nlohmann::json event) {
    if (events) events->append(std::move(event));
  };
  if (!config_changes.empty()) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : config_changes) changes.push_back({{"key", c.key}, {"before", c.before}, {"after", c.after}});
    emit({{"event", "config_changed"}, {"changes", changes}});
    for (const auto& c : config_changes) say(fmt::format("ragmig train: {} changed on resume: {} -> {}", c.key, c.before.dump(), c.after.dump()));
  }

  const TrainOptions& t = cfg.train;
  torch::Tensor logit_scale = torch::full({}, std::log(1.0 / t.temperature), torch::TensorOptions().device(device));
  if (t.learn_temperature) logit_scale.requires_grad_(true);
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(net, logit_scale, t);
  // Clipping and AdamW in a few multi-tensor kernels where this LibTorch has them (fused_step.h), else its loops.
  std::optional<FusedAdamW> fused_adamw;
  const bool fused_step = fused_step_available(device) && t.optimizer == "adamw";
  if (fused_step) fused_adamw.emplace(static_cast<torch::optim::AdamW&>(*optimizer));
  const auto clip_and_step = [&] {
    if (t.max_grad_norm > 0) {
      if (fused_step) clip_grad_norm_on_device(trainable, t.max_grad_norm);
      else torch::nn::utils::clip_grad_norm_(trainable, t.max_grad_norm);
    }
    if (fused_adamw) fused_adamw->step();
    else optimizer->step();
  };
  CheckpointStore store((run / "checkpoints").string(), t.keep_checkpoints);

  // Data parallelism: this replica's share of each global batch, and what localsgd averaging weighs.
  const ParallelOptions& par = cfg.parallel;
  const bool localsgd = par.mode == "localsgd";
  const bool global_negatives = !localsgd && par.global_negatives;
  // The global batch is train.batch_size until the scheduler asks for another (control.json); an epoch's
  // batches are those of the size it began with, cut again at each resize within it (batch_resize.h).
  int64_t global_batch = t.batch_size, chunk = t.chunk_size, epoch_batch = t.batch_size;
  std::vector<EpochResize> epoch_resizes;
  std::vector<int64_t> sizes = even_split(global_batch, world);
  const auto min_share = [&] {
    return std::max<int64_t>(global_negatives ? 1 : 2, static_cast<int64_t>(std::ceil(
                                 par.min_batch_fraction * static_cast<double>(global_batch) / world)));
  };
  int64_t step = 0, epoch = 0, batch_in_epoch = 0, samples = 0;
  int64_t since_average = 0;  // samples this replica trained on since the last average (localsgd)
  std::vector<std::vector<double>> window_compute(static_cast<size_t>(world));
  std::vector<double> cost_per_sample;  // smoothed seconds per sample of each replica (dynamic batch)
  std::vector<torch::Tensor> replicated = trainable;  // what replicas hold in common
  if (t.learn_temperature) replicated.push_back(logit_scale);

  const auto average_replicas = [&](const char* why) {
    const auto counts = comm->all_gather(torch::tensor({static_cast<double>(since_average)}, torch::kFloat64));
    double total = 0;
    std::vector<int64_t> per;
    for (const auto& c : counts) {
      total += c.item<double>();
      per.push_back(static_cast<int64_t>(c.item<double>()));
    }
    if (total <= 0) return;
    std::vector<torch::Tensor> tensors = replicated;
    if (par.average_optimizer)
      for (const auto& m : optimizer_moments(*optimizer)) tensors.push_back(m);
    weighted_average(*comm, tensors, static_cast<double>(since_average) / total);
    since_average = 0;
    emit({{"event", "average"}, {"step", step}, {"reason", why}, {"replica_samples", per}, {"optimizer", par.average_optimizer}});
  };

  int64_t last_saved = -1;
  // Losses: the newest read, the sum over the progress window. One process leaves each step's loss on the
  // device until it reports (step_losses.h); replicas read theirs every step, for the exchange.
  double loss = 0, window_loss = 0;
  StepLosses unread_losses;
  const auto record_loss = [&](int64_t at_step, double value) {
    if (!std::isfinite(value)) {
      // The weights are NaN now: stop before any checkpoint holds them, so the newest one stays good.
      emit({{"event", "diverged"}, {"step", at_step}, {"loss", fmt::format("{}", value)}, {"last_checkpoint", last_saved}});
      throw DataError(fmt::format("training diverged: the loss is {} at step {}; the run folder keeps its last good "
                                  "checkpoint ({}). Lower train.lr, raise train.temperature or check the data",
                                  value, at_step, last_saved >= 0 ? "step " + std::to_string(last_saved) : "none yet"));
    }
    loss = value;
    window_loss += value;
  };
  const auto read_losses = [&] {
    for (const auto& [at_step, value] : unread_losses.read()) record_loss(at_step, value);
  };
  auto save_checkpoint = [&] {
    read_losses();  // a diverged step ends the run before its weights are saved
    const auto t0 = Clock::now();
    std::vector<torch::Tensor> replica_rng;
    if (comm) {  // collective: every rank takes part, rank 0 writes
      if (localsgd) average_replicas("checkpoint");
      replica_rng = comm->all_gather(capture_rng_state().cpu);
    }
    last_saved = step;
    if (!lead) return;
    const std::string path = store.save(step, [&](torch::serialize::OutputArchive& ar) {
      torch::serialize::OutputArchive m, o;
      optimizer->save(o);
      if (cfg.lora.rank > 0) {
        // Only the adapters: the frozen base comes back from model.init.
        for (const auto& p : net->named_parameters())
          if (p.value().requires_grad()) m.write(p.key(), p.value());
        ar.write("lora", m);
      } else {
        net->save(m);
        ar.write("model", m);
      }
      ar.write("optimizer", o);
      ar.write("logit_scale", logit_scale.detach().cpu());
      ar.write("step", torch::tensor(step));
      ar.write("epoch", torch::tensor(epoch));
      ar.write("batch_in_epoch", torch::tensor(batch_in_epoch));
      ar.write("samples", torch::tensor(samples));
      const RngState rng = capture_rng_state();
      ar.write("rng_cpu", rng.cpu);
      for (size_t d = 0; d < rng.cuda.size(); ++d) ar.write("rng_cuda_" + std::to_string(d), rng.cuda[d]);
      // The batch plan: the size now, the size the epoch began with and where it changed since.
      ar.write("batch_size", torch::tensor(global_batch));
      ar.write("chunk_size", torch::tensor(chunk));
      ar.write("epoch_batch_size", torch::tensor(epoch_batch));
      std::vector<int64_t> resizes;
      for (const auto& r : epoch_resizes) resizes.insert(resizes.end(), {r.position, r.batch_size});
      ar.write("epoch_resizes", torch::tensor(resizes, torch::kInt64).reshape({-1, 2}));
      if (comm) {
        ar.write("world_size", torch::tensor(static_cast<int64_t>(world)));
        ar.write("replica_batches", torch::tensor(sizes));
        for (size_t r = 1; r < replica_rng.size(); ++r) ar.write("rng_cpu_rank" + std::to_string(r), replica_rng[r]);
      }
    }, resolved_config);
    emit({{"event", "checkpoint"}, {"step", step}, {"path", path}, {"seconds", seconds_since(t0)}});
  };

  const auto loaded = store.load_newest([&](torch::serialize::InputArchive& ar) {
    torch::serialize::InputArchive m, o;
    ar.read("optimizer", o);
    if (cfg.lora.rank > 0) {
      if (!ar.try_read("lora", m))
        throw DataError("the checkpoint holds a whole model, not LoRA adapters: was lora.rank 0 when it was written?");
      torch::NoGradGuard no_grad;
      for (auto& p : net->named_parameters()) {
        if (!p.value().requires_grad()) continue;
        torch::Tensor saved;
        if (!m.try_read(p.key(), saved)) throw DataError("the checkpoint has no LoRA tensor " + p.key() + " (lora.targets changed?)");
        p.value().copy_(saved);
      }
    } else {
      if (!ar.try_read("model", m))
        throw DataError("the checkpoint holds LoRA adapters, not a whole model: was lora.rank set when it was written?");
      net->load(m);
    }
    optimizer->load(o);
    torch::Tensor scale;
    ar.read("logit_scale", scale);
    {
      torch::NoGradGuard no_grad;
      logit_scale.copy_(scale);
    }
    step = read_int(ar, "step");
    epoch = read_int(ar, "epoch");
    batch_in_epoch = read_int(ar, "batch_in_epoch");
    samples = read_int(ar, "samples");
    torch::Tensor plan;
    if (ar.try_read("batch_size", plan)) {  // checkpoints from before resizes have none: train.batch_size throughout
      global_batch = plan.item<int64_t>();
      chunk = read_int(ar, "chunk_size");
      epoch_batch = read_int(ar, "epoch_batch_size");
      ar.read("epoch_resizes", plan);
      const auto rows = plan.accessor<int64_t, 2>();
      for (int64_t i = 0; i < rows.size(0); ++i) epoch_resizes.push_back({rows[i][0], rows[i][1]});
      sizes = even_split(global_batch, world);
    }
    if (!comm) {
      RngState rng;
      ar.read("rng_cpu", rng.cpu);
      for (int64_t d = 0; device.is_cuda(); ++d) {
        torch::Tensor s;
        if (!ar.try_read("rng_cuda_" + std::to_string(d), s)) break;
        rng.cuda.push_back(s);
      }
      restore_rng_state(rng);
      return;
    }
    // Several replicas: the position counts global batches, so any replica count resumes where the epoch
    // stopped. Each rank gets its own generator back when the count is unchanged, else a fresh one.
    torch::Tensor w, rng_cpu, split;
    const int64_t saved_world = ar.try_read("world_size", w) ? w.item<int64_t>() : 1;
    const std::string key = rank == 0 ? "rng_cpu" : "rng_cpu_rank" + std::to_string(rank);
    if (saved_world == world && ar.try_read(key, rng_cpu)) restore_rng_state(RngState{rng_cpu, {}});
    else torch::manual_seed(splitmix64(static_cast<uint64_t>(t.seed) ^ splitmix64(static_cast<uint64_t>(step * 7919 + rank))));
    if (saved_world == world && par.dynamic_batch && ar.try_read("replica_batches", split) &&
        split.numel() == world && split.sum().item<int64_t>() == global_batch)
      sizes = std::vector<int64_t>(split.data_ptr<int64_t>(), split.data_ptr<int64_t>() + world);
  });
  if (loaded && loaded->step > t.max_steps) throw past_max_steps(loaded->step);  // newer ones were damaged
  if (loaded) last_saved = loaded->step;
  if (loaded) {
    batches = batches_for(epoch, epoch_batch);
    for (const auto& r : epoch_resizes) batches = rebatch_rest(std::move(batches), r.position, data.batch_key, r.batch_size);
    for (const auto& why : loaded->skipped) say("skipped checkpoint " + why);
  }

  if (comm) {
    // One set of weights everywhere (rank 0's), and dropout streams that differ between replicas.
    broadcast_tensors(*comm, replicated, 0);
    if (!loaded && rank > 0) torch::manual_seed(splitmix64(static_cast<uint64_t>(t.seed) ^ splitmix64(static_cast<uint64_t>(rank))));
  }

  int64_t params = 0, trainable_params = 0;
  for (const auto& p : net->parameters()) {
    params += p.numel();
    if (p.requires_grad()) trainable_params += p.numel();
  }
  nlohmann::json parallel_info = nullptr;
  if (comm)
    parallel_info = {{"replicas", world}, {"mode", par.mode}, {"backend", comm->backend()},
                     {"backend_reason", comm->backend_reason()}, {"rendezvous", rv->source}, {"master", fmt::format("{}:{}", rv->master_addr, rv->master_port)},
                     {"global_negatives", global_negatives}, {"dynamic_batch", par.dynamic_batch},
                     {"replica_batches", sizes}};
  const size_t held_out = loaded_examples.queries ? loaded_examples.queries->held_out.size() : 0;
  // Examples whose own negatives are fewer than train.hard_negatives: assemble_batch fills in random passages
  // (all of them, for a BEIR folder's qrels, which carry none: `ragmig mine` makes hard ones).
  const int64_t short_of_negatives = t.hard_negatives == 0 ? 0 : std::count_if(
      data.negatives.begin(), data.negatives.end(),
      [&](const auto& own) { return static_cast<int64_t>(own.size()) < t.hard_negatives; });
  const model::OneDnnCacheCapacities onednn_caches = model::onednn_cache_capacities();
  const char* visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");  // the GPU or MIG instance it was pinned to
  emit({{"event", "start"},
                 {"step", step},
                 {"resumed_from", loaded ? nlohmann::json(loaded->path) : nlohmann::json(nullptr)},
                 {"device", device.str()},
                 {"visible_devices", visible_devices ? nlohmann::json(visible_devices) : nlohmann::json(nullptr)},
                 {"precision", model::to_string(precision.precision)},
                 {"precision_reason", precision.reason},
                 {"threads", at::get_num_threads()},
                 {"allocator", model::cpu_allocator_name()},
                 {"blas", model::to_string(model::blas_binding())},
                 {"onednn_caches", {{"primitives", onednn_caches.primitives}, {"ideep", onednn_caches.ideep}}},
                 {"omp_wait_policy", std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "default"},
                 {"batch_size", global_batch},  // the scheduler's OOM retry halves what the worker says it runs
                 {"chunk_size", chunk},
                 {"unpad", unpad},
                 {"towers_in_one_pass", t.towers_in_one_pass && net->joins_pairs()},
                 {"bf16_residual", net->query_tower()->bf16_residual()},
                 {"optimizer_step", fused_step ? "fused" : "per-parameter"},
                 {"parameters", params},
                 {"trainable_parameters", trainable_params},
                 {"examples", data.examples()},
                 {"blank_skipped", loaded_examples.blank_skipped},
                 {"short_of_negatives", short_of_negatives},
                 {"held_out_queries", held_out},
                 {"passages", static_cast<int64_t>(data.passages.size())},
                 {"vocab", vocab_origin},
                 {"prompts", {{"query", prompts.query}, {"passage", prompts.passage}}},
                 {"parallel", parallel_info},
                 {"config", resolved_config}});
  say(fmt::format("ragmig train: {} examples{}{}{}, {} distinct passages, {:.2f}M parameters, {} ({}), {} threads{}{}",
                  data.examples(), held_out ? fmt::format(" ({} queries held out)", held_out) : std::string(),
                  loaded_examples.blank_skipped
                      ? fmt::format(" ({} with a blank query or document left out)", loaded_examples.blank_skipped)
                      : std::string(),
                  short_of_negatives ? fmt::format(" ({} with fewer than {} negatives of their own: random passages "
                                                   "make up the rest)", short_of_negatives, t.hard_negatives)
                                     : std::string(),
                  data.passages.size(), static_cast<double>(params) / 1e6, device.str(),
                  bf16 ? "bf16" : "fp32", at::get_num_threads(),
                  comm ? fmt::format(", {} replicas ({}, {})", world, par.mode, comm->backend()) : std::string(),
                  loaded ? fmt::format(", resumed at step {}", step) : std::string()));

  const EncodeFn encode = [&](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(device, bf16);
    return encode_towers(net, inputs, t.towers_in_one_pass);
  };
  // One batch's gradients by train.accumulation; its loss stays on the device (grad_step.h).
  const auto backward_local = [&](const PairBatch& batch, const torch::Tensor& scale) {
    if (t.accumulation == "gradcache") return backward_grad_cache(encode, batch, scale, chunk, loss_spec);
    if (t.accumulation == "plain") return backward_plain(encode, batch, scale, chunk, loss_spec);
    return backward_full(encode, batch, scale, loss_spec);
  };

  // recall@k on eval.split: after the last step, and after each of eval.at_steps (a sweep's ASHA rungs).
  std::optional<text::Qrels> eval_qrels;
  const auto evaluate = [&](int64_t at_step) {
    RecallOptions ro;
    ro.k = cfg.eval.k;
    ro.max_queries = cfg.eval.max_queries;
    ro.max_passages = cfg.eval.max_passages;
    ro.batch_size = cfg.eval.batch_size;
    ro.dimensions = cfg.eval.dimensions;
    ro.max_query_tokens = cfg.data.max_query_tokens;
    ro.max_passage_tokens = cfg.data.max_passage_tokens;
    ro.prompts = prompts;
    if (!eval_qrels) eval_qrels = text::read_qrels(text::qrels_path(cfg.data.beir, cfg.eval.split));
    // At the training's precision (bf16 autocast where it trains so, as `ragmig eval --precision auto` embeds):
    // in fp32 a rung evaluation took as long as 8 training steps of MiniLM on SciFact.
    const RecallResult r = [&] {
      AutocastGuard autocast(device, bf16);
      return evaluate_recall(net, tokenizer, *beir, *eval_qrels, ro, device);
    }();
    net->train();
    const std::string key = fmt::format("recall@{}", ro.k);
    emit({{"event", "eval"}, {"step", at_step}, {"split", cfg.eval.split}, {key, r.recall}, {"queries", r.queries},
          {"passages", r.passages}, {"seconds", r.seconds}});
    say(fmt::format("eval {} at step {}: {} = {:.4f} over {} queries, {} passages ({:.1f} s)", cfg.eval.split, at_step,
                    key, r.recall, r.queries, r.passages, r.seconds));
    return r;
  };
  const std::set<int64_t> rung_steps(cfg.eval.at_steps.begin(), cfg.eval.at_steps.end());

  ProgressLine progress(t.max_steps, step, opts.terminal_progress && !opts.quiet && lead);
  const double state_mb = device.is_cuda() ? state_memory_mb(net, t) : 0;  // the same every step: reported on GPUs
  auto window_start = Clock::now();
  int64_t window_samples = 0, window_tokens = 0, window_positions = 0, window_steps = 0;
  // The scheduler's requests (control.json): rank 0 reads them between steps; with replicas they reach every
  // rank through the per-step exchange, so all apply them at the same step boundary.
  std::optional<ControlWatch> control;
  if (lead) control.emplace((run / "control.json").string());
  std::optional<ControlRequest> pending;  // read, waiting for its after_step
  const auto request_due = [&]() -> ControlRequest {
    if (!control) return {};
    try {
      if (auto r = control->poll()) pending = *r;
    } catch (const DataError& e) {
      emit({{"event", "control_refused"}, {"step", step}, {"error", e.what()}});
      say(fmt::format("ragmig train: ignored {}", e.what()));
    }
    if (!pending || step < pending->after_step) return {};
    const ControlRequest due = *pending;
    pending.reset();
    return due;
  };
  const auto apply_request = [&](const ControlRequest& r) {
    const int64_t least = std::max<int64_t>(2, (global_negatives ? 1 : 2) * world);
    std::string refused;
    if (r.batch_size && r.batch_size < least)
      refused = fmt::format("batch_size {} is below {} (in-batch negatives{})", r.batch_size, least,
                            world > 1 ? fmt::format(" on {} replicas", world) : "");
    else if (r.batch_size > distinct_keys)
      refused = fmt::format("batch_size {} exceeds the {} distinct positives of the data (a query's examples count "
                            "once)", r.batch_size, distinct_keys);
    else if (r.chunk_size && t.accumulation == "none")
      refused = "chunk_size needs train.accumulation = \"gradcache\" or \"plain\"";
    else if (r.chunk_size == 1 && t.accumulation == "plain")
      refused = "chunk_size 1: plain micro-batches need at least 2 (in-batch negatives)";
    if (!refused.empty()) {
      emit({{"event", "control_refused"}, {"step", step}, {"error", refused}});
      say("ragmig train: ignored control.json: " + refused);
      return;
    }
    const int64_t before = global_batch, chunk_before = chunk;
    if (r.chunk_size) chunk = r.chunk_size;
    if (r.batch_size && r.batch_size != global_batch) {
      batches = rebatch_rest(std::move(batches), batch_in_epoch, data.batch_key, r.batch_size);
      epoch_resizes.push_back({batch_in_epoch, r.batch_size});
      global_batch = r.batch_size;
      sizes = even_split(global_batch, world);
      for (auto& w : window_compute) w.clear();
    }
    if (global_batch == before && chunk == chunk_before) return;
    const double scale = lr_scale(t.resize_lr, global_batch, t.batch_size);
    emit({{"event", "resize"}, {"step", step}, {"batch_size", global_batch}, {"from", before}, {"chunk_size", chunk},
          {"lr_scale", scale}, {"rule", t.resize_lr}});
    say(fmt::format("ragmig train: at step {} batch {} -> {}, chunk {}, LR x{:.3f} ({} rule)", step, before,
                    global_batch, chunk, scale, t.resize_lr));
  };

  // Replicas stop together: a stop request anywhere is seen by all through the per-step exchange.
  bool stop_agreed = false;
  ControlRequest due;  // replicas: rank 0's request, applied by every rank at the next step boundary
  std::vector<ReplicaReport> reports;
  if (comm) {
    ReplicaReport mine{stop_requested(), 0, 0, 0, 0};
    const ControlRequest r = request_due();
    mine.resize_batch = r.batch_size;
    mine.resize_chunk = r.chunk_size;
    reports = exchange_reports(*comm, mine);
    for (const auto& report : reports) stop_agreed = stop_agreed || report.stop;
    due = {reports[0].resize_batch, reports[0].resize_chunk, 0};
  }
  // After the first progress window, so that warm-up (allocator, kernel choice) stays out of the profile; replica 0 only.
  StepProfiler profiler(lead ? t.profile_trace : std::string(), step + t.log_every + 1, t.profile_steps, device);
  while (step < t.max_steps) {
    if (comm ? stop_agreed : stop_requested()) {
      if (comm ? last_saved != step : (!loaded || loaded->step != step)) save_checkpoint();
      if (comm) comm->barrier();  // the checkpoint is whole before any replica exits
      progress.finish();
      emit({{"event", "preempted"}, {"step", step}, {"signal", stop_signal()}});
      return Outcome::Preempted;
    }
    // Before an epoch ends into the next, so that a resize there shapes the new epoch, resumed or not.
    apply_request(comm ? std::exchange(due, {}) : request_due());
    if (batch_in_epoch >= static_cast<int64_t>(batches.size())) {
      batches = batches_for(++epoch, global_batch);
      batch_in_epoch = 0;
      epoch_batch = global_batch;
      epoch_resizes.clear();
    }
    const auto& rows = batches[static_cast<size_t>(batch_in_epoch++)];
    ++step;
    profiler.before_step(step);
    const double lr = linear_warmup_decay_lr(step, t.max_steps, t.warmup_steps, t.lr) *
                      lr_scale(t.resize_lr, global_batch, t.batch_size);
    // Fault injection for the tests: LibTorch's own out-of-memory error, as a GPU too small for the batch.
    TORCH_CHECK_WITH(OutOfMemoryError, !(t.debug_oom_step > 0 && step >= t.debug_oom_step && global_batch > t.debug_oom_batch),
                     "out of memory (train.debug_oom_batch = ", t.debug_oom_batch, ", batch ", global_batch, ")");
    for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);

    torch::Tensor scale;
    if (!comm) {
      const PairBatch batch = assemble_batch(data, rows, t.hard_negatives, tokenizer.pad_id(),
                                             static_cast<uint64_t>(t.seed), step, device);
      scale = logit_scale.exp().clamp_max(100.0);
      optimizer->zero_grad();
      unread_losses.add(step, backward_local(batch, scale));
      clip_and_step();
      samples += batch.queries();
      window_samples += batch.queries();
      window_tokens += batch.real_tokens;
      window_positions += batch.q_mask.numel() + batch.p_mask.numel();
    } else {
      // This replica's contiguous slice of the global batch; compute time excludes waiting in collectives.
      const auto step_start = Clock::now();
      double comm_s = 0;
      const int64_t mine = sizes[static_cast<size_t>(rank)];
      const PairBatch batch = assemble_batch(data, shard_of(rows, sizes, rank), t.hard_negatives, tokenizer.pad_id(),
                                             static_cast<uint64_t>(t.seed), step, device, shard_offset(sizes, rank),
                                             rows);
      scale = logit_scale.exp().clamp_max(100.0);
      optimizer->zero_grad();
      // A local loss covers this replica's share of the global batch's queries.
      const double share = static_cast<double>(mine) / static_cast<double>(global_batch);
      double contribution = 0, step_loss = 0;
      if (global_negatives) {
        step_loss = backward_global_batch(encode, batch, scale, *comm, sizes, t.accumulation == "gradcache", chunk,
                                          comm_s, loss_spec);
        contribution = step_loss / world;
      } else {
        contribution = backward_local(batch, scale).item<double>() * share;
      }
      finish_device_work(device);  // on a GPU the clock would otherwise stop at the last kernel's launch
      double compute_s = seconds_since(step_start) - comm_s;
      if (rank == par.debug_slowdown_rank && par.debug_slowdown > 1) {  // a slower slice, simulated
        std::this_thread::sleep_for(std::chrono::duration<double>((par.debug_slowdown - 1) * compute_s));
        compute_s = seconds_since(step_start) - comm_s;
      }
      if (!localsgd) {
        // Global negatives: every replica holds the full temperature gradient, so its sum is divided back.
        if (global_negatives) all_reduce_gradients(*comm, trainable, 1.0, logit_scale, 1.0 / world);
        else all_reduce_gradients(*comm, trainable, share, logit_scale, share);
      }
      clip_and_step();
      // A replica that dies, once: a run resumed from a checkpoint lives on (the scheduler test reruns the argv).
      if (rank == par.debug_kill_rank && step == par.debug_kill_step && !loaded) ::raise(SIGKILL);
      since_average += mine;
      if (localsgd && step % par.average_every == 0) average_replicas("every");

      const int64_t tokens = batch.real_tokens;
      const ControlRequest r = request_due();
      reports = exchange_reports(*comm, {stop_requested(), compute_s, mine, tokens, contribution,
                                         batch.q_mask.numel() + batch.p_mask.numel(), r.batch_size, r.chunk_size});
      due = {reports[0].resize_batch, reports[0].resize_chunk, 0};
      double total_loss = 0;
      for (size_t r = 0; r < reports.size(); ++r) {
        stop_agreed = stop_agreed || reports[r].stop;
        total_loss += reports[r].loss;
        window_tokens += reports[r].tokens;
        window_positions += reports[r].positions;
        window_compute[r].push_back(reports[r].compute_s);
      }
      if (!global_negatives) step_loss = total_loss;  // the sample-weighted mean of the replicas' losses
      record_loss(step, step_loss);
      samples += global_batch;
      window_samples += global_batch;
      if (par.dynamic_batch && step % par.rebalance_every == 0) {
        // Medians of the window, smoothed over windows as seconds per sample, then re-split; a gap under 3 %
        // is left alone. Every rank computes the same split from the same exchanged numbers.
        std::vector<double> med, expected;
        for (auto& w : window_compute) med.push_back(median(w));
        cost_per_sample = smooth_cost(cost_per_sample, sizes, med, 0.5);
        for (size_t r = 0; r < sizes.size(); ++r) expected.push_back(cost_per_sample[r] * static_cast<double>(sizes[r]));
        const int64_t least = min_share();
        const auto next = rebalance(sizes, expected, global_batch, least, global_batch - (world - 1) * least, 0.03);
        emit({{"event", "rebalance"}, {"step", step}, {"replica_batches", sizes}, {"replica_compute_s", med},
              {"gap", step_time_gap(med)}, {"next_batches", next}});
        sizes = next;
        for (auto& w : window_compute) w.clear();
      }
    }
    ++window_steps;
    // Before the progress event: writing the trace takes seconds, which belong to the profiled window.
    if (profiler.after_step(step)) {
      emit({{"event", "profile"}, {"step", step}, {"steps", t.profile_steps}, {"trace", t.profile_trace}});
      say(fmt::format("ragmig train: profile of steps {}-{} in {}", step - t.profile_steps + 1, step, t.profile_trace));
    }
    if (step % t.log_every == 0 || step == t.max_steps) {
      read_losses();
      const double secs = std::max(seconds_since(window_start), 1e-9);
      const double sps = static_cast<double>(window_samples) / secs;
      nlohmann::json ev = {{"event", "progress"},
                           {"step", step},
                           {"samples", samples},
                           {"epoch", epoch},
                           {"batch_size", global_batch},
                           {"loss", window_loss / static_cast<double>(window_steps)},  // mean since the last event
                           {"lr", lr},
                           {"temperature", 1.0 / scale.item<double>()},
                           {"samples_per_s", sps},
                           {"tokens_per_s", static_cast<double>(window_tokens) / secs},
                           // the share of computed positions that were padding (train.length_grouping lowers it)
                           {"padding", 1.0 - static_cast<double>(window_tokens) /
                                                 static_cast<double>(std::max<int64_t>(window_positions, 1))},
                           {"rss_mb", rss_mb()}};
      // What the CPU tensors' block cache keeps (model/cpu_allocator.h): mapped now, and the most in use at once.
      if (const auto cache = model::cpu_block_cache_stats())
        ev["cpu_cache"] = {{"mapped_mb", static_cast<double>(cache->mapped) / (1 << 20)},
                           {"peak_in_use_mb", static_cast<double>(cache->peak_in_use) / (1 << 20)},
                           {"hits", cache->hits},
                           {"misses", cache->misses},
                           {"unmapped", cache->unmapped}};
      // On a GPU, its peak memory and the part that does not grow with the batch: what the scheduler's dynamic
      // batch learns each job's memory per sample from (sched/memory_model.h).
      if (device.is_cuda() && unpad) ev["varlen_attention"] = model::varlen_attention_used();
      if (const auto peak = take_device_memory_peak_mb(device)) {
        ev["memory_mb"] = *peak;
        ev["state_memory_mb"] = state_mb;
      }
      if (comm) {
        std::vector<double> compute;
        for (const auto& r : reports) compute.push_back(r.compute_s);
        ev["replicas"] = world;
        ev["replica_batches"] = sizes;
        ev["replica_compute_s"] = compute;  // this step's own work per replica, collectives excluded
      }
      emit(std::move(ev));
      if (lead && !opts.quiet) progress.update(step, window_loss / static_cast<double>(window_steps), sps);
      window_start = Clock::now();
      window_samples = window_tokens = window_positions = window_steps = 0;
      window_loss = 0;
    }
    if (lead && rung_steps.count(step) && (step != t.max_steps || !cfg.eval.at_end)) {
      read_losses();  // not an evaluation of diverged weights
      evaluate(step);
    }
    if (t.checkpoint_every > 0 && step % t.checkpoint_every == 0 && step != t.max_steps) save_checkpoint();
  }
  progress.finish();
  if (comm) {
    if (localsgd) average_replicas("end");  // the model of a localsgd run is the average of its replicas
    if (last_saved != step) save_checkpoint();
    comm->barrier();
    if (!lead) return Outcome::Done;  // rank 0 writes the model and evaluates it
  } else if (const auto saved = store.steps(); saved.empty() || saved.front() != step) {
    save_checkpoint();
  }

  const std::string model_dir = (run / "model").string();
  if (cfg.lora.rank > 0) {
    model::DualAdapter adapter = model::own_dual_adapter(net, lora, cfg.model.init);
    if (prompts != init->prompts) adapter.prompts = prompts;  // else the base's, wherever the adapter is loaded
    adapter.matryoshka_dims = cfg.train.matryoshka_dims;
    model::save_adapter_folder(model_dir, adapter, loaded_examples.queries);
  } else {
    // The base's truncate_dim stays, as sentence-transformers keeps it through fit(); the Matryoshka sizes are this
    // training's alone.
    const model::EmbeddingSizes sizes{init ? init->sizes.truncate_dim : 0, cfg.train.matryoshka_dims};
    model::save_model_folder(model_dir, net, tokenizer.spec(),
                             {cfg.data.max_passage_tokens, prompts, loaded_examples.queries, sizes});
  }
  nlohmann::json done = {{"event", "done"}, {"step", step}, {"samples", samples}, {"loss", loss}, {"model", model_dir}};
  if (!cfg.eval.split.empty() && cfg.eval.at_end) {
    const RecallResult r = evaluate(step);
    done[fmt::format("recall@{}", cfg.eval.k)] = r.recall;
  }
  done["seconds"] = seconds_since(started);
  write_file_atomic(result_path, done.dump(2) + "\n");
  emit(done);
  say(fmt::format("done: step {}, model in {}", step, model_dir));
  return Outcome::Done;
}

}  // namespace
}  // namespace ragmig::train
