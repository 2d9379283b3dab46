// The executor of `ragmig run`: one real process session per attempt. It starts `ragmig-shim` (which
// starts the workers) with the job protocol's environment, logs to the run folder, tails events.jsonl,
// stops with SIGTERM then SIGKILL, and re-adopts attempts that outlived a previous scheduler.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/executor.h"

namespace ragmig::exec {

struct ProcessExecutorOptions {
  std::string ragmig_exe;          ///< the ragmig binary, run where a job's argv[0] is "ragmig"
  std::string shim_exe;            ///< ragmig-shim, the per-attempt process (exec/shim.h)
  double usage_interval_s = 2.0;   ///< how often utilisation is sampled (a CPU job's first window is a quarter of it)
  double poll_interval_s = 0.2;    ///< how often the loop should poll when nothing else is due
  /// Threads of a job on CPU slots, per slot (each replica holds one): its OMP_NUM_THREADS, which LibTorch,
  /// `ragmig train` and other OpenMP programs take as their thread count, so jobs side by side share the
  /// cores instead of each starting one thread per core. 0: not set. Such jobs' OpenMP threads also sleep
  /// when idle (OMP_WAIT_POLICY=PASSIVE) unless the scheduler's environment says otherwise (core/cpu_threads.h).
  int cpu_slot_threads = 0;
  /// Utilisation (0..1) of the GPU or MIG devices a job's slots name, nullopt when unknown. Set: jobs on
  /// GPU slots report it (or unknown) instead of their CPU time, which says nothing of a GPU. Unset:
  /// every job reports CPU time.
  std::function<std::optional<double>(const std::vector<std::string>& devices)> device_utilization;
};

/// ragmig-shim beside the ragmig binary `ragmig_exe`. Throws IoError if it is not there.
std::string find_shim(const std::string& ragmig_exe);

/// Files of attempt `attempt_id` under its run folder: attempts/<id>.lock and attempts/<id>.exit.
std::string attempt_lock_path(const std::string& run_dir, int64_t attempt_id);
std::string attempt_exit_path(const std::string& run_dir, int64_t attempt_id);
/// How an attempt ended, from the shim's exit file there; unknown (known = false) when the shim left none
/// (it was SIGKILLed, or never ran) or the file says something else (the job's own command can write there).
sched::ExitStatus read_attempt_exit(const std::string& path);

class ProcessExecutor : public sched::Executor {
 public:
  explicit ProcessExecutor(ProcessExecutorOptions options);
  ~ProcessExecutor() override;

  int64_t start(const sched::Launch& launch) override;
  void stop(sched::JobId job, double grace_s) override;
  sched::ExecUpdate poll(double now) override;
  std::optional<sched::ExitStatus> reattach(const sched::Launch& launch, int64_t pid) override;
  double next_event_time(double now) override { return now + options_.poll_interval_s; }

  /// Jobs with a live attempt.
  size_t running() const { return attempts_.size(); }

 private:
  struct Attempt {
    int64_t attempt_id = 0;
    pid_t pid = 0;          ///< the shim: leader of the attempt's session and process group
    bool adopted = false;   ///< not our child: its end is seen through the lock, its status in the exit file
    std::string run_dir;
    int64_t events_offset = 0;
    bool stop_requested = false;
    double kill_at = 0;     ///< SIGKILL at this time once stopping (0 = not stopping)
    /// The session's CPU seconds at cpu_at: 0 at its start for an attempt we spawned (a new session has used
    /// none), not known (-1) for an adopted one until its first sample.
    double cpu_seconds = -1, cpu_at = 0;
    bool cpu_sampled = false;  ///< a utilisation has been reported (its first window is shorter)
    double cores = 1;  ///< what its CPU slots give it (threads per slot x slots): CPU seconds per second at 100 %
    std::vector<std::string> devices;  ///< the GPU/MIG devices of its slots; empty on CPU slots
  };

  std::optional<sched::ExitStatus> check_ended(sched::JobId job, Attempt& a);
  /// The cores a launch's CPU slots give it (threads per slot x slots); 1 on GPU slots.
  double cores_of(const sched::Launch& launch) const;
  sched::EventLines read_events(sched::JobId job, Attempt& a);

  ProcessExecutorOptions options_;
  std::map<sched::JobId, Attempt> attempts_;
  double last_usage_ = 0;
};

}  // namespace ragmig::exec
