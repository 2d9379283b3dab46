// fork + exec of /bin/sh with a pipe for stdin. The JSON line is far below a pipe's buffer, so writing it
// never waits on the child; SIGPIPE is avoided by ignoring EPIPE (a command that does not read stdin).
// Each command runs in its own process group, and a kill goes to the group: `sh -c "notify.sh"` forks, and
// killing the shell alone would leave notify.sh (and whatever it started) running on, holding the
// scheduler's stdout and stderr.
#include "monitor/alert_hook.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "core/stop_signal.h"

namespace ragmig::monitor {

AlertHook::AlertHook(std::string command, double timeout_s, Log log)
    : command_(std::move(command)), timeout_s_(timeout_s), log_(std::move(log)) {}

AlertHook::~AlertHook() {
  // The alerts of the scheduler's last moments still go out, within one time limit for them all.
  const auto t0 = std::chrono::steady_clock::now();
  const auto now = [&] { return seconds_since(t0); };
  for (auto& r : running_) r.started_at = 0;  // on this clock
  while (running() > 0 && now() < timeout_s_) {
    reap(now());
    if (running() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const auto& r : running_) {
    ::kill(-r.pid, SIGKILL);
    ::waitpid(r.pid, nullptr, 0);
  }
  if (!waiting_.empty() && log_) log_(fmt::format("alert exec: {} alerts not delivered: `{}` took too long", waiting_.size(), command_));
}

void AlertHook::run(const std::string& json, double now) {
  if (command_.empty()) return;
  if (waiting_.size() >= kMaxWaiting) {
    if (log_) log_(fmt::format("alert exec: {} alerts wait for `{}` already; this one is dropped", waiting_.size(), command_));
    return;
  }
  waiting_.push_back(json);
  reap(now);
}

void AlertHook::start(const std::string& json, double now) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw IoError(std::string("alert exec: pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw IoError(std::string("alert exec: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fds[0], STDIN_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::signal(SIGPIPE, SIG_DFL);
    reset_stop_signals_in_child();
    ::execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before any kill
  ::close(fds[0]);
  const std::string line = json + "\n";
  const sighandler_t previous = ::signal(SIGPIPE, SIG_IGN);
  const ssize_t wrote = ::write(fds[1], line.data(), line.size());
  ::signal(SIGPIPE, previous);
  if (wrote != static_cast<ssize_t>(line.size()) && errno != EPIPE && log_)
    log_(fmt::format("alert exec: writing to the command failed: {}", std::strerror(errno)));
  ::close(fds[1]);
  running_.push_back({pid, now});
}

void AlertHook::reap(double now) {
  for (auto it = running_.begin(); it != running_.end();) {
    int status = 0;
    const pid_t r = ::waitpid(it->pid, &status, WNOHANG);
    if (r == it->pid || (r < 0 && errno == ECHILD)) {
      if (r == it->pid && log_ && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        log_(WIFEXITED(status) ? fmt::format("alert exec: `{}` exited {}", command_, WEXITSTATUS(status))
                               : fmt::format("alert exec: `{}` killed by signal {}", command_, WTERMSIG(status)));
      it = running_.erase(it);
      continue;
    }
    if (now - it->started_at > timeout_s_) {
      ::kill(-it->pid, SIGKILL);
      if (log_) log_(fmt::format("alert exec: `{}` ran over {:.0f} s; killed", command_, timeout_s_));
      ::waitpid(it->pid, &status, 0);
      it = running_.erase(it);
      continue;
    }
    ++it;
  }
  while (running_.empty() && !waiting_.empty()) {
    const std::string next = std::move(waiting_.front());
    waiting_.pop_front();
    try {
      start(next, now);
    } catch (const IoError& e) {
      if (log_) log_(e.what());
    }
  }
}

}  // namespace ragmig::monitor
