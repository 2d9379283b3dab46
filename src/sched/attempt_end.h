// How an attempt ended and what becomes of its job: done, cancelled, requeued (preempted, lost, unavailable,
// retried after a back-off or at half the batch after running out of memory) or failed for good. Pure functions of
// what the scheduler knows when the attempt's process ends, so that the rules are read, and tested, in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/executor.h"
#include "sched/job_table.h"

namespace ragmig::sched {

/// What the decision reads beside the exit status.
struct AttemptFacts {
  bool cancelled = false;       ///< by a user or a deadline
  std::string cancel_reason;    ///< why, where the canceller said ("" : "cancelled by user")
  bool made_progress = false;   ///< a checkpoint past the one the attempt started from (adopted: true)
  int64_t checkpoint_step = 0;  ///< the job's latest checkpoint
  int64_t failures = 0;         ///< the job's failures before this attempt
  int64_t max_retries = 0;
  int64_t attempt_number = 0;
  int64_t oom_batch = 0;  ///< the batch size the worker said it ran out of memory at in this attempt (0: it did not)
  bool resizable = false;
  int64_t min_batch_size = 0;  ///< a resizable job's least batch size
  int64_t batch_size = 0;      ///< the job's own batch size
  std::string need;            ///< what it asks for ("gpu:1"), for the message
  /// Why no slot here holds the job at its own batch size (sched::unrunnable_reason; "" when one does). Read only
  /// for a resizable job out of memory.
  std::string unrunnable;
  double now = 0, backoff_s = 0, backoff_max_s = 0;
};

/// "exit code 3", "killed by signal 9", "could not start: ...", "ended while no scheduler watched (...)".
std::string describe(const ExitStatus& status);

/// Seconds to wait before retry number `failures` (1-based): backoff_s * 2^(failures-1), capped.
double retry_delay(int64_t failures, double backoff_s, double backoff_max_s);

/// The batch size to retry a worker at after it ran out of memory at `batch_size`: half of it, or 0 when
/// half would leave fewer than 2 samples (in-batch negatives), and the retry (if any is left) is an ordinary one.
int64_t batch_size_after_oom(int64_t batch_size);

/// The batch size a retry after running out of memory would run at: batch_size_after_oom, for a resizable job no
/// less than its min_batch_size, and 0 (an ordinary retry) when it ran at its least already or did not run out.
int64_t oom_retry_batch(const AttemptFacts& facts);

/// The end of an attempt that did not fail: done (exit 0), cancelled, preempted (stopped when asked, or exit 75
/// on its own after a new checkpoint), lost or unavailable (no exit status: requeued, not counted); nullopt when
/// the attempt failed. service_s and work_s are left for the caller, which measures them.
std::optional<AttemptEnd> end_without_failure(const ExitStatus& status, const AttemptFacts& facts);

/// A failed attempt's end, and with retry_batch > 0 the batch size its retry is asked to run at. Not retried:
/// exit 127 (the command cannot run), max_retries spent, or out of memory at a resizable job's least batch with no
/// slot here for its own; retried at once at oom_retry_batch after running out of memory; else after the back-off.
/// `log_tail`: the worker's last lines, quoted in the reason.
struct FailedAttempt {
  AttemptEnd end;
  int64_t retry_batch = 0;
};
FailedAttempt failed_attempt(const ExitStatus& status, const AttemptFacts& facts, const std::string& log_tail);

}  // namespace ragmig::sched
