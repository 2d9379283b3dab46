// The scheduler loop, the same for `ragmig run` and the simulator: poll the executor, fold exits and
// events into the store, pick up submissions and cancels made by other processes, ask the policy, and
// carry out its decisions. It takes a Clock and an Executor; nothing in it knows which ones.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <string>
#include <vector>

#include "sched/attempt_end.h"
#include "sched/clock.h"
#include "sched/executor.h"
#include "sched/job_table.h"
#include "sched/policy.h"
#include "sched/work_pricer.h"

namespace ragmig::sched {

struct SchedulerOptions {
  std::string policy = "fifo";
  double tick_s = 0.5;          ///< longest wait between two passes when nothing happens
  double grace_s = 60;          ///< SIGTERM to SIGKILL when stopping a job
  double backoff_s = 5;         ///< first retry delay after a failure; doubles per failure
  double backoff_max_s = 600;
  /// The slots on offer are all there will be (false under --mig auto, which makes slots for the queue): a
  /// queued job that no combination of them can hold is marked unrunnable.
  bool slots_fixed = true;
};

/// Told what the loop learns as it learns it, for monitoring: the workers' new events, how each attempt ended,
/// and how long each pass took. Called on the loop's thread, so it must be quick.
class SchedulerListener {
 public:
  virtual ~SchedulerListener() = default;
  /// A worker's new events, parsed (lines that are not JSON objects left out).
  virtual void on_events(JobId job, const std::vector<nlohmann::json>& events, double now) = 0;
  /// `job` as it was while the attempt ran (slots, attempt number).
  virtual void on_attempt_end(const JobRecord& job, const AttemptEnd& end, double now) = 0;
  /// One pass of step(), timed on the steady clock (the pass's own cost, whatever the Clock).
  virtual void on_pass(double seconds) = 0;
};

class Scheduler {
 public:
  using Log = std::function<void(const std::string&)>;
  /// Throws ConfigError for an unknown policy.
  Scheduler(JobTable& store, Executor& executor, Clock& clock, std::vector<Slot> slots, SchedulerOptions options,
            Log log = nullptr);

  /// Reconciles attempts left open by a previous scheduler: adopts those still running, closes the rest
  /// (their jobs requeue and resume from their checkpoints). Call once before the first step (run() calls it
  /// unless it was called already).
  void recover();
  /// One pass of the loop.
  void step();
  /// Loops until `should_stop()` or, with until_empty, until no job is queued or running. On a stop,
  /// running jobs are stopped (checkpointed) and requeued before it returns. `after_step`, when given, runs
  /// after every pass (a MIG re-partition between passes, which may call set_slots). Slots set there are
  /// taken at once: the next pass runs without waiting for the tick (as the simulator's does; once in a row).
  /// `hurry`: see shutdown().
  void run(bool until_empty, const std::function<bool()>& should_stop, const std::function<void()>& after_step = {},
           const std::function<bool()>& hurry = {});
  /// Stops every running job and waits for them (up to the grace period plus a margin). Once `hurry()` says so
  /// (a second Ctrl-C), the jobs still running are killed at once instead of being waited for.
  void shutdown(const std::function<bool()>& hurry = {});

