// Everything the child does between fork and exec is async-signal-safe: argv and envp are built before
// fork. The attempt's lock is taken here before fork and inherited through exec by the shim and its
// workers, so it is held from the first instant until the last of them is gone.
#include "exec/process_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/atomic_file.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/local_port.h"
#include "core/shell_words.h"
#include "core/stop_signal.h"
#include "core/strings.h"
#include "exec/event_tail.h"
#include "exec/process_usage.h"
#include "sched/clock.h"

namespace ragmig::exec {
namespace fs = std::filesystem;
namespace {

using sched::unix_now;

std::vector<std::string> gpu_devices(const sched::Launch& launch) {
  std::vector<std::string> out;
  for (const auto& s : launch.slots)
    if (s.kind != sched::SlotKind::Cpu && !s.device.empty()) out.push_back(s.device);
  return out;
}

std::string events_path(const std::string& run_dir) { return (fs::path(run_dir) / "events.jsonl").string(); }

std::vector<std::string> slot_ids(const sched::Launch& launch) {
  std::vector<std::string> ids;
  for (const auto& s : launch.slots) ids.push_back(s.id);
  return ids;
}

// The shim's command line up to its "--" (the worker's own argv follows).
std::vector<std::string> shim_argv(const std::string& shim_exe, const sched::Launch& launch, int lock_fd) {
  std::vector<std::string> devices;
  for (const auto& s : launch.slots) devices.push_back(s.device);
  return {shim_exe,
          "--lock-fd",
          std::to_string(lock_fd),
          "--exit-file",
          attempt_exit_path(launch.run_dir, launch.attempt_id),
          "--run-dir",
          launch.run_dir,
          "--devices",
          nlohmann::json(devices).dump(),
          "--slots",
          nlohmann::json(slot_ids(launch)).dump(),
          "--"};
}

// The job protocol's variables of this attempt (the shim adds each replica's own), then the scheduler's
// environment less the names set here (getenv takes the first of two).
std::vector<std::string> worker_environment(const sched::Launch& launch, int cpu_slot_threads) {
  std::vector<std::string> env = {
      "RAGMIG_JOB_ID=" + std::to_string(launch.job),
      "RAGMIG_ATTEMPT=" + std::to_string(launch.attempt_number),
      "RAGMIG_RUN_DIR=" + fs::absolute(launch.run_dir).string(),
  };
  if (launch.slots.front().kind == sched::SlotKind::Cpu && cpu_slot_threads > 0) {
    env.push_back("OMP_NUM_THREADS=" + std::to_string(cpu_slot_threads));
    if (!openmp_waits_chosen()) env.push_back("OMP_WAIT_POLICY=PASSIVE");
  }
  if (launch.slots.size() > 1) {  // the rendezvous of a gang: a free local port for c10d's TCPStore
    env.push_back("MASTER_ADDR=127.0.0.1");
    const int port = first_free_local_port(sched::rendezvous_port(launch), kRendezvousPortLo, kRendezvousPortHi);
    env.push_back("MASTER_PORT=" + std::to_string(port));
  }
  const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  const size_t own = env.size();
  for (char** e = environ; *e; ++e)
    if (std::none_of(env.begin(), env.begin() + static_cast<std::ptrdiff_t>(own),
                     [&](const std::string& s) { return name_of(s) == name_of(*e); }))
      env.emplace_back(*e);
  return env;
}

// The run folder's worker.log, opened for appending, with a line that says which attempt writes what follows.
int open_worker_log(const sched::Launch& launch, const std::vector<std::string>& worker) {
  const std::string path = (fs::path(launch.run_dir) / "worker.log").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(path + ": " + std::strerror(errno));
  const std::string header =
      fmt::format("==> attempt {} of job {} on {} at {:.3f}: {}\n", launch.attempt_number, launch.job,
                  fmt::join(slot_ids(launch), ","), unix_now(), join_shell_words(worker));
  (void)!::write(fd, header.data(), header.size());
  return fd;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks and execs argv[0] in a session of its own, in `cwd` (if given), with stdin from /dev/null and stdout and
// stderr to `log_fd`, which it closes here. Only async-signal-safe calls between fork and exec.
pid_t spawn(std::vector<std::string>& argv, std::vector<std::string>& env, const std::string& cwd, int log_fd) {
  const std::vector<char*> args = c_strings(argv), envp = c_strings(env);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // its own session and process group: stopped as one, untouched by the terminal's signals
    reset_stop_signals_in_child();
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) throw IoError(std::string("fork failed: ") + std::strerror(fork_errno));
  return pid;
}

}  // namespace

sched::ExitStatus read_attempt_exit(const std::string& path) {
  sched::ExitStatus status;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    status.known = false;
    return status;
  }
  // Written by the shim, but in the job's own run folder: anything else there reads as unknown, never as an error.
  const auto j = nlohmann::json::parse(read_file(path), nullptr, false);
  const auto small = [&](const char* key, int fallback) -> std::optional<int> {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < -1 || it->get<int64_t>() > 255) return std::nullopt;
    return static_cast<int>(it->get<int64_t>());
  };
  const auto code = small("exit_code", -1), signal = small("signal", 0);
  if (!j.is_object() || !code || !signal) {
    status.known = false;
    return status;
  }
  status.exit_code = *code;
  status.signal = *signal;
  return status;
}

