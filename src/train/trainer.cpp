// The training loop of `ragmig train` and everything it owns in the run folder (see trainer.h).
// Bit-exact resume rests on three things: the LR is a pure function of the step, the batches a pure
// function of (seed, epoch), and the checkpoint holds weights, AdamW state, generators and data position.
// With several replicas the same loop runs on every rank: each trains on its slice of the global batch
// (data_shard.h), rank 0 writes the run folder, and every collective is reached by all ranks in step.
#include "train/trainer.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

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
#include "model/rng_state.h"
#include "model/varlen_attention.h"
#include "text/batch_sampler.h"
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
#include "train/grad_step.h"
#include "train/loop_position.h"
#include "train/lr_schedule.h"
#include "train/optimizer_setup.h"
#include "train/progress_line.h"
#include "train/resume_rule.h"
#include "train/run_model.h"
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

// This process's replica group, or null when it trains alone (no rendezvous, or a world of one).
const Rendezvous* replica_group(const RunOptions& opts) {
  return opts.rendezvous && opts.rendezvous->world_size > 1 ? &*opts.rendezvous : nullptr;
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

// A folder already past max_steps has nothing to train and no loss to report at max_steps: say so, not "done".
ConfigError past_max_steps(const fs::path& run, int64_t step, int64_t max_steps) {
  return ConfigError(fmt::format("run folder {} is at step {}, past train.max_steps={}: set max_steps to at least {} "
                                 "to continue it, or use a new --run-dir",
                                 run.string(), step, max_steps, step));
}

// What a run folder used before says about this start, read before anything in it is written.
struct FolderCheck {
  std::vector<ConfigChange> config_changes;  ///< allowed changes since its config.json, for the events
  std::optional<nlohmann::json> finished;    ///< result.json of a run that ended at train.max_steps
};

// A folder used before keeps what decides shapes, data and batches (train/resume_rule.h): checked against
// config.json and against the config its newest checkpoint was saved with (what shaped the weights, when
// config.json is gone or was replaced). Throws ConfigError / DataError for a start the folder refuses.
FolderCheck check_run_folder(const TrainConfig& cfg, const nlohmann::json& resolved_config, const fs::path& run) {
  const auto changes_from = [&](const nlohmann::json& before) {
    ResumeCheck check = compare_for_resume(before, resolved_config);
    if (!check.refused.empty()) throw ConfigError(refusal_message(run.string(), check.refused));
    return std::move(check.allowed);
  };
  FolderCheck out;
  if (const fs::path old_config = run / "config.json"; fs::exists(old_config)) {
    nlohmann::json before;
    try {
      before = nlohmann::json::parse(read_file(old_config));
    } catch (const nlohmann::json::exception& e) {
      throw DataError(old_config.string() + " is not valid JSON (" + describe_json_error(e) + "): use a new --run-dir");
    }
    out.config_changes = changes_from(before);
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
      out.finished = std::move(done);
      return out;
    }
  }
  if (saved) {
    const auto steps = saved->steps();
    if (!steps.empty() && steps.front() > cfg.train.max_steps) throw past_max_steps(run, steps.front(), cfg.train.max_steps);
  }
  return out;
}

// One start of a training run in its run folder. The constructor reads and checks every input (data, tokenizer,
// model), and only then writes the folder's vocabulary, config.json and first events; run() resumes from the newest
// checkpoint and trains to train.max_steps or to a stop request.
class TrainingRun {
 public:
  TrainingRun(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts,
              const std::vector<ConfigChange>& config_changes, Clock::time_point started);
  TrainingRun(const TrainingRun&) = delete;  // encode_ holds `this`
  TrainingRun& operator=(const TrainingRun&) = delete;
  Outcome run();

 private:
  void say(const std::string& line) const {
    if (!opts_.quiet && lead_) fmt::print(stderr, "{}\n", line);
  }
  void emit(nlohmann::json event) {
    if (events_) events_->append(std::move(event));
  }
  std::vector<std::vector<int64_t>> batches_for(int64_t epoch, int64_t batch_size) const {
    return text::length_grouped_batches(data_.batch_key, example_tokens_, batch_size, t_.length_grouping,
                                        static_cast<uint64_t>(t_.seed), epoch);
  }

  void open_run_folder(const std::vector<ConfigChange>& config_changes);
  void resume();
  void emit_start();
  Outcome stop();
  Outcome finish();

  void save_checkpoint();
  void read_checkpoint(torch::serialize::InputArchive& ar);

  void step_alone(const std::vector<int64_t>& rows);
  void step_with_replicas(const std::vector<int64_t>& rows);
  torch::Tensor backward_local(const PairBatch& batch, const torch::Tensor& scale);
  void clip_and_step();
  void rebalance_replicas();
  void average_replicas(const char* why);
  void record_loss(int64_t at_step, double value);
  void read_losses();
  void report_progress(double lr);
  RecallResult evaluate(int64_t at_step);
  ControlRequest request_due();
  void apply_request(const ControlRequest& r);

  const TrainConfig& cfg_;
  const TrainOptions& t_;
  const ParallelOptions& par_;
  const nlohmann::json& resolved_config_;
  const RunOptions& opts_;
  const Clock::time_point started_;
  const fs::path run_;
  const Rendezvous* const rv_;  // null for one process
  const int rank_, world_;
  const bool lead_;  // rank 0 writes the run folder; the others only train
  const bool localsgd_, global_negatives_;

