// Placement shared by every policy: the smallest free slots that fit (on re-planned MIG GPUs the largest), all
// replicas of a job or none (gang), and the walk that turns a policy's ranking of jobs into starts and
// preemptions.
#pragma once

#include <functional>
#include <vector>

#include "sched/policy.h"

namespace ragmig::sched {

/// The order in which placement tries slots: smallest first (compute, memory, then faster first, then
/// index), so a small job never takes a large slice that a small one leaves free.
/// Reshapable slots (instances of --mig auto GPUs) come after the others, largest compute first: the
/// planner sizes them for the jobs it packs, and a small instance left over beside running jobs is the
/// slowest place a new job could start while a GPU of one whole instance sits idle (bench/sim --mig, part
/// (d): arrivals started on such slices ran 2-3.6x their whole-GPU time).
std::vector<int> placement_order(const std::vector<Slot>& slots);
/// The indices of the slots reserved for a job or being vacated (Slot::reserved_for != 0), ascending.
std::vector<int> reserved_slots(const std::vector<Slot>& slots);
/// Whether a MIG plan left `job` waiting (ClusterView::plan_waiting): it takes no reshapable slot but one
/// reserved for it.
bool plan_holds_off(const ClusterView& view, JobId job);
/// `usable` less the reshapable slots (Slot::reshapable): what such a job may take.
std::vector<char> without_reshapable(std::vector<char> usable, const std::vector<Slot>& slots);

/// Chooses need.replicas slots among those with usable[i] set, trying them in `order`; all or none.
/// Prefers slots of one group (one GPU). Returns the chosen indices, or an empty vector when the job
/// does not fit.
std::vector<int> choose_slots(const Need& need, const std::vector<Slot>& slots, const std::vector<int>& order,
                              const std::vector<char>& usable);

/// Walks the ranking: running jobs keep their slots; each queued job takes the smallest free slots that
/// fit; one that does not fit claims slots that stopping jobs are about to free, or else preempts the
/// lowest-ranked running jobs it may preempt whose slots make it fit (and waits for them to stop).
/// Slots so claimed are reserved: no job ranked lower takes them. Jobs a MIG plan left waiting
/// (ClusterView::plan_waiting) take no reshapable slot this way. Jobs that fit nowhere are skipped
/// (later ones may still start: backfilling). `unplaced`, when given, is increased by the number of queued
/// jobs that neither started nor claimed slots being freed: those that only preemption could place.
Decisions place_in_order(const ClusterView& view, const Ranking& ranking, size_t* unplaced = nullptr);

}  // namespace ragmig::sched
