// The gang wait (see gang.h): a polling waitpid loop, so that stop requests and the grace period are seen
// while children run.
#include "core/gang.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

namespace ragmig {

GangExit wait_gang(std::vector<pid_t> pids, const GangWaitOptions& options) {
  GangExit out;
  out.codes.assign(pids.size(), 0);
  size_t alive = pids.size();
  bool failed = false;
  bool stopping = false;  // a SIGTERM went out: SIGKILL follows after kill_after_s
  auto stop_sent = std::chrono::steady_clock::now();
  auto last_term = std::chrono::steady_clock::now();
  const auto signal_all = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
    if (sig == SIGTERM) last_term = std::chrono::steady_clock::now();
  };
  while (alive > 0) {
    if (options.stop_requested && options.stop_requested()) {
      signal_all(SIGTERM);
      if (!stopping) stop_sent = std::chrono::steady_clock::now();
      stopping = true;
    }
    // After a failure the SIGTERM goes again every second: one that reaches a replica still between fork
    // and exec (its parent's handler, not its own) is lost, and the replica would run on unstopped.
    if (failed && std::chrono::steady_clock::now() - last_term > std::chrono::seconds(1)) signal_all(SIGTERM);
    if (stopping && options.kill_after_s > 0 &&
        std::chrono::steady_clock::now() - stop_sent > std::chrono::duration<double>(options.kill_after_s)) {
      signal_all(SIGKILL);
      stopping = false;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) break;  // no children left to wait for
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const auto it = std::find(pids.begin(), pids.end(), pid);
    if (it == pids.end()) continue;
    const size_t i = static_cast<size_t>(it - pids.begin());
    *it = -1;
    --alive;
    out.codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (out.codes[i] != 0 && !failed) {  // one down stops the gang: the others checkpoint and exit
      failed = true;
      out.first_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      signal_all(SIGTERM);
      stop_sent = std::chrono::steady_clock::now();
      stopping = true;
    }
  }
  return out;
}

}  // namespace ragmig
