// Local multi-process launch (see replica_launcher.h): fork/exec with the rendezvous in the environment, a
// polling waitpid loop that forwards stop signals and turns one failure into SIGTERM for the rest.
#include "train/replica_launcher.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "core/error.h"
#include "core/gang.h"
#include "core/local_port.h"
#include "core/replica_exit.h"
#include "core/spawn.h"

namespace ragmig::train {
namespace {

std::atomic<int> g_forward_signal{0};
void remember_signal(int sig) { g_forward_signal.store(sig); }

pid_t spawn(const LaunchOptions& o, int rank, int port) {
  SpawnOptions spawn;
  spawn.argv = o.argv;
  spawn.env = {{"RANK", std::to_string(rank)},
               {"LOCAL_RANK", std::to_string(rank)},
               {"WORLD_SIZE", std::to_string(o.replicas)},
               {"LOCAL_WORLD_SIZE", std::to_string(o.replicas)},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(port)}};
  if (rank > 0 && !o.log_dir.empty()) spawn.log_path = o.log_dir + "/worker.rank" + std::to_string(rank) + ".log";
  return spawn_process(spawn);
}

}  // namespace

int launch_replicas(const LaunchOptions& o) {
  RAGMIG_CHECK(o.replicas >= 1 && !o.argv.empty());
  // A free port where gangs meet, from a start that differs by process (two launches at once seldom probe alike).
  const int port = first_free_local_port(kRendezvousPortLo + ::getpid() % (kRendezvousPortHi - kRendezvousPortLo),
                                         kRendezvousPortLo, kRendezvousPortHi);
  struct sigaction sa {}, old_term{}, old_int{};
  sa.sa_handler = remember_signal;
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGINT, &sa, &old_int);

  std::vector<pid_t> pids;
  for (int r = 0; r < o.replicas; ++r) pids.push_back(spawn(o, r, port));
  // A replica stuck where it cannot see the stop (a rendezvous that never completes) is killed after 90 s.
  GangWaitOptions wait;
  wait.stop_requested = [] { return g_forward_signal.exchange(0) != 0; };
  wait.kill_after_s = 90;
  const GangExit ended = wait_gang(pids, wait);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  return combine_replica_exit_codes(ended.codes);
}

}  // namespace ragmig::train
