// The Executor interface between the scheduler loop and whatever runs jobs: real worker processes
// (exec::ProcessExecutor) or the simulator's throughput model (sim::SimExecutor). The loop only starts,
// stops and polls; it never learns which one it drives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/local_port.h"
#include "sched/job.h"
#include "sched/slot.h"

namespace ragmig::sched {

/// One attempt to run a job: where, what, and where its run folder is.
struct Launch {
  JobId job = 0;
  int64_t attempt_id = 0;
  int64_t attempt_number = 0;
  JobSpec spec;
  std::vector<Slot> slots;      ///< one per replica
  std::string run_dir;
  int64_t events_offset = 0;    ///< bytes of <run>/events.jsonl the store already has
};

/// The TCP port a gang's rank 0 listens on for its rendezvous (MASTER_PORT), in [kRendezvousPortLo,
/// kRendezvousPortHi) (core/local_port.h): drawn from the attempt and its run folder, so that gangs of two
/// schedulers on one host or Slurm node (each state folder counts its jobs from 1) do not meet on one port, and a
/// retry does not wait for the last one's to close. An executor on the gang's own machine starts its search for a
/// free port here.
int rendezvous_port(const Launch& launch);

/// How an attempt ended. `known` is false when it ended while nobody watched and left no status.
struct ExitStatus {
  JobId job = 0;
  int64_t attempt_id = 0;
  int exit_code = -1;           ///< -1 when killed by a signal
  int signal = 0;
  bool known = true;
  bool stop_requested = false;  ///< the executor had been asked to stop it
  std::string error;            ///< why the executor could not start it ("" when it ran)
};

/// New lines of a job's events.jsonl since the last poll, and the file offset after them.
struct EventLines {
  JobId job = 0;
  int64_t attempt_id = 0;
  std::vector<std::string> lines;
  int64_t offset = 0;
};

/// The share of its slots a running job uses (CPU time per wall second per slot for CPU slots).
struct Usage {
  JobId job = 0;
  double utilization = -1;
};

struct ExecUpdate {
  std::vector<ExitStatus> exits;
  std::vector<EventLines> events;
  std::vector<Usage> usage;
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// Starts an attempt. Returns the process id that identifies it (0 where there is none).
  /// Throws IoError when it cannot start.
  virtual int64_t start(const Launch& launch) = 0;
  /// Asks a running attempt to checkpoint and stop (SIGTERM), and forces it (SIGKILL) after `grace_s`. Asked
  /// again, a shorter grace brings the SIGKILL forward.
  virtual void stop(JobId job, double grace_s) = 0;
  /// Exits, events and usage since the last poll.
  virtual ExecUpdate poll(double now) = 0;
  /// An attempt the store says is open when the scheduler starts (it died while the attempt ran): adopt
  /// it if it still runs (nullopt; its exit comes through poll later), or say how it ended.
  virtual std::optional<ExitStatus> reattach(const Launch& launch, int64_t pid) = 0;
  /// The latest time the loop should poll again (a simulator knows its next completion).
  virtual double next_event_time(double now) = 0;
  /// Asks the job to train at global batch `batch_size` from its next step boundary, or from the start of its
  /// next attempt (the job protocol's Resize). By default <run_dir>/control.json, which a worker reads between
  /// steps and at its start, written atomically.
  virtual void request_batch_size(JobId job, const std::string& run_dir, int64_t batch_size);
};

}  // namespace ragmig::sched
