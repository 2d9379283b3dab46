// The Slurm backend (`ragmig run --backend slurm`): an executor beside the process executor, under the same
// scheduler, store and job protocol. Each attempt becomes one sbatch job whose script runs ragmig-shim and
// the job's command line, exactly as the process executor does on this machine, so events.jsonl,
// checkpoints, exit 75 and the shim's exit file work on the cluster's shared file system. Slurm places it:
// the scheduler's slots stand for the cluster's GRES (a MIG slot becomes --gres=gpu:<profile>:1). A gang (a
// data-parallel job) is one Slurm task per replica, on one node or several, started by srun. squeue says
// which attempts still live; the exit file says how one ended.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/executor.h"
#include "sched/slot.h"

namespace ragmig::exec {

struct SlurmOptions {
  std::string ragmig_exe, shim_exe;  ///< as the process executor's: on the shared file system
  std::string partition, account, qos, time_limit;  ///< sbatch's options of these names ("" = Slurm's default)
  std::vector<std::string> sbatch_options;          ///< more sbatch options, one word each ("--constraint=a100")
  double poll_interval_s = 1.0;                     ///< squeue at most this often
  double command_timeout_s = 30;                    ///< sbatch, squeue, scancel, sinfo
  int time_limit_signal_s = 120;                    ///< SIGTERM this long before a job's time limit (--signal)
};

/// The sbatch script of one attempt (sbatch's options are on its command line, shown in a comment): the job
/// protocol's variables, and ragmig-shim running the job's argv, with SIGTERM to the script passed on to them.
std::string sbatch_script(const sched::Launch& launch, const SlurmOptions& options);

/// `squeue -h -o "%i|%T"`: job id -> state ("PENDING", "RUNNING", ...). Throws DataError naming a line that
/// is not "<id>|<STATE>".
std::map<std::string, std::string> parse_squeue(const std::string& text);

/// The scheduler's slots from `sinfo -h -N -o "%N|%c|%G"` (node, CPUs, GRES): each "gpu:<type>:<n>" GRES gives
/// n slots (a type shaped like a MIG profile, "1g.18gb", MIG slots; any other type or none whole GPUs), and
/// `cpu_slots` CPU slots per node (0: one per CPU on nodes without GPUs, none beside GPUs). Throws DataError
/// naming a line it cannot read.
std::vector<sched::Slot> slurm_slots(const std::string& sinfo_text, int cpu_slots);

/// The cluster's slots, read with sinfo. Throws DeviceError when Slurm does not answer or offers none.
std::vector<sched::Slot> read_slurm_slots(const SlurmOptions& options, int cpu_slots);

class SlurmExecutor : public sched::Executor {
 public:
  explicit SlurmExecutor(SlurmOptions options);

  /// Writes <run>/attempts/<id>.sbatch and submits it; returns Slurm's job id. Throws IoError with sbatch's
  /// own words when it refuses (an unknown partition, a GRES no node has), UnavailableError when the
  /// controller does not answer (the job waits and is submitted again).
  int64_t start(const sched::Launch& launch) override;
  /// SIGTERM to the job's script (scancel --batch --signal=TERM), which passes it to the worker once, or to a
  /// gang's tasks (scancel --signal=TERM: the steps; srun itself would end its step), again at each poll until
  /// they end; scancel after `grace_s`; a job still pending is cancelled at once.
  void stop(sched::JobId job, double grace_s) override;
  sched::ExecUpdate poll(double now) override;
  /// `pid` is the Slurm job id the store recorded: adopted while squeue lists it.
  std::optional<sched::ExitStatus> reattach(const sched::Launch& launch, int64_t pid) override;
  double next_event_time(double now) override { return now + options_.poll_interval_s; }

 private:
  struct Attempt {
    int64_t attempt_id = 0;
    std::string slurm_id;
    std::string run_dir;
    int64_t events_offset = 0;
    std::string state = "PENDING";  ///< as squeue last said
    bool stop_requested = false;
    double kill_at = 0;  ///< wall clock; 0 = no scancel due
    bool gang = false;   ///< replicas started by srun as the job's tasks
    double signalled_at = 0;
  };
  /// SIGTERM to the attempt's workers: the batch script's (which passes it on) or a gang's tasks.
  void signal_stop(Attempt& a);
  /// Slurm's jobs of this user, or nullopt when squeue does not answer (the controller is down: nothing is
  /// concluded from that).
  std::optional<std::map<std::string, std::string>> queue();

  SlurmOptions options_;
  std::string user_;
  std::map<sched::JobId, Attempt> attempts_;
  double last_queue_ = 0;
};

}  // namespace ragmig::exec
