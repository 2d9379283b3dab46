// The training loop of `ragmig train` and everything it owns in the run folder (see trainer.h).
// Bit-exact resume rests on three things: the LR is a pure function of the step, the batches a pure
// function of (seed, epoch), and the checkpoint holds weights, AdamW state, generators and data position.
#include "train/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/event_log.h"
#include "core/stop_signal.h"
#include "model/model_folder.h"
#include "text/batch_sampler.h"
#include "text/vocab_builder.h"
#include "train/autocast_guard.h"
#include "train/checkpoint_store.h"
#include "train/dense_eval.h"
#include "train/lr_schedule.h"
#include "train/progress_line.h"
#include "train/rng_state.h"
#include "train/training_data.h"

namespace fs = std::filesystem;

namespace ragmig::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

torch::Device pick_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (!torch::cuda::is_available()) throw DeviceError("train.device = " + name + ", but CUDA is not available here");
  return torch::Device(name);
}

double rss_mb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The vocabulary of this run: the run folder's own (resuming), the initial model's, a given file, or one
// built from the data. Reads only; the caller writes run/vocab.txt once the input has been checked.
std::vector<std::string> choose_vocabulary(const TrainConfig& cfg, const std::string& run_vocab,
                                           const std::vector<text::TrainingExample>& examples,
                                           const text::BeirFolder* beir, std::string& origin) {
  if (fs::exists(run_vocab)) {
    origin = "run folder";
    return text::WordPieceTokenizer::from_file(run_vocab).vocab();
  }
  if (!cfg.model.init.empty()) {
    origin = cfg.model.init;
    return text::WordPieceTokenizer::from_file((fs::path(cfg.model.init) / "vocab.txt").string()).vocab();
  }
  if (!cfg.model.vocab.empty()) {
    origin = cfg.model.vocab;
    return text::WordPieceTokenizer::from_file(cfg.model.vocab).vocab();
  }
  origin = "built from the training data";
  text::VocabBuilderOptions vo;
  vo.vocab_size = cfg.model.vocab_size;
  return text::build_wordpiece_vocab(vocabulary_texts(examples, beir), vo);
}

model::EncoderSpec spec_from_config(const ModelConfig& m, const text::WordPieceTokenizer& tok) {
  model::EncoderSpec spec;
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
  return spec;
}

// AdamW groups as BERT fine-tuning does it: no weight decay on biases and LayerNorm.
torch::optim::AdamW make_optimizer(model::DualEncoder& net, const torch::Tensor& logit_scale, const TrainOptions& t) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : net->named_parameters()) {
    const std::string& name = item.key();
    bool plain = name.find("bias") != std::string::npos || name.find("LayerNorm") != std::string::npos;
    (plain ? no_decay : decay).push_back(item.value());
  }
  if (logit_scale.requires_grad()) no_decay.push_back(logit_scale);
  auto opts = [&](double wd) { return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(t.lr).weight_decay(wd)); };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, opts(t.weight_decay));
  groups.emplace_back(no_decay, opts(0.0));
  return torch::optim::AdamW(std::move(groups), torch::optim::AdamWOptions(t.lr));
}

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  torch::Tensor t;
  ar.read(key, t);
  return t.item<int64_t>();
}

}  // namespace

