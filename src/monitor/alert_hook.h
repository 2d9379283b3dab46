// `[alerts] exec`: a user's command (mail, chat, a pager) run by `sh -c` for each alert change, with the
// alert as one JSON line on its stdin. It runs beside the scheduler, never blocking its loop: started and
// left alone, reaped on later calls, and killed if it outlives its time limit.
#pragma once

#include <sys/types.h>

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

  /// Starts the command with `json` (one line) on stdin. Throws IoError when it cannot start.
  void run(const std::string& json, double now);
  /// Reaps commands that ended; kills (SIGKILL) those past the time limit.
  void reap(double now);
  size_t running() const { return running_.size(); }

 private:
  struct Running {
    pid_t pid;
    double started_at;
  };
  std::string command_;
  double timeout_s_;
  Log log_;
  std::vector<Running> running_;
};

}  // namespace ragmig::monitor
