// fork/exec per replica with the torchrun variables; a waitpid loop; the exit file last.
#include "exec/shim.h"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/gang.h"
#include "core/replica_exit.h"
#include "core/spawn.h"
#include "sched/clock.h"

namespace ragmig::exec {
namespace {

using sched::unix_now;

void ignore(int) {}

pid_t spawn_replica(const ShimOptions& o, size_t rank) {
  SpawnOptions spawn;
  spawn.argv = o.argv;
  spawn.search_path = true;
  spawn.env = {{"CUDA_VISIBLE_DEVICES", o.devices.at(rank)}, {"RAGMIG_SLOT", o.slots.at(rank)}};
  if (o.devices.size() > 1)
    spawn.env.insert(spawn.env.end(), {{"RANK", std::to_string(rank)},
                                       {"LOCAL_RANK", std::to_string(rank)},
                                       {"WORLD_SIZE", std::to_string(o.devices.size())}});
  if (rank > 0) spawn.log_path = fmt::format("{}/worker.rank{}.log", o.run_dir, rank);  // rank 0: the shim's log
  return spawn_process(spawn);
}

}  // namespace

int run_shim(const ShimOptions& o) {
  RAGMIG_CHECK(!o.argv.empty() && !o.devices.empty() && o.devices.size() == o.slots.size());
  struct sigaction sa {};
  sa.sa_handler = ignore;  // a handler, not SIG_IGN: exec resets handlers, but would keep SIG_IGN
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  if (o.lock_fd >= 0) {  // the lock file names the shim, for a scheduler that lost track of it
    const std::string pid = std::to_string(::getpid()) + "\n";
    (void)!::ftruncate(o.lock_fd, 0);
    (void)!::pwrite(o.lock_fd, pid.data(), pid.size(), 0);
  }

  std::vector<pid_t> pids;
  for (size_t rank = 0; rank < o.devices.size(); ++rank) pids.push_back(spawn_replica(o, rank));
  // Stop the gang at the first failure: the others checkpoint and exit (75) or are ended with it. Stopping
  // the job is the scheduler's (it signals the whole session), so no stop requests and no grace here.
  const GangExit ended = wait_gang(pids);
  const std::vector<int>& codes = ended.codes;
  int first_signal = ended.first_signal;
  // One replica: its own status, so the scheduler can tell a crash from a preemption. A gang: the job
  // protocol's rule, under which a replica that died makes the whole job resumable.
  const int result = codes.size() == 1 ? codes[0] : combine_replica_exit_codes(codes);
  if (codes.size() > 1) first_signal = 0;
  const nlohmann::json exit = {
      {"exit_code", first_signal ? -1 : result}, {"signal", first_signal}, {"ended_at", unix_now()}};
  write_file_atomic(o.exit_file, exit.dump() + "\n");
  return result;
}

}  // namespace ragmig::exec
