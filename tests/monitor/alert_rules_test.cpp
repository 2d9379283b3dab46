// The monitor's plain functions, table by table: folding worker events into a JobWatch, each alert rule on
// observations built to sit just inside and just outside its threshold, firing once and clearing once, the
// queue's finish estimate, the alerts' JSON and the [alerts] table's errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "monitor/alert_config.h"
#include "monitor/alert_rules.h"
#include "monitor/alert_tracker.h"
#include "monitor/job_watch.h"
#include "monitor/queue_eta.h"
#include "support/text_mutation.h"

namespace ragmig::monitor {
namespace {

using nlohmann::json;

json progress(int64_t step, double loss, double time) {
  return {{"event", "progress"}, {"step", step}, {"loss", loss}, {"samples_per_s", 32.0}, {"time", time}};
}

JobWatch trained(int progress_events, double interval, int64_t steps_per_event = 10) {
  JobWatch w;
  fold_event(w, {{"event", "start"}, {"step", 0}, {"time", 100.0}, {"config", {{"train", {{"max_steps", 1000}}}}}}, 0);
  for (int i = 1; i <= progress_events; ++i)
    fold_event(w, progress(i * steps_per_event, 2.0 - 0.1 * i, 100.0 + i * interval), 0);
  return w;
}

TEST(JobWatch, FoldsProgressIntoStepTimeIntervalAndEta) {
  const JobWatch w = trained(5, 4.0);
  EXPECT_EQ(w.max_steps, 1000);
  EXPECT_EQ(w.step, 50);
  EXPECT_NEAR(w.progress_interval_s, 4.0, 1e-9);
  EXPECT_NEAR(w.step_time_s, 0.4, 1e-9);
  EXPECT_NEAR(w.last_progress_at, 120.0, 1e-9);
  ASSERT_TRUE(w.loss.has_value());
  EXPECT_NEAR(*w.loss, 1.5, 1e-9);
  EXPECT_NEAR(w.lowest_loss, 1.5, 1e-9);
  ASSERT_TRUE(eta_seconds(w).has_value());
  EXPECT_NEAR(*eta_seconds(w), 950 * 0.4, 1e-6);
}

// Steps and max_steps are counts: a number that is not whole or does not fit int64 (the fuzzer's 1.8e20 was undefined
// behaviour when converted) is ignored, as a step of another type is.
TEST(JobWatch, StepsThatAreNoCountAreIgnored) {
  JobWatch w = trained(2, 4.0);
  for (const json& step : {json(1.8446744073709552e20), json(-1e19), json(12.5), json("12"), json(nullptr)})
    for (const char* kind : {"progress", "checkpoint", "diverged", "done", "start"})
      fold_event(w, {{"event", kind}, {"step", step}, {"time", 200.0}}, 0);
  EXPECT_EQ(w.step, 20);
  EXPECT_EQ(w.checkpoint_step, -1);
  fold_event(w, {{"event", "start"}, {"config", {{"train", {{"max_steps", 1e30}}}}}}, 0);
  EXPECT_EQ(w.max_steps, 1000);
  fold_event(w, {{"event", "checkpoint"}, {"step", 30.0}}, 0);  // whole, though written as a float
  EXPECT_EQ(w.checkpoint_step, 30);
}

// A worker without steps (`ragmig eval` as a job) says what it is doing in its progress events' messages: the last
// one is kept for `ragmig status`, and a new attempt starts without one.
TEST(JobWatch, KeepsTheLastProgressMessageOfTheAttempt) {
  JobWatch w;
  fold_event(w, {{"event", "start"}, {"time", 1.0}}, 0);
  EXPECT_EQ(w.message, "");
  fold_event(w, {{"event", "progress"}, {"message", "loading model"}, {"time", 2.0}}, 0);
  fold_event(w, {{"event", "progress"}, {"message", "embedding 5183 passages"}, {"time", 3.0}}, 0);
  fold_event(w, {{"event", "progress"}, {"message", 7}, {"time", 4.0}}, 0);  // not text: ignored
  EXPECT_EQ(w.message, "embedding 5183 passages");
  EXPECT_EQ(w.step, -1);
  EXPECT_FALSE(eta_seconds(w).has_value());
  fold_event(w, {{"event", "start"}, {"time", 5.0}}, 0);
  EXPECT_EQ(w.message, "");
}

TEST(JobWatch, DivergedCheckpointOomAndAttemptEnds) {
  JobWatch w = trained(2, 1.0);
  fold_event(w, {{"event", "checkpoint"}, {"step", 20}, {"time", 103.0}}, 0);
  EXPECT_EQ(w.checkpoint_step, 20);
  EXPECT_EQ(w.checkpoint_at, 103.0);
  fold_event(w, {{"event", "diverged"}, {"step", 21}, {"loss", "nan"}, {"time", 104.0}}, 0);
  EXPECT_TRUE(w.loss_not_finite);
  EXPECT_EQ(w.loss_text, "nan");
  fold_event(w, {{"event", "oom"}, {"error", "can't allocate memory"}, {"time", 105.0}}, 0);
  EXPECT_EQ(w.oom_at, 105.0);
  fold_attempt_end(w, "failed", 1, 0, 106.0);
  fold_attempt_end(w, "preempted", 75, 0, 107.0);
  fold_attempt_end(w, "lost", -1, 0, 108.0);
  fold_attempt_end(w, "unavailable", -1, 0, 109.0);  // never started: Slurm's controller did not answer
  EXPECT_EQ(w.preemptions, 1);
  EXPECT_EQ(w.failures_at, (std::vector<double>{106.0, 108.0}));
  // A new attempt starts clean; a SIGKILL that ragmig did not send reads as the kernel's OOM killer.
  fold_event(w, {{"event", "start"}, {"step", 20}, {"time", 110.0}}, 0);
  EXPECT_FALSE(w.loss_not_finite);
  fold_attempt_end(w, "failed", -1, 9, 120.0);
  EXPECT_EQ(w.oom_at, 120.0);
  EXPECT_NE(w.oom_detail.find("out-of-memory killer"), std::string::npos);
  // A loss that is not a number in JSON (null, a string) is a loss that is not finite.
  JobWatch n;
  fold_event(n, {{"event", "progress"}, {"step", 1}, {"loss", nullptr}, {"time", 1.0}}, 0);
  EXPECT_TRUE(n.loss_not_finite);
  // Garbage is ignored; an event without a time takes the receiving time.
  fold_event(n, json::parse("[1,2]"), 5);
  fold_event(n, {{"event", "progress"}, {"step", 2}, {"loss", 1.0}}, 7.0);
  EXPECT_EQ(n.last_progress_at, 7.0);
}

JobObservation running_job(const JobWatch& w, double started_at = 100) {
  JobObservation j;
  j.id = 7;
  j.name = "t03";
  j.state = sched::JobState::Running;
  j.slots = {"cpu:0"};
  j.started_at = started_at;
  j.watch = w;
  return j;
}

std::vector<std::string> rules_of(const std::vector<Alert>& alerts) {
  std::vector<std::string> out;
  for (const auto& a : alerts) out.push_back(a.rule);
  return out;
}

TEST(AlertRules, StallAtTenTimesTheUsualIntervalAndNotBefore) {
  AlertThresholds t;  // stall_factor 10, stall_min_s 120
  const JobWatch w = trained(5, 20.0);  // last progress at 200, usually every 20 s -> limit 200 s
  Observation o;
  o.jobs = {running_job(w)};
  o.now = 200 + 199;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  o.now = 200 + 201;
  const auto alerts = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(alerts), (std::vector<std::string>{"stall"}));
  EXPECT_EQ(alerts[0].job, 7);
  EXPECT_EQ(alerts[0].slot, "cpu:0");
  EXPECT_NEAR(alerts[0].value, 201, 1e-9);
  EXPECT_NEAR(alerts[0].threshold, 200, 1e-9);
  // A fast job: the floor of stall_min_s holds.
  o.jobs = {running_job(trained(5, 1.0))};  // last progress at 105
  o.now = 105 + 119;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  o.now = 105 + 121;
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"stall"}));
  // Queued jobs do not stall.
  o.jobs[0].state = sched::JobState::Queued;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
}

