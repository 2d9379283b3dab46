// Step sequencing: the shortest destroy/create list, largest first, never touching busy instances; its
// replay; the nvidia-smi commands; and the driver-placement model behind "create largest first".
#include <gtest/gtest.h>

#include "core/error.h"
#include "gpu/mig_steps.h"

namespace ragmig::gpu {
namespace {

std::vector<CurrentInstance> instances(const GpuCatalog& gpu, const std::string& spec, const std::string& busy = "") {
  std::vector<CurrentInstance> out;
  const Layout b = parse_layout(gpu, busy);
  int gi = 1;
  for (const auto& p : parse_layout(gpu, spec)) out.push_back({p, std::find(b.begin(), b.end(), p) != b.end(), gi++});
  return out;
}

std::vector<int> profiles(const GpuCatalog& gpu, const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const auto& n : names) out.push_back(gpu.profile_index(n));
  return out;
}

TEST(MigSteps, IssueExampleOrderMattersWithoutPlacements) {
  // `nvidia-smi mig -cgi 9,19,14,19` works where `19,19,14,9` fails (A100-40GB).
  const GpuCatalog& a100 = gpu_catalog("A100-40GB");
  const auto good = create_without_placements(a100, profiles(a100, {"3g.20gb", "1g.5gb", "2g.10gb", "1g.5gb"}));
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(to_string(a100, *good), "3g.20gb@4+2g.10gb@0+1g.5gb@2+1g.5gb@3");
  EXPECT_FALSE(create_without_placements(a100, profiles(a100, {"1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"})).has_value());
}

TEST(MigSteps, LargestFirstCreatesEveryValidMixWithoutPlacements) {
  for (const auto& gpu : gpu_catalogs()) {
    for (const auto& layout : enumerate_layouts(gpu)) {
      std::vector<Placement> order = layout;
      std::sort(order.begin(), order.end(), [&](const Placement& a, const Placement& b) { return creates_before(gpu, a, b); });
      std::vector<int> names;
      for (const auto& p : order) names.push_back(p.profile);
      const auto made = create_without_placements(gpu, names);
      ASSERT_TRUE(made.has_value()) << gpu.name << ": " << to_string(gpu, layout);
      EXPECT_EQ(mix_of(*made), mix_of(layout));
    }
  }
}

TEST(MigSteps, ShortestSequenceDestroysThenCreatesLargestFirst) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  const auto current = instances(h200, "4g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6", "1g.18gb@5");
  const Layout target = parse_layout(h200, "2g.35gb@0+1g.18gb@2+1g.18gb@3+1g.18gb@5+1g.35gb@6");
  // 1g.18gb@4 survives only if in target: it is not, so it goes too.
  const auto steps = sequence_steps(h200, current, target);
  std::vector<std::string> got;
  for (const auto& s : steps) got.push_back(std::string(to_string(s.kind)) + " " + to_string(h200, s.placement));
  EXPECT_EQ(got, (std::vector<std::string>{"destroy 4g.71gb@0", "destroy 1g.18gb@4", "destroy 1g.18gb@6",
                                           "create 2g.35gb@0", "create 1g.35gb@6", "create 1g.18gb@2",
                                           "create 1g.18gb@3"}));
  EXPECT_EQ(steps[0].gi_id, 1);  // ids carried over for the nvidia-smi commands
  const StepOutcome outcome = simulate_steps(h200, current, steps);
  EXPECT_EQ(outcome.error, "");
  EXPECT_EQ(outcome.layout, target);
  EXPECT_TRUE(sequence_steps(h200, current, parse_layout(h200, "4g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6")).empty());
  EXPECT_THROW(sequence_steps(h200, current, parse_layout(h200, "7g.141gb@0")), ConfigError);  // drops a busy one
}

