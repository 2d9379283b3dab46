// `ragmig batch SWEEP.toml [--state DIR]`: the main job. Expands a sweep into trials, schedules them on
// this machine's slots with the scheduler of `ragmig run`, lets ASHA stop losers at rungs, evaluates every
// finished model, and keeps DIR/results.json and DIR/report.html up to date. Stopped (Ctrl-C, SIGTERM) and
// run again, it goes on with the same sweep: finished trials stay finished, stopped ones stay stopped.
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "apps/command.h"
#include "apps/scheduler_host.h"
#include "core/atomic_file.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/stop_signal.h"
#include "eval/metrics.h"
#include "exec/process_executor.h"
#include "exec/slurm_config.h"
#include "gpu/inventory.h"
#include "hpo/sweep_driver.h"
#include "hpo/sweep_spec.h"
#include "hpo/trial_jobs.h"
#include "index/fusion_spec.h"
#include "monitor/alert_config.h"
#include "report/html_report.h"
#include "report/sweep_report.h"
#include "sched/job.h"
#include "sched/scheduler.h"
#include "sched/slot.h"
#include "text/beir.h"
#include "train/train_config.h"
#include "train/work_estimate.h"

namespace ragmig::apps {
namespace {

namespace fs = std::filesystem;

// Resolves the base config with the sweep's overrides and each trial's parameters through the training
// config table, so a misspelt key or a bad value stops the sweep before any job starts.
hpo::SweepPlan resolve_plan(const hpo::SweepSpec& spec) {
  hpo::SweepPlan plan;
  plan.spec = spec;
  plan.trials = hpo::sample(spec.space, spec.search, spec.trials, spec.seed);
  const auto resolve = [&](const hpo::ParamValues* params, const std::string& what) {
    std::vector<std::string> sets = spec.set;
    if (params)
      for (const auto& [key, value] : *params) sets.push_back(hpo::to_override(key, value));
    try {
      return train::read_train_config(spec.base, sets);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: {}: {}", spec.path, what, e.what()));
    }
  };
  const train::TrainConfig base = resolve(nullptr, "[sweep] base and set");
  train::check_input_paths(base);
  plan.max_steps = base.train.max_steps;
  hpo::AshaConfig asha;
  asha.min_steps = spec.asha.min_steps;
  asha.reduction_factor = spec.asha.reduction_factor;
  asha.max_steps = plan.max_steps;
  plan.rungs = hpo::rung_steps(asha);
  // The sizes of evaluation data (train::eval_sizes), read once per folder, split and what is read of them.
  std::map<std::tuple<std::string, std::string, bool, bool>, train::EvalSizes> eval_data;
  const auto sizes = [&](const train::TrainConfig& cfg) -> const train::EvalSizes& {
    const auto key =
        std::make_tuple(cfg.data.beir, cfg.eval.split, cfg.eval.max_queries == 0, cfg.eval.max_passages == 0);
    auto it = eval_data.find(key);
    if (it == eval_data.end()) it = eval_data.emplace(key, train::eval_sizes(cfg)).first;
    return it->second;
  };
  // The lengths of the texts of a run's data as it tokenizes them (train::text_lengths), measured once per model,
  // data, prompts and caps.
  using TextKey = std::tuple<std::string, std::string, std::string, int64_t, int64_t, std::string, std::string,
                             std::optional<std::string>, std::optional<std::string>>;
  std::map<TextKey, train::TextLengths> text_data;
  const auto lengths = [&](const train::TrainConfig& cfg) -> const train::TextLengths& {
    const auto& d = cfg.data;
    const auto& m = cfg.model;
    const TextKey key{d.beir, d.pairs, d.pretrain,     d.max_query_tokens, d.max_passage_tokens,
                      m.init, m.vocab, m.query_prompt, m.passage_prompt};
    auto it = text_data.find(key);
    if (it == text_data.end()) it = text_data.emplace(key, train::text_lengths(cfg)).first;
    return it->second;
  };
  // What `ragmig eval` of a model of `cfg` computes on the sweep's evaluation split (hpo::eval_job): the whole
  // corpus and [eval] max_queries, at the base config's lengths.
  const auto scored = [&](train::TrainConfig cfg) {
    cfg.data.beir = spec.eval.data;
    cfg.data.max_query_tokens = base.data.max_query_tokens;
    cfg.data.max_passage_tokens = base.data.max_passage_tokens;
    cfg.eval.split = spec.eval.split;
    cfg.eval.max_queries = spec.eval.max_queries;
    cfg.eval.max_passages = 0;
    return train::evaluation_flops(cfg, sizes(cfg), lengths(cfg));
  };
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    train::TrainConfig trial = resolve(&plan.trials[i], "trial " + hpo::trial_id(i));
    // Its work as hpo::train_job runs it: with the sweep's rung evaluations.
    trial.eval.split = spec.eval.split;
    trial.eval.max_queries = spec.asha.queries;
    trial.eval.max_passages = spec.asha.passages;
    trial.eval.at_steps = plan.rungs;
    trial.eval.at_end = false;
    // [asha] passages 0: all of them
    const train::TrainingWork work = train::training_work(trial, sizes(trial), lengths(trial));
    plan.trial_work.push_back({work.total(), work.step_flops, trial.train.batch_size, work.steps, work.eval_steps});
    plan.eval_flops.push_back(scored(trial));
    // [eval] dimensions past a trial's embeddings would fail its evaluation once it has trained.
    if (const int64_t size = spec.eval.dimensions > 0 ? train::embedding_size(trial) : 0; spec.eval.dimensions > size)
      throw ConfigError(fmt::format("{}: [eval] dimensions = {}: trial {}'s embeddings have {} dimensions", spec.path,
                                    spec.eval.dimensions, hpo::trial_id(i), size));
  }
  plan.rung_k = base.eval.k;
  plan.max_query_tokens = base.data.max_query_tokens;
  plan.max_passage_tokens = base.data.max_passage_tokens;
  plan.init_model = base.model.init;
  if (!plan.init_model.empty()) plan.zero_shot_flops = scored(base);
  for (const auto& baseline : spec.eval.baselines) {  // a baseline that cannot run stops the sweep here
    try {
      hpo::baseline_job(plan, baseline);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: [eval] baselines: {} (base config {})", spec.path, e.what(), spec.base));
    }
  }
  return plan;
}

// [eval] fusion: a fusion `ragmig eval` knows; "auto" chooses it on the data's training queries, which must exist.
void check_fusion(const hpo::SweepSpec& spec) {
  const std::string& fusion = spec.eval.fusion;
  if (fusion.empty()) return;
  if (fusion == "auto") {
    // `ragmig eval --fusion-validation`'s default split, .tsv or .tsv.gz as that evaluation reads it.
    if (!text::has_qrels(spec.eval.data, "train"))
      throw ConfigError(
          fmt::format("{}: [eval] fusion = \"auto\" chooses the fusion on the training queries of {}, "
                      "and it has no {}; give a fixed fusion like \"RRF(k=60)\"",
                      spec.path, spec.eval.data, (fs::path(spec.eval.data) / "qrels" / "train.tsv").string()));
    return;
  }
  try {
    index::parse_fusion_spec(fusion);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: [eval] fusion: {}", spec.path, e.what()));
  }
}

// DIR/sweep.json pins the sweep a state folder belongs to: a changed sweep file must not silently mix its
// trials with those already run.
void pin_sweep(const hpo::SweepPlan& plan) {
  const fs::path path = fs::path(plan.dir) / "sweep.json";
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : plan.trials) trials.push_back(hpo::to_json(t));
  const nlohmann::json pinned = {
      {"spec", hpo::to_json(plan.spec)}, {"trials", trials}, {"max_steps", plan.max_steps}, {"rungs", plan.rungs}};
  if (fs::exists(path)) {
    std::ifstream in(path);
    const auto previous = nlohmann::json::parse(in, nullptr, false);
    if (previous != pinned)
      throw ConfigError(
          fmt::format("{} holds a sweep started from a different sweep file or base config ({}); "
                      "give another --state or remove that folder",
                      plan.dir, path.string()));
    return;
  }
  write_file_atomic(path, pinned.dump(2) + "\n");
}