TEST(AlertRules, StallBeforeAnyUsualIntervalCountsFromTheStart) {
  AlertThresholds t;
  t.start_timeout_s = 900;
  JobWatch w;  // the worker said nothing at all
  Observation o;
  o.jobs = {running_job(w, 1000)};
  o.now = 1000 + 899;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  o.now = 1000 + 901;
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"stall"}));
  // After the last step the worker evaluates and writes its model: the start timeout applies, not 10x.
  JobWatch last = trained(5, 1.0, 200);  // step 1000 of 1000 at 105
  o.jobs = {running_job(last)};
  o.now = 105 + 500;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  o.now = 105 + 901;
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"stall"}));
}

TEST(AlertRules, LossNotFiniteAndExploding) {
  AlertThresholds t;  // factor 10 over the lowest, after 3 losses
  JobWatch w = trained(3, 1.0);  // losses 1.9 1.8 1.7
  Observation o;
  o.now = 104;
  fold_event(w, progress(40, 16.9, 104), 0);  // 9.9x the lowest
  o.jobs = {running_job(w)};
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  fold_event(w, progress(50, 17.1, 104), 0);  // 10.06x
  o.jobs = {running_job(w)};
  const auto alerts = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(alerts), (std::vector<std::string>{"loss_exploding"}));
  EXPECT_NEAR(alerts[0].value, 17.1 / 1.7, 1e-9);
  // Near zero a ratio is noise: a fine-tune whose lowest window read 0.0041 and now reads 0.1036 (25x, the demo's
  // sweep on 2026-12-06) has not exploded; 1.2 (a rise of more than 1 nat) has.
  JobWatch fine = trained(3, 1.0);
  fold_event(fine, progress(40, 0.0041, 104), 0);
  fold_event(fine, progress(50, 0.1036, 104), 0);
  o.jobs = {running_job(fine)};
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  fold_event(fine, progress(60, 1.2, 104), 0);
  o.jobs = {running_job(fine)};
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"loss_exploding"}));
  t.loss_exploding_min_rise = 0;  // the ratio alone, as before 2026-12-06
  fold_event(fine, progress(70, 0.1036, 104), 0);
  o.jobs = {running_job(fine)};
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"loss_exploding"}));
  t = AlertThresholds{};
  // Too early to say: two losses only.
  JobWatch early = trained(1, 1.0);
  fold_event(early, progress(20, 100.0, 102), 0);
  o.jobs = {running_job(early)};
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  // Diverged: its own rule, also once the job is queued again (it failed).
  fold_event(w, {{"event", "diverged"}, {"step", 51}, {"loss", "inf"}}, 104);
  o.jobs = {running_job(w)};
  o.jobs[0].state = sched::JobState::Queued;
  const auto diverged = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(diverged), (std::vector<std::string>{"loss_not_finite"}));
  EXPECT_TRUE(std::isnan(diverged[0].value));
  EXPECT_NE(diverged[0].message.find("inf"), std::string::npos) << diverged[0].message;
}