TEST(MigSteps, SequencesReachEveryTargetFromEveryStart) {
  const GpuCatalog& a100 = gpu_catalog("A100-40GB");
  const auto maximal = enumerate_layouts(a100, {.maximal_only = true, .profiles = {}, .base = {}});
  for (size_t i = 0; i < maximal.size(); i += 3) {
    std::vector<CurrentInstance> current;
    for (const auto& p : maximal[i]) current.push_back({p, false, -1});
    for (const auto& target : maximal) {
      const auto steps = sequence_steps(a100, current, target);
      const StepOutcome outcome = simulate_steps(a100, current, steps);
      ASSERT_EQ(outcome.error, "") << to_string(a100, maximal[i]) << " -> " << to_string(a100, target);
      ASSERT_EQ(outcome.layout, target);
      // Shortest: each instance that differs costs exactly one step.
      size_t differing = 0;
      for (const auto& c : current) differing += std::find(target.begin(), target.end(), c.placement) == target.end();
      for (const auto& t : target) differing += std::find(maximal[i].begin(), maximal[i].end(), t) == maximal[i].end();
      ASSERT_EQ(steps.size(), differing);
    }
  }
}

TEST(MigSteps, ReplayRefusesImpossibleSteps) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  const auto current = instances(h200, "3g.71gb@4+1g.18gb@0", "3g.71gb@4");
  const int g1 = h200.profile_index("1g.18gb");
  const int g3 = h200.profile_index("3g.71gb");
  struct Case {
    std::vector<MigStep> steps;
    int failed;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{{StepKind::DestroyGpuInstance, {g3, 4}, -1}}, 0, "busy"},
      {{{StepKind::DestroyGpuInstance, {g1, 1}, -1}}, 0, "no such instance"},
      {{{StepKind::CreateGpuInstance, {g1, 0}, -1}}, 0, "exists already"},
      {{{StepKind::CreateGpuInstance, {g1, 2}, -1}, {StepKind::CreateGpuInstance, {g3, 0}, -1}}, 1, "overlaps"},
      {{{StepKind::CreateGpuInstance, {g1, 1}, -1}, {StepKind::EnableMig, {}, -1}}, 1, "first step"},
  };
  for (const auto& c : cases) {
    const StepOutcome outcome = simulate_steps(h200, current, c.steps);
    EXPECT_EQ(outcome.failed_step, c.failed) << c.error;
    EXPECT_NE(outcome.error.find(c.error), std::string::npos) << outcome.error;
  }
}

TEST(MigSteps, NvidiaSmiCommands) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  const int g3 = h200.profile_index("3g.71gb");
  EXPECT_EQ(nvidia_smi_commands(h200, 2, {StepKind::CreateGpuInstance, {g3, 4}, -1}),
            (std::vector<std::string>{"nvidia-smi mig -i 2 -cgi 9:4 -C"}));
  EXPECT_EQ(nvidia_smi_commands(h200, 0, {StepKind::DestroyGpuInstance, {g3, 4}, 5}),
            (std::vector<std::string>{"nvidia-smi mig -i 0 -gi 5 -dci", "nvidia-smi mig -i 0 -gi 5 -dgi"}));
  EXPECT_EQ(nvidia_smi_commands(h200, 0, {StepKind::DestroyGpuInstance, {g3, 4}, -1})[1],
            "nvidia-smi mig -i 0 -gi <id of 3g.71gb@4> -dgi");
  EXPECT_EQ(nvidia_smi_commands(h200, 1, {StepKind::EnableMig, {}, -1}), (std::vector<std::string>{"nvidia-smi -i 1 -mig 1"}));
  StepKind k;
  for (StepKind kind : {StepKind::EnableMig, StepKind::DestroyGpuInstance, StepKind::CreateGpuInstance}) {
    ASSERT_TRUE(parse_step_kind(to_string(kind), &k));
    EXPECT_EQ(k, kind);
  }
  EXPECT_FALSE(parse_step_kind("explode", &k));
}

}  // namespace
}  // namespace ragmig::gpu
