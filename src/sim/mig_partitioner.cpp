// The simulator's mig=auto GPUs: changes from exec::plan_rebalance carried out in three phases (stop the
// moved jobs, run the MIG steps, offer the new instances to the jobs they were made for).
#include "sim/mig_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace ragmig::sim {
namespace {

std::string slot_id(const SimGpu& g, const gpu::Placement& p) {
  return fmt::format("gpu{}/{}@{}", g.index, g.catalog->profiles[static_cast<size_t>(p.profile)].name, p.start);
}

bool contains(const gpu::Layout& layout, const gpu::Placement& p) {
  return std::find(layout.begin(), layout.end(), p) != layout.end();
}

}  // namespace

MigPartitioner::MigPartitioner(Cluster cluster, exec::SpeedOf speed_of, exec::RebalanceOptions options)
    : cluster_(std::move(cluster)),
      speed_of_(std::move(speed_of)),
      options_(options),
      pending_(cluster_.gpus.size()),
      last_move_at_(cluster_.gpus.size(), -1e300) {}

std::vector<sched::Slot> MigPartitioner::slots() const {
  Cluster offered = cluster_;
  for (size_t i = 0; i < offered.gpus.size(); ++i) {
    if (!pending_[i]) continue;
    const SimGpu& g = cluster_.gpus[i];
    gpu::Layout keep;
    for (const auto& p : g.layout) {
      const bool held = std::find(held_.begin(), held_.end(), slot_id(g, p)) != held_.end();
      if (held || contains(pending_[i]->change.target, p)) keep.push_back(p);
    }
    offered.gpus[i].layout = std::move(keep);
  }
  std::unordered_map<std::string, sched::JobId> owner;
  for (const auto& [job, at] : reserved_) owner[slot_id(cluster_.gpus[static_cast<size_t>(at.first)], at.second)] = job;
  for (size_t i = 0; i < offered.gpus.size(); ++i)
    if (pending_[i])
      for (const auto& p : offered.gpus[i].layout)
        if (!contains(pending_[i]->change.target, p)) owner[slot_id(cluster_.gpus[i], p)] = sched::Slot::kVacating;
  auto out = cluster_slots(offered);
  if (!owner.empty())
    for (auto& s : out)
      if (const auto it = owner.find(s.id); it != owner.end()) s.reserved_for = it->second;
  return out;
}

std::vector<sched::JobId> MigPartitioner::awaiting() const {
  std::vector<sched::JobId> out;
  for (const auto& [job, at] : reserved_) {
    const auto& pending = pending_[static_cast<size_t>(at.first)];
    if (pending && !contains(cluster_.gpus[static_cast<size_t>(at.first)].layout, at.second)) out.push_back(job);
  }
  return out;
}

double MigPartitioner::next_event() const {
  double next = std::numeric_limits<double>::infinity();
  for (const auto& p : pending_)
    if (p && !p->draining) next = std::min(next, p->done_at);
  if (options_.migrate)  // a cool-down that ends may free a move the plan wanted
    for (double at : last_move_at_)
      if (at + options_.min_interval_s > now_) next = std::min(next, at + options_.min_interval_s);
  return next;
}

std::string MigPartitioner::question(const sched::ClusterView& view, double now) const {
  // What the plan depends on, but for the running jobs' progress: it is asked again when a job arrives,
  // starts, stops or ends, or a GPU's cool-down after a move ends.
  std::string text;
  for (const auto& job : view.jobs) {
    if (job.need.cpu) continue;
    text += fmt::format("{}:{}:{}:", job.id, job.need.what, job.priority);
    for (int s : job.slots) text += view.slots[static_cast<size_t>(s)].id + (job.stopping ? "s" : "") + ",";
    text += ';';
  }
  text += '|';
  for (size_t i = 0; i < cluster_.gpus.size(); ++i)
    text += pending_[i] ? 'p' : (now - last_move_at_[i] < options_.min_interval_s ? 'c' : '-');
  return text;
}