  // The inputs, the model and the optimiser.
  torch::Device device_;
  std::unique_ptr<Communicator> comm_;
  model::PrecisionChoice precision_;
  bool bf16_ = false;
  std::optional<text::BeirFolder> beir_;
  TrainingExamples examples_;
  std::optional<model::LoadedModel> init_;  // a pretrained start brings its weights and tokenizer settings
  std::string vocab_origin_;
  std::unique_ptr<const text::Tokenizer> tokenizer_;
  text::Prompts prompts_;
  RunModel model_;
  TokenizedData data_;
  std::vector<int64_t> example_tokens_;
  int64_t distinct_keys_ = 0;
  EncodeFn encode_;
  std::optional<EventLog> events_;  // rank 0's
  torch::Tensor logit_scale_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::optional<FusedAdamW> fused_adamw_;  // clipping and AdamW in multi-tensor kernels (fused_step.h)
  bool fused_step_ = false;
  std::optional<CheckpointStore> store_;

  // Where the loop stands (saved in checkpoints), the batches of this epoch and each replica's share of them.
  LoopPosition pos_;
  std::vector<std::vector<int64_t>> batches_;
  std::vector<int64_t> sizes_;
  std::optional<CheckpointStore::Loaded> loaded_;  // the checkpoint this start resumed from
  int64_t last_saved_ = -1;

  // Data parallelism: what localsgd averaging weighs, what dynamic batching measures, what replicas hold alike.
  int64_t since_average_ = 0;  // samples this replica trained on since the last average (localsgd)
  std::vector<std::vector<double>> window_compute_;
  std::vector<double> cost_per_sample_;  // smoothed seconds per sample of each replica (dynamic batch)
  std::vector<torch::Tensor> replicated_;
  bool stop_agreed_ = false;          // replicas stop together: a stop request anywhere, seen in the exchange
  ControlRequest due_;                // replicas: rank 0's request, applied by every rank at the next step boundary
  std::vector<ReplicaReport> reports_;

  // Losses: the newest read, the sum over the progress window. One process leaves each step's loss on the
  // device until it reports (step_losses.h); replicas read theirs every step, for the exchange.
  double loss_ = 0, window_loss_ = 0;
  StepLosses unread_losses_;
  torch::Tensor scale_;  // the newest step's logit scale
  std::optional<ProgressLine> progress_;
  double state_mb_ = 0;  // the same every step: reported on GPUs
  Clock::time_point window_start_;
  int64_t window_samples_ = 0, window_tokens_ = 0, window_positions_ = 0, window_steps_ = 0;

  // recall@k on eval.split: after the last step, and after each of eval.at_steps (a sweep's ASHA rungs).
  std::optional<text::Qrels> eval_qrels_;
  const std::set<int64_t> rung_steps_;

  // The scheduler's requests (control.json): rank 0 reads them between steps; with replicas they reach every
  // rank through the per-step exchange, so all apply them at the same step boundary.
  std::optional<ControlWatch> control_;
  std::optional<ControlRequest> pending_;  // read, waiting for its after_step
};

TrainingRun::TrainingRun(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts,
                         const std::vector<ConfigChange>& config_changes, Clock::time_point started)
    : cfg_(cfg),
      t_(cfg.train),
      par_(cfg.parallel),
      resolved_config_(resolved_config),
      opts_(opts),
      started_(started),
      run_(opts.run_dir),
      rv_(replica_group(opts)),
      rank_(rv_ ? rv_->rank : 0),
      world_(rv_ ? rv_->world_size : 1),
      lead_(rank_ == 0),
      localsgd_(par_.mode == "localsgd"),
      global_negatives_(!localsgd_ && par_.global_negatives),
      device_(pick_device(t_.device, rv_ ? rv_->local_rank : 0)),
      pos_(LoopPosition::start(t_)),
      window_compute_(static_cast<size_t>(world_)),
      rung_steps_(cfg.eval.at_steps.begin(), cfg.eval.at_steps.end()) {
  // Input first: nothing is written to the run folder until the data, vocabulary and model are known good.
  if (rv_) {
    ConnectOptions co;
    co.backend = par_.backend;
    co.timeout = std::chrono::milliseconds(static_cast<int64_t>(par_.timeout_s * 1000));
    co.cuda_tensors = device_.is_cuda();
    co.cuda_device = device_.is_cuda() ? device_.index() : 0;
    comm_ = connect(*rv_, co);
  }
  precision_ = model::choose_precision(t_.precision, device_.is_cuda(), model::cpu_bf16(), "train.precision");
  bf16_ = precision_.precision == model::Precision::Bf16;
  if (!cfg.data.beir.empty()) beir_ = text::read_beir(cfg.data.beir);
  examples_ = load_examples(cfg.data, beir_ ? &*beir_ : nullptr, static_cast<uint64_t>(t_.seed));
  if (!cfg.model.init.empty()) {
    const std::string folder = model::resolve_model_reference(cfg.model.init);
    // A new adapter names its base; an adapter folder as that base would need its own base too.
    if (cfg.lora.rank > 0 && model::is_adapter_folder(folder))
      throw ConfigError("model.init: " + folder + " is a LoRA adapter folder; to train another adapter on it, merge it "
                        "first (ragmig lora merge BASE " + cfg.model.init + " MERGED) and start from MERGED");
    init_ = model::load_model_folder(folder);
  }
  tokenizer_ = text::make_tokenizer(choose_tokenizer(cfg, (run_ / "vocab.txt").string(), init_ ? &*init_ : nullptr,
                                                     examples_.examples, beir_ ? &*beir_ : nullptr, vocab_origin_));
  // Like its tokenizer settings, a pretrained start brings its prompts; the config's replace them.
  prompts_ = text::replaced(init_ ? init_->prompts : text::Prompts{}, cfg.model.query_prompt, cfg.model.passage_prompt);
  model_ = build_run_model(cfg, init_ ? &*init_ : nullptr, *tokenizer_, vocab_origin_, bf16_, precision_.reason,
                           device_);
  data_ = tokenize(examples_.examples, *tokenizer_, cfg.data, prompts_);
  example_tokens_ = grouping_lengths(data_);
  batches_ = batches_for(0, t_.batch_size);  // throws DataError when the data cannot fill one batch
  distinct_keys_ = static_cast<int64_t>(std::set<int64_t>(data_.batch_key.begin(), data_.batch_key.end()).size());
  encode_ = [this](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(device_, bf16_);
    return encode_towers(model_.net, inputs, t_.towers_in_one_pass);
  };

  open_run_folder(config_changes);

  logit_scale_ = torch::full({}, std::log(1.0 / t_.temperature), torch::TensorOptions().device(device_));
  if (t_.learn_temperature) logit_scale_.requires_grad_(true);
  optimizer_ = make_optimizer(model_.net, logit_scale_, t_);
  fused_step_ = fused_step_available(device_) && t_.optimizer == "adamw";
  if (fused_step_) fused_adamw_.emplace(static_cast<torch::optim::AdamW&>(*optimizer_));
  store_.emplace((run_ / "checkpoints").string(), t_.keep_checkpoints);
  sizes_ = even_split(pos_.global_batch, world_);
  replicated_ = model_.trainable;
  if (t_.learn_temperature) replicated_.push_back(logit_scale_);
}

