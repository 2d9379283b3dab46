// fork/exec of one worker (see spawn.h). Everything the child needs is built before fork: after it only
// async-signal-safe calls are allowed.
#include "core/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/stop_signal.h"

extern char** environ;

namespace ragmig {

pid_t spawn_process(const SpawnOptions& o) {
  RAGMIG_CHECK(!o.argv.empty(), "spawn_process: empty argv");
  std::vector<std::string> added;
  for (const auto& [key, value] : o.env) added.push_back(key + "=" + value);
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) {
    bool replaced = false;
    for (const auto& [key, value] : o.env)
      replaced = replaced || (std::strncmp(*e, key.c_str(), key.size()) == 0 && (*e)[key.size()] == '=');
    if (!replaced) env.push_back(*e);
  }
  for (auto& s : added) env.push_back(s.data());
  env.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int log_fd = -1;
  if (!o.log_path.empty()) {
    log_fd = ::open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) throw IoError("cannot open " + o.log_path + ": " + std::strerror(errno));
  }

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    if (log_fd >= 0) ::close(log_fd);
    throw IoError(std::string("fork failed: ") + std::strerror(err));
  }
  if (pid == 0) {
    reset_stop_signals_in_child();
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    if (o.search_path) ::execvpe(args[0], args.data(), env.data());
    else ::execve(args[0], args.data(), env.data());
    const char* why = std::strerror(errno);
    (void)!::write(2, "ragmig: cannot run ", 19);
    (void)!::write(2, args[0], std::strlen(args[0]));
    (void)!::write(2, ": ", 2);
    (void)!::write(2, why, std::strlen(why));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  return pid;
}

}  // namespace ragmig
