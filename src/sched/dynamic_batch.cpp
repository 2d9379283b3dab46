#include "sched/dynamic_batch.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "sched/placement.h"

namespace ragmig::sched {
Need least_need(const JobSpec& spec) {
  Need need = spec.need;
  if (spec.resizable() && !need.cpu)
    need.min_memory_mb = static_cast<int64_t>(
        std::ceil(memory_at(prior_memory(spec.need, spec.batch_size), spec.min_batch_size)));
  return need;
}

bool resizable(const JobView& job) {
  return !job.need.cpu && job.configured_batch > 0 && job.min_batch_size > 0;
}

Need least_need(const JobView& job) {
  Need need = job.need;
  if (resizable(job)) need.min_memory_mb = static_cast<int64_t>(std::ceil(memory_at(job.memory, job.min_batch_size)));
  return need;
}

int64_t slot_memory_mb(const Slot& slot) { return slot.nominal_memory_mb > 0 ? slot.nominal_memory_mb : slot.memory_mb; }

int64_t least_memory_mb(const std::vector<Slot>& slots, const std::vector<int>& indices) {
  int64_t least = INT64_MAX;
  for (int s : indices) least = std::min(least, slot_memory_mb(slots[static_cast<size_t>(s)]));
  return least;
}

Decisions add_dynamic_batch(const ClusterView& view, Decisions decisions, const std::vector<JobId>& queue_order) {
  std::unordered_map<JobId, const JobView*> by_id;  // the resizable jobs: the others are left as they are
  for (const auto& j : view.jobs)
    if (resizable(j)) by_id[j.id] = &j;
  // Grow to the largest batch `slots` hold, up to the configured one.
  const auto grow = [&](const JobView& j, const std::vector<int>& slots) {
    if (j.batch_size >= j.configured_batch) return;
    const int64_t b = largest_batch_within(j.memory, least_memory_mb(view.slots, slots), j.batch_size + 1, j.configured_batch,
                                           j.need.replicas);
    if (b > j.batch_size) decisions.resizes.push_back({j.id, b});
  };

  std::vector<char> usable(view.slots.size(), 1);
  for (const auto& j : view.jobs)
    for (int s : j.slots) usable[static_cast<size_t>(s)] = 0;
  std::unordered_set<JobId> starting;
  for (const auto& s : decisions.starts) {
    starting.insert(s.job);
    for (int i : s.slots) usable[static_cast<size_t>(i)] = 0;
  }

  for (const auto& j : view.jobs)
    if (resizable(j) && j.running() && !j.stopping) grow(j, j.slots);
  for (const auto& s : decisions.starts)
    if (const auto it = by_id.find(s.job); it != by_id.end()) grow(*it->second, s.slots);
  if (!decisions.preemptions.empty()) return decisions;

  // Free slots with the most memory first (the largest batch), then the smallest compute (placement's rule); a
  // slot reserved for a job (a MIG plan made it for it, maybe for its smaller batch) only for that job.
  std::vector<int> order;
  for (size_t i = 0; i < view.slots.size(); ++i)
    if (usable[i] && view.slots[i].reserved_for >= 0 && view.slots[i].kind != SlotKind::Cpu)
      order.push_back(static_cast<int>(i));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Slot &x = view.slots[static_cast<size_t>(a)], &y = view.slots[static_cast<size_t>(b)];
    if (slot_memory_mb(x) != slot_memory_mb(y)) return slot_memory_mb(x) > slot_memory_mb(y);
    return x.compute < y.compute;
  });
  for (JobId id : queue_order) {
    if (order.empty()) break;
    const auto it = by_id.find(id);
    if (it == by_id.end() || starting.count(id) || it->second->running()) continue;
    if (std::binary_search(view.awaiting.begin(), view.awaiting.end(), id)) continue;
    const JobView& j = *it->second;
    const Need smaller = least_need(j);
    std::vector<char> mine = plan_holds_off(view, id) ? without_reshapable(usable, view.slots) : usable;
    for (int s : order)
      if (const JobId holder = view.slots[static_cast<size_t>(s)].reserved_for; holder != 0 && holder != id)
        mine[static_cast<size_t>(s)] = 0;
    const std::vector<int> chosen = choose_slots(smaller, view.slots, order, mine);
    if (chosen.empty()) continue;
    const int64_t b = largest_batch_within(j.memory, least_memory_mb(view.slots, chosen), j.min_batch_size, j.configured_batch,
                                           j.need.replicas);
    if (b == 0) continue;  // min_batch_size is not a multiple of the replicas and nothing above it fits
    if (b != j.batch_size) decisions.resizes.push_back({id, b});
    decisions.starts.push_back({id, chosen});
    for (int s : chosen) {
      usable[static_cast<size_t>(s)] = 0;
      order.erase(std::find(order.begin(), order.end(), s));
    }
  }
  return decisions;
}

}  // namespace ragmig::sched
