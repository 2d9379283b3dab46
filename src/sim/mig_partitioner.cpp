// The simulator's mig=auto GPUs: their layouts, the instances in flux while one is re-partitioned, and the
// question to the planner, which is exec::plan_for_queue, the function `ragmig run --mig auto` asks too.
#include "sim/mig_partitioner.h"

#include <algorithm>

#include "exec/queue_partition.h"

namespace ragmig::sim {

MigPartitioner::MigPartitioner(Cluster cluster) : cluster_(std::move(cluster)), pending_(cluster_.gpus.size()) {}

std::vector<sched::Slot> MigPartitioner::slots() const {
  Cluster offered = cluster_;
  for (size_t i = 0; i < offered.gpus.size(); ++i) {
    if (!pending_[i]) continue;
    gpu::Layout stays;
    for (const auto& p : offered.gpus[i].layout)
      if (std::find(pending_[i]->begin(), pending_[i]->end(), p) != pending_[i]->end()) stays.push_back(p);
    offered.gpus[i].layout = std::move(stays);
  }
  return cluster_slots(offered);
}

std::vector<MigPartitioner::Change> MigPartitioner::plan(const sched::ClusterView& view) {
  // The mig=auto GPUs not being re-partitioned, with their instances' slot ids.
  std::vector<exec::PlannableGpu> gpus;
  for (const auto& g : cluster_.gpus) {
    if (g.mig != MigMode::Auto || pending_[static_cast<size_t>(g.index)]) continue;
    exec::PlannableGpu p;
    p.state.index = g.index;
    p.state.catalog = g.catalog;
    const auto slots = gpu_slots(g, g.layout);
    for (size_t k = 0; k < g.layout.size(); ++k) {
      p.state.instances.push_back({g.layout[k], false, -1});
      p.slot_ids.push_back(slots[k].id);
    }
    gpus.push_back(std::move(p));
  }
  const std::string question = exec::queue_question(view, gpus);
  if (question.empty() || question == last_question_) return {};
  last_question_ = question;
  std::vector<Change> changes;
  for (const auto& plan : exec::plan_for_queue(view, gpus)) changes.push_back({plan.index, plan.target, plan.steps.size()});
  return changes;
}

void MigPartitioner::begin(const Change& change) { pending_[static_cast<size_t>(change.gpu)] = change.target; }

void MigPartitioner::finish(int gpu) {
  auto& pending = pending_[static_cast<size_t>(gpu)];
  if (!pending) return;
  cluster_.gpus[static_cast<size_t>(gpu)].layout = std::move(*pending);
  pending.reset();
}

}  // namespace ragmig::sim
