// The live side of mig=auto: NVML state in, exec::plan_rebalance for the decision (the simulator's), a
// gpu::PartitionPlan built from its changes for gpu::apply_plan, NVML state out. The question is first asked
// of the devices as last read, which costs no NVML call; only a new question, or one still waiting
// `reread_s` after the last read, reads the devices again.
// The slots handed over are those devices' slots plus any that a running job still holds.
#include "exec/machine_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "exec/inventory_slots.h"
#include "gpu/inventory.h"
#include "gpu/mig_steps.h"
#include "gpu/visible_devices.h"

namespace ragmig::exec {
namespace {

// Where a GPU instance NVML reports sits in the catalog's terms (profile -1: a profile the catalog lacks).
gpu::Placement placement_of(const gpu::GpuDeviceState& d, const gpu::GpuInstanceState& gi) {
  return {d.catalog->profile_index_by_id(gi.profile_id), gi.placement_start};
}

// Whether ragmig may re-lay out GPU d: MIG on, a catalog for it, no mode change waiting for a reset, and all of
// it ragmig's (CUDA_VISIBLE_DEVICES).
bool plannable(const gpu::GpuDeviceState& d) {
  return d.mig_enabled && d.catalog && !d.mig_pending && !d.layout_fixed;
}

}  // namespace

std::vector<sched::Slot> device_slots(const std::vector<gpu::GpuDeviceState>& devices) {
  gpu::Inventory inventory;
  inventory.gpus = devices;
  inventory.slots = gpu::slots_from_devices(devices);
  std::vector<sched::Slot> slots = scheduler_slots(inventory);
  for (auto& s : slots)  // the MIG instances of GPUs this partitioner re-plans
    for (const auto& d : devices)
      if (s.kind == sched::SlotKind::Mig && s.group == d.index && plannable(d))
        s.reshapable = true;
  return slots;
}

std::vector<PlannableGpu> plannable_gpus(const std::vector<gpu::GpuDeviceState>& devices,
                                         std::vector<std::string>* notes) {
  std::vector<PlannableGpu> out;
  for (const auto& d : devices) {
    const std::string label = "GPU " + std::to_string(d.index) + " (" + (d.name.empty() ? "unreadable" : d.name) + ")";
    if (!plannable(d)) {
      if (notes)
        notes->push_back(label + ": left as it is (" +
                         (!d.catalog        ? "no MIG catalog for it"
                          : d.mig_pending   ? "a MIG mode change waits for a reset"
                          : d.layout_fixed  ? gpu::kLayoutFixedReason
                                            : "MIG mode is off") +
                         ")");
      continue;
    }
    PlannableGpu g;
    g.state.index = d.index;
    g.state.catalog = d.catalog;
    g.state.device_name = d.name;
    g.state.uuid = d.uuid;
    bool known = true;
    for (const auto& gi : d.instances) {
      const gpu::Placement p = placement_of(d, gi);
      if (p.profile < 0) {
        if (notes)
          notes->push_back(label + ": left as it is (GPU instance " + std::to_string(gi.gi_id) + " has profile id " +
                           std::to_string(gi.profile_id) + ", unknown to the catalog)");
        known = false;
        break;
      }
      // No compute instance: a leftover, free to go. Several: a layout someone made by hand, kept.
      bool busy = gi.devices.size() > 1;
      for (const auto& dev : gi.devices) busy = busy || dev.busy.value_or(true);  // unknown counts as busy
      g.state.instances.push_back({p, busy, gi.gi_id});
      g.slot_ids.push_back(gi.devices.size() == 1 ? gpu::mig_slot_id(d.index, gi, gi.devices[0].ci_id) : "");
    }
    if (known) out.push_back(std::move(g));
  }
  return out;
}

gpu::GpuPlan gpu_plan(const PlannableGpu& g, const GpuChange& change, const std::set<std::string>& held) {
  gpu::GpuPlan plan;
  plan.index = g.state.index;
  plan.catalog = g.state.catalog;
  plan.device_name = g.state.device_name;
  plan.uuid = g.state.uuid;
  plan.mig_enabled = g.state.mig_enabled;
  plan.current = with_busy(g, held).instances;
  plan.target = change.target;
  plan.steps = gpu::sequence_steps(*plan.catalog, plan.current, plan.target);
  return plan;
}

std::vector<gpu::GpuPlan> rebalance_plans(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus,
                                          const SpeedOf& speed_of, const std::vector<sched::JobId>& queue_order) {
  std::vector<RebalanceGpu> asked;
  for (const auto& g : gpus) asked.push_back({g, -1e300});
  const std::set<std::string> held = busy_slots(view);  // running jobs' instances are busy in the plan
  std::vector<gpu::GpuPlan> plans;
  for (const auto& change : plan_rebalance(view, asked, speed_of, RebalanceOptions{}, queue_order)) {
    const auto g = std::find_if(gpus.begin(), gpus.end(), [&](const PlannableGpu& x) { return x.state.index == change.gpu; });
    auto plan = gpu_plan(*g, change, held);
    if (!plan.steps.empty()) plans.push_back(std::move(plan));
  }
  return plans;
}

MachinePartitioner::MachinePartitioner(const gpu::NvmlLibrary& nvml, std::vector<gpu::GpuDeviceState> devices,
                                       gpu::ApplyOptions options, Log log, double reread_s, SpeedOf speed_of,
                                       RebalanceOptions rebalance)
    : nvml_(nvml),
      options_(options),
      log_(std::move(log)),
      reread_s_(reread_s),
      speed_of_(speed_of ? std::move(speed_of) : [](const sched::JobView&) { return power_law_speeds(kUnmeasuredExponent); }),
      rebalance_(rebalance),
      devices_(std::move(devices)) {
  options_.execute = true;
}

MachinePartitioner::~MachinePartitioner() {
  if (!in_flight_) return;
  in_flight_->done.wait();
  land();
}

std::string MachinePartitioner::question(const sched::ClusterView& view) const {
  const auto gpus = plannable_gpus(devices_, nullptr);
  std::string text = queue_question(view, gpus);
  if (!rebalance_.migrate) return text;
  // With moves, running jobs alone may ask for a plan (one left on a small slice), and a cool-down's end.
  std::string running;
  for (const auto& job : view.jobs)
    for (int s : job.slots) running += std::to_string(job.id) + "@" + view.slots[static_cast<size_t>(s)].id + ";";
  if (running.empty() && text.empty()) return "";
  for (const auto& g : gpus)
    running += view.now - moves_.last_move_at(g.state.index) < min_interval(rebalance_) ? 'c' : '-';
  return text + "|" + running;
}

std::optional<std::vector<sched::Slot>> MachinePartitioner::after_pass(const sched::ClusterView& view,
                                                                       const std::vector<sched::JobId>& queue_order) {
  // Steps that ended since the last pass: their instances are offered now. The view does not have them yet
  // (nor who they are held for), so the next plan waits for the next pass.
  const bool landed = land();
  for (int gpu : moves_.settle(view))  // changes whose moved jobs have all stopped
    if (moves_.change(gpu)) ready_.push_back(gpu);
  // Nothing is planned while steps run: the devices as read would be half-way through them.
  if (!landed && !in_flight_ && ready_.empty()) {
    std::string q = question(view);
    // Something new waits, or the same job has waited `reread_s` since the last look (a foreign process may
    // have ended, an instance been made or destroyed by hand): look at the devices as they are now.
    if (!q.empty() && (q != last_question_ || view.now - read_at_ >= reread_s_)) {
      if (!read(view.now)) {
        last_question_ = q;  // not asked again until the queue changes or a re-read is due
        waiting_.clear();    // no plan: nobody is held back for one
      } else {
        q = question(view);
        if (!q.empty() && q != last_question_) repartition(view, queue_order);
      }
    }
  }
  if (!in_flight_ && !ready_.empty()) launch(view);
  return slots_if_changed(view);
}

std::vector<sched::JobId> MachinePartitioner::awaiting() const {
  return moves_.awaiting([&](int gpu, const gpu::Placement& p) {
    for (const auto& d : devices_) {
      if (d.index != gpu || !d.catalog) continue;
      for (const auto& gi : d.instances)
        if (placement_of(d, gi) == p) return true;
    }
    return false;
  });
}

bool MachinePartitioner::read(double now) {
  read_at_ = now;
  try {
    devices_ = gpu::read_visible_devices(nvml_).gpus;
    read_error_.clear();
    return true;
  } catch (const DeviceError& e) {
    if (read_error_ != e.what())
      log_(std::string("mig auto: cannot read the GPUs: ") + e.what());  // once, not per read
    read_error_ = e.what();
    return false;
  }
}

void MachinePartitioner::repartition(const sched::ClusterView& view, const std::vector<sched::JobId>& queue_order) {
  std::vector<std::string> notes;
  std::vector<RebalanceGpu> gpus;
  for (auto& g : plannable_gpus(devices_, &notes))
    if (!moves_.changing(g.state.index)) gpus.push_back({std::move(g), moves_.last_move_at(g.state.index)});
  for (const auto& n : notes) {
    if (std::find(said_.begin(), said_.end(), n) == said_.end()) {
      log_("mig auto: " + n);
      said_.push_back(n);
    }
  }
  last_question_ = question(view);
  auto changes = plan_rebalance(view, gpus, speed_of_, rebalance_, queue_order, &waiting_);
  for (auto& change : changes) {
    const int gpu = change.gpu;
    if (!change.moved.empty())
      log_(fmt::format("mig auto: GPU {}: moving {} running job(s) to a better layout; they checkpoint first", gpu,
                       change.moved.size()));
    stops_.insert(stops_.end(), change.moved.begin(), change.moved.end());
    moves_.begin(std::move(change), view.now);
    if (!moves_.draining(gpu)) ready_.push_back(gpu);
  }
  // The question about the layout as it is now: asked again only when the queue or the machine changes.
  last_question_ = question(view);
}

void MachinePartitioner::launch(const sched::ClusterView& view) {
  std::vector<PlannableGpu> gpus = plannable_gpus(devices_, nullptr);
  gpu::PartitionPlan partition;
  for (int index : ready_) {
    const GpuChange& change = *moves_.change(index);
    const auto g = std::find_if(gpus.begin(), gpus.end(), [&](const PlannableGpu& x) { return x.state.index == index; });
    if (g == gpus.end()) continue;
    std::set<std::string> held;  // instances a running (not moved) job holds are busy: never destroyed
    for (const auto& job : view.jobs)
      if (std::find(change.moved.begin(), change.moved.end(), job.id) == change.moved.end())
        for (int s : job.slots) held.insert(view.slots[static_cast<size_t>(s)].id);
    auto plan = gpu_plan(*g, change, held);
    if (!plan.steps.empty()) partition.gpus.push_back(std::move(plan));
  }
  std::vector<int> changing = std::exchange(ready_, {});
  if (partition.gpus.empty()) {  // nothing to do on the devices: done now
    for (int gpu : changing) moves_.finish(gpu);
    return;
  }
  size_t steps = 0;
  for (const auto& plan : partition.gpus) steps += plan.steps.size();
  log_(fmt::format("mig auto: {} MIG step(s) on {} GPU(s) start; jobs go on meanwhile", steps, partition.gpus.size()));
  // The thread touches only NVML (which is thread-safe) and what it is given; its log lines wait for land().
  in_flight_ = InFlight{std::move(changing),
                        std::async(std::launch::async, [&nvml = nvml_, options = options_, partition = std::move(partition)] {
                          Applied out;
                          const auto say = [&](const std::string& line) { out.log.push_back("mig auto: " + line); };
                          try {
                            gpu::apply_plan(nvml, partition, options, say);
                          } catch (const Error& e) {
                            say(std::string("the layout stays as it is: ") + e.what());
                          }
                          try {  // whatever happened, also after a failure half-way
                            out.devices = gpu::read_visible_devices(nvml).gpus;
                            out.read = true;
                          } catch (const DeviceError& e) {
                            say(std::string("cannot read the GPUs back: ") + e.what());
                          }
                          return out;
                        })};
}

bool MachinePartitioner::land() {
  if (!in_flight_ || in_flight_->done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  Applied applied = in_flight_->done.get();
  for (const auto& line : applied.log) log_(line);
  if (applied.read) devices_ = std::move(applied.devices);
  for (int gpu : in_flight_->gpus) moves_.finish(gpu);
  in_flight_.reset();
  return true;
}

std::optional<std::vector<sched::Slot>> MachinePartitioner::slots_if_changed(const sched::ClusterView& view) {
  std::vector<sched::Slot> slots = device_slots(devices_);
  if (!moves_.idle()) {  // instances held for a moved job, or about to go in a change under way
    std::unordered_map<std::string, sched::JobId> holder;
    for (const auto& d : devices_) {
      if (!d.catalog) continue;
      for (const auto& gi : d.instances)
        for (const auto& dev : gi.devices) {
          const sched::JobId h = moves_.holder(d.index, placement_of(d, gi));
          if (h != 0) holder[gpu::mig_slot_id(d.index, gi, dev.ci_id)] = h;
        }
    }
    for (auto& s : slots)
      if (const auto it = holder.find(s.id); it != holder.end()) s.reserved_for = it->second;
  }
  // A running job's slot stays on offer whatever NVML said last (an instance destroyed outside ragmig): the
  // scheduler keeps every slot a running job holds. It goes at the first pass after the job ends.
  for (const auto& job : view.jobs) {
    for (int s : job.slots) {
      const sched::Slot& held = view.slots[static_cast<size_t>(s)];
      if (std::any_of(slots.begin(), slots.end(), [&](const sched::Slot& a) { return a.id == held.id; })) continue;
      if (std::find(kept_.begin(), kept_.end(), held.id) == kept_.end()) {
        log_(fmt::format("mig auto: slot {} of running job {} is gone from NVML's list; kept until the job ends",
                         held.id, job.id));
        kept_.push_back(held.id);
      }
      slots.push_back(held);
    }
  }
  std::erase_if(kept_, [&](const std::string& id) {
    return std::none_of(slots.begin(), slots.end(), [&](const sched::Slot& s) { return s.id == id; });
  });
  const auto ids = [](const std::vector<sched::Slot>& list) {  // the same slots in any order are no change
    std::vector<std::string> out;
    for (const auto& s : list) out.push_back(s.id + "=" + s.device + "/" + std::to_string(s.reserved_for));
    std::sort(out.begin(), out.end());
    return out;
  };
  if (ids(slots) == ids(view.slots) && waiting_ == view.plan_waiting) return std::nullopt;  // what it has already
  return slots;
}

}  // namespace ragmig::exec