std::vector<std::pair<std::string, std::string>> environment(const gpu::Inventory& inv,
                                                             const std::vector<sched::Slot>& slots,
                                                             const hpo::SweepPlan& plan, const std::string& policy) {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  std::vector<std::pair<std::string, std::string>> env = {{"host", host},
                                                          {"CPU threads", std::to_string(usable_cores())}};
  for (const auto& g : inv.gpus) {
    env.emplace_back(fmt::format("GPU {}", g.index),
                     fmt::format("{}, {} MiB, MIG {}", g.name, g.memory_total_mib, g.mig_enabled ? "on" : "off"));
  }
  if (!inv.gpus.empty()) env.emplace_back("driver", inv.driver_version);
  const bool cpu =
      std::any_of(slots.begin(), slots.end(), [](const sched::Slot& s) { return s.kind == sched::SlotKind::Cpu; });
  if (cpu && !inv.fallback_reason.empty())
    env.emplace_back(inv.gpus.empty() ? "GPUs" : "CPU slots", "none usable: " + inv.fallback_reason);
  env.emplace_back("slots", describe_slots(slots));
  env.emplace_back("threads per job", plan.threads > 0 ? std::to_string(plan.threads) : "job default");
  env.emplace_back("policy", policy);
  env.emplace_back("trial resources", plan.spec.slots);
  env.emplace_back("base config", plan.spec.base);
  env.emplace_back(
      "evaluation",
      fmt::format("{} on {} ({}, {} queries){}", plan.spec.eval.metric, plan.spec.eval.data, plan.spec.eval.split,
                  plan.spec.eval.max_queries > 0 ? std::to_string(plan.spec.eval.max_queries) : "all",
                  plan.spec.eval.fusion.empty() ? "" : "; also fused with BM25: " + plan.spec.eval.fusion));
  if (!plan.init_model.empty()) env.emplace_back("trials start from", plan.init_model);
  env.emplace_back("ASHA",
                   plan.rungs.empty()
                       ? "off"
                       : fmt::format("rungs at steps {} of {}, reduction factor {}, {} on {} queries / {} passages",
                                     fmt::join(plan.rungs, ", "), plan.max_steps, plan.spec.asha.reduction_factor,
                                     plan.rung_metric(), plan.spec.asha.queries, plan.spec.asha.passages));
  env.emplace_back("state", plan.dir);
  return env;
}

