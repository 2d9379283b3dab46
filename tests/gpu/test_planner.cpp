// The partition planner, table-driven: demands that fit only after re-partitioning, busy instances kept,
// unplaceable demand reported, priorities, memory-only demands, reuse of idle instances. Every case also
// checks the invariants: no job dropped, busy instances untouched, steps that lead to the target.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "core/splitmix.h"
#include "gpu/assignment.h"
#include "gpu/planner.h"

namespace ragmig::gpu {
namespace {

struct PlanCase {
  std::string name;
  std::string gpu;
  std::string current;                 // positioned layout
  std::string busy;                    // positioned layout, a subset of current
  std::string demand;
  std::string target;                  // expected positioned target
  std::string target_mix;              // expected mix
  std::string unplaced;                // expected unplaced jobs as a demand string ("" = none)
  std::vector<std::string> steps;      // expected "op instance" list
  friend std::ostream& operator<<(std::ostream& os, const PlanCase& c) { return os << c.name; }
};

GpuState make_state(const GpuCatalog& gpu, const std::string& current, const std::string& busy, int index = 0) {
  GpuState state;
  state.index = index;
  state.catalog = &gpu;
  const Layout busy_layout = parse_layout(gpu, busy);
  int gi = 1;
  for (const auto& p : parse_layout(gpu, current)) {
    const bool is_busy = std::find(busy_layout.begin(), busy_layout.end(), p) != busy_layout.end();
    state.instances.push_back({p, is_busy, gi++});
  }
  return state;
}

// Invariants every plan keeps, whatever it chose.
void check_invariants(const std::vector<GpuState>& gpus, const PartitionPlan& plan) {
  std::vector<int> placed(plan.demands.size(), 0);
  for (size_t i = 0; i < plan.gpus.size(); ++i) {
    const GpuPlan& g = plan.gpus[i];
    const GpuCatalog& gpu = *g.catalog;
    ASSERT_TRUE(is_valid_layout(gpu, g.target)) << to_string(gpu, g.target);
    for (const auto& inst : g.current) {
      if (inst.busy) {
        EXPECT_NE(std::find(g.target.begin(), g.target.end(), inst.placement), g.target.end()) << "busy instance dropped";
      }
    }
    const StepOutcome outcome = simulate_steps(gpu, g.current, g.steps);
    ASSERT_EQ(outcome.error, "");
    EXPECT_EQ(outcome.layout, g.target);
    std::vector<Placement> used;
    for (const auto& a : g.assignments) {
      EXPECT_NE(std::find(g.target.begin(), g.target.end(), a.placement), g.target.end());
      EXPECT_EQ(std::find(used.begin(), used.end(), a.placement), used.end()) << "two jobs on one instance";
      used.push_back(a.placement);
      for (const auto& inst : g.current) EXPECT_FALSE(inst.busy && inst.placement == a.placement) << "job on a busy instance";
      EXPECT_TRUE(fits(plan.demands[static_cast<size_t>(a.demand)], gpu.profiles[static_cast<size_t>(a.placement.profile)]));
      ++placed[static_cast<size_t>(a.demand)];
    }
  }
  for (const auto& u : plan.unplaced) placed[static_cast<size_t>(u.demand)] += u.count;
  for (size_t d = 0; d < plan.demands.size(); ++d) EXPECT_EQ(placed[d], plan.demands[d].count) << "jobs of demand " << d << " lost or doubled";
  (void)gpus;
}

class PlannerTable : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlannerTable, ChoosesTheExpectedLayout) {
  const PlanCase& c = GetParam();
  const GpuCatalog& gpu = gpu_catalog(c.gpu);
  const std::vector<GpuState> gpus = {make_state(gpu, c.current, c.busy)};
  const PartitionPlan plan = plan_partitions(gpus, parse_demands(c.demand));
  check_invariants(gpus, plan);
  ASSERT_EQ(plan.gpus.size(), 1u);
  const GpuPlan& g = plan.gpus[0];
  EXPECT_EQ(to_string(gpu, g.target), c.target);
  EXPECT_EQ(to_string(gpu, mix_of(g.target)), c.target_mix);

