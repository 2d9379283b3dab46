// bench_mig: how long `ragmig run --mig auto` spends deciding a re-partition after a scheduler pass — the
// rebalancer asked for the queue (exec::rebalance_plans, without moves) — on 1, 8 and 64 H200s with 100 and 1,000
// queued jobs of mixed needs, each GPU holding a busy 3g.71gb and three idle 1g.18gb. Printed beside the fifo
// policy's decision on the same view, which the scheduler makes on every pass anyway.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "exec/machine_partitioner.h"
#include "exec/queue_partition.h"
#include "gpu/layout.h"
#include "gpu/mig_catalog.h"

using namespace ragmig;

namespace {

struct Setup {
  sched::ClusterView view;
  std::vector<exec::PlannableGpu> gpus;
};

Setup make_setup(int gpu_count, int queued, uint64_t seed) {
  const auto& h200 = gpu::gpu_catalog("H200");
  const gpu::Layout layout = gpu::parse_layout(h200, "3g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6");
  Setup s;
  sched::JobId id = 1;
  for (int g = 0; g < gpu_count; ++g) {
    exec::PlannableGpu p;
    p.state.index = g;
    p.state.catalog = &h200;
    for (const auto& placement : layout) {
      sched::Slot slot = exec::mig_slot(h200.profiles[static_cast<size_t>(placement.profile)]);
      slot.id = fmt::format("mig:{}:{}", g, gpu::to_string(h200, placement));
      slot.group = g;
      p.state.instances.push_back({placement, false, -1});
      p.slot_ids.push_back(slot.id);
      if (placement.start == 0) {  // the 3g runs a job
        sched::JobView j;
        j.id = id++;
        j.need = sched::parse_need("3g.71gb:1");
        j.slots = {static_cast<int>(s.view.slots.size())};
        s.view.jobs.push_back(j);
      }
      s.view.slots.push_back(slot);
    }
    s.gpus.push_back(std::move(p));
  }
  std::mt19937_64 rng(seed);
  const std::vector<std::string> needs = {"1g.18gb:1", "1g.18gb:1", "2g.35gb:1", "20gb:1", "3g.71gb:1", "4g.71gb:1"};
  for (int i = 0; i < queued; ++i) {
    sched::JobView j;
    j.id = id++;
    j.need = sched::parse_need(needs[rng() % needs.size()]);
    j.priority = static_cast<int64_t>(rng() % 4);
    j.submitted_at = static_cast<double>(i);
    s.view.jobs.push_back(j);
  }
  return s;
}

template <typename F>
double median_ms(F&& f) {
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  const sched::Policy fifo = sched::make_policy("fifo");
  fmt::print("H200s, each 3g.71gb@0 busy + 3 x 1g.18gb idle; median of 5 decisions\n");
  fmt::print("{:>5} {:>7} {:>15} {:>10} {:>9} {:>15}\n", "GPUs", "queued", "rebalance_plans", "fifo", "ratio",
             "GPUs changed");
  for (const int gpus : {1, 8, 64}) {
    for (const int queued : {100, 1000}) {
      const Setup s = make_setup(gpus, queued, 7);
      size_t changed = 0;
      const auto speeds = [](const sched::JobView&) { return exec::power_law_speeds(exec::kUnmeasuredExponent); };
      const double plan_ms = median_ms([&] { changed = exec::rebalance_plans(s.view, s.gpus, speeds).size(); });
      const double fifo_ms = median_ms([&] { (void)fifo.decide(s.view); });
      fmt::print("{:>5} {:>7} {:>12.2f} ms {:>7.2f} ms {:>8.1f}x {:>15}\n", gpus, queued, plan_ms, fifo_ms,
                 plan_ms / std::max(fifo_ms, 1e-6), changed);
    }
  }
  return 0;
}
