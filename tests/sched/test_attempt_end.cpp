// The end of an attempt as pure functions: every way an attempt ends (done, cancelled, preempted, exit 75 with and
// without progress, lost, unavailable) and every way a failure goes on (not retried, back-off, half the batch after
// running out of memory, a resizable job at its least batch with and without a slot for its own).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/attempt_end.h"

namespace ragmig::sched {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ExitStatus exited(int code, bool stop_requested = false) {
  ExitStatus s;
  s.job = 1;
  s.attempt_id = 7;
  s.exit_code = code;
  s.stop_requested = stop_requested;
  return s;
}

ExitStatus killed(int signal, bool stop_requested) {
  ExitStatus s = exited(-1, stop_requested);
  s.signal = signal;
  return s;
}

AttemptFacts facts() {
  AttemptFacts f;
  f.max_retries = 3;
  f.attempt_number = 1;
  f.batch_size = 64;
  f.need = "gpu:1";
  f.now = 1000;
  f.backoff_s = 5;
  f.backoff_max_s = 300;
  return f;
}

// The end of an attempt that failed (end_without_failure said nothing), as the scheduler asks for it.
FailedAttempt failure(const ExitStatus& s, const AttemptFacts& f, const std::string& tail = "") {
  EXPECT_FALSE(end_without_failure(s, f).has_value());
  return failed_attempt(s, f, tail);
}

TEST(AttemptEnd, ExitZeroIsDoneEvenWhenAStopWasAsked) {
  const auto end = end_without_failure(exited(0, /*stop_requested=*/true), facts());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "done");
  EXPECT_EQ(end->next, JobState::Done);
  EXPECT_EQ(end->exit_code, 0);
  EXPECT_FALSE(end->failure);
}

TEST(AttemptEnd, CancelledSaysWhyAndHow) {
  AttemptFacts f = facts();
  f.cancelled = true;
  auto end = end_without_failure(killed(15, true), f);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "cancelled");
  EXPECT_EQ(end->next, JobState::Cancelled);
  EXPECT_EQ(end->reason, "cancelled by user (killed by signal 15)");
  EXPECT_EQ(end->signal, 15);
  f.cancel_reason = "deadline passed";
  end = end_without_failure(exited(3), f);  // cancelled wins over the exit code
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, "deadline passed (exit code 3)");
}

TEST(AttemptEnd, PreemptedWhenStoppedAsAsked) {
  auto end = end_without_failure(exited(75, true), facts());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "preempted");
  EXPECT_EQ(end->next, JobState::Queued);
  EXPECT_EQ(end->reason, "preempted: checkpointed and stopped (exit 75)");
  end = end_without_failure(killed(9, true), facts());  // past the grace period: not a failure either
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "preempted");
  EXPECT_EQ(end->reason, "preempted: killed by signal 9 after the grace period");
  EXPECT_FALSE(end->failure);
}

TEST(AttemptEnd, Exit75UnaskedIsARequeueOnlyAfterANewCheckpoint) {
  AttemptFacts f = facts();
  f.made_progress = true;
  f.checkpoint_step = 120;
  const auto end = end_without_failure(exited(75), f);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "preempted");
  EXPECT_EQ(end->reason, "requeued: the worker exited 75 on its own after checkpoint 120");
  f.made_progress = false;  // the same again would only do the same again: a failure, retried after the back-off
  const FailedAttempt failed = failure(exited(75), f);
  EXPECT_TRUE(failed.end.failure);
  EXPECT_EQ(failed.end.next, JobState::Queued);
  EXPECT_THAT(failed.end.reason, StartsWith("retry 1 of 3 in 5.0 s: exit code 75 on attempt 1"));
}

TEST(AttemptEnd, LostAndUnavailableAreRequeuedWithoutCounting) {
  ExitStatus s = exited(-1);
  s.known = false;
  auto end = end_without_failure(s, facts());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "lost");
  EXPECT_EQ(end->next, JobState::Queued);
  EXPECT_EQ(end->reason, "requeued: the attempt ended while no scheduler watched (exit status unknown)");
  EXPECT_EQ(end->not_before, 0);  // adopted and gone: at once
  s.error = "sbatch: Socket timed out";
  end = end_without_failure(s, facts());
  ASSERT_TRUE(end);
  EXPECT_EQ(end->outcome, "unavailable");
  EXPECT_EQ(end->reason, "requeued: the attempt could not start: sbatch: Socket timed out");
  EXPECT_EQ(end->not_before, 1005);  // not every pass
  EXPECT_FALSE(end->failure);
}