  std::vector<Demand> unplaced;
  for (const auto& u : plan.unplaced) {
    Demand d = plan.demands[static_cast<size_t>(u.demand)];
    d.count = u.count;
    unplaced.push_back(d);
    EXPECT_FALSE(u.reason.empty());
  }
  EXPECT_EQ(to_string(unplaced), c.unplaced);
  EXPECT_EQ(plan.complete(), c.unplaced.empty());

  std::vector<std::string> steps;
  for (const auto& s : g.steps) steps.push_back(std::string(to_string(s.kind)) + " " + to_string(gpu, s.placement));
  EXPECT_EQ(steps, c.steps);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlannerTable,
    ::testing::Values(
        PlanCase{"whole_gpu", "H200", "", "", "7g.141gb:1", "7g.141gb@0", "7g.141gb", "", {"create 7g.141gb@0"}},
        // The example: 5 + 3 compute slices do not fit in 7, so one 1g job waits; the 3g goes to
        // slice 4 because at 0 it would leave room for only three 1g instances.
        PlanCase{"issue_example_one_job_left_over", "H200", "", "", "1g.18gb:5,3g.71gb:1",
                 "3g.71gb@4+1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3", "3g.71gb+1g.18gb+1g.18gb+1g.18gb+1g.18gb",
                 "1g.18gb:1",
                 {"create 3g.71gb@4", "create 1g.18gb@0", "create 1g.18gb@1", "create 1g.18gb@2", "create 1g.18gb@3"}},
        PlanCase{"fits_only_after_repartitioning", "H200", "7g.141gb@0", "", "3g.71gb:2", "3g.71gb@0+3g.71gb@4",
                 "2x3g.71gb", "", {"destroy 7g.141gb@0", "create 3g.71gb@0", "create 3g.71gb@4"}},
        PlanCase{"busy_instance_kept_idle_one_recut", "H200", "4g.71gb@0+3g.71gb@4", "4g.71gb@0", "1g.18gb:3",
                 "4g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6", "4g.71gb+1g.18gb+1g.18gb+1g.18gb", "",
                 {"destroy 3g.71gb@4", "create 1g.18gb@4", "create 1g.18gb@5", "create 1g.18gb@6"}},
        PlanCase{"busy_whole_gpu_leaves_no_room", "H200", "7g.141gb@0", "7g.141gb@0", "1g.18gb:1", "7g.141gb@0",
                 "7g.141gb", "1g.18gb:1", {}},
        PlanCase{"profile_the_gpu_lacks", "H200", "", "", "1g.5gb:2", "", "", "1g.5gb:2", {}},
        PlanCase{"memory_need_larger_than_any_profile", "A100-40GB", "", "", "41GiB:1", "", "", "41GiB:1", {}},
        PlanCase{"memory_only_jobs_get_the_most_compute", "A100-40GB", "", "", "15GiB:2", "4g.20gb@0+3g.20gb@4",
                 "4g.20gb+3g.20gb", "", {"create 4g.20gb@0", "create 3g.20gb@4"}},
        PlanCase{"memory_only_job_needing_30GiB", "A100-40GB", "", "", "30GiB:1", "7g.40gb@0", "7g.40gb", "",
                 {"create 7g.40gb@0"}},
        PlanCase{"higher_priority_first", "H200", "", "", "7g.141gb:1,1g.18gb:3@1",
                 "1g.18gb@4+1g.18gb@5+1g.18gb@6", "3x1g.18gb", "7g.141gb:1", {"create 1g.18gb@4", "create 1g.18gb@5", "create 1g.18gb@6"}},
        PlanCase{"priority_reversed", "H200", "", "", "7g.141gb:1@1,1g.18gb:3", "7g.141gb@0", "7g.141gb",
                 "1g.18gb:3", {"create 7g.141gb@0"}},
        PlanCase{"idle_instances_reused_without_steps", "H200",
                 "1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6", "", "1g.18gb:2",
                 "1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6", "7x1g.18gb", "", {}},
        PlanCase{"busy_small_instances_block_the_big_one", "A100-40GB", "1g.5gb@0+1g.5gb@6", "1g.5gb@0", "4g.20gb:1",
                 "1g.5gb@0+1g.5gb@6", "2x1g.5gb", "4g.20gb:1", {}},
        PlanCase{"idle_small_instance_destroyed_to_fit", "A100-40GB", "1g.5gb@0+1g.5gb@6", "1g.5gb@6", "4g.20gb:1",
                 "4g.20gb@0+1g.5gb@6", "4g.20gb+1g.5gb", "", {"destroy 1g.5gb@0", "create 4g.20gb@0"}},
        PlanCase{"a30", "A30", "", "", "2g.12gb:1,1g.6gb:3", "2g.12gb@0+1g.6gb@2+1g.6gb@3", "2g.12gb+1g.6gb+1g.6gb",
                 "1g.6gb:1", {"create 2g.12gb@0", "create 1g.6gb@2", "create 1g.6gb@3"}}),
    [](const auto& info) { return info.param.name; });

TEST(Planner, SpreadsJobsOverGpusAndNamesWhatIsLeft) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  const std::vector<GpuState> gpus = {make_state(h200, "", "", 0), make_state(h200, "7g.141gb@0", "7g.141gb@0", 1),
                                      make_state(h200, "", "", 2)};
  const PartitionPlan plan = plan_partitions(gpus, parse_demands("7g.141gb:3"));
  check_invariants(gpus, plan);
  ASSERT_EQ(plan.gpus.size(), 3u);
  EXPECT_EQ(to_string(h200, plan.gpus[0].target), "7g.141gb@0");
  EXPECT_TRUE(plan.gpus[1].steps.empty());
  EXPECT_EQ(to_string(h200, plan.gpus[2].target), "7g.141gb@0");
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].count, 1);
}

