// Table-driven tests of the policies as pure functions: capacity, gangs, aging, determinism, and
// preemption only where a policy says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "sched/mig_slot.h"
#include "sched/placement.h"
#include "sched/policy.h"

namespace ragmig::sched {
namespace {

JobView queued(JobId id, const std::string& need, int64_t priority = 0, double submitted = 0) {
  JobView j;
  j.id = id;
  j.need = parse_need(need);
  j.priority = priority;
  j.submitted_at = submitted;
  j.queued_since = submitted;
  return j;
}

JobView running(JobId id, const std::string& need, std::vector<int> slots, double started, int64_t priority = 0) {
  JobView j = queued(id, need, priority, started - 10);
  j.slots = std::move(slots);
  j.started_at = started;
  return j;
}

std::vector<JobId> started(const Decisions& d) {
  std::vector<JobId> ids;
  for (const auto& s : d.starts) ids.push_back(s.job);
  return ids;
}
std::vector<JobId> preempted(const Decisions& d) {
  std::vector<JobId> ids;
  for (const auto& p : d.preemptions) ids.push_back(p.job);
  return ids;
}

// Every decision is feasible: starts use free slots that fit, each slot once, all replicas or none;
// preemptions name running jobs that are not already stopping.
void expect_feasible(const ClusterView& v, const Decisions& d, const std::string& policy) {
  std::set<int> busy;
  for (const auto& j : v.jobs) busy.insert(j.slots.begin(), j.slots.end());
  std::set<int> taken;
  for (const auto& s : d.starts) {
    const auto job = std::find_if(v.jobs.begin(), v.jobs.end(), [&](const JobView& j) { return j.id == s.job; });
    ASSERT_NE(job, v.jobs.end()) << policy;
    EXPECT_FALSE(job->running()) << policy << ": started a running job";
    EXPECT_EQ(static_cast<int>(s.slots.size()), job->need.replicas) << policy << ": gang split";
    for (int slot : s.slots) {
      EXPECT_FALSE(busy.count(slot)) << policy << ": slot " << slot << " is busy";
      EXPECT_TRUE(taken.insert(slot).second) << policy << ": slot " << slot << " given twice";
      EXPECT_TRUE(fits(job->need, v.slots[static_cast<size_t>(slot)])) << policy << ": does not fit";
    }
  }
  for (const auto& p : d.preemptions) {
    const auto job = std::find_if(v.jobs.begin(), v.jobs.end(), [&](const JobView& j) { return j.id == p.job; });
    ASSERT_NE(job, v.jobs.end());
    EXPECT_TRUE(job->running() && !job->stopping) << policy;
  }
}

const std::vector<std::string> kAllPolicies = {
    "fifo", "priority", "priority(preempt=1,min_run=0)", "rr(quantum=30)", "sjf", "ljf", "srtf(min_run=0)",
    "las(thresholds=100:1000,min_run=0)"};

TEST(PolicySpec, RoundTrips) {
  for (const char* s : {"fifo", "priority(aging=2,preempt=1)", "rr(quantum=60)", "las(thresholds=3600:36000)",
                        "srtf(min_run=0)"}) {
    EXPECT_EQ(to_string(parse_policy_spec(s)), s);
    EXPECT_NO_THROW(make_policy(s)) << s;
  }
  for (const char* bad : {"", "fi fo", "rr(", "rr()", "rr(quantum)", "rr(quantum=1,quantum=2)", "rr(q=1)x"})
    EXPECT_THROW(parse_policy_spec(bad), ConfigError) << bad;
  for (const char* bad : {"lottery", "rr(slice=3)", "rr(quantum=-1)", "priority(preempt=2)",
                          "las(thresholds=10:5)", "fifo(x=1)"})
    EXPECT_THROW(make_policy(bad), ConfigError) << bad;
  try {
    make_policy("lottery");
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("fifo"));  // lists the known ones
  }
  for (const auto& info : policy_catalog()) EXPECT_NO_THROW(make_policy(info.name));
}

TEST(Placement, SmallestSliceThatFits) {
  ClusterView v;
  v.slots = {mig("a", 3, 71), mig("b", 1, 18), mig("c", 2, 35), mig("d", 7, 141)};
  v.jobs = {queued(1, "1g.18gb:1", 0, 1), queued(2, "20gb:1", 0, 2), queued(3, "3g.71gb:1", 0, 3)};
  const Decisions d = make_policy("fifo").decide(v);
  ASSERT_EQ(d.starts.size(), 3u);
  EXPECT_EQ(d.starts[0].slots, std::vector<int>{1});  // 1g onto the 1g, not the 7g
  EXPECT_EQ(d.starts[1].slots, std::vector<int>{2});  // 20 GB onto the 2g.35gb
  EXPECT_EQ(d.starts[2].slots, std::vector<int>{0});
}

TEST(Placement, ReshapableInstancesComeLastAndLargestFirst) {
  // GPU 0 is a --mig auto GPU with a 2g left over beside a running job, GPU 1 another one, idle and whole;
  // GPU 2 is laid out by hand. A new job takes the fixed slice first, then the idle whole GPU, and only then
  // the leftover 2g (smallest first would have put the second on the 2g at a fraction of its speed).
  ClusterView v;
  v.slots = {mig("auto0/2g", 2, 35, 0), mig("auto1/7g", 7, 141, 1), mig("fixed2/3g", 3, 71, 2)};
  v.slots[0].reshapable = v.slots[1].reshapable = true;
  v.jobs = {queued(1, "10gb:1", 0, 1), queued(2, "10gb:1", 0, 2), queued(3, "10gb:1", 0, 3)};
  EXPECT_EQ(placement_order(v.slots), (std::vector<int>{2, 1, 0}));
  const Decisions d = make_policy("fifo").decide(v);
  ASSERT_EQ(d.starts.size(), 3u);
  EXPECT_EQ(d.starts[0].slots, std::vector<int>{2});
  EXPECT_EQ(d.starts[1].slots, std::vector<int>{1});
  EXPECT_EQ(d.starts[2].slots, std::vector<int>{0});
}

TEST(Placement, JobsAMigPlanLeftWaitingTakeNoReshapableSlotButTheirOwn) {
  // A --mig auto GPU with a free 3g and a 7g made for job 2; a fixed 1g elsewhere. Job 1 and job 3 the plan
  // left waiting (for a GPU to free): job 1 takes the fixed 1g, not the 3g; job 3 takes nothing (the 3g is
  // reshapable, the 7g job 2's); job 2 takes its 7g; job 4, which no plan has seen yet, takes the 3g.
  ClusterView v;
  v.slots = {mig("auto0/3g", 3, 71, 0), mig("auto0/7g", 7, 141, 1), mig("fixed/1g", 1, 18, 2)};
  v.slots[0].reshapable = v.slots[1].reshapable = true;
  v.slots[1].reserved_for = 2;
  v.jobs = {queued(1, "10gb:1", 0, 1), queued(2, "10gb:1", 0, 2), queued(3, "10gb:1", 0, 3),
            queued(4, "10gb:1", 0, 4)};
  v.plan_waiting = {1, 3};
  for (const std::string policy : {"fifo", "las", "srtf", "priority(preempt=1,min_run=0)"}) {
    const Decisions d = make_policy(policy).decide(v);
    expect_feasible(v, d, policy);
    std::map<JobId, std::vector<int>> where;
    for (const auto& s : d.starts) where[s.job] = s.slots;
    EXPECT_EQ(where, (std::map<JobId, std::vector<int>>{{1, {2}}, {2, {1}}, {4, {0}}})) << policy;
  }
  // Nor does it preempt its way onto one: job 5 (high priority, left waiting) does not stop job 6 on the 3g.
  ClusterView p;
  p.slots = {mig("auto0/3g", 3, 71, 0)};
  p.slots[0].reshapable = true;
  p.now = 1000;
  p.jobs = {running(6, "10gb:1", {0}, 100), queued(5, "10gb:1", 9, 200)};
  p.plan_waiting = {5};
  EXPECT_TRUE(make_policy("priority(preempt=1,min_run=0)").decide(p).preemptions.empty());
  p.plan_waiting.clear();
  EXPECT_EQ(preempted(make_policy("priority(preempt=1,min_run=0)").decide(p)), std::vector<JobId>{6});
}

TEST(Placement, ReservedSlotsAreTheirJobsAloneAndAwaitingJobsWait) {
  ClusterView v;
  v.slots = {mig("small", 1, 18), mig("made-for-3", 7, 141), mig("vacating", 1, 18)};
  v.slots[1].reserved_for = 3;
  v.slots[2].reserved_for = Slot::kVacating;
  // Job 1 comes first but may not take job 3's 7g nor the vacating slice; job 3 takes only its own slot;
  // job 4 awaits a slot still being made; job 5 finds nothing left.
  v.jobs = {queued(1, "1g.18gb:1", 0, 1), queued(3, "1g.18gb:1", 0, 3), queued(4, "1g.18gb:1", 0, 4),
            queued(5, "1g.18gb:1", 0, 5)};
  v.awaiting = {4};
  for (const std::string policy : {"fifo", "las", "srtf"}) {
    const Decisions d = make_policy(policy).decide(v);
    ASSERT_EQ(d.starts.size(), 2u) << policy;
    std::map<JobId, std::vector<int>> where;
    for (const auto& s : d.starts) where[s.job] = s.slots;
    EXPECT_EQ(where, (std::map<JobId, std::vector<int>>{{1, {0}}, {3, {1}}})) << policy;
  }
  // The queue order a policy gives the rebalancer: queued jobs only, in its ranking.
  v.jobs.push_back(running(9, "1g.18gb:1", {0}, 100));
  EXPECT_EQ(make_policy("fifo").queue_order(v), (std::vector<JobId>{1, 3, 4, 5}));
}

TEST(Placement, ProfileNeedsUseTheNominalSize) {
  Slot s = mig("m", 1, 18);
  s.memory_mb = 16'384;  // what NVML reports for a 1g.18gb is less than 18 GiB
  EXPECT_FALSE(fits(parse_need("1g.18gb:1"), s));
  s.nominal_memory_mb = 18 * 1024;  // as exec sets it from the profile name
  EXPECT_TRUE(fits(parse_need("1g.18gb:1"), s));
  EXPECT_FALSE(fits(parse_need("2g.35gb:1"), s));
}

TEST(Placement, GangAllOrNothingPrefersOneGpu) {
  ClusterView v;
  v.slots = {mig("g0a", 1, 18, 0), mig("g1a", 1, 18, 1), mig("g1b", 1, 18, 1), mig("g0b", 1, 18, 0),
             mig("g1c", 1, 18, 1)};
  v.jobs = {queued(1, "1g.18gb:3", 0, 1)};
  Decisions d = make_policy("fifo").decide(v);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].slots, (std::vector<int>{1, 2, 4}));  // all on GPU 1
  // With three slots busy, three replicas do not fit in the two left: nothing starts, no replica alone.
  v.jobs.push_back(running(9, "1g.18gb:3", {1, 2, 4}, 0));
  d = make_policy("fifo").decide(v);
  EXPECT_TRUE(d.starts.empty());
  // A job behind it that fits still runs (backfilling).
  v.jobs.push_back(queued(2, "1g.18gb:1", 0, 2));
  d = make_policy("fifo").decide(v);
  EXPECT_EQ(started(d), std::vector<JobId>{2});
}

