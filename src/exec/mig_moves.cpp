// The bookkeeping of changes under way (see mig_moves.h).
#include "exec/mig_moves.h"

#include <algorithm>
#include <unordered_map>

namespace ragmig::exec {

void MigMoves::begin(GpuChange change, double now) {
  for (const auto& [job, at] : change.reserved) {  // one job per instance: the newer plan's
    std::erase_if(reserved_, [&](const auto& r) { return r.second.first == change.gpu && r.second.second == at; });
    reserved_[job] = {change.gpu, at};
  }
  if (!change.moved.empty()) last_move_[change.gpu] = now;
  const int gpu = change.gpu;
  const bool draining = !change.moved.empty();
  pending_[gpu] = Pending{std::move(change), now, draining};
}

const GpuChange* MigMoves::change(int gpu) const {
  const auto it = pending_.find(gpu);
  return it == pending_.end() ? nullptr : &it->second.change;
}

bool MigMoves::draining(int gpu) const {
  const auto it = pending_.find(gpu);
  return it != pending_.end() && it->second.draining;
}

std::vector<int> MigMoves::settle(const sched::ClusterView& view) {
  std::unordered_map<sched::JobId, const sched::JobView*> jobs;
  for (const auto& job : view.jobs) jobs[job.id] = &job;
  std::erase_if(reserved_, [&](const auto& entry) {
    const auto j = jobs.find(entry.first);
    return j == jobs.end() || (j->second->running() && !j->second->stopping);
  });
  std::vector<int> ready;
  for (auto& [gpu, p] : pending_) {
    if (!p.draining) continue;
    const bool gone = std::none_of(p.change.moved.begin(), p.change.moved.end(), [&](sched::JobId id) {
      const auto j = jobs.find(id);
      return j != jobs.end() && j->second->running() && j->second->started_at < p.planned_at;
    });
    if (!gone) continue;
    p.draining = false;
    ready.push_back(gpu);
  }
  return ready;
}

void MigMoves::finish(int gpu) { pending_.erase(gpu); }

sched::JobId MigMoves::holder(int gpu, const gpu::Placement& p) const {
  for (const auto& [job, at] : reserved_)
    if (at.first == gpu && at.second == p) return job;
  const auto it = pending_.find(gpu);
  if (it != pending_.end()) {
    const auto& target = it->second.change.target;
    if (std::find(target.begin(), target.end(), p) == target.end()) return sched::Slot::kVacating;
  }
  return 0;
}

std::vector<sched::JobId> MigMoves::awaiting(const std::function<bool(int gpu, const gpu::Placement&)>& exists) const {
  std::vector<sched::JobId> out;
  for (const auto& [job, at] : reserved_)
    if (pending_.count(at.first) && !exists(at.first, at.second)) out.push_back(job);
  return out;
}

double MigMoves::last_move_at(int gpu) const {
  const auto it = last_move_.find(gpu);
  return it == last_move_.end() ? -1e300 : it->second;
}

}  // namespace ragmig::exec
