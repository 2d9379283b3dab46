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
    if (want == 1) return {i};
    auto& group = by_group[slots[u].group];
    group.push_back(i);
    if (group.size() == want) return group;      // the first group to hold every replica
    if (any.size() < want) any.push_back(i);
  }
  if (any.size() == want) return any;
  return {};
}

namespace {

// One walk of place_in_order: what each slot is to the jobs still to come, updated as the ranked jobs (best
// first) keep, take, claim or preempt their way to slots.
class Placer {
 public:
  Placer(const ClusterView& view, const Ranking& ranking);

  Decisions run(size_t* unplaced);

 private:
  enum class Use : char { Free, Kept, Busy, Stopping, Reserved };

  /// A job whose slots were made for it: it starts on them once they are ready, and nowhere else.
  void start_on_reserved(const JobView& job, const std::vector<int>& mine);
  /// Free slots alone, else free slots plus those stopping jobs are about to free (claimed: it waits for them).
  /// False when neither fits.
  bool take_open(const JobView& job, bool held_off);
  /// The lower-ranked running jobs job `r` may preempt, lowest first, until their slots make it fit.
  void preempt_for(size_t r, bool held_off);
  /// Slot s is no longer open to the queued jobs still to come.
  void take(int s, Use how);
  /// What a job may use: `mask`, less the reshapable slots for a job a MIG plan held off.
  const std::vector<char>& allowed(const std::vector<char>& mask, bool held_off);
  /// Whether a job that found no open slots earlier in the walk shows this one finds none either (no_room_).
  bool known_not_to_fit(const Need& need, bool held_off) const;
  void remember_not_fitting(const Need& need, bool held_off);