// Mean measured utilisation of the machine, weighted by compute slices as the report's allocation is:
// busy slots their measurement, everything else 0; nothing when a busy slot has no measurement (a MIG
// device whose driver does not say), so that the report never draws a guess.
std::optional<double> mean_utilization(const std::vector<sched::SlotStatus>& slots,
                                       const report::SweepReportInput& input) {
  if (slots.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& s : slots) {
    if (s.job == 0) continue;
    if (s.utilization < 0) return std::nullopt;
    const auto c = input.slot_compute.find(s.id);
    sum += std::min(1.0, s.utilization) * (c == input.slot_compute.end() ? 1 : c->second);
  }
  return sum / std::max(1, input.capacity);
}

// The machine's compute in slices: 7 per GPU (whole, or MIG instances present or to come), 1 per CPU slot.
int compute_capacity(const gpu::Inventory& inventory, const std::vector<sched::Slot>& slots) {
  // This machine's GPUs (MIG layouts change under --mig auto), or where they are not the jobs' (Slurm) the slots'.
  int capacity = 7 * static_cast<int>(inventory.gpus.size());
  for (const auto& s : slots) capacity += s.kind == sched::SlotKind::Cpu ? 1 : inventory.gpus.empty() ? s.compute : 0;
  return capacity;
}

std::vector<std::pair<double, double>> read_utilization(const std::string& path) {
  std::vector<std::pair<double, double>> out;
  std::ifstream in(path);
  double at = 0, value = 0;
  char comma = 0;
  while (in >> at >> comma >> value) out.emplace_back(at, value);  // a torn last line ends the read
  return out;
}

void offer_slots(report::SweepReportInput& input, const std::vector<sched::Slot>& slots) {
  for (const auto& s : slots) {
    if (!input.slot_compute.count(s.id)) input.slots.push_back(s.id);
    input.slot_compute[s.id] = s.compute;
  }
}

// [eval] metric, data and split, and fusion, checked before the base config is read.
void check_eval_table(const hpo::SweepSpec& spec) {
  try {
    eval::parse_metric(spec.eval.metric);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: [eval] metric: {}", spec.path, e.what()));
  }
  if (!fs::is_directory(spec.eval.data))
    throw ConfigError(fmt::format("{}: [eval] data: '{}' is not a folder", spec.path, spec.eval.data));
  text::require_qrels(spec.eval.data, spec.eval.split, spec.path + ": [eval] split");
  check_fusion(spec);
}