std::string attempt_lock_path(const std::string& run_dir, int64_t attempt_id) {
  return (fs::path(run_dir) / "attempts" / (std::to_string(attempt_id) + ".lock")).string();
}
std::string attempt_exit_path(const std::string& run_dir, int64_t attempt_id) {
  return (fs::path(run_dir) / "attempts" / (std::to_string(attempt_id) + ".exit")).string();
}

std::string find_shim(const std::string& ragmig_exe) {
  const fs::path shim = fs::path(ragmig_exe).parent_path() / "ragmig-shim";
  if (::access(shim.c_str(), X_OK) != 0)
    throw IoError(shim.string() + ": ragmig-shim not found beside the ragmig binary (it is built and installed with it)");
  return shim.string();
}

ProcessExecutor::ProcessExecutor(ProcessExecutorOptions options) : options_(std::move(options)) {
  RAGMIG_CHECK(!options_.shim_exe.empty() && !options_.ragmig_exe.empty(), "the executor needs both binaries");
}

ProcessExecutor::~ProcessExecutor() {
  for (auto& [job, a] : attempts_)  // reap finished children; live ones keep running and are re-adopted
    if (!a.adopted) ::waitpid(a.pid, nullptr, WNOHANG);
}

int64_t ProcessExecutor::start(const sched::Launch& launch) {
  RAGMIG_CHECK(!attempts_.count(launch.job), "job already running");
  RAGMIG_CHECK(!launch.slots.empty());
  std::error_code ec;
  fs::create_directories(fs::path(launch.run_dir) / "attempts", ec);
  if (ec) throw IoError(launch.run_dir + ": cannot create the run folder: " + ec.message());
  if (!launch.spec.cwd.empty() && !fs::is_directory(launch.spec.cwd, ec))
    throw IoError(launch.spec.cwd + ": the job's working folder does not exist");
  auto lock = FileLock::try_acquire(attempt_lock_path(launch.run_dir, launch.attempt_id), /*inheritable=*/true);
  if (!lock) throw IoError(attempt_lock_path(launch.run_dir, launch.attempt_id) + ": attempt already running");

  std::vector<std::string> worker = launch.spec.argv;
  if (worker[0] == "ragmig") worker[0] = options_.ragmig_exe;
  std::vector<std::string> argv = shim_argv(options_.shim_exe, launch, lock->fd());
  argv.insert(argv.end(), worker.begin(), worker.end());
  std::vector<std::string> env = worker_environment(launch, options_.cpu_slot_threads);
  const int log_fd = open_worker_log(launch, worker);
  const pid_t pid = spawn(argv, env, launch.spec.cwd, log_fd);
  lock->release();  // the child holds it now
  Attempt a;
  a.attempt_id = launch.attempt_id;
  a.pid = pid;
  a.run_dir = launch.run_dir;
  a.events_offset = launch.events_offset;
  a.devices = gpu_devices(launch);
  a.cpu_seconds = 0;
  a.cpu_at = unix_now();
  a.cores = cores_of(launch);
  attempts_[launch.job] = a;
  return pid;
}

void ProcessExecutor::stop(sched::JobId job, double grace_s) {
  const auto it = attempts_.find(job);
  if (it == attempts_.end()) return;
  Attempt& a = it->second;
  if (a.stop_requested) {  // asked again (a second Ctrl-C): a shorter grace brings the SIGKILL forward
    if (a.kill_at > 0) a.kill_at = std::min(a.kill_at, unix_now() + grace_s);
    return;
  }
  a.stop_requested = true;
  a.kill_at = unix_now() + grace_s;
  if (a.pid > 0) ::kill(-a.pid, SIGTERM);
}

sched::EventLines ProcessExecutor::read_events(sched::JobId job, Attempt& a) {
  const TailResult tail = read_new_lines(events_path(a.run_dir), a.events_offset);
  a.events_offset = tail.offset;
  return {job, a.attempt_id, tail.lines, tail.offset};
}

