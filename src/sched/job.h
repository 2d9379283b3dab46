// What the scheduler schedules: a job is a command line with resource needs, a priority and an estimate of
// its work (DESIGN.md, "the job protocol"). sched knows nothing of training: a job is argv plus a Need.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ragmig::sched {

using JobId = int64_t;

/// What kind of slot a job can run on.
enum class SlotKind { Cpu, Gpu, Mig };

/// The resources one job asks for: `replicas` slots, each a CPU slot, or a GPU slice with at least
/// `min_compute` of a GPU's 7 compute slices and `min_memory_mb` of memory. Written as a string
/// "<what>:<replicas>" where <what> is `cpu`, `gpu` (a whole GPU), a MIG profile (`1g.18gb`: at least
/// one compute slice and 18 GB) or a memory need (`20gb`: any GPU slice with at least 20 GB).
struct Need {
  bool cpu = true;            ///< a CPU slot; otherwise a GPU slice (whole GPU or MIG instance)
  std::string what = "cpu";   ///< as written: "cpu", "gpu", "1g.18gb", "20gb"
  int min_compute = 0;        ///< compute slices (GPU needs only; a whole GPU has 7)
  int64_t min_memory_mb = 0;  ///< MiB (GPU needs only)
  int replicas = 1;
};

/// Parses "cpu:1", "gpu:2", "1g.18gb:1", "3g.71gb+me:1", "20gb:4"; ":<replicas>" may be left out (1).
/// Throws ConfigError naming the string and what was expected.
Need parse_need(const std::string& text);
/// The canonical "<what>:<replicas>"; parse_need(to_string(n)) == n.
std::string to_string(const Need& need);

/// A job as submitted. `estimate_s` is the work in seconds on a slot of speed 1 (0 = unknown; policies
/// that rank by it treat unknown as the longest).
struct JobSpec {
  std::string name;
  std::vector<std::string> argv;  ///< argv[0] == "ragmig" runs the scheduler's own binary
  std::string cwd;                ///< where it runs (like Slurm: where it was submitted); "" = the scheduler's
  Need need;
  int64_t priority = 0;           ///< larger runs first under `priority`
  double estimate_s = 0;
  int64_t max_retries = 3;        ///< failures beyond this end the job `failed`
  /// The global batch the command trains at, with the memory `need` names; 0 = not resizable. With
  /// min_batch_size > 0, a policy with dynamic batch (policy.h) may start it at any batch down to that one on a
  /// slice with less memory, and grow it back (the job protocol's Resize, <run>/control.json).
  int64_t batch_size = 0;
  int64_t min_batch_size = 0;
  bool resizable() const { return batch_size > 0 && min_batch_size > 0; }

  /// The job's work counted when it was submitted (`ragmig submit` counts a `ragmig train` command's:
  /// train/work_estimate.h): `flops` in all (its evaluations too), `steps` training steps (its max_steps; 0 = not
  /// said) of `step_flops` each at `batch_size` samples (0 for a job without steps: a sweep's evaluation). The
  /// scheduler measures FLOP/s from the steps of the jobs that have them and keeps estimate_s at the job's FLOPs
  /// over that rate (work_pricer.h), so an evaluation costs its FLOPs at the training's speed; once a job with
  /// `steps` reports progress, at what it has done plus what is left of its steps at the batch it now trains at
  /// and of its evaluations: `eval_steps`, the steps after which it evaluates (each costing an equal share of
  /// flops - steps x step_flops; empty: all of that share is left until it ends).
  /// flops == 0: not counted, and estimate_s is the submitter's.
  struct Work {
    double flops = 0;
    double step_flops = 0;
    int64_t batch_size = 0;
    int64_t steps = 0;
    std::vector<int64_t> eval_steps = {};
  };
  Work work;
};

nlohmann::json to_json(const JobSpec& spec);
/// Inverse of to_json; `where` names the source in errors (a file, "store row 12"). Throws DataError.
JobSpec job_spec_from_json(const nlohmann::json& j, const std::string& where);

/// Reads a job file (TOML): name, argv = [..] or cmd = "..", slots = "cpu:1", priority, estimate_s,
/// max_retries. Unknown keys and wrong types are a ConfigError naming file and key.
JobSpec read_job_file(const std::string& path);

/// Validates what every spec must satisfy (non-empty argv, replicas >= 1, retries >= 0, estimate >= 0).
/// Throws ConfigError.
void validate(const JobSpec& spec);

/// A job's life. queued -> running -> (done | failed | cancelled | queued again after a preemption or a
/// retryable failure). Terminal states never change.
enum class JobState { Queued, Running, Done, Failed, Cancelled };

std::string to_string(JobState state);
/// Throws DataError for an unknown name.
JobState parse_job_state(const std::string& text);
bool is_terminal(JobState state);

}  // namespace ragmig::sched
