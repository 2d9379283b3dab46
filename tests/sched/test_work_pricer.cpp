// Jobs that state their work in FLOPs (`ragmig submit` counts a `ragmig train` job's) are priced by the scheduler:
// before any measurement the median job at an hour, the others in proportion; once a job's progress events
// measure the rate, every such job at its FLOPs over that rate — in the store, for the policy's next pass — and a
// job submitted later at once; a job that reports its steps by what it has done and what it has left, at its own
// rate and the batch it trains at. Jobs with the submitter's own estimate keep it.
#include "sched/work_pricer.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sched/job_event.h"
#include "sched/scheduler.h"
#include "sched/scripted_executor.h"
#include "sched/store.h"

namespace ragmig::sched {
namespace {

// All of it in `steps` steps at batch 8, stating them or not.
JobSpec::Work work_of(double flops, bool stated = false, int64_t steps = 100) {
  return {flops, flops / static_cast<double>(steps), 8, stated ? steps : 0};
}

nlohmann::json progress(int64_t step, double time, int64_t batch = 8) {
  return {{"event", "progress"}, {"step", step}, {"time", time}, {"batch_size", batch}};
}

// The job protocol's reader: each field only with its type; anything else is absent, never an error.
TEST(JobEvent, FieldsOfOtherTypesReadAsAbsent) {
  const JobEvent good = read_job_event({{"event", "progress"}, {"step", 7}, {"time", 1.5}, {"batch_size", 8},
                                        {"samples_per_s", 40}, {"loss", 0.25}, {"memory_mb", 900},
                                        {"state_memory_mb", 300}});
  EXPECT_EQ(good.kind, "progress");
  EXPECT_EQ(good.step, 7);
  EXPECT_EQ(good.time, 1.5);
  EXPECT_EQ(good.batch_size, 8);
  EXPECT_EQ(good.samples_per_s, 40.0);
  EXPECT_EQ(good.loss, 0.25);
  EXPECT_EQ(good.memory_mb, 900.0);
  EXPECT_EQ(good.state_memory_mb, 300.0);
  const JobEvent bad = read_job_event({{"event", 1}, {"step", "7"}, {"time", nullptr}, {"batch_size", 1.5},
                                       {"samples_per_s", "fast"}, {"loss", {1}}, {"memory_mb", true}});
  EXPECT_EQ(bad.kind, "");
  EXPECT_FALSE(bad.step || bad.time || bad.batch_size || bad.samples_per_s || bad.loss || bad.memory_mb);
  for (const nlohmann::json& odd : {nlohmann::json(nullptr), nlohmann::json::array({1, 2}), nlohmann::json("event")}) {
    const JobEvent e = read_job_event(odd);
    EXPECT_EQ(e.kind, "");
    EXPECT_FALSE(e.step);
  }
}

TEST(WorkPricer, UnmeasuredJobsArePricedAtTheRateGivenThenAtTheMeasuredOne) {
  WorkPricer pricer;
  const JobSpec::Work work{3.6e12, 3e10, 8};  // 100 steps of 3e10 FLOP at batch 8, and 6e11 of evaluations
  EXPECT_FALSE(pricer.rate());
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 1e9), 3600);
  EXPECT_FALSE(pricer.new_estimate(1, work, 3500, 1e9)) << "within 10 %: left as it is";
  EXPECT_FALSE(pricer.new_estimate(1, {}, 0, 1e9)) << "no work, no price";
  pricer.on_event(1, work, {{"event", "start"}, {"step", 0}}, 1, 0);
  pricer.on_event(1, work, progress(10, 100), 1, 0);
  EXPECT_FALSE(pricer.rate()) << "one progress event spans no time";
  pricer.on_event(1, work, progress(20, 110), 2, 0);  // 10 steps of 3e10 in 10 s on a slot of speed 2
  ASSERT_TRUE(pricer.rate());
  EXPECT_DOUBLE_EQ(*pricer.rate(), 1.5e10);
  // All its FLOPs at the steps' rate: the evaluations cost what training FLOPs cost.
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 3600, 1e9), 240);
  // A second job measures twice as fast; the median of two is their mean. Malformed events change nothing.
  pricer.on_event(2, work, progress(1, 0), 1, 0);
  pricer.on_event(2, work, {{"event", "progress"}, {"step", "x"}, {"time", 9}, {"batch_size", 8}}, 1, 0);
  pricer.on_event(2, work, {{"event", 1}, {"step", 5}, {"time", 2}, {"batch_size", 8}}, 1, 0);
  pricer.on_event(2, work, progress(11, 5), 1, 0);
  EXPECT_DOUBLE_EQ(*pricer.rate(), (1.5e10 + 6e10) / 2);
  // A finished job's rate stays in the median.
  pricer.forget(2);
  EXPECT_DOUBLE_EQ(*pricer.rate(), (1.5e10 + 6e10) / 2);
  // Job 1 is priced at its own rate now, another job at the median; without stated steps, at all its FLOPs.
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 1e9), 240);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(3, work, 0, 1e9), 3.6e12 / 3.75e10);
}

