// `ragmig cancel ID`: a queued job is cancelled at once; a running one is stopped by the scheduler
// (SIGTERM, then SIGKILL after the grace period) and ends `cancelled`.
#include <fmt/format.h>

#include "apps/command.h"
#include "sched/clock.h"
#include "sched/store.h"

namespace ragmig::apps {

Command add_cancel_command(CLI::App& root) {
  struct Args {
    int64_t id = 0;
    std::string state = sched::default_state_dir();
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("cancel", "Cancel a queued or running job");
  sub->add_option("id", args->id, "job id (from submit or status)")->required();
  sub->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  return Command{sub, [args]() -> int {
                   sched::Store store(args->state, sched::Store::Mode::MustExist);
                   sched::WallClock clock;
                   switch (store.request_cancel(args->id, clock.now())) {
                     case sched::CancelResult::Cancelled: fmt::print("job {} cancelled\n", args->id); break;
                     case sched::CancelResult::Stopping:
                       fmt::print("job {} is running: the scheduler stops it and marks it cancelled\n", args->id);
                       break;
                     case sched::CancelResult::AlreadyFinished:
                       fmt::print("job {} has already finished; nothing to cancel\n", args->id);
                       break;
                   }
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
