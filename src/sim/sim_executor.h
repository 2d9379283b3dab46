// The simulator's Executor: instead of processes, each running job advances by the throughput model's
// seconds per iteration on its slots, and ends when its iterations are done. A stop (preemption) ends the
// attempt with exit 75 after a checkpoint overhead, and a resumed attempt pays a restart overhead first —
// so the scheduler sees exactly the exits a real worker gives it.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/clock.h"
#include "sched/executor.h"
#include "sim/throughput.h"

namespace ragmig::sim {

/// What preempting and re-partitioning cost, in seconds.
struct SimCosts {
  double checkpoint_s = 10;   ///< from the stop request to the exit: the worker writes its checkpoint
  double restart_s = 20;      ///< at the start of a resumed attempt: process start, loading the checkpoint
  double mig_step_s = 2;      ///< per MIG destroy or create step of a re-partition
};

/// One job's time on one slot, for the timeline and utilisation.
struct Occupancy {
  std::string slot, profile;
  sched::JobId job = 0;
  double start = 0, end = 0;
  std::string outcome;  ///< "done", "preempted", or "repartition" (job 0: the slot was being re-partitioned)
};

class SimExecutor : public sched::Executor {
 public:
  /// `clock` is the simulation's clock (start() has no time argument). With `keep_timeline`, every
  /// attempt's occupancy is kept for timeline().
  SimExecutor(const ThroughputModel& model, SimCosts costs, sched::Clock& clock, bool keep_timeline);

  /// Tells the executor the work of a submitted job: `iterations` of `type`; for a resizable job its memory
  /// per replica at `batch_size` is `memory_mb`, `fixed_mb` of it independent of the batch.
  void add_job(sched::JobId id, const std::string& type, double iterations, int64_t batch_size = 0,
               double memory_mb = 0, double fixed_mb = 0);
  /// A resizable job trains at `batch_size` from its next attempt on (a running one: at once; its samples per
  /// second do not change). An attempt started where its batch does not fit runs out of memory at once: it
  /// says so in its events ("oom", as the trainer does) and exits 1.
  void request_batch_size(sched::JobId job, const std::string& run_dir, int64_t batch_size) override;

  int64_t start(const sched::Launch& launch) override;
  void stop(sched::JobId job, double grace_s) override;
  sched::ExecUpdate poll(double now) override;
  std::optional<sched::ExitStatus> reattach(const sched::Launch& launch, int64_t pid) override;
  /// The next attempt end; +infinity when nothing runs.
  double next_event_time(double now) override;

  size_t running() const { return running_; }
  int64_t preemptions() const { return preemptions_; }
  /// Compute-slice-seconds during which slots were held (whole GPU = 7 slices, CPU slot = 1).
  double busy_slice_seconds() const { return busy_slice_s_; }
  const std::vector<Occupancy>& timeline() const { return timeline_; }

 private:
  struct Job {
    std::string type;
    double remaining = 0;        ///< iterations left at the start of the current attempt
    bool running = false, stopping = false, resumed = false;
    int64_t attempt_id = 0;
    double started = 0, productive_from = 0, seconds_per_iteration = 1, end_at = 0;
    int compute = 0;             ///< slices held
    std::vector<std::pair<std::string, std::string>> slots;  ///< (id, profile), only with keep_timeline
    uint64_t version = 0;        ///< bumped when end_at moves: heap entries of older versions are stale
    int64_t batch = 0;           ///< resizable jobs: the batch it trains at
    double fixed_mb = 0, per_sample_mb = 0;
    bool out_of_memory = false;  ///< the running attempt ran out of memory at its start
    std::vector<std::string> events;  ///< event lines not yet polled
    int64_t events_offset = 0;
  };
  struct Event {
    double at;
    sched::JobId job;
    uint64_t version;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : job > o.job; }
  };

  void schedule(sched::JobId id, Job& job);

  const ThroughputModel& model_;
  SimCosts costs_;
  sched::Clock& clock_;
  bool keep_timeline_;
  std::unordered_map<sched::JobId, Job> jobs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  size_t running_ = 0;
  int64_t preemptions_ = 0;
  double busy_slice_s_ = 0;
  std::vector<Occupancy> timeline_;
  std::vector<sched::JobId> with_events_;  ///< jobs whose attempts wrote events since the last poll
};

}  // namespace ragmig::sim
