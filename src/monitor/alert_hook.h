// `[alerts] exec`: a user's command (mail, chat, a pager) run by `sh -c` for each alert change, with the
// alert as one JSON line on its stdin. It runs beside the scheduler, never blocking its loop: started and
// left alone, reaped on later calls, and killed with all it started if it outlives its time limit. One runs
// at a time, so that a chat hears "firing" before "cleared"; the others wait their turn in order.
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace ragmig::monitor {

class AlertHook {
 public:
  using Log = std::function<void(const std::string&)>;
  /// `command` "" runs nothing. `log` hears of commands that fail or time out.
  AlertHook(std::string command, double timeout_s = 60, Log log = nullptr);
  ~AlertHook();  ///< waits for running commands up to their time limit, then kills them
  AlertHook(const AlertHook&) = delete;
  AlertHook& operator=(const AlertHook&) = delete;

  /// Runs the command with `json` (one line) on stdin: now, or once the commands before it have ended.
  void run(const std::string& json, double now);
  /// Reaps a command that ended, kills (SIGKILL) one past its time limit with its process group, and starts
  /// the next waiting one.
  void reap(double now);
  /// Commands running or waiting.
  size_t running() const { return running_.size() + waiting_.size(); }

 private:
  struct Running {
    pid_t pid;
    double started_at;
  };
  std::string command_;
  double timeout_s_;
  Log log_;
  void start(const std::string& json, double now);  ///< throws IoError when it cannot start

  std::vector<Running> running_;  ///< at most one
  std::deque<std::string> waiting_;
  static constexpr size_t kMaxWaiting = 1000;
};

}  // namespace ragmig::monitor