std::optional<sched::ExitStatus> ProcessExecutor::check_ended(sched::JobId job, Attempt& a) {
  sched::ExitStatus status;
  if (!a.adopted) {
    // Peek without reaping: while the shim is an unreaped zombie its pid (= the group id) cannot be reused,
    // so killing the group below hits only what is left of this attempt.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(a.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0)
      return std::nullopt;
    ::kill(-a.pid, SIGKILL);
    int raw = 0;
    pid_t r;
    do r = ::waitpid(a.pid, &raw, 0);
    while (r < 0 && errno == EINTR);
    if (r > 0 && WIFEXITED(raw)) {
      status.exit_code = WEXITSTATUS(raw);
      // The shim reports a worker killed by a signal as 128 + signal; its exit file has the signal itself.
      const auto file = read_attempt_exit(attempt_exit_path(a.run_dir, a.attempt_id));
      if (file.known && file.signal) {
        status.exit_code = -1;
        status.signal = file.signal;
      }
    } else if (r > 0 && WIFSIGNALED(raw)) {
      status.signal = WTERMSIG(raw);
    } else {
      status.known = false;
    }
  } else {
    // Not our child: the lock says when the last process of the attempt is gone, the exit file how.
    if (is_locked(attempt_lock_path(a.run_dir, a.attempt_id))) return std::nullopt;
    status = read_attempt_exit(attempt_exit_path(a.run_dir, a.attempt_id));
  }
  status.job = job;
  status.attempt_id = a.attempt_id;
  status.stop_requested = a.stop_requested;
  return status;
}

double ProcessExecutor::cores_of(const sched::Launch& launch) const {
  const bool on_cpu = !launch.slots.empty() && launch.slots.front().kind == sched::SlotKind::Cpu;
  return on_cpu ? static_cast<double>(launch.slots.size() * std::max(1, options_.cpu_slot_threads)) : 1.0;
}

sched::ExecUpdate ProcessExecutor::poll(double now) {
  (void)now;  // signals and CPU samples use the wall clock whatever the loop's clock says
  const double wall = unix_now();
  sched::ExecUpdate update;
  const bool sample = wall - last_usage_ >= options_.usage_interval_s;
  if (sample) last_usage_ = wall;
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    const sched::JobId job = it->first;
    Attempt& a = it->second;
    const auto ended = check_ended(job, a);
    auto events = read_events(job, a);  // after the exit check, so the last lines of an ended one are read
    if (!events.lines.empty()) update.events.push_back(std::move(events));
    if (ended) {
      update.exits.push_back(*ended);
      it = attempts_.erase(it);
      continue;
    }
    if (a.kill_at > 0 && wall >= a.kill_at && a.pid > 0) {
      ::kill(-a.pid, SIGKILL);
      a.kill_at = 0;
    }
    if (!a.devices.empty() && options_.device_utilization) {
      if (sample && a.pid > 0) {
        const auto u = options_.device_utilization(a.devices);
        update.usage.push_back({job, u ? *u : -1.0});
      }
    } else if (a.pid > 0 && wall - a.cpu_at >= (a.cpu_sampled ? 1.0 : 0.25) * options_.usage_interval_s) {
      // Each attempt's CPU share over its own windows, the first from its start and a quarter as long, so that a
      // slot is measured soon after its job starts (a sweep's report averages only when every busy slot is).
      const double cpu = session_cpu_seconds(a.pid);
      if (a.cpu_seconds >= 0 && cpu >= 0 && wall > a.cpu_at) {
        update.usage.push_back({job, std::max(0.0, cpu - a.cpu_seconds) / (wall - a.cpu_at) / a.cores});
        a.cpu_sampled = true;
      }
      a.cpu_seconds = cpu;
      a.cpu_at = wall;
    }
    ++it;
  }
  return update;
}

std::optional<sched::ExitStatus> ProcessExecutor::reattach(const sched::Launch& launch, int64_t pid) {
  const std::string lock = attempt_lock_path(launch.run_dir, launch.attempt_id);
  if (!is_locked(lock)) {
    sched::ExitStatus status = read_attempt_exit(attempt_exit_path(launch.run_dir, launch.attempt_id));
    status.job = launch.job;
    status.attempt_id = launch.attempt_id;
    return status;
  }
  if (pid <= 0) {  // the scheduler died before it recorded the pid: the shim wrote it into the lock file
    pid = whole_number(trim(read_file(lock), " \t\r\n"), 0).value_or(0);
  }
  Attempt a;
  a.attempt_id = launch.attempt_id;
  a.pid = static_cast<pid_t>(pid);
  a.adopted = true;
  a.run_dir = launch.run_dir;
  a.events_offset = launch.events_offset;
  a.devices = gpu_devices(launch);
  a.cores = cores_of(launch);
  attempts_[launch.job] = a;
  return std::nullopt;
}

}  // namespace ragmig::exec