// What the report shows of the machine and the sweep's setting, with the slots on offer so far.
report::SweepReportInput report_input(const Host& host, const hpo::SweepPlan& plan, const std::string& policy,
                                      const std::string& utilization_path) {
  report::SweepReportInput input;
  const auto& slots = host.backend.slots;
  offer_slots(input, slots);
  input.capacity = compute_capacity(host.inventory, slots);
  input.environment = environment(host.inventory, slots, plan, policy);
  if (host.mig.partitioner) input.environment.emplace_back("MIG layout", "re-partitioned for the queue (--mig auto)");
  if (host.slurm) input.environment.emplace_back("backend", "Slurm: each trial an sbatch job (slots from sinfo)");
  input.measured = read_utilization(utilization_path);
  return input;
}

// The sweep folder's files while it runs: results.json close behind the steps, report.html (which reads every
// event) on changes and every 10 s, and utilization.csv, the machine's measured utilisation every 2 s (else at the
// next pass where every busy slot is measured), appended to a run before's.
class SweepOutputs {
 public:
  SweepOutputs(const hpo::SweepPlan& plan, const Host& host, const std::string& policy, const hpo::SweepDriver& driver,
               sched::Store& store)
      : dir_(plan.dir),
        input_(report_input(host, plan, policy, utilization_path(plan))),
        utilization_(utilization_path(plan), std::ios::app),
        driver_(driver),
        store_(store) {}

  void offer(const std::vector<sched::Slot>& slots) { offer_slots(input_, slots); }

  void after_pass(double now, bool changed) {
    if (now - last_sample_ >= 2.0) {
      if (const auto u = mean_utilization(store_.slots(), input_)) {
        utilization_ << fmt::format("{:.3f},{:.4f}\n", now, *u) << std::flush;
        input_.measured.emplace_back(now, *u);
        last_sample_ = now;
      }
    }
    if (changed || now - last_write_ >= 10.0) {
      write(now);
    } else if (now - last_results_ >= 2.0) {
      write_results();
      last_results_ = now;
    }
  }

  // results.json and report.html now.
  void write(double now) {
    input_.now = now;
    input_.generated_at = local_time(now);
    write_results();
    report::write_report(report::sweep_report(driver_, store_, input_), report_path());
    last_write_ = last_results_ = now;
  }

  std::string report_path() const { return (fs::path(dir_) / "report.html").string(); }

 private:
  static std::string utilization_path(const hpo::SweepPlan& plan) {
    return (fs::path(plan.dir) / "utilization.csv").string();
  }
  void write_results() { write_file_atomic(fs::path(dir_) / "results.json", driver_.results_json().dump(2) + "\n"); }

  std::string dir_;
  report::SweepReportInput input_;
  std::ofstream utilization_;
  const hpo::SweepDriver& driver_;
  sched::Store& store_;
  double last_write_ = -1e300, last_results_ = -1e300, last_sample_ = -1e300;
};

// How each trial and baseline ended, once: "t03: done (ndcg@10 0.6612, fused with BM25 0.7420)", "t05: stopped by
// ASHA at step 60: ..." (a reason that starts with the state is said alone). Its jobs' starts and ends are the
// scheduler's lines ("job 6 (t03 eval): queued -> running on cpu:0").
class OutcomeLines {
 public:
  explicit OutcomeLines(std::string metric) : metric_(std::move(metric)) {}

  void after_pass(const hpo::SweepDriver& driver) {
    for (const auto& b : driver.baselines()) say(b.id, b.state, b, b.reason);
    for (const auto& t : driver.trials()) say(t.id, t.state, t, t.reason);
  }

 private:
  void say(const std::string& id, const std::string& state, const hpo::Scored& s, const std::string& reason) {
    if (state == "queued" || state == "running" || state == "evaluating" || said_[id] == state) return;
    said_[id] = state;
    if (reason.starts_with(state) && !s.metric) {
      log_line(fmt::format("{}: {}", id, reason));
      return;
    }
    const std::string score = s.metric ? fmt::format(" ({} {:.4f}{})", metric_, *s.metric,
                                                     s.hybrid ? fmt::format(", fused with BM25 {:.4f}", *s.hybrid) : "")
                                       : "";
    log_line(fmt::format("{}: {}{}{}", id, state, score, reason.empty() ? "" : " - " + reason));
  }