// Up to 10 slots of every kind and 12 jobs, a third of them running where they fit, some of those stopping.
ClusterView random_view(std::mt19937_64& rng) {
  const std::vector<std::string> needs = {"cpu:1", "cpu:2", "1g.18gb:1", "2g.35gb:1", "1g.18gb:2", "gpu:1", "40gb:1"};
  ClusterView v;
  v.now = 1000;
  const int n_slots = 1 + static_cast<int>(rng() % 10);
  for (int i = 0; i < n_slots; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    Slot s = kind == 0 ? Slot{} : mig("m" + std::to_string(i), std::array{1, 2, 3, 7}[rng() % 4], 18, static_cast<int>(rng() % 2));
    if (kind == 0) s.kind = SlotKind::Cpu;
    if (kind == 3) s.kind = SlotKind::Gpu, s.compute = 7, s.memory_mb = 80 * 1024;
    s.id = "s" + std::to_string(i);
    v.slots.push_back(s);
  }
  std::vector<char> used(static_cast<size_t>(n_slots), 0);
  for (JobId id = 1; id <= 12; ++id) {
    JobView j = queued(id, needs[rng() % needs.size()], static_cast<int64_t>(rng() % 5), static_cast<double>(rng() % 100));
    j.estimate_s = static_cast<double>(rng() % 500);
    j.service_before_s = static_cast<double>(rng() % 2000);
    j.waited_before_s = static_cast<double>(rng() % 3000);
    if (rng() % 3 == 0) {  // make it running where it fits
      std::vector<int> free_slots;
      for (int s = 0; s < n_slots; ++s)
        if (!used[static_cast<size_t>(s)] && fits(j.need, v.slots[static_cast<size_t>(s)])) free_slots.push_back(s);
      if (static_cast<int>(free_slots.size()) >= j.need.replicas) {
        free_slots.resize(static_cast<size_t>(j.need.replicas));
        for (int s : free_slots) used[static_cast<size_t>(s)] = 1;
        j.slots = free_slots;
        j.started_at = static_cast<double>(rng() % 1000);
        j.stopping = rng() % 5 == 0;
      }
    }
    v.jobs.push_back(j);
  }
  return v;
}