  /// Queues a job from inside this process (the simulator's arrivals, a program that embeds the scheduler):
  /// the same JobTable::submit as `ragmig submit`, which the next step() sees without re-reading the store.
  JobId submit(const JobSpec& spec);
  /// Cancels a job from inside this process (a sweep stopping a trial early): the same
  /// JobTable::request_cancel as `ragmig cancel`; a running job is stopped at once (SIGTERM: it checkpoints)
  /// and ends `cancelled`. `reason` goes into the transition log. A finished job is left alone.
  void cancel(JobId id, const std::string& reason);
  /// Replaces a queued or running job's estimate (JobTable::set_estimate), for the policies from the next pass.
  void set_estimate(JobId id, double estimate_s);
  /// Replaces the slots on offer (a MIG re-partition creates and destroys slots). Every slot that a running
  /// job holds must stay, under the same id. `awaiting`: queued jobs held for slots still being made for
  /// them (ClusterView::awaiting); slots made for a job carry Slot::reserved_for. `plan_waiting`: queued jobs
  /// a MIG plan left waiting (ClusterView::plan_waiting).
  void set_slots(std::vector<Slot> slots, std::vector<JobId> awaiting = {}, std::vector<JobId> plan_waiting = {});
  /// Checkpoints and stops a running job so that it can move (a MIG re-partition for a better layout): it
  /// requeues, as after a preemption. `reason` goes into the log. Does nothing to a job that is not running.
  void migrate(JobId id, const std::string& reason);
  /// The view the policy would be given now.
  const ClusterView& cluster_view() {
    refresh_view(clock_.now());
    return view_;
  }

  /// Active (queued or running) jobs as last seen.
  size_t active_jobs() const { return active_.size(); }
  /// The active jobs themselves (step, samples/s and checkpoint as the workers last reported).
  const std::map<JobId, JobRecord>& active() const { return active_; }
  /// Slot `i`'s row as `ragmig status` shows it: who runs there and the share of it they use.
  SlotStatus slot_status(size_t i, double now) const;
  /// Monitoring; null for none. The listener must outlive the scheduler's loop.
  void set_listener(SchedulerListener* listener) { listener_ = listener; }
  /// Called in every pass once the workers' exits and events are taken and before the policy decides, on the
  /// loop's thread: what it submits or cancels (through submit() and cancel()) counts in this pass's decision.
  /// A sweep submits a finished trial's evaluation there, so the slot that training frees goes to it rather
  /// than to a queued training the pass would otherwise start first.
  void set_before_decide(std::function<void()> hook) { before_decide_ = std::move(hook); }
  /// Where this scheduler's /metrics listens, written with its heartbeat for `ragmig status`.
  void set_metrics_url(std::string url) { metrics_url_ = std::move(url); }
  /// Queued jobs as last seen (backing-off ones included).
  size_t queued_jobs() const { return queued_; }
  /// When the first queued job backing off after a failure may start again, as of the last pass; nullopt: none.
  std::optional<double> next_retry_at() const;
  /// Queued jobs that no combination of the slots on offer can hold, with the reason (SchedulerOptions::
  /// slots_fixed); run(until_empty) does not wait for them.
  const std::map<JobId, std::string>& unrunnable() const { return unrunnable_; }
  const std::vector<Slot>& slots() const { return slots_; }
  /// The FLOP rate on a speed-1 slot that jobs stating their work are priced at, as measured so far (nullopt
  /// before any such job's progress).
  std::optional<double> work_rate() const { return pricer_.rate(); }
  const Policy& policy() const { return policy_; }

 private:
  enum class StopReason { Preempt, Cancel, Shutdown };

  void pass();  ///< step() without its timing
  void reload();
  void reload(JobId id);
  void handle_exit(const ExitStatus& status);
  void handle_events(const EventLines& lines);
  /// Keeps the estimates of the jobs that stated their work at the rate measured so far (work_pricer.h), when
  /// something they depend on changed since the last time (prices_stale_).
  void price_work();
  /// A job that stated its work leaves for good: its progress window goes, and the prices are looked at again.
  void forget_work(const JobRecord& job);
  /// Asks a worker for another batch size (the job protocol's Resize, through the executor), noted in the store.
  void request_batch_size(JobId id, int64_t batch_size, const std::string& why, double now);
  void refresh_view(double now);
  bool view_entry(const JobRecord& job, JobView& entry) const;
  MemoryModel memory_of(const JobRecord& job) const;  ///< learned, else the prior from its spec
  /// The speed of the slowest of the slots `job` holds that this scheduler has: what a gang's work accrues at
  /// (JobView::work_s); nullopt when it holds none of them.
  std::optional<double> slowest_slot_speed(const JobRecord& job) const;
  void index_slots(const JobRecord& job);
  void hold(JobId id, std::vector<int> slots);
  void release(JobId id);
  /// A checkpoint newer than the one the running attempt started from (true when unknown: adopted attempts).
  bool made_progress(const JobRecord& job) const;
  AttemptFacts attempt_facts(const JobRecord& job, const ExitStatus& status, double now) const;
  void start(const StartDecision& start, double now);
  void stop(JobId id, StopReason why, const std::string& reason);
  void write_slot_status(double now);
  double slot_utilization(size_t i) const;  ///< of slot i's job; -1 unknown or free
  void check_runnable();  ///< brings unrunnable_ up to date with the jobs and slots that changed
  Launch launch_for(const JobRecord& job) const;
  void say(const std::string& line) const;