  std::string metric_;
  std::map<std::string, std::string> said_;
};

struct BatchArgs {
  std::string sweep, state;
  int cpu_slots = 0;  ///< 0: gpu::InventoryOptions decides
  BackendArgs backend;
  double grace = 60, tick = 0.5;
  MigFlags mig;
  MonitoringArgs monitoring;
};

int run_batch(const BatchArgs& args) {
  // One read of the sweep file for both of its readers: hpo's tables and the monitor's [alerts].
  const std::string sweep_text = read_file(args.sweep);
  const hpo::SweepSpec spec = hpo::parse_sweep(sweep_text, args.sweep);
  const monitor::AlertThresholds thresholds = monitor::parse_alert_config(sweep_text, args.sweep);
  check_eval_table(spec);
  hpo::SweepPlan plan = resolve_plan(spec);
  plan.dir = fs::absolute(args.state.empty() ? fs::path(".ragmig") / "sweeps" / spec.name : fs::path(args.state))
                 .lexically_normal()
                 .string();
  plan.cwd = fs::current_path().string();
  // The machine before the sweep's folder: a machine that cannot run it leaves nothing behind.
  BackendArgs backend = args.backend;
  if (backend.backend == "slurm")  // the sweep's [slurm] table where the command line says nothing
    backend.slurm = exec::merge_slurm_table(sweep_text, args.sweep, backend.slurm);
  Host host = open_host(backend, args.cpu_slots, args.mig, spec.policy, "ragmig batch");
  const auto& slots = host.backend.slots;
  // Trials that no slot here can ever hold would wait forever: refused in the scheduler's words (with --mig
  // auto the partitioner makes slots as it goes, and the scheduler judges).
  if (!host.mig.partitioner)
    if (const std::string why = sched::unrunnable_reason(sched::parse_need(spec.slots), slots); !why.empty())
      throw ConfigError(
          fmt::format("{}: [sweep] slots = \"{}\": {}", spec.path, spec.slots, why.substr(why.find(' ') + 1)));

  fs::create_directories(fs::path(plan.dir) / "evals");
  sched::Store store(plan.dir);
  const FileLock lock = take_scheduler_lock(store, plan.dir);
  // CPU slots share the cores: each job gets its share, so trials side by side do not oversubscribe.
  if (host.inventory.cpu_fallback && !host.mig.partitioner)
    plan.threads = cpu_slot_threads(static_cast<int>(slots.size()));
  if (host.slurm && sched::parse_need(spec.slots).cpu) plan.threads = 1;  // a CPU slot is one of Slurm's CPUs
  pin_sweep(plan);

  install_stop_handlers();
  sched::WallClock clock;
  sched::SchedulerOptions options;
  options.policy = spec.policy;
  options.slots_fixed = !host.mig.partitioner;
  options.grace_s = args.grace;
  options.tick_s = args.tick;
  sched::Scheduler scheduler(store, *host.backend.executor, clock, slots, options, log_line);
  const std::string policy = sched::to_string(scheduler.policy().spec);
  log_line(fmt::format(
      "ragmig batch: sweep {} ({} trials, {}), policy {}, {}{} slot{}, state {}", spec.name, plan.trials.size(),
      plan.rungs.empty() ? "no early stopping" : fmt::format("ASHA rungs at {}", fmt::join(plan.rungs, ", ")), policy,
      host.slurm ? "Slurm, " : "", slots.size(), slots.size() == 1 ? "" : "s", plan.dir));

  scheduler.recover();
  Monitoring monitoring = start_monitoring(store, scheduler, args.monitoring, thresholds,
                                           nvml_slot_probe(host.nvml, host.inventory), "ragmig batch");
  hpo::SweepDriver driver(plan, store, scheduler, clock);
  driver.start();
  // Inside each pass too, before the policy decides: a finished trial's evaluation takes the slot its
  // training freed, ahead of the queued trainings.
  bool driver_changed = false;
  scheduler.set_before_decide([&] { driver_changed = driver.after_pass() || driver_changed; });
  SweepOutputs outputs(plan, host, policy, driver, store);
  OutcomeLines outcomes(spec.eval.metric);

  bool again = false;
  while (!stop_requested()) {
    scheduler.step();
    const bool offered = host.mig.after_pass(scheduler);
    if (offered) outputs.offer(scheduler.slots());
    const bool changed_in_pass = std::exchange(driver_changed, false);
    const bool changed = driver.after_pass() || changed_in_pass;
    monitoring.after_pass(scheduler, clock.now());
    outcomes.after_pass(driver);
    if (driver.finished()) break;
    const double now = clock.now();
    outputs.after_pass(now, changed);
    // Trials start on slots offered in this pass at once, not a tick later (as under Scheduler::run and in
    // the simulator): a re-partition's instances are held for the trials it was made for.
    again = offered && !again;
    if (!again) clock.wait_until(std::min(now + options.tick_s, host.backend.executor->next_event_time(now)));
  }
  const bool interrupted = !driver.finished();
  if (interrupted) {
    log_line("ragmig batch: stopping; running trials checkpoint and continue when this command runs again");
    scheduler.shutdown([] { return stop_signals_received() >= 2; });
    driver.after_pass();
  }
  monitoring.monitor->sample(scheduler, clock.now());  // alerts of jobs now gone clear
  outputs.write(clock.now());
  log_line(
      fmt::format("ragmig batch: {}; report {}", interrupted ? "stopped" : "sweep finished", outputs.report_path()));
  std::printf("%s\n", outputs.report_path().c_str());
  return interrupted ? kPreempted : kOk;
}

}  // namespace