void expect_same(const Decisions& a, const Decisions& b, const std::string& what) {
  EXPECT_EQ(started(a), started(b)) << what;
  EXPECT_EQ(preempted(a), preempted(b)) << what;
  for (size_t i = 0; i < a.starts.size() && i < b.starts.size(); ++i) EXPECT_EQ(a.starts[i].slots, b.starts[i].slots) << what;
}

TEST(Policies, CapacityNeverExceededOnRandomViews) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const ClusterView v = random_view(rng);
    for (const auto& p : kAllPolicies) {
      const Decisions d = make_policy(p).decide(v);
      expect_feasible(v, d, p);
      // Same inputs, same decisions, whatever the order the jobs come in.
      ClusterView shuffled = v;
      std::shuffle(shuffled.jobs.begin(), shuffled.jobs.end(), rng);
      expect_same(d, make_policy(p).decide(shuffled), p);
    }
  }
}

// Backfilling is complete: after a non-preemptive pass, no queued job that did not start fits in the slots left
// free (placement skips a job whose need is at least that of one that found no room: that must never skip one
// that fits). Jobs a MIG plan left waiting are checked against the slots they may take.
TEST(Placement, BackfillingLeavesNoQueuedJobThatFitsWhatIsLeft) {
  std::mt19937_64 rng(13);
  int skipped = 0;
  for (int trial = 0; trial < 400; ++trial) {
    ClusterView v = random_view(rng);
    for (int extra = 0; extra < 20; ++extra)  // a longer queue, where needs repeat
      v.jobs.push_back(queued(100 + extra,
                              std::array{"cpu:1", "1g.18gb:1", "1g.18gb:3", "2g.35gb:2", "gpu:1", "40gb:1"}[rng() % 6],
                              0, static_cast<double>(rng() % 100)));
    for (auto& j : v.jobs) j.stopping = false;
    for (auto& s : v.slots) s.reshapable = s.kind == SlotKind::Mig && rng() % 3 == 0;
    for (const auto& j : v.jobs)
      if (!j.running() && rng() % 4 == 0) v.plan_waiting.push_back(j.id);
    std::sort(v.plan_waiting.begin(), v.plan_waiting.end());
    for (const std::string p : {"fifo", "priority", "sjf", "ljf"}) {
      const Decisions d = make_policy(p).decide(v);
      expect_feasible(v, d, p);
      std::vector<char> left(v.slots.size(), 1);
      for (const auto& j : v.jobs)
        for (int s : j.slots) left[static_cast<size_t>(s)] = 0;
      for (const auto& start : d.starts)
        for (int s : start.slots) left[static_cast<size_t>(s)] = 0;
      const std::vector<int> order = placement_order(v.slots);
      const std::vector<JobId> ids = started(d);
      for (const auto& j : v.jobs) {
        if (j.running() || std::count(ids.begin(), ids.end(), j.id)) continue;
        ++skipped;
        const auto& usable = plan_holds_off(v, j.id) ? without_reshapable(left, v.slots) : left;
        EXPECT_TRUE(choose_slots(j.need, v.slots, order, usable).empty())
            << p << ": job " << j.id << " (" << to_string(j.need) << ") fits in what is left, trial " << trial;
      }
    }
  }
  EXPECT_GT(skipped, 1000);  // the views do leave jobs waiting
}

