// The search behind best_packing: every maximal layout that keeps the fixed instances (a packing on a
// smaller layout is also one on a maximal layout around it), each solved exactly by the assignment solver.
#include "gpu/packing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.h"
#include "gpu/assignment.h"

namespace ragmig::gpu {
namespace {

// One value per (job, instance) for the assignment solver: placing a job outweighs any speed, speed (in
// 2^-20 units) outweighs staying put, staying put breaks ties.
constexpr int64_t kPlaced = int64_t{1} << 40;
constexpr double kSpeedScale = 1 << 20;

// The maximal layouts around `fixed`, computed once per (GPU model, fixed instances) per thread.
const std::vector<Layout>& maximal_layouts(const GpuCatalog& gpu, const Layout& fixed) {
  thread_local std::map<std::pair<const GpuCatalog*, Layout>, std::vector<Layout>> cache;
  auto key = std::make_pair(&gpu, canonical(fixed));
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::vector<std::string> plain;
  for (const auto& p : gpu.profiles)
    if (!p.media_extensions()) plain.push_back(p.name);
  auto layouts = enumerate_layouts(gpu, {.maximal_only = true, .profiles = plain, .base = key.second});
  return cache.emplace(std::move(key), std::move(layouts)).first->second;
}

}  // namespace

std::optional<Packing> best_packing(const GpuCatalog& gpu, const SpeedTable& speed, const Layout& fixed,
                                    const std::vector<std::optional<Placement>>& current) {
  const size_t jobs = speed.size();
  if (jobs == 0) return Packing{};
  for (const auto& row : speed) RAGMIG_CHECK(row.size() == gpu.profiles.size(), "a speed per profile of the GPU");
  std::optional<Packing> best;
  int64_t best_value = 0;
  int best_memory = 0;
  for (const Layout& layout : maximal_layouts(gpu, fixed)) {
    std::vector<Placement> free;
    for (const auto& p : layout)
      if (std::find(fixed.begin(), fixed.end(), p) == fixed.end()) free.push_back(p);
    if (free.size() < jobs) continue;
    if (best) {  // no assignment beats every job on its best instance here: skip layouts that cannot win
      int64_t bound = 0;
      for (size_t j = 0; j < jobs; ++j) {
        double top = 0;
        for (const auto& f : free) top = std::max(top, speed[j][static_cast<size_t>(f.profile)]);
        bound += kPlaced + 2 * static_cast<int64_t>(std::llround(top * kSpeedScale)) + 1;
      }
      if (bound < best_value) continue;
    }
    std::vector<std::vector<int64_t>> value(jobs, std::vector<int64_t>(free.size(), -1));
    for (size_t j = 0; j < jobs; ++j) {
      for (size_t s = 0; s < free.size(); ++s) {
        const double v = speed[j][static_cast<size_t>(free[s].profile)];
        if (!(v > 0)) continue;
        const bool stays = j < current.size() && current[j] && *current[j] == free[s];
        value[j][s] = kPlaced + 2 * static_cast<int64_t>(std::llround(v * kSpeedScale)) + (stays ? 1 : 0);
      }
    }
    const std::vector<int> slot_job = best_assignment(value, std::vector<int>(jobs, 1));
    const int64_t total = assignment_value(value, slot_job);
    if (total < static_cast<int64_t>(jobs) * kPlaced) continue;  // not every job placed
    int memory = 0;  // memory slices the placed jobs take: of equal packings, the one leaving more room
    for (size_t s = 0; s < free.size(); ++s)
      if (slot_job[s] >= 0) memory += gpu.profiles[static_cast<size_t>(free[s].profile)].memory_slices;
    if (best && (total < best_value || (total == best_value && memory >= best_memory))) continue;
    Packing packing;
    packing.instance_of.resize(jobs);
    for (size_t s = 0; s < free.size(); ++s) {
      if (slot_job[s] < 0) continue;
      const auto j = static_cast<size_t>(slot_job[s]);
      packing.instance_of[j] = free[s];
      packing.throughput += speed[j][static_cast<size_t>(free[s].profile)];
    }
    best = std::move(packing);
    best_value = total;
    best_memory = memory;
  }
  return best;
}

}  // namespace ragmig::gpu
