// The SQLite store on real files: transitions are recorded, survive reopening, and a second connection
// (another `ragmig` process) sees and races them safely.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "sched/sqlite.h"
#include "sched/store.h"
#include "support/test_support.h"

namespace ragmig::sched {
namespace {

JobSpec spec(const std::string& name) {
  JobSpec s;
  s.name = name;
  s.argv = {"sh", "-c", "exit 0"};
  return s;
}

TEST(Store, SubmitStartFinishWithHistory) {
  testing::ScratchDir dir;
  Store store(dir.path().string());
  const JobId a = store.submit(spec("a"), 100);
  const JobId b = store.submit(spec("b"), 101);
  EXPECT_EQ(b, a + 1);
  const auto attempt = store.start_attempt(a, {"cpu0"}, 110);
  ASSERT_TRUE(attempt);
  store.set_attempt_pid(*attempt, 4242);
  auto job = store.job(a);
  EXPECT_EQ(job->state, JobState::Running);
  EXPECT_EQ(job->slots, std::vector<std::string>{"cpu0"});
  EXPECT_EQ(job->pid, 4242);
  EXPECT_DOUBLE_EQ(job->waited_s, 10);
  EXPECT_EQ(store.open_attempts().size(), 1u);
  EXPECT_FALSE(store.start_attempt(a, {"cpu1"}, 111)) << "a running job cannot start again";

  AttemptEnd end;
  end.exit_code = 75;
  end.outcome = "preempted";
  end.next = JobState::Queued;
  end.reason = "preempted";
  end.service_s = 20;
  end.work_s = 10;
  store.finish_attempt(a, *attempt, end, 130);
  store.finish_attempt(a, *attempt, end, 131);  // a second report of the same exit changes nothing
  job = store.job(a);
  EXPECT_EQ(job->state, JobState::Queued);
  EXPECT_DOUBLE_EQ(job->service_s, 20);
  EXPECT_DOUBLE_EQ(job->queued_since, 130);
  EXPECT_EQ(job->attempts, 1);
  EXPECT_TRUE(store.open_attempts().empty());

  const auto second = store.start_attempt(a, {"cpu1"}, 140);
  end.exit_code = 0;
  end.outcome = "done";
  end.next = JobState::Done;
  end.reason = "finished";
  store.finish_attempt(a, *second, end, 150);
  job = store.job(a);
  EXPECT_EQ(job->state, JobState::Done);
  EXPECT_DOUBLE_EQ(job->waited_s, 20);  // 10 s before the first attempt, 10 s before the second
  EXPECT_DOUBLE_EQ(job->finished_at, 150);

  std::vector<std::string> path;
  for (const auto& t : store.transitions(a)) path.push_back(t.from + ">" + t.to);
  EXPECT_EQ(path, (std::vector<std::string>{">queued", "queued>running", "running>queued", "queued>running",
                                            "running>done"}));
  EXPECT_EQ(store.attempts(a).size(), 2u);
  EXPECT_EQ(store.jobs(/*active_only=*/true).size(), 1u);  // b
}

TEST(Store, SurvivesReopenAndSeesOtherConnections) {
  testing::ScratchDir dir;
  Store scheduler(dir.path().string());
  EXPECT_FALSE(scheduler.changed_elsewhere());
  JobId id = 0;
  {
    Store cli(dir.path().string());  // what `ragmig submit` does
    id = cli.submit(spec("late"), 5);
  }
  EXPECT_TRUE(scheduler.changed_elsewhere());
  EXPECT_FALSE(scheduler.changed_elsewhere());
  scheduler.submit(spec("own"), 6);
  EXPECT_FALSE(scheduler.changed_elsewhere()) << "its own commits are not news";
  Store reopened(dir.path().string());
  EXPECT_EQ(reopened.job(id)->spec.name, "late");
  EXPECT_EQ(reopened.jobs(false).size(), 2u);
}

TEST(Store, CancelRacesAreSafe) {
  testing::ScratchDir dir;
  Store scheduler(dir.path().string());
  Store cli(dir.path().string());
  const JobId queued = scheduler.submit(spec("q"), 1);
  EXPECT_EQ(cli.request_cancel(queued, 2), CancelResult::Cancelled);
  EXPECT_FALSE(scheduler.start_attempt(queued, {"cpu0"}, 3)) << "the scheduler lost the race and must not start it";
  EXPECT_EQ(scheduler.job(queued)->state, JobState::Cancelled);

  const JobId run = scheduler.submit(spec("r"), 4);
  ASSERT_TRUE(scheduler.start_attempt(run, {"cpu0"}, 5));
  EXPECT_EQ(cli.request_cancel(run, 6), CancelResult::Stopping);
  EXPECT_TRUE(scheduler.job(run)->cancel_requested);
  EXPECT_EQ(cli.request_cancel(queued, 7), CancelResult::AlreadyFinished);
  EXPECT_THROW(cli.request_cancel(999, 8), DataError);
}

// A sweep prices its trials once it has measured them: a queued or running job's estimate changes, in the
// file (another connection and a reopened store see it), with the rest of its spec; a finished job's does not.
TEST(Store, EstimatesOfActiveJobsChange) {
  testing::ScratchDir dir;
  Store store(dir.path().string());
  JobSpec s = spec("trial");
  s.estimate_s = 3;
  s.priority = 4;
  const JobId queued = store.submit(s, 1);
  const JobId running = store.submit(s, 2);
  const JobId done = store.submit(s, 3);
  ASSERT_TRUE(store.start_attempt(running, {"cpu0"}, 4));
  const auto attempt = store.start_attempt(done, {"cpu1"}, 5);
  AttemptEnd end;
  end.outcome = "done";
  end.next = JobState::Done;
  store.finish_attempt(done, *attempt, end, 6);

  for (const JobId id : {queued, running, done}) store.set_estimate(id, 1200);
  store.set_estimate(999, 1);  // no such job: nothing to change
  Store other(dir.path().string());
  EXPECT_EQ(other.job(queued)->spec.estimate_s, 1200);
  EXPECT_EQ(other.job(running)->spec.estimate_s, 1200);
  EXPECT_EQ(other.job(done)->spec.estimate_s, 3) << "a finished job keeps what it ran with";
  EXPECT_EQ(other.job(queued)->spec.priority, 4);
  EXPECT_EQ(other.job(queued)->spec.argv, s.argv);
  EXPECT_EQ(other.job(running)->state, JobState::Running);
  EXPECT_THROW(store.set_estimate(queued, -1), ConfigError);
  EXPECT_EQ(other.job(queued)->spec.estimate_s, 1200);
}

TEST(Store, EventsAndProgress) {
  testing::ScratchDir dir;
  Store store(dir.path().string());
  const JobId id = store.submit(spec("e"), 1);
  const auto attempt = store.start_attempt(id, {"cpu0"}, 2);
  ProgressUpdate p;
  p.step = 12;
  p.samples_per_s = 33.5;
  store.record_events(id, *attempt, {R"({"event":"progress","step":12})"}, 40, p);
  ProgressUpdate c;
  c.checkpoint_step = 10;
  store.record_events(id, *attempt, {R"({"event":"checkpoint","step":10})"}, 80, c);
  const auto job = store.job(id);
  EXPECT_EQ(job->step, 12);
  EXPECT_EQ(job->checkpoint_step, 10);
  EXPECT_DOUBLE_EQ(job->samples_per_s, 33.5);
  EXPECT_EQ(job->events_offset, 80);
  EXPECT_EQ(store.events(id).size(), 2u);
}

TEST(Store, EventsAfterASeqReturnOnlyTheNewOnes) {
  const auto store = Store::in_memory("/nonexistent-run-root");
  const JobId a = store->submit(spec("a"), 1), b = store->submit(spec("b"), 1);
  const auto attempt = store->start_attempt(a, {"cpu:0"}, 2);
  const auto other = store->start_attempt(b, {"cpu:1"}, 2);
  store->record_events(a, *attempt, {"{\"n\":1}", "{\"n\":2}"}, 10, {});
  store->record_events(b, *other, {"{\"n\":9}"}, 5, {});
  const auto first = store->events_after(a, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].body, "{\"n\":2}");
  EXPECT_LT(first[0].seq, first[1].seq);
  EXPECT_TRUE(store->events_after(a, first[1].seq).empty());
  store->record_events(a, *attempt, {"{\"n\":3}"}, 15, {});
  const auto next = store->events_after(a, first[1].seq);
  ASSERT_EQ(next.size(), 1u);  // b's event in between is not a's
  EXPECT_EQ(next[0].body, "{\"n\":3}");
}

TEST(Store, RefusesANewerSchema) {
  testing::ScratchDir dir;
  { Store store(dir.path().string()); }
  {
    Db db((dir / "state.db").string());  // as a future ragmig would have left it
    db.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  }
  try {
    Store store(dir.path().string());
    ADD_FAILURE() << "opened a newer schema";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("schema version 99"));
  }
}

}  // namespace
}  // namespace ragmig::sched