void MigPartitioner::begin_steps(size_t gpu, double now) {
  Pending& p = *pending_[gpu];
  p.draining = false;
  p.steps_from = now;
  p.done_at = now + options_.mig_step_s * static_cast<double>(p.change.steps);
}

MigPartitioner::Actions MigPartitioner::update(const sched::ClusterView& view, double now,
                                               const std::vector<sched::JobId>& queue_order) {
  Actions actions;
  now_ = now;
  std::vector<std::string> held;
  std::unordered_map<sched::JobId, const sched::JobView*> jobs;
  for (const auto& job : view.jobs) {
    jobs[job.id] = &job;
    for (int s : job.slots) held.push_back(view.slots[static_cast<size_t>(s)].id);
  }
  std::sort(held.begin(), held.end());
  if (held != held_) {  // what a GPU under change keeps on offer depends on it
    held_ = std::move(held);
    actions.slots_changed = std::any_of(pending_.begin(), pending_.end(), [](const auto& p) { return p.has_value(); });
  }
  // Reservations end when their job starts (a running, not stopping, attempt) or leaves the view.
  for (auto it = reserved_.begin(); it != reserved_.end();) {
    const auto j = jobs.find(it->first);
    const bool over = j == jobs.end() || (j->second->running() && !j->second->stopping);
    if (over) {
      it = reserved_.erase(it);
      actions.slots_changed = true;
    } else {
      ++it;
    }
  }
  // Changes under way: moved jobs gone -> steps; steps done -> the new layout.
  for (size_t i = 0; i < pending_.size(); ++i) {
    auto& p = pending_[i];
    if (!p) continue;
    if (p->draining) {
      // Gone when no attempt that ran when the move was planned still runs (a moved job may have started
      // on its new instance already, on this GPU or another).
      const bool gone = std::none_of(p->change.moved.begin(), p->change.moved.end(), [&](sched::JobId id) {
        const auto j = jobs.find(id);
        return j != jobs.end() && j->second->running() && j->second->started_at < p->planned_at;
      });
      if (gone) begin_steps(i, now);
    }
    if (!p->draining && p->done_at <= now) {
      cluster_.gpus[i].layout = p->change.target;
      if (p->change.steps > 0) history_.emplace_back(static_cast<int>(i), p->steps_from, p->done_at);
      p.reset();
      actions.slots_changed = true;
    }
  }

  const std::string q = question(view, now);
  if (q == last_question_) return actions;
  last_question_ = q;
  std::vector<exec::RebalanceGpu> gpus;
  for (const auto& g : cluster_.gpus) {
    if (g.mig != MigMode::Auto || pending_[static_cast<size_t>(g.index)]) continue;
    exec::RebalanceGpu r;
    r.gpu.state.index = g.index;
    r.gpu.state.catalog = g.catalog;
    for (const auto& p : g.layout) {
      r.gpu.state.instances.push_back({p, false, -1});
      r.gpu.slot_ids.push_back(slot_id(g, p));
    }
    r.last_move_at = last_move_at_[static_cast<size_t>(g.index)];
    gpus.push_back(std::move(r));
  }
  if (gpus.empty()) return actions;
  for (auto& change : exec::plan_rebalance(view, gpus, speed_of_, options_, queue_order)) {
    const auto i = static_cast<size_t>(change.gpu);
    for (const auto& [job, at] : change.reserved) reserved_[job] = {change.gpu, at};
    actions.stop.insert(actions.stop.end(), change.moved.begin(), change.moved.end());
    migrations_ += static_cast<int64_t>(change.moved.size());
    if (!change.moved.empty()) last_move_at_[i] = now;
    if (change.steps > 0) ++repartitions_;
    pending_[i] = Pending{std::move(change), true, now, 0, 0};
    if (pending_[i]->change.moved.empty()) begin_steps(i, now);
    if (!pending_[i]->draining && pending_[i]->done_at <= now) {  // nothing to wait for
      cluster_.gpus[i].layout = pending_[i]->change.target;
      pending_[i].reset();
    }
    actions.slots_changed = true;
  }
  return actions;
}

}  // namespace ragmig::sim