// What a job has left (estimate_s - work_s) follows its steps: the work it had attained at its latest progress
// event plus its steps left at the batch it now trains at and its evaluations, at its own rate; a job not
// measured yet at the rate of jobs like it.
TEST(WorkPricer, AJobStatingItsStepsIsPricedByWhatItHasDoneAndWhatIsLeftAtItsOwnRate) {
  WorkPricer pricer;
  const JobSpec::Work one{3.6e12, 3e10, 8, 100};  // 100 steps of 3e10 FLOP at batch 8, and 6e11 of evaluations
  const JobSpec::Work two{1.2e12, 1e10, 8, 100};
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 360) << "no progress yet: all of it";
  pricer.on_event(1, one, {{"event", "start"}, {"step", 0}}, 1, 0);
  pricer.on_event(1, one, progress(10, 100), 1, 20);  // loading and 10 steps took 20 s
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 20 + (90 * 3e10 + 6e11) / 1e10) << "where it is";
  pricer.on_event(1, one, progress(20, 110), 1, 30);  // 10 steps in 10 s: 3e10 FLOP/s
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 30 + 80 + 20);
  // Job 2, a third of job 1's FLOPs per sample (a smaller model), measures 4e10; the median moves, job 1 keeps
  // its own rate. A job not measured gets the median of the measured jobs within 2x of its FLOPs per sample: job
  // 1's for another like it, the median of all for one like neither.
  pricer.on_event(2, two, progress(0, 0), 1, 5);
  pricer.on_event(2, two, progress(10, 2.5), 1, 10);
  EXPECT_DOUBLE_EQ(*pricer.rate(), 3.5e10);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 130);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(2, two, 0, 1e10), 10 + (90 * 1e10 + 2e11) / 4e10);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(3, one, 0, 1e10), 3.6e12 / 3e10);
  EXPECT_DOUBLE_EQ(*pricer.like_rate(two), 4e10);
  const JobSpec::Work larger{1.2e13, 1.2e11, 8, 100};  // 4x job 1's per sample
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(4, larger, 0, 1e10), 1.2e13 / 3.5e10);
  EXPECT_DOUBLE_EQ(*pricer.like_rate({1e12, 0, 0}), 3.5e10) << "an evaluation: the median";
  // Resized to batch 2: a step costs a quarter; its rate stays until the new batch's window spans a step.
  pricer.on_event(1, one, progress(30, 120, 2), 1, 40);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 40 + (70 * 7.5e9 + 6e11) / 3e10);
  pricer.on_event(1, one, progress(40, 125, 2), 1, 45);  // 10 small steps in 5 s: 1.5e10 FLOP/s
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 45 + (60 * 7.5e9 + 6e11) / 1.5e10);
  // Past its last step only its evaluations are left; within 10 % of that nothing is rewritten.
  pricer.on_event(1, one, progress(100, 155, 2), 1, 75);  // at the same rate
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 75 + 6e11 / 1.5e10);
  EXPECT_FALSE(pricer.new_estimate(1, one, 120, 1e10));
  // Gone: its progress with it (priced as new, at its rate kept in the median).
  pricer.forget(1);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, one, 0, 1e10), 3.6e12 / 1.5e10);
}

// A preempted job resumes at its checkpoint's step: the steps it did past it are left again from its restart on,
// not from its next progress event; so is a job resumed after the scheduler restarted (no progress seen before).
TEST(WorkPricer, APreemptedJobsLostStepsAreLeftFromItsRestart) {
  WorkPricer pricer;
  const JobSpec::Work work{3.6e12, 3e10, 8, 100};  // 100 steps of 3e10 FLOP at batch 8, and 6e11 of evaluations
  pricer.on_event(1, work, {{"event", "start"}, {"step", 0}}, 1, 0);
  pricer.on_event(1, work, progress(10, 100), 1, 20);
  pricer.on_event(1, work, progress(60, 150), 1, 70);  // 50 steps in 50 s: 3e10 FLOP/s
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 1e10), 70 + (40 * 3e10 + 6e11) / 3e10);
  // Stopped past step 60, its checkpoint at 50, 75 s attained; it restarts there at batch 4 (an OOM retry).
  pricer.on_event(1, work, {{"event", "start"}, {"step", 50}, {"batch_size", 4}}, 1, 75);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 1e10), 75 + (50 * 1.5e10 + 6e11) / 3e10);
  pricer.on_event(2, work, {{"event", "start"}, {"step", 40}}, 1, 50);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(2, work, 0, 1e10), 50 + (60 * 3e10 + 6e11) / 3e10) << "at job 1's rate";
  pricer.on_event(3, work, {{"event", "start"}, {"step", 0}, {"batch_size", 8}}, 1, 0);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(3, work, 0, 1e10), 3.6e12 / 3e10) << "a first start: all of it";
}


