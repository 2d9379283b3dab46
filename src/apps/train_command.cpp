// `ragmig train CONFIG.toml --run-dir DIR [--set section.key=value ...]`: a thin driver over
// train::run_training that resolves the config, sets threads and maps the outcome to an exit code.
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <thread>

#include "apps/command.h"
#include "core/error.h"
#include "core/stop_signal.h"
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
};

}  // namespace

Command add_train_command(CLI::App& root) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = root.add_subcommand("train", "Train a dense retriever (dual encoder) in one run folder");
  sub->add_option("config", args->config, "TOML config file (keys below)")->required()->check(CLI::ExistingFile);
  sub->add_option("--run-dir", args->run_dir,
                  "run folder: events.jsonl, checkpoints/, model/; a run started again here resumes "
                  "(default: $RAGMIG_RUN_DIR, which the scheduler sets)");
  sub->add_option("--set", args->sets, "override a config key, e.g. --set train.max_steps=50 (repeatable)");
  sub->add_flag("--quiet", args->quiet, "no progress lines on stderr (events.jsonl is always written)");
  sub->add_flag("--print-config", args->print_config, "print the resolved config as JSON and exit");

  // The key list documents every config key with its type and default.
  train::TrainConfig defaults;
  sub->footer("Config keys (TOML sections; override any with --set):\n" + train::make_config_table(defaults).help_text() +
              "\nExit codes: 0 done, 2 bad input, 1 failure, 75 stopped by SIGTERM after a checkpoint (resumable).\n"
              "Environment: CUDA_VISIBLE_DEVICES selects the GPU or MIG instance.");

  return Command{sub, [args]() -> int {
                   if (args->run_dir.empty()) {
                     const char* env = std::getenv("RAGMIG_RUN_DIR");
                     if (!env || !*env) throw ConfigError("train: give --run-dir (or set RAGMIG_RUN_DIR)");
                     args->run_dir = env;
                   }
                   train::TrainConfig cfg;
                   ConfigTable table = train::make_config_table(cfg);
                   table.load_file(args->config);
                   for (const auto& s : args->sets) table.apply_override(s);
                   train::validate(cfg);
                   if (args->print_config) {
                     std::printf("%s\n", table.to_json().dump(2).c_str());
                     return kOk;
                   }
                   const int threads = cfg.train.threads > 0 ? static_cast<int>(cfg.train.threads)
                                                             : static_cast<int>(std::thread::hardware_concurrency());
                   at::set_num_threads(std::max(1, threads));
                   install_stop_handlers();
                   train::RunOptions opts;
                   opts.run_dir = args->run_dir;
                   opts.quiet = args->quiet;
                   opts.terminal_progress = ::isatty(STDERR_FILENO) != 0;
                   const auto outcome = train::run_training(cfg, table.to_json(), opts);
                   return outcome == train::Outcome::Preempted ? kPreempted : kOk;
                 }};
}

}  // namespace ragmig::apps
