// One pass over the ranked jobs with a per-slot state; O(jobs x slots) at worst, and it stops scanning
// queued jobs once no slot is left to give (the bench in bench/sched measures it at 10k jobs x 1k slots).
#include "sched/placement.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

namespace ragmig::sched {

std::vector<int> placement_order(const std::vector<Slot>& slots) {
  std::vector<int> order(slots.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Slot &x = slots[static_cast<size_t>(a)], &y = slots[static_cast<size_t>(b)];
    if (x.reshapable != y.reshapable) return y.reshapable;
    if (x.compute != y.compute) return x.reshapable ? x.compute > y.compute : x.compute < y.compute;
    if (x.memory_mb != y.memory_mb) return x.memory_mb < y.memory_mb;
    return x.speed > y.speed;
  });
  return order;
}

std::vector<int> reserved_slots(const std::vector<Slot>& slots) {
  std::vector<int> out;
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].reserved_for != 0) out.push_back(static_cast<int>(i));
  return out;
}

bool plan_holds_off(const ClusterView& view, JobId job) {
  return std::binary_search(view.plan_waiting.begin(), view.plan_waiting.end(), job);
}

std::vector<char> without_reshapable(std::vector<char> usable, const std::vector<Slot>& slots) {
  for (size_t i = 0; i < usable.size(); ++i) usable[i] = usable[i] && !slots[i].reshapable;
  return usable;
}

std::vector<int> choose_slots(const Need& need, const std::vector<Slot>& slots, const std::vector<int>& order,
                              const std::vector<char>& usable) {
  const auto want = static_cast<size_t>(need.replicas);
  std::vector<int> any;                          // the smallest fitting slots, whatever their group
  std::map<int, std::vector<int>> by_group;      // the smallest fitting slots per group
  for (int i : order) {
    const auto u = static_cast<size_t>(i);
    if (!usable[u] || !fits(need, slots[u])) continue;
    auto& group = by_group[slots[u].group];
    group.push_back(i);
    if (group.size() == want) return group;      // the first group to hold every replica
    if (any.size() < want) any.push_back(i);
  }
  if (any.size() == want) return any;
  return {};
}