// decide places the queued jobs alone first and ranks the running ones only when preemption could help:
// that must never change a decision.
TEST(Policies, DecideIsPlacementOfTheWholeRanking) {
  std::mt19937_64 rng(11);
  int preempting = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const ClusterView v = random_view(rng);
    for (const auto& p : kAllPolicies) {
      const Policy policy = make_policy(p);
      const Decisions whole = place_in_order(v, policy.rank(v));
      expect_same(policy.decide(v), whole, p);
      preempting += !whole.preemptions.empty();
    }
  }
  EXPECT_GT(preempting, 100);  // the views do exercise preemption
}

// Each preemptive policy's rule, written out: whether queued job q may preempt running job r (the rankings of
// kAllPolicies, at now 1000). A ranking's may_preempt answers this for every pair, and is null exactly where no
// pair qualifies.
TEST(Policies, MayPreemptIsTheRuleAndNullWhereNoPairQualifies) {
  const auto remaining = [](const JobView& j) {
    return j.estimate_s > 0 ? std::max(0.0, j.estimate_s - j.work_s(1000)) : 1e300;
  };
  const auto queue = [](const JobView& j) { return (j.service_s(1000) >= 100) + (j.service_s(1000) >= 1000); };
  const auto effective = [](const JobView& j) { return static_cast<double>(j.priority) + j.waited_s(1000) / 3600; };
  const std::map<std::string, std::function<bool(const JobView&, const JobView&)>> rules = {
      {"priority(preempt=1,min_run=0)",
       [&](const JobView& q, const JobView& r) { return q.priority > r.priority && effective(q) > effective(r); }},
      {"rr(quantum=30)", [](const JobView&, const JobView& r) { return 1000 - r.started_at >= 30; }},
      {"srtf(min_run=0)", [&](const JobView& q, const JobView& r) { return remaining(q) < remaining(r); }},
      {"las(thresholds=100:1000,min_run=0)", [&](const JobView& q, const JobView& r) { return queue(q) < queue(r); }},
  };
  std::mt19937_64 rng(5);
  std::map<std::string, int> nulls, pairs;
  for (int trial = 0; trial < 500; ++trial) {
    const ClusterView v = random_view(rng);
    for (const auto& [name, rule] : rules) {
      const Ranking ranking = make_policy(name).rank(v);
      bool any = false;
      for (const JobView& q : v.jobs)
        for (const JobView& r : v.jobs) {
          if (q.running() || !r.running() || r.stopping) continue;
          const bool may = rule(q, r);
          any = any || may;
          if (ranking.may_preempt) {
            EXPECT_EQ(ranking.may_preempt(q, r), may) << name << ": " << q.id << " of " << r.id;
          }
        }
      EXPECT_EQ(ranking.may_preempt == nullptr, !any) << name;
      ++(any ? pairs : nulls)[name];
    }
  }
  for (const auto& [name, rule] : rules) {  // the views exercise both
    EXPECT_GT(nulls[name], 20) << name;
    EXPECT_GT(pairs[name], 20) << name;
  }
}