  const ClusterView& view_;
  const Ranking& ranking_;
  std::vector<int> sorted_, found_;  // placement order and reserved slots, when the caller did not keep them
  const std::vector<int>* order_ = nullptr;
  std::vector<Use> use_;
  // The free slots, and the free or stopping ones, in placement order: a queued job searches these lists
  // rather than every slot (with most slots busy and a long queue, that is what a pass spends its time on).
  std::vector<char> free_u_, open_u_;
  std::vector<int> free_list_, open_list_;
  size_t open_count_ = 0;  // slots a queued job could still get without preempting anyone
  // Slots made for a job are its alone, and such a job takes only them (nothing while they are being made).
  std::unordered_map<JobId, std::vector<int>> reserved_;
  std::vector<char> ready_;            // reserved slots that are free now
  std::vector<char> preempted_;        // by rank
  std::vector<size_t> running_ranks_;  // where the possible victims are, so the search skips queued jobs
  std::vector<char> narrowed_;
  // What a job asks of the open slots. A job fits where enough of the open slots it may use fit one replica
  // each, and a walk only ever takes slots out of the open ones, so once a job found no room, a job asking at
  // least as much (as much of each slot, as many replicas or more, with no more slots open to it: held off by a
  // MIG plan where that one was, or not) finds none for the rest of the walk. In a long queue most jobs ask what
  // one before them asked, and this spares them the search.
  struct Demand {
    bool cpu, held_off;
    int compute, replicas;
    int64_t memory_mb;
    Demand(const Need& need, bool held_off);
    bool at_least(const Demand& b) const;
  };
  std::vector<Demand> no_room_;  // the least demanding that found no room so far
  Decisions out_;
};

Placer::Placer(const ClusterView& view, const Ranking& ranking)
    : view_(view), ranking_(ranking), use_(view.slots.size(), Use::Free) {
  const size_t n = view.slots.size();
  for (const auto& job : view.jobs)
    for (int s : job.slots) use_[static_cast<size_t>(s)] = job.stopping ? Use::Stopping : Use::Busy;
  const bool kept = view.slot_order.size() == n;
  if (!kept) {
    sorted_ = placement_order(view.slots);
    found_ = reserved_slots(view.slots);
  }
  order_ = kept ? &view.slot_order : &sorted_;
  std::vector<char> is_reserved(n, 0);
  for (int s : kept ? view.reserved : found_) is_reserved[static_cast<size_t>(s)] = 1;
  free_u_.assign(n, 0);
  open_u_.assign(n, 0);
  ready_.assign(n, 0);
  for (int s : *order_) {
    const auto i = static_cast<size_t>(s);
    const Use u = use_[i];
    const bool open = u == Use::Free || u == Use::Stopping;
    if (is_reserved[i]) {
      reserved_[view.slots[i].reserved_for].push_back(s);
      ready_[i] = u == Use::Free;
      if (open) use_[i] = Use::Reserved;
      continue;
    }
    free_u_[i] = u == Use::Free;
    open_u_[i] = open;
    if (u == Use::Free) free_list_.push_back(s);
    if (open) open_list_.push_back(s);
  }
  open_count_ = open_list_.size();
  preempted_.assign(ranking.ranked.size(), 0);
  if (!ranking.may_preempt) return;  // nobody is preempted: no victim is looked for
  for (size_t r = 0; r < ranking.ranked.size(); ++r)
    if (ranking.ranked[r]->running() && !ranking.ranked[r]->stopping) running_ranks_.push_back(r);
}

Decisions Placer::run(size_t* unplaced) {
  for (size_t r = 0; r < ranking_.ranked.size(); ++r) {
    const JobView& job = *ranking_.ranked[r];
    if (job.running()) {
      if (!job.stopping && !preempted_[r])
        for (int s : job.slots) use_[static_cast<size_t>(s)] = Use::Kept;
      continue;
    }
    if (const auto mine = reserved_.find(job.id); mine != reserved_.end()) {
      start_on_reserved(job, mine->second);
      continue;
    }
    if (std::binary_search(view_.awaiting.begin(), view_.awaiting.end(), job.id)) continue;  // slots being made
    // No slot left to give, none made for anyone, nobody to preempt: no job still to come can start or claim.
    if (open_count_ == 0 && reserved_.empty() && !ranking_.may_preempt && !unplaced) break;
    const bool held_off = plan_holds_off(view_, job.id);
    if (open_count_ > 0 && take_open(job, held_off)) continue;
    if (unplaced) ++*unplaced;  // only preemption could place it
    if (ranking_.may_preempt && !running_ranks_.empty() && running_ranks_.back() > r) preempt_for(r, held_off);
  }
  return std::move(out_);
}

void Placer::start_on_reserved(const JobView& job, const std::vector<int>& mine) {
  const std::vector<int> chosen = choose_slots(job.need, view_.slots, mine, ready_);
  if (chosen.empty()) return;
  for (int s : chosen) {
    use_[static_cast<size_t>(s)] = Use::Kept;
    ready_[static_cast<size_t>(s)] = 0;
  }
  out_.starts.push_back({job.id, chosen});
}

bool Placer::take_open(const JobView& job, bool held_off) {
  if (known_not_to_fit(job.need, held_off)) return false;
  std::vector<int> chosen = choose_slots(job.need, view_.slots, free_list_, allowed(free_u_, held_off));
  const bool starts = !chosen.empty();
  if (!starts) chosen = choose_slots(job.need, view_.slots, open_list_, allowed(open_u_, held_off));
  if (chosen.empty()) {
    remember_not_fitting(job.need, held_off);
    return false;
  }
  for (int s : chosen) take(s, starts ? Use::Kept : Use::Reserved);
  open_count_ -= chosen.size();
  if (starts) out_.starts.push_back({job.id, chosen});
  return true;
}

void Placer::preempt_for(size_t r, bool held_off) {
  const JobView& job = *ranking_.ranked[r];
  std::vector<size_t> candidates;
  for (auto it = running_ranks_.rbegin(); it != running_ranks_.rend() && *it > r; ++it)
    if (!preempted_[*it] && ranking_.may_preempt(job, *ranking_.ranked[*it])) candidates.push_back(*it);
  if (candidates.empty()) return;
  // First check that all of them together would make room (cheap, and usually no), then add them one by one
  // until it fits.
  std::vector<char> usable = open_u_;  // the free and stopping slots nobody has claimed
  std::vector<char> all = usable;
  for (size_t v : candidates)
    for (int s : ranking_.ranked[v]->slots) all[static_cast<size_t>(s)] = 1;
  if (choose_slots(job.need, view_.slots, *order_, allowed(all, held_off)).empty()) return;
  std::vector<size_t> victims;
  std::vector<int> chosen;
  for (size_t v : candidates) {
    victims.push_back(v);
    for (int s : ranking_.ranked[v]->slots) usable[static_cast<size_t>(s)] = 1;
    chosen = choose_slots(job.need, view_.slots, *order_, allowed(usable, held_off));
    if (!chosen.empty()) break;
  }
  for (size_t v : victims) {
    const JobView& victim = *ranking_.ranked[v];
    const bool needed = std::any_of(victim.slots.begin(), victim.slots.end(),
                                    [&](int s) { return std::find(chosen.begin(), chosen.end(), s) != chosen.end(); });
    if (!needed) continue;
    preempted_[v] = 1;
    out_.preemptions.push_back({victim.id, fmt::format("for job {}", job.id)});
  }
  for (int s : chosen) {
    const Use u = use_[static_cast<size_t>(s)];
    if (u == Use::Free || u == Use::Stopping) --open_count_;
    take(s, Use::Reserved);
  }
}

Placer::Demand::Demand(const Need& need, bool held_off_)
    : cpu(need.cpu),
      held_off(held_off_),
      compute(need.min_compute),
      replicas(need.replicas),
      memory_mb(need.min_memory_mb) {}

// The fields of a Need that fits() (slot.cpp) compares with a slot: a change there is a change here.
bool Placer::Demand::at_least(const Demand& b) const {
  return cpu == b.cpu && held_off >= b.held_off && compute >= b.compute && replicas >= b.replicas &&
         memory_mb >= b.memory_mb;
}

bool Placer::known_not_to_fit(const Need& need, bool held_off) const {
  const Demand asked(need, held_off);
  return std::any_of(no_room_.begin(), no_room_.end(), [&](const Demand& d) { return asked.at_least(d); });
}

void Placer::remember_not_fitting(const Need& need, bool held_off) {
  const Demand asked(need, held_off);
  no_room_.erase(std::remove_if(no_room_.begin(), no_room_.end(), [&](const Demand& d) { return d.at_least(asked); }),
                 no_room_.end());
  no_room_.push_back(asked);
}

void Placer::take(int s, Use how) {
  const auto i = static_cast<size_t>(s);
  use_[i] = how;
  if (free_u_[i]) free_list_.erase(std::find(free_list_.begin(), free_list_.end(), s));
  if (open_u_[i]) open_list_.erase(std::find(open_list_.begin(), open_list_.end(), s));
  free_u_[i] = open_u_[i] = 0;
}

const std::vector<char>& Placer::allowed(const std::vector<char>& mask, bool held_off) {
  if (!held_off) return mask;
  narrowed_ = without_reshapable(mask, view_.slots);
  return narrowed_;
}

}  // namespace

Decisions place_in_order(const ClusterView& view, const Ranking& ranking, size_t* unplaced) {
  return Placer(view, ranking).run(unplaced);
}

}  // namespace ragmig::sched