TEST(AttemptEnd, FailuresBackOffDoublingUpToTheCap) {
  AttemptFacts f = facts();
  f.max_retries = 20;
  const double expected[] = {5, 10, 20, 40, 80, 160, 300, 300};
  for (int64_t before = 0; before < 8; ++before) {
    f.failures = before;
    const FailedAttempt failed = failure(exited(1), f, "Traceback | ValueError: bad");
    EXPECT_EQ(failed.end.outcome, "failed");
    EXPECT_TRUE(failed.end.failure);
    EXPECT_EQ(failed.end.next, JobState::Queued);
    EXPECT_DOUBLE_EQ(failed.end.not_before, 1000 + expected[before]) << "after failure " << before + 1;
    EXPECT_THAT(failed.end.reason, HasSubstr("; log: Traceback | ValueError: bad"));
    EXPECT_EQ(failed.retry_batch, 0);
  }
}

TEST(AttemptEnd, NoRetryWhenTheyAreSpentOrTheCommandCannotRun) {
  AttemptFacts f = facts();
  f.failures = 3;
  f.attempt_number = 4;
  FailedAttempt failed = failure(exited(1), f);
  EXPECT_EQ(failed.end.next, JobState::Failed);
  EXPECT_EQ(failed.end.reason, "failed: exit code 1 on attempt 4 (4 failures, max_retries 3)");
  f.failures = 0;
  f.attempt_number = 1;
  failed = failure(exited(127), f);
  EXPECT_EQ(failed.end.next, JobState::Failed);
  EXPECT_EQ(failed.end.reason, "failed: the command cannot be run (exit code 127 on attempt 1); not retried");
  ExitStatus no_start = exited(127);
  no_start.error = "no such file: /opt/bin/train";
  failed = failure(no_start, f);
  EXPECT_EQ(failed.end.reason, "failed: could not start: no such file: /opt/bin/train on attempt 1; not retried");
}

TEST(AttemptEnd, OutOfMemoryRetriesAtHalfTheBatchAtOnce) {
  AttemptFacts f = facts();
  f.oom_batch = 64;
  FailedAttempt failed = failure(exited(1), f);
  EXPECT_EQ(failed.end.next, JobState::Queued);
  EXPECT_EQ(failed.retry_batch, 32);
  EXPECT_EQ(failed.end.not_before, 0);
  EXPECT_THAT(failed.end.reason, StartsWith("retry 1 of 3 at batch size 32: out of memory at 64 (exit code 1"));
  f.oom_batch = 3;  // half would leave one sample: an ordinary retry
  failed = failure(exited(1), f);
  EXPECT_EQ(failed.retry_batch, 0);
  EXPECT_DOUBLE_EQ(failed.end.not_before, 1005);
  f.oom_batch = 64;
  f.max_retries = 0;  // 0 means no rerun of any kind
  failed = failure(exited(1), f);
  EXPECT_EQ(failed.end.next, JobState::Failed);
  EXPECT_EQ(failed.retry_batch, 0);
}

TEST(AttemptEnd, AResizableJobShrinksNoFurtherThanItsLeastBatch) {
  AttemptFacts f = facts();
  f.resizable = true;
  f.min_batch_size = 48;
  f.oom_batch = 64;
  EXPECT_EQ(oom_retry_batch(f), 48);  // not 32
  EXPECT_EQ(failure(exited(1), f).retry_batch, 48);
  f.oom_batch = 48;  // at its least already: an ordinary retry while a slot here could hold its own batch
  EXPECT_EQ(oom_retry_batch(f), 0);
  FailedAttempt failed = failure(exited(1), f);
  EXPECT_EQ(failed.end.next, JobState::Queued);
  EXPECT_DOUBLE_EQ(failed.end.not_before, 1005);
  f.unrunnable = "no slot here has gpu:1 with 80 GB";  // and none can: nothing to wait for
  failed = failure(exited(1), f);
  EXPECT_EQ(failed.end.next, JobState::Failed);
  EXPECT_THAT(failed.end.reason, StartsWith("failed: out of memory at its min_batch_size 48, and no slot here has the "
                                            "gpu:1 it needs at batch 64 (exit code 1 on attempt 1"));
}

TEST(AttemptEnd, NoOutOfMemoryNoRetryBatch) {
  AttemptFacts f = facts();
  f.resizable = true;
  f.min_batch_size = 8;
  EXPECT_EQ(oom_retry_batch(f), 0);
  f.unrunnable = "ignored without an out-of-memory";
  EXPECT_EQ(failure(exited(1), f).end.next, JobState::Queued);
}

TEST(AttemptEnd, RetryDelayAndHalving) {
  EXPECT_EQ(retry_delay(0, 5, 300), 0);
  EXPECT_EQ(retry_delay(1, 5, 300), 5);
  EXPECT_EQ(retry_delay(1000, 5, 300), 300);  // no overflow past 2^60
  EXPECT_EQ(batch_size_after_oom(5), 2);
  EXPECT_EQ(batch_size_after_oom(3), 0);
}

}  // namespace
}  // namespace ragmig::sched