// Two CPU slots, both busy with low-priority work for 100 s; a high-priority job arrives.
ClusterView busy_cluster() {
  ClusterView v;
  v.now = 200;
  v.slots = {Slot{}, Slot{}};
  v.slots[1].id = "cpu1";
  v.slots[0].id = "cpu0";
  v.jobs = {running(1, "cpu:1", {0}, 100, 0), running(2, "cpu:1", {1}, 150, 1), queued(3, "cpu:1", 9, 190)};
  v.jobs[0].estimate_s = 1000;
  v.jobs[1].estimate_s = 900;
  v.jobs[2].estimate_s = 10;
  // Their service and work so far: 100 and 50 s, since they started.
  return v;
}

TEST(Policies, PreemptOnlyWhereThePolicySays) {
  struct Row {
    std::string policy;
    std::vector<JobId> preempted;
  };
  for (const Row& r : std::vector<Row>{
           {"fifo", {}},
           {"sjf", {}},
           {"ljf", {}},
           {"priority", {}},                                // not preemptive by default
           {"priority(preempt=1,min_run=60)", {1}},         // the lowest priority goes; job 2 ran only 50 s
           {"priority(preempt=1,min_run=0)", {1}},          // one victim is enough
           {"priority(preempt=1,min_run=500)", {}},         // nobody has run long enough
           {"srtf(min_run=0)", {1}},                        // most remaining work goes
           {"las(thresholds=60,min_run=0)", {1}},           // job 1 has the most service, in queue 1
           {"las(thresholds=1000,min_run=0)", {}},          // all in queue 0: no preemption inside a queue
           {"rr(quantum=80)", {1}},                         // job 1's quantum is used up, job 2's is not
           {"rr(quantum=300)", {}},
       }) {
    const ClusterView v = busy_cluster();
    const Decisions d = make_policy(r.policy).decide(v);
    expect_feasible(v, d, r.policy);
    EXPECT_EQ(preempted(d), r.preempted) << r.policy;
    EXPECT_TRUE(d.starts.empty()) << r.policy << ": nothing is free until a victim stops";
  }
}

