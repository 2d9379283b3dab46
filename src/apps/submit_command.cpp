// `ragmig submit JOB.toml | --cmd "..."`: adds a job to the durable queue and prints its id. Works whether
// or not `ragmig run` is running; a running scheduler picks the job up on its next pass.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "apps/command.h"
#include "core/error.h"
#include "core/shell_words.h"
#include "core/strings.h"
#include "eval/evaluate.h"
#include "eval/retriever_kind.h"
#include "sched/clock.h"
#include "sched/slot.h"
#include "sched/store.h"
#include "train/train_config.h"
#include "train/work_estimate.h"

namespace ragmig::apps {
namespace {

// A command named by a path (absolute, or relative to where the job will run) must be there and executable
// now; a bare name is looked up in PATH when the job starts, and a failure then is not retried either.
void check_executable(const sched::JobSpec& spec) {
  const std::string& program = spec.argv.front();
  if (program == "ragmig" || program.find('/') == std::string::npos) return;
  const std::filesystem::path path = std::filesystem::path(spec.cwd) / program;  // an absolute program wins
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw ConfigError(fmt::format("cannot run {}: no such file{}", program,
                                  std::filesystem::path(program).is_absolute() ? "" : " (from " + spec.cwd + ")"));
  if (std::filesystem::is_directory(path, ec)) throw ConfigError(fmt::format("cannot run {}: it is a folder", program));
  if (::access(path.c_str(), X_OK) != 0)
    throw ConfigError(fmt::format("cannot run {}: not executable (chmod +x, or run it through its interpreter: "
                                  "--cmd \"sh {}\")",
                                  program, program));
}

// A CPU job that the CPU slots of this state's scheduler (as it last ran) could never hold is refused now, in
// the scheduler's own words (sched::unrunnable_reason). GPU needs, and machines whose slots change, are the
// scheduler's to judge: it marks such jobs unrunnable.
void check_cpu_slots(const sched::JobSpec& spec, sched::Store& store) {
  if (!spec.need.cpu) return;
  const auto statuses = store.slots();
  if (statuses.empty() ||
      std::any_of(statuses.begin(), statuses.end(), [](const sched::SlotStatus& s) { return s.kind != "cpu"; }))
    return;
  std::vector<sched::Slot> slots(statuses.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i].id = statuses[i].id;
  const std::string reason = sched::unrunnable_reason(spec.need, slots);
  if (reason.empty()) return;
  throw ConfigError(fmt::format("--slots {}: {} (the scheduler of {}, as it last ran)", sched::to_string(spec.need),
                                reason.substr(reason.find(' ') + 1), store.dir()));
}

void not_counted(const std::string& why) {
  log_line(fmt::format("ragmig submit: the job's work is not counted, so it has no estimate ({})", why));
}

// A `ragmig train CONFIG [--set key=value ...]` job states its work: its config's training FLOPs (train/
// work_estimate.h), which the scheduler prices at the rate its jobs measure (sched/work_pricer.h), so that sjf, ljf
// and srtf order training jobs by size. The config is read as the job will read it, from the job's folder: one
// that is there must be valid with its --set overrides (ConfigError naming file and key: the job would fail on
// it). A job whose config, model or data is not there yet is queued without an estimate, with a warning: a job
// before it may write them (`ragmig mine` before the training on its triples).
void count_training_work(sched::JobSpec& spec) {
  const auto& a = spec.argv;
  if (a.size() < 3 || a[0] != "ragmig" || a[1] != "train") return;
  std::string config;
  std::vector<std::string> sets;
  for (size_t i = 2; i < a.size(); ++i) {
    if (a[i] == "--set" || a[i] == "--run-dir" || a[i] == "--replicas") {  // `ragmig train`'s options with a value
      if (a[i] == "--set" && i + 1 < a.size()) sets.push_back(a[i + 1]);
      ++i;
    } else if (a[i].rfind("--set=", 0) == 0) {
      sets.push_back(a[i].substr(6));
    } else if (a[i].rfind("-", 0) != 0 && config.empty()) {
      config = a[i];
    }
  }
  if (config.empty()) return;
  const std::string path = (std::filesystem::path(spec.cwd) / config).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_counted(path + ": no such file yet");
  const train::TrainConfig cfg = train::read_train_config(path, sets);
  try {
    const train::TrainingWork work = train::training_work(cfg, train::eval_sizes(cfg), train::text_lengths(cfg));
    spec.work = {work.total(), work.step_flops, cfg.train.batch_size, work.steps, work.eval_steps};
  } catch (const Error& e) {
    not_counted(e.what());
  }
}

// The "--name value" and "--name=value" options of a `ragmig SUB ...` command line; flags take no value.
std::map<std::string, std::string> long_options(const std::vector<std::string>& a) {
  std::map<std::string, std::string> given;
  for (size_t i = 2; i < a.size(); ++i) {
    if (a[i].rfind("--", 0) != 0) continue;
    if (const auto eq = a[i].find('='); eq != std::string::npos) {
      given[a[i].substr(0, eq)] = a[i].substr(eq + 1);
    } else if (i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) {
      given[a[i]] = a[i + 1];
      ++i;
    }
  }
  return given;
}

// --retriever of an eval or mine command line's options, else the one `ragmig eval` / `mine` default to.
std::string retriever_of(const std::map<std::string, std::string>& given) {
  const auto it = given.find("--retriever");
  return it != given.end() ? it->second : eval::default_retriever(given.count("--model") > 0);
}

// A `ragmig eval` or `ragmig mine` job with an unknown --retriever, or an option its retriever would ignore, fails
// at once when it runs (apps/retrieval_options.h): refused now, with the same words.
void check_retrieval_options(const sched::JobSpec& spec) {
  const auto& a = spec.argv;
  if (a.size() < 3 || a[0] != "ragmig" || (a[1] != "eval" && a[1] != "mine")) return;
  const std::map<std::string, std::string> given = long_options(a);
  const auto refusal = [&](const std::string& why) { return ConfigError(fmt::format("ragmig {}: {}", a[1], why)); };
  eval::RetrieverKind kind{};
  try {
    kind = eval::parse_retriever(retriever_of(given));
  } catch (const ConfigError& e) {
    throw refusal(e.what());
  }
  if (const auto refused = a[1] == "mine" ? eval::cannot_mine(kind) : std::nullopt) throw refusal(*refused);
  if (const auto unused = eval::unused_option(kind, [&](const std::string& name) { return given.count(name) > 0; }))
    throw refusal(*unused);
}

// A `ragmig eval` job that embeds (--retriever dense or hybrid) states its encoder's work as a sweep's evaluation
// jobs do (train::evaluation_flops): its queries (--max-queries, else every judged query of --split) and the whole
// corpus at --max-query-tokens / --max-passage-tokens, forward only, as though nothing were cached; the options'
// defaults are `ragmig eval`'s own (eval::EvalOptions). BM25 computes no encoder FLOPs and a re-ranking's are its
// candidate pairs': neither is counted. Like a training, a job whose data or model is not there yet is queued
// without an estimate, with a warning.
void count_evaluation_work(sched::JobSpec& spec) {
  const auto& a = spec.argv;
  if (a.size() < 3 || a[0] != "ragmig" || a[1] != "eval") return;
  const std::map<std::string, std::string> given = long_options(a);
  const auto value = [&](const std::string& name, const std::string& otherwise) {
    const auto it = given.find(name);
    return it == given.end() ? otherwise : it->second;
  };
  const std::string retriever = retriever_of(given);
  if (retriever != "dense" && retriever != "hybrid") return;
  // What the job would fail on at once is refused now, naming the option.
  const auto count = [&](const std::string& name, int64_t otherwise) {
    const std::string text = value(name, std::to_string(otherwise));
    if (const auto n = whole_number(text, 0)) return *n;
    throw ConfigError(fmt::format("ragmig eval {} {}: expected a count (an integer >= 0)", name, text));
  };
  for (const char* required : {"--data", "--model"})
    if (value(required, "").empty())
      throw ConfigError(fmt::format("ragmig eval --retriever {} needs {}", retriever, required));
  const eval::EvalOptions defaults;
  train::TrainConfig cfg;
  cfg.data.beir = (std::filesystem::path(spec.cwd) / given.at("--data")).string();
  cfg.model.init = given.at("--model");
  cfg.eval.split = value("--split", defaults.split);
  cfg.eval.max_queries = count("--max-queries", defaults.max_queries);
  cfg.eval.max_passages = 0;
  cfg.data.max_query_tokens = count("--max-query-tokens", defaults.dense.embed.max_query_tokens);
  cfg.data.max_passage_tokens = count("--max-passage-tokens", defaults.dense.embed.max_passage_tokens);
  if (given.count("--query-prompt")) cfg.model.query_prompt = given.at("--query-prompt");
  if (given.count("--passage-prompt")) cfg.model.passage_prompt = given.at("--passage-prompt");
  try {
    spec.work.flops = train::evaluation_flops(cfg, train::eval_sizes(cfg), train::text_lengths(cfg));
  } catch (const Error& e) {
    not_counted(e.what());
  }
}

}  // namespace

Command add_submit_command(CLI::App& root) {
  struct Args {
    std::string file, cmd, name, slots, state = sched::default_state_dir();
    int64_t priority = 0, max_retries = 3, replicas = 1;
    double estimate = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("submit", "Queue a job for `ragmig run`; prints its id");
  sub->add_option("job", args->file, "job file (TOML, [job] section: name, argv or cmd, slots, priority, ...)")
      ->check(CLI::ExistingFile);
  auto* cmd = sub->add_option("--cmd", args->cmd,
                              "the command as one line, split like a shell would (quotes, no pipes); "
                              "\"ragmig ...\" runs this ragmig");
  auto* name = sub->add_option("--name", args->name, "a name shown by `ragmig status` (default: the command)");
  auto* priority = sub->add_option("--priority", args->priority, "larger runs first under the priority policy");
  auto* slots = sub->add_option("--slots", args->slots, "cpu:N | gpu:N | <MIG profile>:N (1g.18gb:1) | <memory>gb:N");
  auto* replicas = sub->add_option("--replicas", args->replicas,
                                   "data-parallel replicas: started together (gang) on N slots of the --slots kind, "
                                   "each with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT")
                       ->check(CLI::Range(1, 1024));
  auto* estimate = sub->add_option("--estimate", args->estimate,
                                   "expected seconds of work on a speed-1 slot (without it, a `ragmig train` job's "
                                   "FLOPs are counted from its config and the scheduler prices them at the rate its "
                                   "jobs measure)");
  auto* retries = sub->add_option("--max-retries", args->max_retries, "failed attempts retried with back-off");
  sub->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  sub->footer("Options given on the command line override the job file's keys.");
  return Command{sub, [=]() -> int {
                   if (args->file.empty() == (cmd->count() == 0))
                     throw ConfigError("give a job file or --cmd (one of them)");
                   sched::JobSpec spec;
                   if (!args->file.empty()) spec = sched::read_job_file(args->file);
                   if (cmd->count()) spec.argv = split_shell_words(args->cmd);
                   if (name->count()) spec.name = args->name;
                   if (priority->count()) spec.priority = args->priority;
                   if (slots->count()) spec.need = sched::parse_need(args->slots);
                   if (replicas->count()) spec.need.replicas = static_cast<int>(args->replicas);
                   if (estimate->count()) spec.estimate_s = args->estimate;
                   if (retries->count()) spec.max_retries = args->max_retries;
                   if (spec.name.empty() && !spec.argv.empty()) spec.name = join_shell_words(spec.argv).substr(0, 60);
                   spec.cwd = std::filesystem::current_path().string();
                   if (!(spec.estimate_s > 0)) {
                     count_training_work(spec);
                     count_evaluation_work(spec);
                   }
                   sched::validate(spec);
                   check_retrieval_options(spec);
                   check_executable(spec);
                   sched::Store store(args->state);
                   check_cpu_slots(spec, store);
                   sched::WallClock clock;
                   const sched::JobId id = store.submit(spec, clock.now());
                   fmt::print("{}\n", id);
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