Decisions place_in_order(const ClusterView& view, const Ranking& ranking, size_t* unplaced) {
  enum class Use : char { Free, Kept, Busy, Stopping, Reserved };
  const size_t n = view.slots.size();
  std::vector<Use> use(n, Use::Free);
  for (const auto& job : view.jobs)
    for (int s : job.slots) use[static_cast<size_t>(s)] = job.stopping ? Use::Stopping : Use::Busy;
  const bool kept = view.slot_order.size() == view.slots.size();
  std::vector<int> sorted, found;  // only when the caller did not keep them
  if (!kept) {
    sorted = placement_order(view.slots);
    found = reserved_slots(view.slots);
  }
  const std::vector<int>& order = kept ? view.slot_order : sorted;
  std::vector<char> is_reserved(n, 0);
  for (int s : kept ? view.reserved : found) is_reserved[static_cast<size_t>(s)] = 1;
  // The free slots, and the free or stopping ones, in placement order: a queued job searches these lists
  // rather than every slot (with most slots busy and a long queue, that is what a pass spends its time on).
  std::vector<char> free_u(n), open_u(n);
  std::vector<int> free_list, open_list;
  // Slots made for a job are its alone, and such a job takes only them (nothing while they are being made).
  std::unordered_map<JobId, std::vector<int>> reserved;
  std::vector<char> ready(n, 0);  // reserved slots that are free now
  for (int s : order) {
    const Use u = use[static_cast<size_t>(s)];
    if (is_reserved[static_cast<size_t>(s)]) {
      reserved[view.slots[static_cast<size_t>(s)].reserved_for].push_back(s);
      ready[static_cast<size_t>(s)] = u == Use::Free;
      if (u == Use::Free || u == Use::Stopping) use[static_cast<size_t>(s)] = Use::Reserved;
      continue;
    }
    free_u[static_cast<size_t>(s)] = u == Use::Free;
    open_u[static_cast<size_t>(s)] = u == Use::Free || u == Use::Stopping;
    if (u == Use::Free) free_list.push_back(s);
    if (u == Use::Free || u == Use::Stopping) open_list.push_back(s);
  }
  // Slots a queued job could still get without preempting anyone: free ones and those being freed.
  size_t open_count = open_list.size();
  auto taken = [&](int s) {  // slot s is no longer open to queued jobs
    const auto i = static_cast<size_t>(s);
    if (free_u[i]) free_list.erase(std::find(free_list.begin(), free_list.end(), s));
    if (open_u[i]) open_list.erase(std::find(open_list.begin(), open_list.end(), s));
    free_u[i] = open_u[i] = 0;
  };
  std::vector<char> preempted(ranking.ranked.size(), 0);
  std::vector<size_t> running_ranks;  // where the possible victims are, so the search skips queued jobs
  for (size_t r = 0; r < ranking.ranked.size(); ++r)
    if (ranking.ranked[r]->running() && !ranking.ranked[r]->stopping) running_ranks.push_back(r);

  // Jobs a MIG plan left waiting start on no reshapable slot but one reserved for them (above): what they may
  // use is the usual mask less those slots.
  std::vector<char> narrowed;
  auto allowed = [&](const std::vector<char>& mask, bool held_off) -> const std::vector<char>& {
    if (!held_off) return mask;
    narrowed = without_reshapable(mask, view.slots);
    return narrowed;
  };

  Decisions out;
  for (size_t r = 0; r < ranking.ranked.size(); ++r) {
    const JobView& job = *ranking.ranked[r];
    if (job.running()) {
      if (!job.stopping && !preempted[r])
        for (int s : job.slots) use[static_cast<size_t>(s)] = Use::Kept;
      continue;
    }
    const auto mine = reserved.find(job.id);
    if (mine != reserved.end() || std::binary_search(view.awaiting.begin(), view.awaiting.end(), job.id)) {
      if (mine == reserved.end()) continue;  // its slots are still being made
      const std::vector<int> chosen = choose_slots(job.need, view.slots, mine->second, ready);
      if (!chosen.empty()) {
        for (int s : chosen) {
          use[static_cast<size_t>(s)] = Use::Kept;
          ready[static_cast<size_t>(s)] = 0;
        }
        out.starts.push_back({job.id, chosen});
      }
      continue;
    }
    const bool held_off = plan_holds_off(view, job.id);
    if (open_count > 0) {
      // 1. Free slots alone.
      std::vector<int> chosen = choose_slots(job.need, view.slots, free_list, allowed(free_u, held_off));
      if (!chosen.empty()) {
        for (int s : chosen) {
          use[static_cast<size_t>(s)] = Use::Kept;
          taken(s);
        }
        open_count -= chosen.size();
        out.starts.push_back({job.id, chosen});
        continue;
      }
      // 2. Free slots plus those that stopping jobs are about to free: claim them and wait.
      chosen = choose_slots(job.need, view.slots, open_list, allowed(open_u, held_off));
      if (!chosen.empty()) {
        for (int s : chosen) {
          use[static_cast<size_t>(s)] = Use::Reserved;
          taken(s);
        }
        open_count -= chosen.size();
        continue;
      }
    }
    if (unplaced) ++*unplaced;  // only preemption could place it
    if (!ranking.may_preempt || running_ranks.empty() || running_ranks.back() <= r) continue;
    std::vector<char> usable = open_u;  // the free and stopping slots nobody has claimed
    // 3. Preempt: the lower-ranked running jobs this one may preempt, lowest first. First check that all
    // of them together would make room (cheap, and usually no), then add them one by one until it fits.
    std::vector<size_t> candidates;
    for (auto it = running_ranks.rbegin(); it != running_ranks.rend() && *it > r; ++it)
      if (!preempted[*it] && ranking.may_preempt(job, *ranking.ranked[*it])) candidates.push_back(*it);
    if (candidates.empty()) continue;
    std::vector<char> all = usable;
    for (size_t v : candidates)
      for (int s : ranking.ranked[v]->slots) all[static_cast<size_t>(s)] = 1;
    if (choose_slots(job.need, view.slots, order, allowed(all, held_off)).empty()) continue;
    std::vector<size_t> victims;
    std::vector<int> chosen;
    for (size_t v : candidates) {
      victims.push_back(v);
      for (int s : ranking.ranked[v]->slots) usable[static_cast<size_t>(s)] = 1;
      chosen = choose_slots(job.need, view.slots, order, allowed(usable, held_off));
      if (!chosen.empty()) break;
    }
    for (size_t v : victims) {
      const JobView& victim = *ranking.ranked[v];
      const bool needed = std::any_of(victim.slots.begin(), victim.slots.end(), [&](int s) {
        return std::find(chosen.begin(), chosen.end(), s) != chosen.end();
      });
      if (!needed) continue;
      preempted[v] = 1;
      out.preemptions.push_back({victim.id, fmt::format("for job {}", job.id)});
    }
    for (int s : chosen) {
      if (use[static_cast<size_t>(s)] == Use::Free || use[static_cast<size_t>(s)] == Use::Stopping) --open_count;
      use[static_cast<size_t>(s)] = Use::Reserved;
      taken(s);
    }
  }
  return out;
}

}  // namespace ragmig::sched