TEST(Policies, StoppingSlotsAreClaimedNotPreemptedAgain) {
  ClusterView v = busy_cluster();
  v.jobs[0].stopping = true;  // job 1 is already being preempted for job 3
  const Decisions d = make_policy("priority(preempt=1,min_run=0)").decide(v);
  EXPECT_TRUE(preempted(d).empty());
  EXPECT_TRUE(d.starts.empty());
  // Once job 1 is gone, job 3 starts on its slot.
  v.jobs.erase(v.jobs.begin());
  const Decisions next = make_policy("priority(preempt=1,min_run=0)").decide(v);
  EXPECT_EQ(started(next), std::vector<JobId>{3});
  EXPECT_EQ(next.starts[0].slots, std::vector<int>{0});
}

// A job's waiting, service and work are read at a time: each grows only in the state it counts, from what it was
// when the job entered that state, and never backwards from a time before that.
TEST(Policies, AJobsTimesGrowOnlyInTheStateTheyCount) {
  JobView q = queued(1, "1g.18gb:2", 0, 100);
  q.waited_before_s = 30;
  q.service_before_s = 500;
  q.work_before_s = 250;
  EXPECT_DOUBLE_EQ(q.waited_s(160), 90);
  EXPECT_DOUBLE_EQ(q.waited_s(50), 30) << "before it was queued";
  EXPECT_DOUBLE_EQ(q.service_s(160), 500);
  EXPECT_DOUBLE_EQ(q.work_s(160), 250);

  JobView r = q;
  r.slots = {0, 1};
  r.started_at = 200;
  r.speed = 0.5;
  EXPECT_DOUBLE_EQ(r.waited_s(400), 30);
  EXPECT_DOUBLE_EQ(r.service_s(400), 500 + 200 * 2) << "seconds x slots held";
  EXPECT_DOUBLE_EQ(r.work_s(400), 250 + 200 * 0.5) << "seconds x the slowest slot's speed";
  EXPECT_DOUBLE_EQ(r.service_s(150), 500) << "before it started";
}

TEST(Policies, OrderOfStarts) {
  ClusterView v;
  v.now = 10'000;
  v.slots = {Slot{}};
  struct Row {
    std::string policy;
    JobId first;
  };
  v.jobs = {queued(1, "cpu:1", 0, 1), queued(2, "cpu:1", 5, 2), queued(3, "cpu:1", 1, 3)};
  v.jobs[0].estimate_s = 300;
  v.jobs[1].estimate_s = 0;  // unknown: last under sjf and ljf
  v.jobs[2].estimate_s = 100;
  v.jobs[0].service_before_s = 500;
  v.jobs[0].queued_since = 50;
  for (const Row& r : std::vector<Row>{{"fifo", 1},
                                       {"priority", 2},
                                       {"sjf", 3},
                                       {"ljf", 1},
                                       {"srtf", 3},
                                       {"las(thresholds=100)", 2},  // job 1 has passed the threshold
                                       {"rr", 2}}) {                // job 2 has waited longest (queued_since)
    EXPECT_EQ(started(make_policy(r.policy).decide(v)), std::vector<JobId>{r.first}) << r.policy;
  }
  EXPECT_EQ(make_policy("ljf").queue_order(v), (std::vector<JobId>{1, 3, 2})) << "longest first, unknown last";
  EXPECT_EQ(make_policy("sjf").queue_order(v), (std::vector<JobId>{3, 1, 2}));
}

