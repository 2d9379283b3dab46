// `ragmig train CONFIG.toml --run-dir DIR [--set section.key=value ...] [--replicas N]`: a thin driver over
// train::run_training that resolves the config, sets threads and maps the outcome to an exit code; with
// --replicas it starts N ranks of itself, and with RANK/WORLD_SIZE (or Slurm's) set it is one of them.
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "apps/command.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "core/path_check.h"
#include "core/stop_signal.h"
#include "core/strings.h"
#include "train/process_group.h"
#include "train/replica_launcher.h"
#include "train/train_config.h"
#include "train/trainer.h"

namespace ragmig::apps {
namespace {

struct TrainArgs {
  std::string config;
  std::string run_dir;
  std::vector<std::string> sets;
  bool quiet = false;
  bool print_config = false;
  int replicas = 1;
};

int run_train(TrainArgs& args) {
  if (args.run_dir.empty()) {
    const char* env = std::getenv("RAGMIG_RUN_DIR");
    if (!env || !*env) throw ConfigError("train: give --run-dir (or set RAGMIG_RUN_DIR)");
    args.run_dir = env;
  }
  // A file there would end the run after its data and model were read.
  if (std::filesystem::exists(args.run_dir))
    if (const std::string problem = path_problem(args.run_dir, true); !problem.empty())
      throw ConfigError("--run-dir: " + problem);
  nlohmann::json resolved;
  const train::TrainConfig cfg = train::read_train_config(args.config, args.sets, &resolved);
  if (args.print_config) {
    std::printf("%s\n", resolved.dump(2).c_str());
    return kOk;
  }
  const auto rendezvous = train::rendezvous_from_env(train::process_env());
  if (args.replicas > 1) {
    if (rendezvous && rendezvous->world_size > 1)
      throw ConfigError("train: --replicas starts its own ranks; do not combine it with RANK/WORLD_SIZE");
    std::filesystem::create_directories(args.run_dir);
    train::LaunchOptions lo;
    lo.argv = {"/proc/self/exe", "train", args.config, "--run-dir", args.run_dir};
    for (const auto& s : args.sets) lo.argv.insert(lo.argv.end(), {"--set", s});
    if (args.quiet) lo.argv.push_back("--quiet");
    lo.replicas = args.replicas;
    lo.log_dir = args.run_dir;
    return train::launch_replicas(lo);
  }
  // Replicas on one machine share its cores unless told otherwise.
  int local_replicas = 1;
  if (rendezvous && rendezvous->world_size > 1) {
    const char* lws = std::getenv("LOCAL_WORLD_SIZE");
    local_replicas =
        static_cast<int>(whole_number(lws ? lws : "", 1, rendezvous->world_size).value_or(rendezvous->world_size));
  }
  at::set_num_threads(cfg.train.threads > 0 ? static_cast<int>(cfg.train.threads)
                                            : default_compute_threads(local_replicas));
  install_stop_handlers();
  train::RunOptions opts;
  opts.run_dir = args.run_dir;
  opts.quiet = args.quiet;
  opts.terminal_progress = ::isatty(STDERR_FILENO) != 0;
  opts.rendezvous = rendezvous;
  const auto outcome = train::run_training(cfg, resolved, opts);
  return outcome == train::Outcome::Preempted ? kPreempted : kOk;
}

}  // namespace

Command add_train_command(CLI::App& root) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = root.add_subcommand("train", torch_command_help("train"));
  sub->add_option("config", args->config, "TOML config file (keys below)")->required()->check(CLI::ExistingFile);
  sub->add_option("--run-dir", args->run_dir,
                  "run folder: events.jsonl, checkpoints/, model/; a run started again here resumes "
                  "(default: $RAGMIG_RUN_DIR, which the scheduler sets)");
  sub->add_option("--set", args->sets, "override a config key, e.g. --set train.max_steps=50 (repeatable)");
  sub->add_flag("--quiet", args->quiet, "no progress lines on stderr (events.jsonl is always written)");
  sub->add_flag("--print-config", args->print_config, "print the resolved config as JSON and exit");
  sub->add_option("--replicas", args->replicas,
                  "data-parallel replicas to start on this machine (like torchrun); see [parallel]")
      ->check(CLI::Range(1, 1024));

  // The key list documents every config key with its type and default.
  train::TrainConfig defaults;
  sub->footer("Config keys (TOML sections; override any with --set):\n" +
              train::make_config_table(defaults).help_text() +
              "\nExit codes: 0 done, 2 bad input, 1 failure, 75 stopped by SIGTERM after a checkpoint (resumable).\n"
              "Environment: CUDA_VISIBLE_DEVICES selects the GPU or MIG instance. RANK, WORLD_SIZE, MASTER_ADDR,\n"
              "MASTER_PORT (or SLURM_PROCID, SLURM_NTASKS and the Slurm node list) make this process one replica\n"
              "of a data-parallel job; rank 0 writes the run folder.");

  return Command{sub, [args] { return run_train(*args); }};
}

}  // namespace ragmig::apps