  JobTable& store_;
  Executor& executor_;
  Clock& clock_;
  std::vector<Slot> slots_;
  std::unordered_map<std::string, int> slot_index_;
  SchedulerOptions options_;
  Policy policy_;
  Log log_;
  SchedulerListener* listener_ = nullptr;
  std::function<void()> before_decide_;
  std::string metrics_url_;
  std::map<JobId, JobRecord> active_;
  std::map<JobId, StopReason> stopping_;
  std::map<JobId, std::string> cancel_reasons_;  ///< cancels from this process (cancel()), for the log
  std::map<JobId, int64_t> start_checkpoint_;    ///< running jobs: their checkpoint step when the attempt started
  std::map<JobId, double> utilization_;
  std::map<JobId, int64_t> batch_size_;   ///< the batch size each worker last said it trains at (its events)
  std::map<JobId, int64_t> requested_batch_;  ///< the batch size last asked of each job (request_batch_size)
  std::map<JobId, MemoryModel> memory_;   ///< learned from each job's events and out-of-memory exits
  std::map<JobId, int64_t> oom_attempt_;  ///< the attempt whose worker last reported running out of memory
  WorkPricer pricer_;                     ///< prices the jobs that stated their work (JobSpec::work)
  /// A job that states its work arrived, changed or left, or one reported progress (the rate may have moved):
  /// price_work() looks at the estimates again. A pass costs what changed, not every such job.
  bool prices_stale_ = false;
  double said_rate_ = -1;  ///< the median rate the log last named (0: none measured; -1: nothing said yet)
  double last_status_write_ = -1;
  // Kept between passes so that a pass costs what changed, not what exists.
  ClusterView view_;                         ///< the policy's input, refreshed in place
  std::vector<JobId> view_dirty_;            ///< jobs whose entry is out of date
  std::vector<JobId> held_back_;             ///< queued jobs left out (backing off, cancelled): rechecked
  bool view_stale_ = true;                   ///< rebuild every entry (slots or all jobs re-read)
  bool check_cancels_ = true;                ///< a reload may have brought cancel requests
  std::unordered_map<JobId, std::vector<int>> held_;  ///< running jobs: indices of the slots they hold (hold/release)
  size_t queued_ = 0;                        ///< queued jobs in active_
  std::vector<JobId> written_owner_;         ///< slot status as last written (job per slot)
  std::vector<double> written_utilization_;
  std::vector<JobId> slot_owner_;            ///< the running job on each slot (0: none), as held_ says
  std::vector<int> status_dirty_;            ///< slots whose status row may have changed
  bool status_stale_ = true;                 ///< rewrite every row (all jobs re-read)
  bool slots_changed_ = true;
  bool slots_offered_ = false;               ///< set_slots since the last pass
  bool recovered_ = false;
  // check_runnable()'s bookkeeping: what to look at again, and each need's verdict on the current slots.
  std::map<JobId, std::string> unrunnable_;
  bool runnable_all_ = true;
  std::vector<JobId> runnable_dirty_;
  std::map<std::tuple<std::string, int, int64_t>, std::string> reason_of_need_;  ///< by (what, replicas, memory)
  double last_heartbeat_ = -1e300;
};

}  // namespace ragmig::sched