// Every rank has chosen its vocabulary (maybe from run/vocab.txt) before rank 0 may write that file.
void TrainingRun::open_run_folder(const std::vector<ConfigChange>& config_changes) {
  if (comm_) comm_->barrier();
  if (lead_) {
    const std::string run_vocab = (run_ / "vocab.txt").string();
    fs::create_directories(run_);
    if (!init_ && !fs::exists(run_vocab)) text::write_vocab_txt(run_vocab, tokenizer_->vocab());
    write_file_atomic(run_ / "config.json", resolved_config_.dump(2) + "\n");
    events_.emplace((run_ / "events.jsonl").string());
  }
  if (config_changes.empty()) return;
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : config_changes) changes.push_back({{"key", c.key}, {"before", c.before}, {"after", c.after}});
  emit({{"event", "config_changed"}, {"changes", changes}});
  for (const auto& c : config_changes)
    say(fmt::format("ragmig train: {} changed on resume: {} -> {}", c.key, c.before.dump(), c.after.dump()));
}

// Collective with replicas: every rank takes part (localsgd averages first), rank 0 writes.
void TrainingRun::save_checkpoint() {
  read_losses();  // a diverged step ends the run before its weights are saved
  const auto t0 = Clock::now();
  std::vector<torch::Tensor> replica_rng;
  if (comm_) {
    if (localsgd_) average_replicas("checkpoint");
    replica_rng = comm_->all_gather(model::capture_rng_state().cpu);
  }
  last_saved_ = pos_.step;
  if (!lead_) return;
  const std::string path = store_->save(pos_.step, [&](torch::serialize::OutputArchive& ar) {
    torch::serialize::OutputArchive m, o;
    optimizer_->save(o);
    if (cfg_.lora.rank > 0) {
      // Only the adapters: the frozen base comes back from model.init.
      for (const auto& p : model_.net->named_parameters())
        if (p.value().requires_grad()) m.write(p.key(), p.value());
      ar.write("lora", m);
    } else {
      model_.net->save(m);
      ar.write("model", m);
    }
    ar.write("optimizer", o);
    ar.write("logit_scale", logit_scale_.detach().cpu());
    pos_.write(ar);
    const model::RngState rng = model::capture_rng_state();
    ar.write("rng_cpu", rng.cpu);
    for (size_t d = 0; d < rng.cuda.size(); ++d) ar.write("rng_cuda_" + std::to_string(d), rng.cuda[d]);
    if (comm_) {
      ar.write("world_size", torch::tensor(static_cast<int64_t>(world_)));
      ar.write("replica_batches", torch::tensor(sizes_));
      for (size_t r = 1; r < replica_rng.size(); ++r) ar.write("rng_cpu_rank" + std::to_string(r), replica_rng[r]);
    }
  }, resolved_config_);
  emit({{"event", "checkpoint"}, {"step", pos_.step}, {"path", path}, {"seconds", seconds_since(t0)}});
}