TEST(Planner, GpusWithMigOffAreLeftAloneUnlessAllowed) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  GpuState off = make_state(h200, "", "");
  off.mig_enabled = false;
  PartitionPlan plan = plan_partitions({off}, parse_demands("1g.18gb:1"));
  EXPECT_TRUE(plan.gpus.empty());
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("MIG mode is off"), std::string::npos);
  ASSERT_EQ(plan.unplaced.size(), 1u);

  plan = plan_partitions({off}, parse_demands("1g.18gb:1"), {.allow_enable_mig = true});
  ASSERT_EQ(plan.gpus.size(), 1u);
  ASSERT_GE(plan.gpus[0].steps.size(), 2u);
  EXPECT_EQ(plan.gpus[0].steps[0].kind, StepKind::EnableMig);
  EXPECT_TRUE(plan.complete());
}

TEST(Planner, RejectsAnInvalidCurrentLayout) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  GpuState bad;
  bad.catalog = &h200;
  bad.instances = {{{h200.profile_index("7g.141gb"), 0}, false, 1}, {{h200.profile_index("1g.18gb"), 0}, false, 2}};
  EXPECT_THROW(plan_partitions({bad}, parse_demands("1g.18gb:1")), ConfigError);
}

TEST(Planner, FragmentationCountsComputeNoSingleInstanceCouldUse) {
  const GpuCatalog& a100 = gpu_catalog("A100-40GB");
  EXPECT_EQ(fragmentation(a100, {}), 0);
  EXPECT_EQ(fragmentation(a100, parse_layout(a100, "3g.20gb@4")), 0);  // 4g fits at 0
  // 1g at 0 blocks the 4g: 6 free compute slices, the largest new instance takes 3.
  EXPECT_EQ(fragmentation(a100, parse_layout(a100, "1g.5gb@0")), 3);
  EXPECT_EQ(fragmentation(a100, parse_layout(a100, "1g.5gb@6")), 2);
}

