// `ragmig submit JOB.toml | --cmd "..."`: adds a job to the durable queue and prints its id. Works whether
// or not `ragmig run` is running; a running scheduler picks the job up on its next pass.
#include <fmt/format.h>

#include <filesystem>

#include "apps/command.h"
#include "core/error.h"
#include "core/shell_words.h"
#include "sched/clock.h"
#include "sched/store.h"

namespace ragmig::apps {

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
  auto* estimate = sub->add_option("--estimate", args->estimate, "expected seconds of work on a speed-1 slot");
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
                   sched::validate(spec);
                   sched::Store store(args->state);
                   sched::WallClock clock;
                   const sched::JobId id = store.submit(spec, clock.now());
                   fmt::print("{}\n", id);
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
