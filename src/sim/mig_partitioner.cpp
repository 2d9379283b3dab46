// The simulator's mig=auto GPUs: changes from exec::plan_rebalance carried out in three phases (stop the
// moved jobs, run the MIG steps, offer the new instances to the jobs they were made for).
#include "sim/mig_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace ragmig::sim {
namespace {

bool contains(const gpu::Layout& layout, const gpu::Placement& p) {
  return std::find(layout.begin(), layout.end(), p) != layout.end();
}

}  // namespace

MigPartitioner::MigPartitioner(Cluster cluster, exec::SpeedOf speed_of, exec::RebalanceOptions options)
    : cluster_(std::move(cluster)), speed_of_(std::move(speed_of)), options_(options) {}

std::vector<sched::Slot> MigPartitioner::slots() const {
  Cluster offered = cluster_;
  for (auto& g : offered.gpus) {
    const exec::GpuChange* change = moves_.change(g.index);
    if (!change) continue;
    gpu::Layout keep;  // what stays, and what running jobs still hold
    for (const auto& p : g.layout) {
      const bool held = std::binary_search(held_.begin(), held_.end(), mig_slot_id(g, p));
      if (held || contains(change->target, p)) keep.push_back(p);
    }
    g.layout = std::move(keep);
  }
  std::unordered_map<std::string, sched::JobId> holder;
  for (const auto& g : offered.gpus)
    if (g.mig == MigMode::Auto)
      for (const auto& p : g.layout)
        if (const sched::JobId h = moves_.holder(g.index, p); h != 0) holder[mig_slot_id(g, p)] = h;
  auto out = cluster_slots(offered);
  if (!holder.empty())
    for (auto& s : out)
      if (const auto it = holder.find(s.id); it != holder.end()) s.reserved_for = it->second;
  return out;
}

std::vector<sched::JobId> MigPartitioner::awaiting() const {
  return moves_.awaiting([&](int gpu, const gpu::Placement& p) {
    return contains(cluster_.gpus[static_cast<size_t>(gpu)].layout, p);
  });
}

double MigPartitioner::next_event() const {
  double next = std::numeric_limits<double>::infinity();
  for (const auto& [gpu, span] : steps_) next = std::min(next, span.second);
  const double cool_down = exec::min_interval(options_);
  if (options_.migrate)  // a cool-down that ends may free a move the plan wanted
    for (const auto& g : cluster_.gpus) {
      const double at = moves_.last_move_at(g.index) + cool_down;
      if (at > now_) next = std::min(next, at);
    }
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
  const double cool_down = exec::min_interval(options_);
  for (const auto& g : cluster_.gpus)
    text += moves_.changing(g.index) ? 'p' : (now - moves_.last_move_at(g.index) < cool_down ? 'c' : '-');
  return text;
}

void MigPartitioner::begin_steps(int gpu, double now) {
  steps_[gpu] = {now, now + options_.mig_step_s * static_cast<double>(moves_.change(gpu)->steps)};
}

MigPartitioner::Actions MigPartitioner::update(const sched::ClusterView& view, double now,
                                               const std::vector<sched::JobId>& queue_order) {
  Actions actions;
  now_ = now;
  std::vector<std::string> held;
  for (const auto& job : view.jobs)
    for (int s : job.slots) held.push_back(view.slots[static_cast<size_t>(s)].id);
  std::sort(held.begin(), held.end());
  const bool was_idle = moves_.idle();
  if (held != held_) {  // what a GPU under change keeps on offer depends on it
    held_ = std::move(held);
    actions.slots_changed = !was_idle;
  }
  // Reservations of started jobs end; moved jobs gone -> steps; steps done -> the new layout.
  const size_t reservations = moves_.reservations();
  for (int gpu : moves_.settle(view)) begin_steps(gpu, now);
  actions.slots_changed = actions.slots_changed || moves_.reservations() != reservations;
  bool made_new_instances = false;
  for (auto it = steps_.begin(); it != steps_.end();) {
    const auto [gpu, span] = *it;
    if (span.second > now) {
      ++it;
      continue;
    }
    const exec::GpuChange* change = moves_.change(gpu);
    cluster_.gpus[static_cast<size_t>(gpu)].layout = change->target;
    if (change->steps > 0) history_.emplace_back(gpu, span.first, span.second);
    moves_.finish(gpu);
    it = steps_.erase(it);
    actions.slots_changed = true;
    made_new_instances = true;
  }
  // The view does not have the new instances yet (nor who they are held for): plan at the next pass.
  if (made_new_instances) return actions;

  const std::string q = question(view, now);
  if (q == last_question_) return actions;
  last_question_ = q;
  std::vector<exec::RebalanceGpu> gpus;
  for (const auto& g : cluster_.gpus) {
    if (g.mig != MigMode::Auto || moves_.changing(g.index)) continue;
    exec::RebalanceGpu r;
    r.gpu.state.index = g.index;
    r.gpu.state.catalog = g.catalog;
    for (const auto& p : g.layout) {
      r.gpu.state.instances.push_back({p, false, -1});
      r.gpu.slot_ids.push_back(mig_slot_id(g, p));
    }
    r.last_move_at = moves_.last_move_at(g.index);
    gpus.push_back(std::move(r));
  }
  if (gpus.empty()) return actions;
  std::vector<sched::JobId> waiting;
  auto changes = exec::plan_rebalance(view, gpus, speed_of_, options_, queue_order, &waiting);
  if (waiting != waiting_) {
    waiting_ = std::move(waiting);
    actions.slots_changed = true;
  }
  for (auto& change : changes) {
    const int gpu = change.gpu;
    actions.stop.insert(actions.stop.end(), change.moved.begin(), change.moved.end());
    migrations_ += static_cast<int64_t>(change.moved.size());
    if (change.steps > 0) ++repartitions_;
    moves_.begin(std::move(change), now);
    if (!moves_.draining(gpu)) begin_steps(gpu, now);
    if (steps_.count(gpu) && steps_[gpu].second <= now) {  // nothing to wait for
      cluster_.gpus[static_cast<size_t>(gpu)].layout = moves_.change(gpu)->target;
      moves_.finish(gpu);
      steps_.erase(gpu);
    }
    actions.slots_changed = true;
  }
  return actions;
}

}  // namespace ragmig::sim
