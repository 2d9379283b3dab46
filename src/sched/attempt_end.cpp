// The end of an attempt (see attempt_end.h).
#include "sched/attempt_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ragmig::sched {

std::string describe(const ExitStatus& s) {
  if (!s.error.empty()) return "could not start: " + s.error;
  if (!s.known) return "ended while no scheduler watched (exit status unknown)";
  if (s.signal) return fmt::format("killed by signal {}", s.signal);
  return fmt::format("exit code {}", s.exit_code);
}

double retry_delay(int64_t failures, double backoff_s, double backoff_max_s) {
  if (failures < 1) return 0;
  return std::min(backoff_max_s, backoff_s * std::pow(2.0, static_cast<double>(std::min<int64_t>(failures - 1, 60))));
}

int64_t batch_size_after_oom(int64_t batch_size) {
  return batch_size / 2 >= 2 ? batch_size / 2 : 0;
}

int64_t oom_retry_batch(const AttemptFacts& f) {
  if (f.oom_batch <= 0) return 0;
  const int64_t half = batch_size_after_oom(f.oom_batch);
  if (!f.resizable) return half;
  return f.oom_batch > f.min_batch_size ? std::max(half, f.min_batch_size) : 0;
}

namespace {

AttemptEnd ended(const ExitStatus& status, const char* outcome, JobState next, std::string reason) {
  AttemptEnd end;
  end.exit_code = status.exit_code;
  end.signal = status.signal;
  end.outcome = outcome;
  end.next = next;
  end.reason = std::move(reason);
  return end;
}

}  // namespace

std::optional<AttemptEnd> end_without_failure(const ExitStatus& status, const AttemptFacts& f) {
  const bool exit_75 = status.known && status.exit_code == 75;
  if (status.known && status.exit_code == 0) return ended(status, "done", JobState::Done, "finished");
  if (f.cancelled)
    return ended(
        status, "cancelled", JobState::Cancelled,
        (f.cancel_reason.empty() ? std::string("cancelled by user") : f.cancel_reason) + " (" + describe(status) + ")");
  if (exit_75 && status.stop_requested)
    return ended(status, "preempted", JobState::Queued, "preempted: checkpointed and stopped (exit 75)");
  // Exit 75 unasked: the worker says it can go on from its checkpoint (a data-parallel job that lost a replica).
  // Without a new checkpoint it would only do the same again: that counts as a failure.
  if (exit_75 && f.made_progress)
    return ended(status, "preempted", JobState::Queued,
                 fmt::format("requeued: the worker exited 75 on its own after checkpoint {}", f.checkpoint_step));
  if (status.stop_requested)
    return ended(status, "preempted", JobState::Queued, "preempted: " + describe(status) + " after the grace period");
  if (!status.known) {
    // Unavailable: what runs jobs did not answer (Slurm's controller), so the attempt never started: not the job's
    // doing (the monitor does not count it as a crash), and not retried every pass.
    AttemptEnd end = ended(status, status.error.empty() ? "lost" : "unavailable", JobState::Queued,
                           "requeued: the attempt " + describe(status));
    if (!status.error.empty()) end.not_before = f.now + f.backoff_s;
    return end;
  }
  return std::nullopt;
}

FailedAttempt failed_attempt(const ExitStatus& status, const AttemptFacts& f, const std::string& log_tail) {
  FailedAttempt out;
  AttemptEnd& end = out.end;
  end = ended(status, "failed", JobState::Failed, "");
  end.failure = true;
  const int64_t failures = f.failures + 1;
  const std::string detail = fmt::format("{} on attempt {}{}", describe(status), f.attempt_number,
                                         log_tail.empty() ? "" : "; log: " + log_tail);
  // 127 is what a shell, and ragmig's own launchers, exit with when the command cannot be executed at all: trying
  // again would only fail again.
  const bool cannot_run = status.known && status.exit_code == 127;
  // A worker that ran out of memory and said at what batch size is retried at half of it, at once: the cause is
  // addressed. It is a failure like any other (max_retries bounds it; 0 means no rerun of any kind).
  const int64_t smaller = oom_retry_batch(f);
  if (cannot_run) {
    end.reason = status.error.empty() ? fmt::format("failed: the command cannot be run ({}); not retried", detail)
                                      : fmt::format("failed: {}; not retried", detail);
  } else if (failures > f.max_retries) {
    end.reason = fmt::format("failed: {} ({} failures, max_retries {})", detail, failures, f.max_retries);
  } else if (smaller > 0) {
    end.next = JobState::Queued;
    end.reason = fmt::format("retry {} of {} at batch size {}: out of memory at {} ({})", failures, f.max_retries,
                             smaller, f.oom_batch, detail);
    out.retry_batch = smaller;
  } else if (f.oom_batch > 0 && f.resizable && !f.unrunnable.empty()) {
    // Out of memory at its least batch, and no slot here holds what it asks for at its own: nothing to wait for.
    end.reason = fmt::format(
        "failed: out of memory at its min_batch_size {}, and no slot here has the {} it needs at batch {} ({})",
        f.oom_batch, f.need, f.batch_size, detail);
  } else {
    end.next = JobState::Queued;
    const double delay = retry_delay(failures, f.backoff_s, f.backoff_max_s);
    end.not_before = f.now + delay;
    end.reason = fmt::format("retry {} of {} in {:.1f} s: {}", failures, f.max_retries, delay, detail);
  }
  return out;
}

}  // namespace ragmig::sched