void TrainingRun::read_checkpoint(torch::serialize::InputArchive& ar) {
  torch::serialize::InputArchive m, o;
  ar.read("optimizer", o);
  if (cfg_.lora.rank > 0) {
    if (!ar.try_read("lora", m))
      throw DataError("the checkpoint holds a whole model, not LoRA adapters: was lora.rank 0 when it was written?");
    torch::NoGradGuard no_grad;
    for (auto& p : model_.net->named_parameters()) {
      if (!p.value().requires_grad()) continue;
      torch::Tensor saved;
      if (!m.try_read(p.key(), saved)) throw DataError("the checkpoint has no LoRA tensor " + p.key() + " (lora.targets changed?)");
      p.value().copy_(saved);
    }
  } else {
    if (!ar.try_read("model", m))
      throw DataError("the checkpoint holds LoRA adapters, not a whole model: was lora.rank set when it was written?");
    model_.net->load(m);
  }
  optimizer_->load(o);
  torch::Tensor scale;
  ar.read("logit_scale", scale);
  {
    torch::NoGradGuard no_grad;
    logit_scale_.copy_(scale);
  }
  pos_.read(ar);
  sizes_ = even_split(pos_.global_batch, world_);
  if (!comm_) {
    model::RngState rng;
    ar.read("rng_cpu", rng.cpu);
    for (int64_t d = 0; device_.is_cuda(); ++d) {
      torch::Tensor s;
      if (!ar.try_read("rng_cuda_" + std::to_string(d), s)) break;
      rng.cuda.push_back(s);
    }
    model::restore_rng_state(rng);
    return;
  }
  // Several replicas: the position counts global batches, so any replica count resumes where the epoch
  // stopped. Each rank gets its own generator back when the count is unchanged, else a fresh one.
  torch::Tensor w, rng_cpu, split;
  const int64_t saved_world = ar.try_read("world_size", w) ? w.item<int64_t>() : 1;
  const std::string key = rank_ == 0 ? "rng_cpu" : "rng_cpu_rank" + std::to_string(rank_);
  if (saved_world == world_ && ar.try_read(key, rng_cpu))
    model::restore_rng_state(model::RngState{rng_cpu, {}});
  else torch::manual_seed(splitmix64(static_cast<uint64_t>(t_.seed) ^ splitmix64(static_cast<uint64_t>(pos_.step * 7919 + rank_))));
  if (saved_world == world_ && par_.dynamic_batch && ar.try_read("replica_batches", split) &&
      split.numel() == world_ && split.sum().item<int64_t>() == pos_.global_batch)
    sizes_ = std::vector<int64_t>(split.data_ptr<int64_t>(), split.data_ptr<int64_t>() + world_);
}

void TrainingRun::resume() {
  loaded_ = store_->load_newest([this](torch::serialize::InputArchive& ar) { read_checkpoint(ar); });
  if (loaded_) {
    if (loaded_->step > t_.max_steps) throw past_max_steps(run_, loaded_->step, t_.max_steps);  // newer ones were damaged
    last_saved_ = loaded_->step;
    batches_ = batches_for(pos_.epoch, pos_.epoch_batch);
    for (const auto& r : pos_.epoch_resizes)
      batches_ = rebatch_rest(std::move(batches_), r.position, data_.batch_key, r.batch_size);
    for (const auto& why : loaded_->skipped) say("skipped checkpoint " + why);
  }
  if (comm_) {
    // One set of weights everywhere (rank 0's), and dropout streams that differ between replicas.
    broadcast_tensors(*comm_, replicated_, 0);
    if (!loaded_ && rank_ > 0)
      torch::manual_seed(splitmix64(static_cast<uint64_t>(t_.seed) ^ splitmix64(static_cast<uint64_t>(rank_))));
  }
}

void TrainingRun::emit_start() {
  model::DualEncoder& net = model_.net;
  int64_t params = 0, trainable_params = 0;
  for (const auto& p : net->parameters()) {
    params += p.numel();
    if (p.requires_grad()) trainable_params += p.numel();
  }
  nlohmann::json parallel_info = nullptr;
  if (comm_)
    parallel_info = {{"replicas", world_}, {"mode", par_.mode}, {"backend", comm_->backend()},
                     {"backend_reason", comm_->backend_reason()}, {"rendezvous", rv_->source},
                     {"master", fmt::format("{}:{}", rv_->master_addr, rv_->master_port)},
                     {"global_negatives", global_negatives_}, {"dynamic_batch", par_.dynamic_batch},
                     {"replica_batches", sizes_}};
  const size_t held_out = examples_.queries ? examples_.queries->held_out.size() : 0;
  // Examples whose own negatives are fewer than train.hard_negatives: assemble_batch fills in random passages
  // (all of them, for a BEIR folder's qrels, which carry none: `ragmig mine` makes hard ones).
  const int64_t short_of_negatives = t_.hard_negatives == 0 ? 0 : std::count_if(
      data_.negatives.begin(), data_.negatives.end(),
      [&](const auto& own) { return static_cast<int64_t>(own.size()) < t_.hard_negatives; });
  const model::OneDnnCacheCapacities onednn_caches = model::onednn_cache_capacities();
  const char* visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");  // the GPU or MIG instance it was pinned to
  emit({{"event", "start"},
        {"step", pos_.step},
        {"resumed_from", loaded_ ? nlohmann::json(loaded_->path) : nlohmann::json(nullptr)},
        {"device", device_.str()},
        {"visible_devices", visible_devices ? nlohmann::json(visible_devices) : nlohmann::json(nullptr)},
        {"precision", model::to_string(precision_.precision)},
        {"precision_reason", precision_.reason},
        {"threads", at::get_num_threads()},
        {"allocator", model::cpu_allocator_name()},
        {"blas", model::to_string(model::blas_binding())},
        {"onednn_caches", {{"primitives", onednn_caches.primitives}, {"ideep", onednn_caches.ideep}}},
        {"omp_wait_policy", std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "default"},
        {"batch_size", pos_.global_batch},  // the scheduler's OOM retry halves what the worker says it runs
        {"chunk_size", pos_.chunk},
        {"unpad", model_.unpad},
        {"towers_in_one_pass", t_.towers_in_one_pass && net->joins_pairs()},
        {"bf16_residual", net->query_tower()->bf16_residual()},
        {"activation_checkpointing", net->query_tower()->activation_checkpointing()},
        {"optimizer_step", fused_step_ ? "fused" : "per-parameter"},
        {"parameters", params},
        {"trainable_parameters", trainable_params},
        {"examples", data_.examples()},
        {"blank_skipped", examples_.blank_skipped},
        {"short_of_negatives", short_of_negatives},
        {"held_out_queries", held_out},
        {"passages", static_cast<int64_t>(data_.passages.size())},
        {"vocab", vocab_origin_},
        {"prompts", {{"query", prompts_.query}, {"passage", prompts_.passage}}},
        {"parallel", parallel_info},
        {"config", resolved_config_}});
  say(fmt::format("ragmig train: {} examples{}{}{}, {} distinct passages, {:.2f}M parameters, {} ({}), {} threads{}{}",
                  data_.examples(), held_out ? fmt::format(" ({} queries held out)", held_out) : std::string(),
                  examples_.blank_skipped
                      ? fmt::format(" ({} with a blank query or document left out)", examples_.blank_skipped)
                      : std::string(),
                  short_of_negatives ? fmt::format(" ({} with fewer than {} negatives of their own: random passages "
                                                   "make up the rest)", short_of_negatives, t_.hard_negatives)
                                     : std::string(),
                  data_.passages.size(), static_cast<double>(params) / 1e6, device_.str(),
                  bf16_ ? "bf16" : "fp32", at::get_num_threads(),
                  comm_ ? fmt::format(", {} replicas ({}, {})", world_, par_.mode, comm_->backend()) : std::string(),
                  loaded_ ? fmt::format(", resumed at step {}", pos_.step) : std::string()));
}