// Random current layouts (with random busy instances) and random demands: the invariants always hold,
// and with one priority the plan never places fewer jobs than the idle instances could take as they are.
TEST(Planner, InvariantsHoldOnRandomInputs) {
  uint64_t state = 7;
  const auto draw = [&](uint64_t n) { return splitmix64(state++) % n; };
  for (const char* model : {"H200", "A100-40GB", "A30"}) {
    const GpuCatalog& gpu = gpu_catalog(model);
    const auto layouts = enumerate_layouts(gpu);
    for (int trial = 0; trial < 60; ++trial) {
      const Layout& current = layouts[draw(layouts.size())];
      GpuState g;
      g.catalog = &gpu;
      for (const auto& p : current) g.instances.push_back({p, draw(3) == 0, -1});
      std::vector<Demand> demands;
      const size_t n = 1 + draw(3);
      for (size_t k = 0; k < n; ++k) {
        Demand d;
        if (draw(4) == 0) {
          d.memory_mib = static_cast<int64_t>(1024 * (1 + draw(40)));
        } else {
          d.profile = gpu.profiles[draw(gpu.profiles.size())].name;
        }
        d.count = static_cast<int>(1 + draw(4));
        d.priority = static_cast<int>(draw(2));
        demands.push_back(d);
      }
      SCOPED_TRACE(std::string(model) + " current " + to_string(gpu, current) + " demand " + to_string(demands));
      const PartitionPlan plan = plan_partitions({g}, demands);
      check_invariants({g}, plan);
      size_t placed = 0;
      for (const auto& gp : plan.gpus) placed += gp.assignments.size();
      // Lower bound: jobs the idle instances could take with no change at all.
      std::vector<std::vector<int64_t>> value(demands.size());
      std::vector<int> count;
      Layout idle;
      for (const auto& inst : g.instances) {
        if (!inst.busy) idle.push_back(inst.placement);
      }
      for (size_t d = 0; d < demands.size(); ++d) {
        count.push_back(demands[d].count);
        for (const auto& p : idle) value[d].push_back(fits(demands[d], gpu.profiles[static_cast<size_t>(p.profile)]) ? 1 : -1);
      }
      // With mixed priorities a plan may rightly run fewer jobs in all (more of the important ones).
      const bool one_priority = std::all_of(demands.begin(), demands.end(), [&](const Demand& d) { return d.priority == demands[0].priority; });
      if (!idle.empty() && one_priority) {
        const auto as_is = best_assignment(value, count);
        const size_t as_is_placed = static_cast<size_t>(std::count_if(as_is.begin(), as_is.end(), [](int c) { return c >= 0; }));
        EXPECT_GE(placed, as_is_placed);
      }
    }
  }
}

// Demand strings: the canonical form round-trips; a count, priority or memory size outside its range is a
// ConfigError naming the term (not a wrapped int or an overflow: fuzz/fuzz_specs.cpp found 777777777777777777GiB).
TEST(Demand, RoundTripsAndNamesTermsOutOfRange) {
  EXPECT_EQ(to_string(parse_demands("20GiB:2@1,1g.18gb,512MiB:3")), "20GiB:2@1,1g.18gb:1,512MiB:3");
  EXPECT_EQ(parse_demands("1048576GiB")[0].memory_mib, int64_t{1} << 30);
  for (const std::string bad : {"777777777777777777GiB", "1048577GiB", "1073741825MiB", "0GiB", "1g.18gb:0",
                                "1g.18gb:1000001", "1g.18gb:1@2147483648", "1g.18gb:1@-2147483649",
                                "1g.18gb:99999999999999999999"}) {
    try {
      parse_demands(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ragmig::gpu
