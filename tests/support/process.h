// Real processes for tests: run a command and capture its output and exit code, or start one in the
// background to signal it. Tests use these to drive the real `ragmig` binary.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stop_signal.h"

namespace ragmig::testing {

struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128 + signal when killed
  std::string output;  ///< stdout and stderr together
};

/// The JSON object a command printed: stdout and stderr share the pipe, so the text from its first '{' to its
/// last '}'. Throws, quoting the output, when there is none.
inline nlohmann::json output_json(const ProcessResult& r) {
  const size_t begin = r.output.find('{');
  const size_t end = r.output.rfind('}');
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    throw std::runtime_error("no JSON object in the command's output: " + r.output);
  return nlohmann::json::parse(r.output.substr(begin, end + 1 - begin));
}

/// Whether process `pid` is gone within `limit_s`: no /proc entry, or a zombie waiting for its (new) parent,
/// often init, to reap it.
inline bool process_gone_within(const std::string& pid, double limit_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in("/proc/" + pid + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');  // "pid (comm) S ...": comm may hold spaces and parentheses
    if (stat.empty() || (paren != std::string::npos && stat.compare(paren + 1, 2, " Z") == 0)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

/// Runs argv (no shell) to completion.
inline ProcessResult run_process(const std::vector<std::string>& argv) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    reset_stop_signals_in_child();  // a test that installed the stop handlers blocks them
    ::dup2(pipe_fd[1], 1);
    ::dup2(pipe_fd[1], 2);
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  ProcessResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0) r.output.append(buf, static_cast<size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

/// A process started in the background with its output sent to `log_path`.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& log_path) {
    pid_ = ::fork();
    if (pid_ == 0) {
      reset_stop_signals_in_child();  // a test that installed the stop handlers blocks them
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~BackgroundProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void signal(int sig) { ::kill(pid_, sig); }
  /// True while the process has not exited.
  bool running() {
    if (reaped_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return !reaped_;
  }
  /// Waits up to `seconds` for the process to exit; true when it did.
  bool wait_exit(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (running()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  int wait() {
    if (!reaped_) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace ragmig::testing