SlotObservation slot(const std::string& id, sched::JobId job, double utilization) {
  SlotObservation s;
  s.slot.id = id;
  s.job = job;
  s.utilization = utilization;
  return s;
}

TEST(AlertRules, IdleSlotOnlyWhileJobsWait) {
  AlertThresholds t;  // under 10 % for 300 s
  Observation o;
  o.slots = {slot("gpu:0", 3, 0.05), slot("gpu:1", 4, 0.5), slot("gpu:2", 0, -1)};
  EXPECT_TRUE(evaluate_rules(o, t).empty()) << "nobody waits";
  o.waiting = 2;
  auto alerts = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(alerts), (std::vector<std::string>{"slot_idle"}));
  EXPECT_EQ(alerts[0].slot, "gpu:0");
  EXPECT_EQ(alerts[0].for_s, 300);
  // A free slot counts when a waiting job would fit it; an unknown utilisation never does.
  o.slots[2].fits_waiting_job = true;
  o.slots[1].utilization = -1;
  alerts = evaluate_rules(o, t);
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[1].slot, "gpu:2");
  EXPECT_NE(alerts[1].message.find("free"), std::string::npos);
}

TEST(AlertRules, MemoryHighOnSlotsAndHost) {
  AlertThresholds t;  // 95 %
  Observation o;
  o.slots = {slot("mig:0:1g.18gb@0", 5, 0.9)};
  o.slots[0].hardware.memory_total_bytes = 100;
  o.slots[0].hardware.memory_used_bytes = 94;
  o.host_memory_total_bytes = 1000;
  o.host_memory_used_bytes = 949;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  o.slots[0].hardware.memory_used_bytes = 95;
  o.host_memory_used_bytes = 960;
  const auto alerts = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(alerts), (std::vector<std::string>{"memory_high", "memory_high"}));
  EXPECT_EQ(alerts[0].slot, "mig:0:1g.18gb@0");
  EXPECT_EQ(alerts[0].job, 5);
  EXPECT_EQ(alerts[1].slot, "host");
  EXPECT_EQ(alerts[0].for_s, 30);
}