void TrainingRun::average_replicas(const char* why) {
  const auto counts = comm_->all_gather(torch::tensor({static_cast<double>(since_average_)}, torch::kFloat64));
  double total = 0;
  std::vector<int64_t> per;
  for (const auto& c : counts) {
    total += c.item<double>();
    per.push_back(static_cast<int64_t>(c.item<double>()));
  }
  if (total <= 0) return;
  std::vector<torch::Tensor> tensors = replicated_;
  if (par_.average_optimizer)
    for (const auto& m : optimizer_moments(*optimizer_)) tensors.push_back(m);
  weighted_average(*comm_, tensors, static_cast<double>(since_average_) / total);
  since_average_ = 0;
  emit({{"event", "average"}, {"step", pos_.step}, {"reason", why}, {"replica_samples", per},
        {"optimizer", par_.average_optimizer}});
}

void TrainingRun::record_loss(int64_t at_step, double value) {
  if (!std::isfinite(value)) {
    // The weights are NaN now: stop before any checkpoint holds them, so the newest one stays good.
    emit({{"event", "diverged"}, {"step", at_step}, {"loss", fmt::format("{}", value)}, {"last_checkpoint", last_saved_}});
    throw DataError(fmt::format("training diverged: the loss is {} at step {}; the run folder keeps its last good "
                                "checkpoint ({}). Lower train.lr, raise train.temperature or check the data",
                                value, at_step, last_saved_ >= 0 ? "step " + std::to_string(last_saved_) : "none yet"));
  }
  loss_ = value;
  window_loss_ += value;
}

void TrainingRun::read_losses() {
  for (const auto& [at_step, value] : unread_losses_.read()) record_loss(at_step, value);
}

// One batch's gradients by train.accumulation; its loss stays on the device (grad_step.h).
torch::Tensor TrainingRun::backward_local(const PairBatch& batch, const torch::Tensor& scale) {
  if (t_.accumulation == "gradcache") return backward_grad_cache(encode_, batch, scale, pos_.chunk, model_.loss);
  if (t_.accumulation == "plain") return backward_plain(encode_, batch, scale, pos_.chunk, model_.loss);
  return backward_full(encode_, batch, scale, model_.loss);
}

void TrainingRun::clip_and_step() {
  if (t_.max_grad_norm > 0) {
    if (fused_step_) clip_grad_norm_on_device(model_.trainable, t_.max_grad_norm);
    else torch::nn::utils::clip_grad_norm_(model_.trainable, t_.max_grad_norm);
  }
  if (fused_adamw_) fused_adamw_->step();
  else optimizer_->step();
}

void TrainingRun::step_alone(const std::vector<int64_t>& rows) {
  const PairBatch batch = assemble_batch(data_, rows, t_.hard_negatives, tokenizer_->pad_id(),
                                         static_cast<uint64_t>(t_.seed), pos_.step, device_);
  scale_ = logit_scale_.exp().clamp_max(100.0);
  optimizer_->zero_grad();
  unread_losses_.add(pos_.step, backward_local(batch, scale_));
  clip_and_step();
  pos_.samples += batch.queries();
  window_samples_ += batch.queries();
  window_tokens_ += batch.real_tokens;
  window_positions_ += batch.q_mask.numel() + batch.p_mask.numel();
}