// Aging bounds the wait: a priority-0 job overtakes fresh priority-5 jobs once it has waited
// 5 / aging hours, however many of them keep arriving.
TEST(Policies, AgingBoundsTheWait) {
  const double aging = 10;  // points per hour: 5 points take 30 minutes
  const Policy policy = make_policy("priority(aging=10)");
  ClusterView v;
  v.slots = {Slot{}};
  JobId winner = 0;
  double t = 0;
  for (; t <= 7200; t += 60) {
    v.now = t;
    // Queued since 0: it has waited t.
    JobView low = queued(1, "cpu:1", 0, 0);
    JobView fresh = queued(100 + static_cast<JobId>(t), "cpu:1", 5, t);  // arrives now, has not waited
    v.jobs = {low, fresh};
    winner = started(policy.decide(v)).at(0);
    if (winner == 1) break;
  }
  EXPECT_EQ(winner, 1);
  EXPECT_LE(t, 5.0 / aging * 3600 + 60);
  EXPECT_GE(t, 5.0 / aging * 3600);
}

// Aging orders the queue; only a higher priority as submitted preempts. One slot, job 1 (priority p1) running
// since t=100 after a short wait, job 2 (priority p2) queued for three hours: at aging 1 it outranks job 1 unless
// job 1's priority is 3 or more higher.
TEST(Policies, AgingNeverPreemptsOnlyAHigherPriorityDoes) {
  struct Row {
    int64_t running_priority, queued_priority;
    bool preempts;
  };
  for (const Row& r : std::vector<Row>{
           {0, 0, false},  // equals: job 2 ranks first by its wait, but would only take turns with job 1
           {0, 1, true},   // a higher priority preempts
           {3, 1, false},  // ranks first by its wait (1 + 3 hours > 3), but a lower priority preempts nobody
           {1, 5, true},
       }) {
    ClusterView v;
    v.slots = {Slot{}};
    v.now = 3 * 3600 + 100;
    v.jobs = {running(1, "cpu:1", {0}, 100, r.running_priority), queued(2, "cpu:1", r.queued_priority, 100)};
    v.jobs[0].waited_before_s = 10;
    const Policy policy = make_policy("priority(aging=1,preempt=1,min_run=0)");
    EXPECT_EQ(policy.queue_order(v), std::vector<JobId>{2});
    EXPECT_EQ(preempted(policy.decide(v)), r.preempts ? std::vector<JobId>{1} : std::vector<JobId>{})
        << r.running_priority << " running, " << r.queued_priority << " queued";
  }
  // A running job that has aged past the newcomer keeps its slot, whatever the newcomer's priority.
  ClusterView v;
  v.slots = {Slot{}};
  v.now = 10 * 3600;
  v.jobs = {running(1, "cpu:1", {0}, 9 * 3600, 0), queued(2, "cpu:1", 2, 10 * 3600)};
  v.jobs[0].waited_before_s = 9 * 3600;  // effective priority 9 > 2
  EXPECT_TRUE(make_policy("priority(aging=1,preempt=1,min_run=0)").decide(v).preemptions.empty());
  v.jobs[1].priority = 10;
  EXPECT_EQ(preempted(make_policy("priority(aging=1,preempt=1,min_run=0)").decide(v)), std::vector<JobId>{1});
}

// Which victims a queued job may outrank depends on its priority: a queue of several priorities is looked up
// for each (job 3 outranks job 2, of priority 2, where job 4 before it, of priority 2, outranks nobody).
TEST(Policies, EachQueuedPriorityFindsTheVictimsBelowIt) {
  ClusterView v;
  v.slots = {Slot{}, Slot{}};
  v.now = 20 * 3600;
  v.jobs = {running(1, "cpu:1", {0}, 20 * 3600 - 100, 1), running(2, "cpu:1", {1}, 20 * 3600 - 100, 2),
            queued(3, "cpu:1", 3, 20 * 3600 - 1800), queued(4, "cpu:1", 2, 20 * 3600)};
  v.jobs[0].waited_before_s = 10 * 3600;  // effective priority 11: nobody outranks job 1
  std::swap(v.jobs[2], v.jobs[3]);        // job 4 (priority 2, effective 2) comes first in the view
  const Policy policy = make_policy("priority(aging=1,preempt=1,min_run=0)");
  ASSERT_TRUE(policy.rank(v).may_preempt);
  EXPECT_EQ(preempted(policy.decide(v)), std::vector<JobId>{2});  // by job 3: priority 3 > 2, effective 3.5 > 2
  v.jobs[3].priority = 2;                                         // job 3 too: nobody
  EXPECT_FALSE(policy.rank(v).may_preempt);
  EXPECT_TRUE(policy.decide(v).preemptions.empty());
}

}  // namespace
}  // namespace ragmig::sched