TEST(AlertRules, OomAndCrashLoopUntilProgressOrTheWindowPasses) {
  AlertThresholds t;  // 3 failures in an hour; OOM for an hour
  JobWatch w = trained(2, 1.0);
  fold_event(w, {{"event", "oom"}, {"error", "CUDA out of memory"}, {"time", 110.0}}, 0);
  fold_attempt_end(w, "failed", 1, 0, 110.0);
  Observation o;
  o.now = 200;
  JobObservation queued = running_job(w);
  queued.state = sched::JobState::Queued;
  o.jobs = {queued};
  ASSERT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"oom"}));
  o.now = 110 + 3601;
  EXPECT_TRUE(evaluate_rules(o, t).empty()) << "an hour later";
  fold_attempt_end(w, "failed", 1, 0, 300.0);
  fold_attempt_end(w, "lost", -1, 0, 400.0);
  o.now = 500;
  queued.watch = w;
  o.jobs = {queued};
  EXPECT_EQ(rules_of(evaluate_rules(o, t)), (std::vector<std::string>{"oom", "crash_loop"}));
  // The next attempt reports progress: both clear.
  fold_event(w, {{"event", "start"}, {"step", 20}, {"time", 450.0}}, 0);
  fold_event(w, progress(21, 1.0, 460.0), 0);
  o.jobs = {running_job(w)};
  EXPECT_TRUE(evaluate_rules(o, t).empty());
}

TEST(AlertRules, DeadlineAgainstTheQueuesFinish) {
  AlertThresholds t;
  Observation o;
  o.now = 1000;
  o.queue_finish_at = 5000;
  EXPECT_TRUE(evaluate_rules(o, t).empty()) << "no deadline set";
  t.deadline = 5000;
  EXPECT_TRUE(evaluate_rules(o, t).empty());
  t.deadline = 4999;
  const auto alerts = evaluate_rules(o, t);
  ASSERT_EQ(rules_of(alerts), (std::vector<std::string>{"deadline"}));
  EXPECT_EQ(alerts[0].value, 5000);
  o.queue_finish_at.reset();
  EXPECT_TRUE(evaluate_rules(o, t).empty()) << "no estimate, no alert";
}