// The evaluations a job has run are in the seconds it attained: what is left counts those at or after its latest
// step only (the one at that step may not have run yet).
TEST(WorkPricer, EvaluationsAJobHasRunAreNotLeft) {
  WorkPricer pricer;
  const JobSpec::Work work{3.6e12, 3e10, 8, 100, {10, 50, 100}};  // three evaluations of 2e11 FLOP
  pricer.on_event(1, work, {{"event", "start"}, {"step", 0}}, 1, 0);
  pricer.on_event(1, work, progress(10, 100), 1, 20);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 1e10), 20 + (90 * 3e10 + 6e11) / 1e10) << "all three";
  pricer.on_event(1, work, progress(20, 110), 1, 34);  // 10 steps in 10 s: 3e10 FLOP/s; and the evaluation
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 3e10), 34 + (80 * 3e10 + 4e11) / 3e10);
  pricer.on_event(1, work, progress(60, 150), 1, 78);
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, work, 0, 3e10), 78 + (40 * 3e10 + 2e11) / 3e10) << "the last one";
  const JobSpec::Work unsaid{3.6e12, 3e10, 8, 100};
  EXPECT_DOUBLE_EQ(*pricer.new_estimate(1, unsaid, 0, 3e10), 78 + (40 * 3e10 + 6e11) / 3e10) << "steps not said";
}

TEST(WorkPricer, TheSchedulerPricesTheJobsThatStateTheirWork) {
  const auto store = Store::in_memory((std::filesystem::temp_directory_path() / "ragmig-work-pricer").string());
  ScriptedExecutor executor;
  StepClock clock;
  SchedulerOptions options;
  options.policy = "ljf";
  Slot slot;
  slot.id = "cpu:0";
  Scheduler scheduler(*store, executor, clock, {slot}, options);
  const auto submit = [&](const std::string& name, double flops, double estimate_s = 0, bool steps = true,
                          bool stated = false) {
    JobSpec spec;
    spec.name = name;
    spec.argv = {"ragmig", "train", name + ".toml"};
    spec.estimate_s = estimate_s;
    if (flops > 0) spec.work = steps ? work_of(flops, stated) : JobSpec::Work{flops, 0, 0};
    return scheduler.submit(spec);
  };
  const JobId small = submit("small", 1e12), mid = submit("mid", 2e12);
  const JobId large = submit("large", 4e12, 0, true, /*stated=*/true);  // 100 steps, and says so
  const JobId guessed = submit("guessed", 0, 50);  // the submitter's own estimate
  const auto estimate = [&](JobId id) { return store->job(id)->spec.estimate_s; };
  scheduler.step();
  // Unmeasured: the median (mid) at an hour; ljf starts the largest.
  EXPECT_DOUBLE_EQ(estimate(mid), 3600);
  EXPECT_DOUBLE_EQ(estimate(small), 1800);
  EXPECT_DOUBLE_EQ(estimate(large), 7200);
  EXPECT_EQ(estimate(guessed), 50);
  ASSERT_EQ(executor.started, std::vector<JobId>{large});
  EXPECT_FALSE(scheduler.work_rate());

  // `large` measures 4e10 FLOP per step x 10 steps in 20 s: 2e10 FLOP/s, from its first progress event on.
  executor.emit(large, {{{"event", "start"}, {"step", 0}, {"time", 1000.0}}, progress(1, 1010), progress(11, 1030)});
  clock.t += 30;
  scheduler.step();
  ASSERT_TRUE(scheduler.work_rate());
  EXPECT_DOUBLE_EQ(*scheduler.work_rate(), 2e10);
  // It stated its steps: the 30 s it has run plus its 89 steps left at its own rate.
  EXPECT_DOUBLE_EQ(estimate(large), 30 + 89 * 4e10 / 2e10);
  EXPECT_DOUBLE_EQ(estimate(mid), 100);
  EXPECT_DOUBLE_EQ(estimate(small), 50);
  EXPECT_EQ(estimate(guessed), 50);
  // The policy sees the new estimates in this very pass.
  for (const auto& j : scheduler.cluster_view().jobs) {
    if (j.id == mid) {
      EXPECT_DOUBLE_EQ(j.estimate_s, 100);
    }
  }

  // A job submitted now is priced at the measured rate at once, an evaluation (FLOPs, no steps) too; a rate
  // within 10 % rewrites nothing.
  const JobId late = submit("late", 6e12);
  const JobId evaluation = submit("evaluation", 1e11, 0, /*steps=*/false);
  executor.emit(large, {progress(21, 1049)});  // 20 steps in 39 s: 2.05e10, 2.5 % faster
  clock.t += 19;
  scheduler.step();
  EXPECT_DOUBLE_EQ(estimate(large), 208) << "on its pace: what it has left fell by the seconds it ran";
  EXPECT_DOUBLE_EQ(estimate(late), 6e12 / *scheduler.work_rate());
  EXPECT_DOUBLE_EQ(estimate(evaluation), 1e11 / *scheduler.work_rate());
  EXPECT_DOUBLE_EQ(estimate(mid), 100) << "priced again though the rate moved less than 10 %";

  // `large` ends; the next start goes to the longest priced job, and the rate stays.
  executor.finish(large);
  scheduler.step();
  EXPECT_EQ(executor.started.back(), late);
  EXPECT_TRUE(scheduler.work_rate());
}

}  // namespace
}  // namespace ragmig::sched