Command add_batch_command(CLI::App& root) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* sub = root.add_subcommand(
      "batch", "Run a sweep: train its trials on this machine's slots, stop losers early (ASHA), evaluate, report");
  sub->add_option("sweep", args->sweep, "sweep file (TOML: [sweep], [space], [eval], [asha])")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--state", args->state,
                  "the sweep's folder: state.db, runs/, results.json, report.html "
                  "(default .ragmig/sweeps/<name>)");
  sub->add_option("--cpu-slots", args->cpu_slots,
                  "CPU slots (default: one per core where there is no GPU, none beside GPUs;"
                  " a number given is offered beside GPUs too)")
      ->check(CLI::Range(1, 4096));
  add_mig_options(sub, args->mig);
  add_backend_options(sub, args->backend);
  add_monitoring_options(sub, args->monitoring, /*alerts_file_option=*/false);
  sub->add_option("--grace", args->grace, "seconds between SIGTERM and SIGKILL when stopping a job")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--tick", args->tick, "longest pause between two scheduling passes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->footer(
      "Sweep file (see examples/sweep-squad-tiny.toml):\n"
      "  [sweep]  name, base (training config, relative to the sweep file), set = [\"section.key=value\", ..],\n"
      "           search = \"random\" | \"grid\", trials, seed, slots (per trial: cpu:1, gpu:1, 1g.18gb:1),\n"
      "           policy (fifo, priority, srtf, ...), priority\n"
      "  [space]  \"train.lr\" = { log_uniform = [1e-4, 3e-3] } | { uniform = [a, b] } | { int = [a, b] } |\n"
      "           { choice = [..] }\n"
      "  [eval]   data (BEIR folder), split, metric (ndcg@10, recall@100, ...), max_queries,\n"
      "           fusion (\"auto\", \"RRF(k=60)\", ...: each model also fused with BM25),\n"
      "           baselines = [\"bm25\", \"zero-shot\"] (evaluated beside the trials)\n"
      "  [asha]   min_steps (first rung; 0 = off), reduction_factor, queries and passages of rung evaluations\n"
      "  [alerts] thresholds of the monitor's alerts and a command to tell (see `ragmig run --help`)\n"
      "  [slurm]  with --backend slurm: partition, account, qos, time, sbatch = [\"--constraint=h200\", ..]\n"
      "           (the command line's --partition etc. win)\n"
      "Writes DIR/results.json and DIR/report.html. Ctrl-C or SIGTERM checkpoints the running trials and exits 75;\n"
      "the same command continues the sweep. `ragmig status --state DIR` shows its jobs while it runs.");
  return Command{sub, [args] { return run_batch(*args); }};
}

}  // namespace ragmig::apps