TEST(AlertTracker, FiresAfterForAndOnceThenClearsOnce) {
  AlertTracker tracker;
  Alert idle{"slot_idle", 0, "gpu:0", 0.01, 0.1, "idle", 10};
  Alert stall{"stall", 3, "gpu:1", 500, 200, "stalled", 0};
  auto changes = tracker.update({idle, stall}, 100);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].alert.rule, "stall");
  EXPECT_TRUE(changes[0].firing);
  EXPECT_TRUE(tracker.update({idle, stall}, 105).empty()) << "idle pending, stall fired already";
  changes = tracker.update({idle, stall}, 110);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].alert.rule, "slot_idle");
  EXPECT_EQ(changes[0].since, 100);
  changes = tracker.update({idle}, 120);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].firing);
  EXPECT_EQ(changes[0].alert.rule, "stall");
  EXPECT_EQ(changes[0].since, 100);
  // A pending condition that goes away before its time never fires; coming back starts the clock again.
  Alert idle2 = idle;
  idle2.slot = "gpu:2";
  EXPECT_TRUE(tracker.update({idle, idle2}, 130).empty());
  EXPECT_TRUE(tracker.update({idle}, 135).empty());
  EXPECT_TRUE(tracker.update({idle, idle2}, 141).empty());
  EXPECT_EQ(tracker.update({idle, idle2}, 151).size(), 1u);
  EXPECT_EQ(tracker.firing().size(), 2u);
}

TEST(AlertTracker, RestoredAlertsClearWithoutFiringAgain) {
  AlertChange old{{"stall", 3, "gpu:1", 500, 200, "stalled", 0}, true, 50, 40};
  AlertTracker tracker;
  tracker.restore({old});
  EXPECT_TRUE(tracker.update({old.alert}, 100).empty());
  const auto changes = tracker.update({}, 101);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].firing);
}

TEST(AlertJson, RoundTripsAndStillFiring) {
  AlertChange c{{"stall", 3, "gpu:1", 500, 200, "stalled", 0}, true, 50, 40};
  const AlertChange back = alert_change_from_json(to_json(c), "test");
  EXPECT_EQ(back.alert.key(), c.alert.key());
  EXPECT_EQ(back.alert.value, 500);
  EXPECT_EQ(back.at, 50);
  EXPECT_EQ(back.since, 40);
  AlertChange nan_value{{"loss_not_finite", 3, "", std::nan(""), 0, "nan", 0}, true, 60, 60};
  EXPECT_TRUE(to_json(nan_value)["value"].is_null());
  EXPECT_TRUE(std::isnan(alert_change_from_json(to_json(nan_value), "test").alert.value));
  AlertChange cleared = c;
  cleared.firing = false;
  const auto firing = still_firing({c, nan_value, cleared});
  ASSERT_EQ(firing.size(), 1u);
  EXPECT_EQ(firing[0].alert.rule, "loss_not_finite");
  json bad = to_json(c);
  bad["state"] = "maybe";
  try {
    alert_change_from_json(bad, "state.db alert 4");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("state.db alert 4: alert: \"state\""), std::string::npos) << e.what();
  }
}

TEST(QueueEta, ListSchedulingOntoTheEarliestFreeSlot) {
  EXPECT_EQ(queue_finish_at(100, {}, {}, 2), 100);
  EXPECT_EQ(queue_finish_at(100, {50}, {}, 2), 150);
  // Two slots: running 10 and 40; queued 30, 30: the first goes after 10 (ends 40), the second after 40 (70).
  EXPECT_EQ(queue_finish_at(0, {10, 40}, {30, 30}, 2), 70);
  EXPECT_EQ(queue_finish_at(0, {}, {10, 10, 10, 10}, 3), 20);
  EXPECT_EQ(queue_finish_at(0, {5, 5, 5}, {}, 1), 15) << "more running than slots: they queue";
}

