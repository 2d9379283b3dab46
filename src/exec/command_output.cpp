// run_command (see command_output.h): fork/exec with two pipes read through poll(), so neither fills up.
// The command runs in its own process group, and the time limit's kill goes to the group: a site's sbatch is
// often a wrapper script, and killing the script alone would leave what it started running.
#include "exec/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/stop_signal.h"

namespace ragmig::exec {

CommandOutput run_command(const std::vector<std::string>& argv, double timeout_s) {
  RAGMIG_CHECK(!argv.empty());
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw IoError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw IoError(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    reset_stop_signals_in_child();
    ::execvp(args[0], args.data());
    const std::string why = std::string(argv[0]) + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, why.data(), why.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before any kill
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CommandOutput result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  bool timed_out = false;
  for (int open = 2; open > 0;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int raw = 0;
  pid_t r;
  do r = ::waitpid(pid, &raw, 0);
  while (r < 0 && errno == EINTR);
  if (timed_out) result.exit_code = 124;
  else if (WIFEXITED(raw)) result.exit_code = WEXITSTATUS(raw);
  else if (WIFSIGNALED(raw)) result.exit_code = 128 + WTERMSIG(raw);
  return result;
}

}  // namespace ragmig::exec
