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
  int array_limit = 0;  ///< at most this many tasks of one job array run at once (--array=...%K); 0: no cap
};

/// The sbatch script of one attempt (sbatch's options are on its command line, shown in a comment): the job
/// protocol's variables, and ragmig-shim running the job's argv (SIGTERM to the script passed on to it), or for
/// a gang srun starting one task per replica.
std::string sbatch_script(const sched::Launch& launch, const SlurmOptions& options);

/// The sbatch options of attempts submitted as one job array of `tasks`, from those of one of them (`one`):
/// its log option replaced by /dev/null (array_script sends each task's output to its own run's worker.log),
/// and `--array=0-<tasks-1>[%limit]` (limit 0: none).
std::vector<std::string> array_arguments(const std::vector<std::string>& one, size_t tasks, int limit);

/// The script of a job array whose task i appends its output to `logs[i]` and runs the attempt script
/// `scripts[i]` in the same shell process (signals to the batch shell reach that script's trap).
std::string array_script(const std::vector<std::string>& scripts, const std::vector<std::string>& logs);

/// Where the executor keeps an attempt's Slurm job id ("123", or "123_4" for task 4 of an array), and that
/// id ("" when the attempt was not submitted to Slurm).
std::string slurm_id_path(const std::string& run_dir, int64_t attempt_id);
std::string recorded_slurm_id(const std::string& run_dir, int64_t attempt_id);

/// `squeue -h -r -o "%i|%T"`: job id (an array task's "123_4") -> state ("PENDING", "RUNNING", ...). Throws
/// DataError naming a line that is not "<id>|<STATE>".
std::map<std::string, std::string> parse_squeue(const std::string& text);

/// The scheduler's slots from `sinfo -h -N -o "%N|%c|%G"` (node, CPUs, GRES): each "gpu:<type>:<n>" GRES gives
/// n slots (a type shaped like a MIG profile, "1g.18gb", MIG slots; any other type or none whole GPUs), and
/// `cpu_slots` CPU slots per node (0: one per CPU on nodes without GPUs, none beside GPUs). Throws DataError
/// naming a line it cannot read, or when the slots would be more than 100,000.
std::vector<sched::Slot> slurm_slots(const std::string& sinfo_text, int cpu_slots);

/// The cluster's slots, read with sinfo. Throws DeviceError when Slurm does not answer or offers none.
std::vector<sched::Slot> read_slurm_slots(const SlurmOptions& options, int cpu_slots);

class SlurmExecutor : public sched::Executor {
 public:
  explicit SlurmExecutor(SlurmOptions options);

  /// Writes <run>/attempts/<id>.sbatch; the next poll submits it with the attempts started beside it: those
  /// asking for the same resources and options go as one job array (a sweep's trials started in one pass),
  /// a lone one as a plain job. Slurm's job id ("123", "123_4") goes to <run>/attempts/<id>.slurm-id; returns 0.
  /// An sbatch refusal (an unknown partition, a GRES no node has) ends the attempt with sbatch's words (exit
  /// code 127); a controller that does not answer ends it unknown (the job waits and is submitted again).
  int64_t start(const sched::Launch& launch) override;
  /// SIGTERM to the job's script (scancel --batch --signal=TERM), which passes it to the worker once, or to a
  /// gang's tasks (scancel --signal=TERM: the steps; srun itself would end its step), again at each poll until
  /// they end; scancel after `grace_s`; a job still pending is cancelled at once.
  void stop(sched::JobId job, double grace_s) override;
  sched::ExecUpdate poll(double now) override;
  /// The Slurm job id is the one in <run>/attempts/<id>.slurm-id (or `pid`, where an older store recorded
  /// it): adopted while squeue lists it.
  std::optional<sched::ExitStatus> reattach(const sched::Launch& launch, int64_t pid) override;
  double next_event_time(double now) override { return unsubmitted_.empty() ? now + options_.poll_interval_s : now; }

 private:
  struct Attempt {
    int64_t attempt_id = 0;
    std::string slurm_id;  ///< "" until submitted
    std::string script;
    std::vector<std::string> sbatch_args;
    std::string run_dir;
    int64_t events_offset = 0;
    std::string state = "PENDING";  ///< as squeue last said
    bool stop_requested = false;
    double kill_at = 0;  ///< wall clock; 0 = no scancel due
    bool gang = false;   ///< replicas started by srun as the job's tasks
    double signalled_at = 0;
  };
  void submit_started(std::vector<sched::ExitStatus>& exits);
  /// SIGTERM to the attempt's workers: the batch script's (which passes it on) or a gang's tasks.
  void signal_stop(Attempt& a);
  /// Slurm's jobs of this user, or nullopt when squeue does not answer (the controller is down: nothing is
  /// concluded from that).
  std::optional<std::map<std::string, std::string>> queue();

  SlurmOptions options_;
  std::string user_;
  std::map<sched::JobId, Attempt> attempts_;
  std::vector<sched::JobId> unsubmitted_;  ///< started since the last poll, in order
  double last_queue_ = 0;
};

}  // namespace ragmig::exec