// This replica's contiguous slice of the global batch; compute time excludes waiting in collectives.
void TrainingRun::step_with_replicas(const std::vector<int64_t>& rows) {
  const auto step_start = Clock::now();
  double comm_s = 0;
  const int64_t mine = sizes_[static_cast<size_t>(rank_)];
  const PairBatch batch = assemble_batch(data_, shard_of(rows, sizes_, rank_), t_.hard_negatives, tokenizer_->pad_id(),
                                         static_cast<uint64_t>(t_.seed), pos_.step, device_,
                                         shard_offset(sizes_, rank_), rows);
  scale_ = logit_scale_.exp().clamp_max(100.0);
  optimizer_->zero_grad();
  // A local loss covers this replica's share of the global batch's queries.
  const double share = static_cast<double>(mine) / static_cast<double>(pos_.global_batch);
  double contribution = 0, step_loss = 0;
  if (global_negatives_) {
    step_loss = backward_global_batch(encode_, batch, scale_, *comm_, sizes_, t_.accumulation == "gradcache",
                                      pos_.chunk, comm_s, model_.loss);
    contribution = step_loss / world_;
  } else {
    contribution = backward_local(batch, scale_).item<double>() * share;
  }
  finish_device_work(device_);  // on a GPU the clock would otherwise stop at the last kernel's launch
  double compute_s = seconds_since(step_start) - comm_s;
  if (rank_ == par_.debug_slowdown_rank && par_.debug_slowdown > 1) {  // a slower slice, simulated
    std::this_thread::sleep_for(std::chrono::duration<double>((par_.debug_slowdown - 1) * compute_s));
    compute_s = seconds_since(step_start) - comm_s;
  }
  if (!localsgd_) {
    // Global negatives: every replica holds the full temperature gradient, so its sum is divided back.
    if (global_negatives_) all_reduce_gradients(*comm_, model_.trainable, 1.0, logit_scale_, 1.0 / world_);
    else all_reduce_gradients(*comm_, model_.trainable, share, logit_scale_, share);
  }
  clip_and_step();
  // A replica that dies, once: a run resumed from a checkpoint lives on (the scheduler test reruns the argv).
  if (rank_ == par_.debug_kill_rank && pos_.step == par_.debug_kill_step && !loaded_) ::raise(SIGKILL);
  since_average_ += mine;
  if (localsgd_ && pos_.step % par_.average_every == 0) average_replicas("every");

  const ControlRequest request = request_due();
  reports_ = exchange_reports(*comm_, {stop_requested(), compute_s, mine, batch.real_tokens, contribution,
                                       batch.q_mask.numel() + batch.p_mask.numel(), request.batch_size,
                                       request.chunk_size});
  due_ = {reports_[0].resize_batch, reports_[0].resize_chunk, 0};
  double total_loss = 0;
  for (size_t r = 0; r < reports_.size(); ++r) {
    stop_agreed_ = stop_agreed_ || reports_[r].stop;
    total_loss += reports_[r].loss;
    window_tokens_ += reports_[r].tokens;
    window_positions_ += reports_[r].positions;
    window_compute_[r].push_back(reports_[r].compute_s);
  }
  if (!global_negatives_) step_loss = total_loss;  // the sample-weighted mean of the replicas' losses
  record_loss(pos_.step, step_loss);
  pos_.samples += pos_.global_batch;
  window_samples_ += pos_.global_batch;
  if (par_.dynamic_batch && pos_.step % par_.rebalance_every == 0) rebalance_replicas();
}

// Medians of the window, smoothed over windows as seconds per sample, then re-split; a gap under 3 % is left
// alone. Every rank computes the same split from the same exchanged numbers.
void TrainingRun::rebalance_replicas() {
  std::vector<double> med, expected;
  for (auto& w : window_compute_) med.push_back(median(w));
  cost_per_sample_ = smooth_cost(cost_per_sample_, sizes_, med, 0.5);
  for (size_t r = 0; r < sizes_.size(); ++r) expected.push_back(cost_per_sample_[r] * static_cast<double>(sizes_[r]));
  const int64_t least = std::max<int64_t>(global_negatives_ ? 1 : 2, static_cast<int64_t>(std::ceil(
      par_.min_batch_fraction * static_cast<double>(pos_.global_batch) / world_)));
  const auto next = rebalance(sizes_, expected, pos_.global_batch, least, pos_.global_batch - (world_ - 1) * least, 0.03);
  emit({{"event", "rebalance"}, {"step", pos_.step}, {"replica_batches", sizes_}, {"replica_compute_s", med},
        {"gap", step_time_gap(med)}, {"next_batches", next}});
  sizes_ = next;
  for (auto& w : window_compute_) w.clear();
}