TEST(AlertConfig, ReadsTheTableAndNamesWhatIsWrong) {
  const AlertThresholds d = parse_alert_config("[sweep]\nname = \"x\"\n", "s.toml");
  EXPECT_EQ(d.stall_factor, AlertThresholds{}.stall_factor) << "no [alerts]: the defaults";
  const AlertThresholds t = parse_alert_config(
      "[alerts]\nexec = \"mail -s ragmig me\"\nstall_factor = 4\nidle_s = 60\ncrash_loop_failures = 5\n"
      "deadline = 2026-11-26T08:00:00Z\n",
      "s.toml");
  EXPECT_EQ(t.exec, "mail -s ragmig me");
  EXPECT_EQ(t.stall_factor, 4);
  EXPECT_EQ(t.idle_s, 60);
  EXPECT_EQ(t.crash_loop_failures, 5);
  EXPECT_EQ(t.deadline, 1795680000);
  EXPECT_EQ(parse_alert_config("[alerts]\ndeadline = 1795680000\n", "s.toml").deadline, 1795680000);
  EXPECT_EQ(parse_alert_config("[alerts]\ndeadline = 2026-11-26T09:00:00+01:00\n", "s.toml").deadline, 1795680000);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[alerts]\nstal_factor = 3\n", "s.toml:2: [alerts] stal_factor: unknown key (known: deadline, exec"},
      {"[alerts]\nstall_factor = \"3\"\n", "s.toml:2: [alerts] stall_factor: expected a number >= 1 (got a string)"},
      {"[alerts]\nidle_s = -1\n", "s.toml:2: [alerts] idle_s: expected a finite number >= 0 (got -1)"},
      {"[alerts]\nstall_min_s = nan\n", "[alerts] stall_min_s: expected a finite number >= 0 (got nan)"},
      {"[alerts]\ninterval_s = inf\n", "[alerts] interval_s: expected a finite number >= 0.05 (got inf)"},
      {"[alerts]\ndeadline = nan\n", "[alerts] deadline: expected a time after 1970 (got nan)"},
      {"[alerts]\ncrash_loop_failures = 0\n", "crash_loop_failures: expected an integer >= 1 (got 0)"},
      {"[alerts]\nidle_utilization = 5\n", "[alerts] idle_utilization: expected a share between 0 and 1 (got 5)"},
      {"[alerts]\ndeadline = \"tomorrow\"\n", "[alerts] deadline: expected a date-time"},
      {"alerts = 3\n", "s.toml: alerts: expected a table [alerts] (got an integer)"},
      {"[alerts\n", "s.toml:1:"},
  };
  for (const auto& [text, want] : bad) {
    try {
      parse_alert_config(text, "s.toml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// 2,000 mutated [alerts] tables, alert rows and worker events: each is read or refused with ragmig's own error,
// and folding a mutated event never throws.
TEST(MonitorFuzz, MutatedAlertsTablesAlertRowsAndEvents) {
  const std::string table =
      "[sweep]\nname = \"s\"\n[alerts]\nexec = \"cat\"\nstall_factor = 4.5\nidle_s = 60\n"
      "crash_loop_failures = 3\ndeadline = 2026-11-26T08:00:00Z\nmemory_fraction = 0.9\n";
  const std::string row = to_json(AlertChange{{"stall", 3, "gpu:1", 500, 200, "stalled", 0}, true, 50, 40}).dump();
  const std::string event = R"({"event":"progress","step":12,"loss":1.5,"samples_per_s":40.0,"time":100.5})";
  int tables_read = 0, tables_refused = 0, rows_read = 0, rows_refused = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    uint64_t h = splitmix64(i ^ 0xa1e47);
    std::string t = table, r = row, e = event;
    const int edits = 1 + static_cast<int>(splitmix64(h) % 4);
    for (int k = 0; k < edits; ++k) {
      t = testing::mutate(t, h);
      r = testing::mutate(r, h);
      e = testing::mutate(e, h);
    }
    try {
      parse_alert_config(t, "fuzz.toml");
      ++tables_read;
    } catch (const ConfigError&) {
      ++tables_refused;
    } catch (const std::exception& x) {
      ADD_FAILURE() << "table mutation " << i << " escaped as " << x.what() << "\n" << t;
    }
    const auto j = json::parse(r, nullptr, false);
    try {
      alert_change_from_json(j, "fuzz");
      ++rows_read;
    } catch (const DataError&) {
      ++rows_refused;
    } catch (const std::exception& x) {
      ADD_FAILURE() << "row mutation " << i << " escaped as " << x.what() << "\n" << r;
    }
    JobWatch w;
    EXPECT_NO_THROW(fold_event(w, json::parse(e, nullptr, false), 0)) << e;
  }
  EXPECT_GT(tables_read, 100);
  EXPECT_GT(tables_refused, 300);
  EXPECT_GT(rows_read, 100);
  EXPECT_GT(rows_refused, 300);
}

}  // namespace
}  // namespace ragmig::monitor