Outcome run_training(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts) {
  validate(cfg);
  check_input_paths(cfg);
  const auto started = Clock::now();
  const fs::path run(opts.run_dir);
  const std::string run_vocab = (run / "vocab.txt").string();
  auto say = [&](const std::string& line) {
    if (!opts.quiet) fmt::print(stderr, "{}\n", line);
  };

  // A finished run started again is a no-op: the scheduler may retry a job whose exit it did not see.
  const fs::path result_path = run / "result.json";
  if (fs::exists(result_path)) {
    nlohmann::json done = nlohmann::json::parse(read_file(result_path));
    if (done.value("step", int64_t{-1}) == cfg.train.max_steps) {
      say("run already complete: " + result_path.string());
      EventLog(run / "events.jsonl").append(done);
      return Outcome::Done;
    }
  }

  // Input first: nothing is written to the run folder until the data, vocabulary and model are known good.
  const torch::Device device = pick_device(cfg.train.device);
  const bool bf16 = cfg.train.precision == "bf16" || (cfg.train.precision == "auto" && device.is_cuda());
  std::optional<text::BeirFolder> beir;
  if (!cfg.data.beir.empty()) beir = text::read_beir(cfg.data.beir);
  const auto examples = load_examples(cfg.data, beir ? &*beir : nullptr);
  std::string vocab_origin;
  const text::WordPieceTokenizer tokenizer(
      choose_vocabulary(cfg, run_vocab, examples, beir ? &*beir : nullptr, vocab_origin));

  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  model::DualEncoder net = cfg.model.init.empty() ? model::DualEncoder(spec_from_config(cfg.model, tokenizer))
                                                  : model::load_model_folder(cfg.model.init).model;
  const auto& bert = net->spec().bert;
  if (tokenizer.vocab_size() > bert.vocab_size)
    throw DataError(fmt::format("vocabulary and model mismatch: {} has {} tokens, the model embeds {}", vocab_origin,
                                tokenizer.vocab_size(), bert.vocab_size));
  if (bert.max_position_embeddings < std::max(cfg.data.max_query_tokens, cfg.data.max_passage_tokens))
    throw ConfigError(fmt::format("data.max_passage_tokens / data.max_query_tokens exceed the model's {} positions",
                                  bert.max_position_embeddings));
  net->to(device);
  net->train();
  const TokenizedData data = tokenize(examples, tokenizer, cfg.data);
  const auto batches_for = [&](int64_t epoch) {
    return text::unique_positive_batches(data.positive_key, cfg.train.batch_size, static_cast<uint64_t>(cfg.train.seed),
                                         epoch);
  };
  auto batches = batches_for(0);  // throws DataError when the data cannot fill one batch

  fs::create_directories(run);
  if (!fs::exists(run_vocab)) tokenizer.save(run_vocab);
  write_file_atomic(run / "config.json", resolved_config.dump(2) + "\n");
  EventLog events((run / "events.jsonl").string());

  const TrainOptions& t = cfg.train;
  torch::Tensor logit_scale = torch::full({}, std::log(1.0 / t.temperature), torch::TensorOptions().device(device));
  if (t.learn_temperature) logit_scale.requires_grad_(true);
  torch::optim::AdamW optimizer = make_optimizer(net, logit_scale, t);
  CheckpointStore store((run / "checkpoints").string(), t.keep_checkpoints);

  int64_t step = 0, epoch = 0, batch_in_epoch = 0, samples = 0;
  auto save_checkpoint = [&] {
    const auto t0 = Clock::now();
    const std::string path = store.save(step, [&](torch::serialize::OutputArchive& ar) {
      torch::serialize::OutputArchive m, o;
      net->save(m);
      optimizer.save(o);
      ar.write("model", m);
      ar.write("optimizer", o);
      ar.write("logit_scale", logit_scale.detach().cpu());
      ar.write("step", torch::tensor(step));
      ar.write("epoch", torch::tensor(epoch));
      ar.write("batch_in_epoch", torch::tensor(batch_in_epoch));
      ar.write("samples", torch::tensor(samples));
      const RngState rng = capture_rng_state();
      ar.write("rng_cpu", rng.cpu);
      for (size_t d = 0; d < rng.cuda.size(); ++d) ar.write("rng_cuda_" + std::to_string(d), rng.cuda[d]);
    });
    events.append({{"event", "checkpoint"}, {"step", step}, {"path", path}, {"seconds", seconds_since(t0)}});
  };

  const auto loaded = store.load_newest([&](torch::serialize::InputArchive& ar) {
    torch::serialize::InputArchive m, o;
    ar.read("model", m);
    ar.read("optimizer", o);
    net->load(m);
    optimizer.load(o);
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
    RngState rng;
    ar.read("rng_cpu", rng.cpu);
    for (int64_t d = 0; device.is_cuda(); ++d) {
      torch::Tensor s;
      if (!ar.try_read("rng_cuda_" + std::to_string(d), s)) break;
      rng.cuda.push_back(s);
    }
    restore_rng_state(rng);
  });
  if (loaded) {
    batches = batches_for(epoch);
    for (const auto& why : loaded->skipped) say("skipped checkpoint " + why);
  }

  int64_t params = 0;
  for (const auto& p : net->parameters()) params += p.numel();
  events.append({{"event", "start"},
                 {"step", step},
                 {"resumed_from", loaded ? nlohmann::json(loaded->path) : nlohmann::json(nullptr)},
                 {"device", device.str()},
                 {"precision", bf16 ? "bf16" : "fp32"},
                 {"threads", at::get_num_threads()},
                 {"parameters", params},
                 {"examples", data.examples()},
                 {"passages", static_cast<int64_t>(data.passages.size())},
                 {"vocab", vocab_origin},
                 {"config", resolved_config}});
  say(fmt::format("ragmig train: {} examples, {} distinct passages, {:.2f}M parameters, {} ({}), {} threads{}",
                  data.examples(), data.passages.size(), static_cast<double>(params) / 1e6, device.str(),
                  bf16 ? "bf16" : "fp32", at::get_num_threads(),
                  loaded ? fmt::format(", resumed at step {}", step) : std::string()));

  const EncodeFn encode = [&](const torch::Tensor& ids, const torch::Tensor& mask, Tower tower) {
    AutocastGuard autocast(device, bf16);
    return tower == Tower::Query ? net->encode_queries(ids, mask) : net->encode_passages(ids, mask);
  };

  ProgressLine progress(t.max_steps, step, opts.terminal_progress && !opts.quiet);
  auto window_start = Clock::now();
  int64_t window_samples = 0, window_tokens = 0, window_steps = 0;
  double loss = 0, window_loss = 0;
  while (step < t.max_steps) {
    if (stop_requested()) {
      if (!loaded || loaded->step != step) save_checkpoint();
      progress.finish();
      events.append({{"event", "preempted"}, {"step", step}, {"signal", stop_signal()}});
      return Outcome::Preempted;
    }
    if (batch_in_epoch >= static_cast<int64_t>(batches.size())) {
      batches = batches_for(++epoch);
      batch_in_epoch = 0;
    }
    const auto& rows = batches[static_cast<size_t>(batch_in_epoch++)];
    ++step;
    const double lr = linear_warmup_decay_lr(step, t.max_steps, t.warmup_steps, t.lr);
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);

    const PairBatch batch = assemble_batch(data, rows, t.hard_negatives, tokenizer.pad_id(),
                                           static_cast<uint64_t>(t.seed), step, device);
    const torch::Tensor scale = logit_scale.exp().clamp_max(100.0);
    optimizer.zero_grad();
    if (t.accumulation == "gradcache") loss = backward_grad_cache(encode, batch, scale, t.chunk_size);
    else if (t.accumulation == "plain") loss = backward_plain(encode, batch, scale, t.chunk_size);
    else loss = backward_full(encode, batch, scale);
    if (t.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), t.max_grad_norm);
    optimizer.step();

    samples += batch.queries();
    window_loss += loss;
    ++window_steps;
    window_samples += batch.queries();
    window_tokens += batch.q_mask.sum().item<int64_t>() + batch.p_mask.sum().item<int64_t>();
    if (step % t.log_every == 0 || step == t.max_steps) {
      const double secs = std::max(seconds_since(window_start), 1e-9);
      const double sps = static_cast<double>(window_samples) / secs;
      events.append({{"event", "progress"},
                     {"step", step},
                     {"samples", samples},
                     {"epoch", epoch},
                     {"loss", window_loss / static_cast<double>(window_steps)},  // mean since the last event
                     {"lr", lr},
                     {"temperature", 1.0 / scale.item<double>()},
                     {"samples_per_s", sps},
                     {"tokens_per_s", static_cast<double>(window_tokens) / secs},
                     {"rss_mb", rss_mb()}});
      progress.update(step, window_loss / static_cast<double>(window_steps), sps);
      window_start = Clock::now();
      window_samples = window_tokens = window_steps = 0;
      window_loss = 0;
    }
    if (t.checkpoint_every > 0 && step % t.checkpoint_every == 0 && step != t.max_steps) save_checkpoint();
  }
  progress.finish();
  if (const auto saved = store.steps(); saved.empty() || saved.front() != step) save_checkpoint();

  const std::string model_dir = (run / "model").string();
  model::save_model_folder(model_dir, net, tokenizer.vocab());
  nlohmann::json done = {{"event", "done"}, {"step", step}, {"samples", samples}, {"loss", loss}, {"model", model_dir}};
  if (!cfg.eval.split.empty()) {
    RecallOptions ro;
    ro.k = cfg.eval.k;
    ro.max_queries = cfg.eval.max_queries;
    ro.batch_size = cfg.eval.batch_size;
    ro.max_query_tokens = cfg.data.max_query_tokens;
    ro.max_passage_tokens = cfg.data.max_passage_tokens;
    const text::Qrels qrels = text::read_qrels(text::qrels_path(cfg.data.beir, cfg.eval.split));
    const RecallResult r = evaluate_recall(net, tokenizer, *beir, qrels, ro, device);
    const std::string key = fmt::format("recall@{}", ro.k);
    events.append({{"event", "eval"}, {"split", cfg.eval.split}, {key, r.recall}, {"queries", r.queries},
                   {"passages", r.passages}, {"seconds", r.seconds}});
    done[key] = r.recall;
    say(fmt::format("eval {}: {} = {:.4f} over {} queries, {} passages ({:.1f} s)", cfg.eval.split, key, r.recall,
                    r.queries, r.passages, r.seconds));
  }
  done["seconds"] = seconds_since(started);
  write_file_atomic(result_path, done.dump(2) + "\n");
  events.append(done);
  say(fmt::format("done: step {}, model in {}", step, model_dir));
  return Outcome::Done;
}

}  // namespace ragmig::train