void TrainingRun::report_progress(double lr) {
  read_losses();
  const double secs = std::max(seconds_since(window_start_), 1e-9);
  const double sps = static_cast<double>(window_samples_) / secs;
  nlohmann::json ev = {{"event", "progress"},
                       {"step", pos_.step},
                       {"samples", pos_.samples},
                       {"epoch", pos_.epoch},
                       {"batch_size", pos_.global_batch},
                       {"loss", window_loss_ / static_cast<double>(window_steps_)},  // mean since the last event
                       {"lr", lr},
                       {"temperature", 1.0 / scale_.item<double>()},
                       {"samples_per_s", sps},
                       {"tokens_per_s", static_cast<double>(window_tokens_) / secs},
                       // the share of computed positions that were padding (train.length_grouping lowers it)
                       {"padding", 1.0 - static_cast<double>(window_tokens_) /
                                             static_cast<double>(std::max<int64_t>(window_positions_, 1))},
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
  if (device_.is_cuda() && model_.unpad) ev["varlen_attention"] = model::varlen_attention_used();
  if (const auto peak = take_device_memory_peak_mb(device_)) {
    ev["memory_mb"] = *peak;
    ev["state_memory_mb"] = state_mb_;
  }
  if (comm_) {
    std::vector<double> compute;
    for (const auto& r : reports_) compute.push_back(r.compute_s);
    ev["replicas"] = world_;
    ev["replica_batches"] = sizes_;
    ev["replica_compute_s"] = compute;  // this step's own work per replica, collectives excluded
  }
  emit(std::move(ev));
  if (lead_ && !opts_.quiet) progress_->update(pos_.step, window_loss_ / static_cast<double>(window_steps_), sps);
  window_start_ = Clock::now();
  window_samples_ = window_tokens_ = window_positions_ = window_steps_ = 0;
  window_loss_ = 0;
}

RecallResult TrainingRun::evaluate(int64_t at_step) {
  RecallOptions ro;
  ro.k = cfg_.eval.k;
  ro.max_queries = cfg_.eval.max_queries;
  ro.max_passages = cfg_.eval.max_passages;
  ro.batch_size = cfg_.eval.batch_size;
  ro.dimensions = cfg_.eval.dimensions;
  ro.max_query_tokens = cfg_.data.max_query_tokens;
  ro.max_passage_tokens = cfg_.data.max_passage_tokens;
  ro.prompts = prompts_;
  if (!eval_qrels_) eval_qrels_ = text::read_qrels(text::qrels_path(cfg_.data.beir, cfg_.eval.split));
  // At the training's precision (bf16 autocast where it trains so, as `ragmig eval --precision auto` embeds):
  // in fp32 a rung evaluation took as long as 8 training steps of MiniLM on SciFact.
  const RecallResult r = [&] {
    AutocastGuard autocast(device_, bf16_);
    return evaluate_recall(model_.net, *tokenizer_, *beir_, *eval_qrels_, ro, device_);
  }();
  model_.net->train();
  const std::string key = fmt::format("recall@{}", ro.k);
  emit({{"event", "eval"}, {"step", at_step}, {"split", cfg_.eval.split}, {key, r.recall}, {"queries", r.queries},
        {"passages", r.passages}, {"seconds", r.seconds}});
  say(fmt::format("eval {} at step {}: {} = {:.4f} over {} queries, {} passages ({:.1f} s)", cfg_.eval.split, at_step,
                  key, r.recall, r.queries, r.passages, r.seconds));
  return r;
}

ControlRequest TrainingRun::request_due() {
  if (!control_) return {};
  try {
    if (auto r = control_->poll()) pending_ = *r;
  } catch (const DataError& e) {
    emit({{"event", "control_refused"}, {"step", pos_.step}, {"error", e.what()}});
    say(fmt::format("ragmig train: ignored {}", e.what()));
  }
  if (!pending_ || pos_.step < pending_->after_step) return {};
  const ControlRequest due = *pending_;
  pending_.reset();
  return due;
}

void TrainingRun::apply_request(const ControlRequest& r) {
  const int64_t least = std::max<int64_t>(2, (global_negatives_ ? 1 : 2) * world_);
  std::string refused;
  if (r.batch_size && r.batch_size < least)
    refused = fmt::format("batch_size {} is below {} (in-batch negatives{})", r.batch_size, least,
                          world_ > 1 ? fmt::format(" on {} replicas", world_) : "");
  else if (r.batch_size > distinct_keys_)
    refused = fmt::format("batch_size {} exceeds the {} distinct positives of the data (a query's examples count "
                          "once)", r.batch_size, distinct_keys_);
  else if (r.chunk_size && t_.accumulation == "none")
    refused = "chunk_size needs train.accumulation = \"gradcache\" or \"plain\"";
  else if (r.chunk_size == 1 && t_.accumulation == "plain")
    refused = "chunk_size 1: plain micro-batches need at least 2 (in-batch negatives)";
  if (!refused.empty()) {
    emit({{"event", "control_refused"}, {"step", pos_.step}, {"error", refused}});
    say("ragmig train: ignored control.json: " + refused);
    return;
  }
  const int64_t before = pos_.global_batch, chunk_before = pos_.chunk;
  if (r.chunk_size) pos_.chunk = r.chunk_size;
  if (r.batch_size && r.batch_size != pos_.global_batch) {
    batches_ = rebatch_rest(std::move(batches_), pos_.batch_in_epoch, data_.batch_key, r.batch_size);
    pos_.epoch_resizes.push_back({pos_.batch_in_epoch, r.batch_size});
    pos_.global_batch = r.batch_size;
    sizes_ = even_split(pos_.global_batch, world_);
    for (auto& w : window_compute_) w.clear();
  }
  if (pos_.global_batch == before && pos_.chunk == chunk_before) return;
  const double scale = lr_scale(t_.resize_lr, pos_.global_batch, t_.batch_size);
  emit({{"event", "resize"}, {"step", pos_.step}, {"batch_size", pos_.global_batch}, {"from", before},
        {"chunk_size", pos_.chunk}, {"lr_scale", scale}, {"rule", t_.resize_lr}});
  say(fmt::format("ragmig train: at step {} batch {} -> {}, chunk {}, LR x{:.3f} ({} rule)", pos_.step, before,
                  pos_.global_batch, pos_.chunk, scale, t_.resize_lr));
}

Outcome TrainingRun::run() {
  resume();
  emit_start();
  progress_.emplace(t_.max_steps, pos_.step, opts_.terminal_progress && !opts_.quiet && lead_);
  state_mb_ = device_.is_cuda() ? state_memory_mb(model_.net, t_) : 0;
  window_start_ = Clock::now();
  if (lead_) control_.emplace((run_ / "control.json").string());
  if (comm_) {
    ReplicaReport mine{stop_requested(), 0, 0, 0, 0};
    const ControlRequest r = request_due();
    mine.resize_batch = r.batch_size;
    mine.resize_chunk = r.chunk_size;
    reports_ = exchange_reports(*comm_, mine);
    for (const auto& report : reports_) stop_agreed_ = stop_agreed_ || report.stop;
    due_ = {reports_[0].resize_batch, reports_[0].resize_chunk, 0};
  }
  // After the first progress window, so that warm-up (allocator, kernel choice) stays out of the profile; replica 0 only.
  StepProfiler profiler(lead_ ? t_.profile_trace : std::string(), pos_.step + t_.log_every + 1, t_.profile_steps,
                        device_);
  while (pos_.step < t_.max_steps) {
    if (comm_ ? stop_agreed_ : stop_requested()) return stop();
    // Before an epoch ends into the next, so that a resize there shapes the new epoch, resumed or not.
    apply_request(comm_ ? std::exchange(due_, {}) : request_due());
    if (pos_.batch_in_epoch >= static_cast<int64_t>(batches_.size())) {
      batches_ = batches_for(++pos_.epoch, pos_.global_batch);
      pos_.batch_in_epoch = 0;
      pos_.epoch_batch = pos_.global_batch;
      pos_.epoch_resizes.clear();
    }
    const std::vector<int64_t>& rows = batches_[static_cast<size_t>(pos_.batch_in_epoch++)];
    const int64_t step = ++pos_.step;
    profiler.before_step(step);
    const double lr = linear_warmup_decay_lr(step, t_.max_steps, t_.warmup_steps, t_.lr) *
                      lr_scale(t_.resize_lr, pos_.global_batch, t_.batch_size);
    // Fault injection for the tests: LibTorch's own out-of-memory error, as a GPU too small for the batch.
    TORCH_CHECK_WITH(OutOfMemoryError,
                     !(t_.debug_oom_step > 0 && step >= t_.debug_oom_step && pos_.global_batch > t_.debug_oom_batch),
                     "out of memory (train.debug_oom_batch = ", t_.debug_oom_batch, ", batch ", pos_.global_batch, ")");
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
    if (comm_) step_with_replicas(rows);
    else step_alone(rows);
    ++window_steps_;
    // Before the progress event: writing the trace takes seconds, which belong to the profiled window.
    if (profiler.after_step(step)) {
      emit({{"event", "profile"}, {"step", step}, {"steps", t_.profile_steps}, {"trace", t_.profile_trace}});
      say(fmt::format("ragmig train: profile of steps {}-{} in {}", step - t_.profile_steps + 1, step,
                      t_.profile_trace));
    }
    if (step % t_.log_every == 0 || step == t_.max_steps) report_progress(lr);
    if (lead_ && rung_steps_.count(step) && (step != t_.max_steps || !cfg_.eval.at_end)) {
      read_losses();  // not an evaluation of diverged weights
      evaluate(step);
    }
    if (t_.checkpoint_every > 0 && step % t_.checkpoint_every == 0 && step != t_.max_steps) save_checkpoint();
  }
  return finish();
}

// A stop request (SIGTERM, or another replica's): a checkpoint of this step, whole before any replica exits.
Outcome TrainingRun::stop() {
  if (comm_ ? last_saved_ != pos_.step : (!loaded_ || loaded_->step != pos_.step)) save_checkpoint();
  if (comm_) comm_->barrier();
  progress_->finish();
  emit({{"event", "preempted"}, {"step", pos_.step}, {"signal", stop_signal()}});
  return Outcome::Preempted;
}

// The last checkpoint, the model folder (or the adapters), the final evaluation and result.json.
Outcome TrainingRun::finish() {
  progress_->finish();
  if (comm_) {
    if (localsgd_) average_replicas("end");  // the model of a localsgd run is the average of its replicas
    if (last_saved_ != pos_.step) save_checkpoint();
    comm_->barrier();
    if (!lead_) return Outcome::Done;  // rank 0 writes the model and evaluates it
  } else if (const auto saved = store_->steps(); saved.empty() || saved.front() != pos_.step) {
    save_checkpoint();
  }

  const std::string model_dir = (run_ / "model").string();
  if (cfg_.lora.rank > 0) {
    model::DualAdapter adapter = model::own_dual_adapter(model_.net, model_.lora, cfg_.model.init);
    if (prompts_ != init_->prompts) adapter.prompts = prompts_;  // else the base's, wherever the adapter is loaded
    adapter.matryoshka_dims = t_.matryoshka_dims;
    model::save_adapter_folder(model_dir, adapter, examples_.queries);
  } else {
    // The base's truncate_dim stays, as sentence-transformers keeps it through fit(); the Matryoshka sizes are this
    // training's alone.
    const model::EmbeddingSizes sizes{init_ ? init_->sizes.truncate_dim : 0, t_.matryoshka_dims};
    model::save_model_folder(model_dir, model_.net, tokenizer_->spec(),
                             {cfg_.data.max_passage_tokens, prompts_, examples_.queries, sizes});
  }
  nlohmann::json done = {{"event", "done"}, {"step", pos_.step}, {"samples", pos_.samples}, {"loss", loss_},
                         {"model", model_dir}};
  if (!cfg_.eval.split.empty() && cfg_.eval.at_end) {
    const RecallResult r = evaluate(pos_.step);
    done[fmt::format("recall@{}", cfg_.eval.k)] = r.recall;
  }
  done["seconds"] = seconds_since(started_);
  write_file_atomic(run_ / "result.json", done.dump(2) + "\n");
  emit(done);
  say(fmt::format("done: step {}, model in {}", pos_.step, model_dir));
  return Outcome::Done;
}

Outcome train_in_run_folder(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts) {
  validate(cfg);
  check_input_paths(cfg);
  const auto started = Clock::now();
  const Rendezvous* rv = replica_group(opts);
  const bool lead = !rv || rv->rank == 0;
  if (rv) check_parallel_config(cfg, rv->world_size);
  const FolderCheck folder = check_run_folder(cfg, resolved_config, opts.run_dir);
  if (folder.finished) {
    const fs::path run(opts.run_dir);
    if (!opts.quiet && lead) fmt::print(stderr, "run already complete: {}\n", (run / "result.json").string());
    if (lead) EventLog(run / "events.jsonl").append(*folder.finished);
    return Outcome::Done;
  }
  TrainingRun training(cfg, resolved_config, opts, folder.config_changes, started);
  return training.run();
}

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

}  // namespace ragmig::train
