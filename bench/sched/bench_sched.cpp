// bench_sched: how long each policy takes to decide with 10,000 queued jobs on 1,000 slots, in two states
// of the cluster — all slots free (a burst of starts) and all busy (the steady state, where preemptive
// policies search for victims). Printed beside fifo's time in the same run, as a ratio.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "sched/policy.h"

using namespace ragmig::sched;

namespace {

// 1,000 slots on 143 H200-like GPUs: MIG instances of four sizes and some whole GPUs.
std::vector<Slot> make_slots() {
  std::vector<Slot> slots;
  const std::vector<std::pair<int, int64_t>> shapes = {{1, 18}, {1, 18}, {1, 18}, {2, 35}, {3, 71}, {7, 141}};
  for (int i = 0; slots.size() < 1000; ++i) {
    const auto [compute, gb] = shapes[static_cast<size_t>(i) % shapes.size()];
    Slot s;
    s.id = "s" + std::to_string(i);
    s.kind = compute == 7 ? SlotKind::Gpu : SlotKind::Mig;
    s.compute = compute;
    s.memory_mb = gb * 1024;
    s.group = i / 7;
    slots.push_back(s);
  }
  return slots;
}

ClusterView make_view(bool busy, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<std::string> needs = {"1g.18gb:1", "1g.18gb:1", "2g.35gb:1", "20gb:1", "1g.18gb:2", "3g.71gb:1", "gpu:1"};
  ClusterView v;
  v.now = 1e6;
  v.slots = make_slots();
  JobId id = 1;
  if (busy)  // one running job per slot
    for (int s = 0; s < static_cast<int>(v.slots.size()); ++s) {
      JobView j;
      j.id = id++;
      j.need = parse_need(v.slots[static_cast<size_t>(s)].compute == 7 ? "gpu:1" : "1g.18gb:1");
      j.priority = static_cast<int64_t>(rng() % 10);
      j.submitted_at = static_cast<double>(rng() % 500000);
      j.estimate_s = 100 + static_cast<double>(rng() % 100000);
      j.started_at = v.now - static_cast<double>(rng() % 50000);
      // service and work: v.now - started_at, accrued since its start
      j.slots = {s};
      v.jobs.push_back(j);
    }
  for (int i = 0; i < 10000; ++i) {
    JobView j;
    j.id = id++;
    j.need = parse_need(needs[rng() % needs.size()]);
    j.priority = static_cast<int64_t>(rng() % 10);
    j.submitted_at = static_cast<double>(rng() % 1000000);
    j.queued_since = j.submitted_at;
    // waited: v.now - submitted_at, all of it since queued_since
    j.estimate_s = 100 + static_cast<double>(rng() % 100000);
    j.service_before_s = static_cast<double>(rng() % 20000);
    v.jobs.push_back(j);
  }
  return v;
}

double median_ms(const Policy& policy, const ClusterView& view, size_t* starts, size_t* preemptions) {
  std::vector<double> times;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const Decisions d = policy.decide(view);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    *starts = d.starts.size();
    *preemptions = d.preemptions.size();
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  const std::vector<std::string> policies = {"fifo", "priority", "priority(preempt=1)", "rr", "sjf", "srtf", "las"};
  for (const bool busy : {false, true}) {
    const ClusterView view = make_view(busy, 42);
    fmt::print("\n{} queued jobs, {} running, on {} slots ({}); median of 7 decisions\n", 10000, busy ? 1000 : 0,
               view.slots.size(), busy ? "all busy" : "all free");
    fmt::print("{:<22} {:>10} {:>9} {:>8} {:>12}\n", "policy", "ms", "vs fifo", "starts", "preemptions");
    double fifo_ms = 0;
    for (const auto& name : policies) {
      size_t starts = 0, preemptions = 0;
      const double ms = median_ms(make_policy(name), view, &starts, &preemptions);
      if (name == "fifo") fifo_ms = ms;
      fmt::print("{:<22} {:>10.2f} {:>8.2f}x {:>8} {:>12}\n", name, ms, ms / fifo_ms, starts, preemptions);
    }
  }
  return 0;
}
