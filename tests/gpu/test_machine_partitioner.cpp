// exec::MachinePartitioner in-process against the emulated NVML driver: the views a scheduler would give it
// after its passes, the layout it applies, the slots it hands back, and a slot it keeps for a running job
// whose instance someone else destroyed until that job ends; a waiting job that runs once a foreign process
// leaves its instances, seen by the periodic re-read; passes that go on while slow MIG steps run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "exec/machine_partitioner.h"
#include "gpu/emulated_gpu_fixture.h"

namespace ragmig::exec {
namespace {

using testing::json;
using testing::ScratchDir;
using testing::seven_small_instances;

sched::JobView job(sched::JobId id, const std::string& need, std::vector<int> slots = {}) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need(need);
  j.slots = std::move(slots);
  return j;
}

int index_of(const std::vector<sched::Slot>& slots, const std::string& id) {
  const auto it = std::find_if(slots.begin(), slots.end(), [&](const sched::Slot& s) { return s.id == id; });
  return it == slots.end() ? -1 : static_cast<int>(it - slots.begin());
}

// The scheduler's side of Scheduler::set_slots: the view takes `slots` and the jobs the plan left waiting, its
// running jobs keep their slots (by id).
void take(sched::ClusterView& view, const std::vector<sched::Slot>& slots, const MachinePartitioner& partitioner) {
  for (auto& j : view.jobs)
    for (int& s : j.slots) s = index_of(slots, view.slots[static_cast<size_t>(s)].id);
  view.slots = slots;
  view.plan_waiting = partitioner.waiting();
}

// As a scheduler's passes would: after_pass, taking the slots offered, until no MIG step is under way (the
// steps run on the partitioner's thread). The last slots offered, if any.
std::optional<std::vector<sched::Slot>> settle(MachinePartitioner& partitioner, sched::ClusterView& view) {
  std::optional<std::vector<sched::Slot>> offered;
  for (int pass = 0; pass < 2000; ++pass) {
    if (auto slots = partitioner.after_pass(view)) {
      take(view, *slots, partitioner);
      offered = std::move(slots);
    }
    if (!partitioner.applying()) return offered;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "MIG steps still under way after 2,000 passes";
  return offered;
}

class MachinePartitionerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("NVML_EMULATOR_STATE", state_.c_str(), 1);
    ::unsetenv("CUDA_VISIBLE_DEVICES");  // it would hide the emulator's GPU
    write_file_atomic(state_, seven_small_instances().dump());
  }
  void TearDown() override { ::unsetenv("NVML_EMULATOR_STATE"); }
  ScratchDir dir_;
  std::string state_ = (dir_ / "nvml.json").string();
};

TEST_F(MachinePartitionerTest, PlansAppliesAndKeepsWhatRunningJobsHold) {
  gpu::NvmlLibrary nvml(NVML_EMULATOR);
  std::vector<std::string> log;
  const auto devices = gpu::read_devices(nvml);
  MachinePartitioner partitioner(nvml, devices, {}, [&](const std::string& line) { log.push_back(line); });
  sched::ClusterView view;
  view.slots = device_slots(devices);
  ASSERT_EQ(view.slots.size(), 7u);
  EXPECT_FALSE(partitioner.after_pass(view).has_value());  // nothing queued: nothing to do

  // Job 1 runs on the 1g at 0; job 2 waits for a 3g.71gb.
  view.jobs = {job(1, "1g.18gb:1", {index_of(view.slots, "mig:0:1g.18gb@0")}), job(2, "3g.71gb:1")};
  auto slots = settle(partitioner, view);
  ASSERT_TRUE(slots.has_value());
  EXPECT_GE(index_of(*slots, "mig:0:1g.18gb@0"), 0);
  EXPECT_GE(index_of(*slots, "mig:0:3g.71gb@4"), 0);
  EXPECT_EQ(index_of(*slots, "mig:0:1g.18gb@4"), -1);
  EXPECT_EQ(slots->size(), 5u);
  // The 3g was made for job 2: held for it until it starts there.
  EXPECT_EQ((*slots)[static_cast<size_t>(index_of(*slots, "mig:0:3g.71gb@4"))].reserved_for, 2);
  // The scheduler took them, job 2 started on the 3g: the same slots, free of the reservation; then nothing
  // more to do.
  view.slots = *slots;
  view.jobs = {job(1, "1g.18gb:1", {index_of(view.slots, "mig:0:1g.18gb@0")}),
               job(2, "3g.71gb:1", {index_of(view.slots, "mig:0:3g.71gb@4")})};
  slots = partitioner.after_pass(view);
  ASSERT_TRUE(slots.has_value());
  EXPECT_EQ(slots->size(), 5u);
  for (const auto& s : *slots) EXPECT_EQ(s.reserved_for, 0) << s.id;
  take(view, *slots, partitioner);
  EXPECT_FALSE(partitioner.after_pass(view).has_value());

  // Someone destroys job 1's instance behind ragmig's back; then job 3 arrives and the devices are read again.
  json state = json::parse(read_file(state_));
  auto& list = state["gpus"][0]["instances"];
  list.erase(std::remove_if(list.begin(), list.end(), [](const json& gi) { return gi["start"] == 0; }), list.end());
  write_file_atomic(state_, state.dump());
  view.jobs.push_back(job(3, "1g.18gb:1"));
  // Job 3 asks for at least a 1g.18gb; it runs faster on more compute, and the four memory slices left of
  // the 3g can be one 4g.71gb: the idle 1g slices there are re-cut. Job 1's slot is kept while it runs.
  slots = settle(partitioner, view);
  ASSERT_TRUE(slots.has_value());
  EXPECT_GE(index_of(*slots, "mig:0:1g.18gb@0"), 0);
  EXPECT_GE(index_of(*slots, "mig:0:3g.71gb@4"), 0);
  EXPECT_GE(index_of(*slots, "mig:0:4g.71gb@0"), 0);
  EXPECT_EQ(slots->size(), 3u);
  view.slots = *slots;
  view.jobs = {job(1, "1g.18gb:1", {index_of(view.slots, "mig:0:1g.18gb@0")}),
               job(2, "3g.71gb:1", {index_of(view.slots, "mig:0:3g.71gb@4")}), job(3, "1g.18gb:1")};
  EXPECT_FALSE(partitioner.after_pass(view).has_value());  // the same slots
  EXPECT_EQ(std::count_if(log.begin(), log.end(),
                          [](const std::string& l) {
                            return l.find("mig:0:1g.18gb@0 of running job 1 is gone") != std::string::npos;
                          }),
            1);
  // Job 1 ends: its slot goes.
  view.jobs = {job(2, "3g.71gb:1", {index_of(view.slots, "mig:0:3g.71gb@4")}), job(3, "1g.18gb:1")};
  slots = partitioner.after_pass(view);
  ASSERT_TRUE(slots.has_value());
  EXPECT_EQ(index_of(*slots, "mig:0:1g.18gb@0"), -1);
  EXPECT_EQ(slots->size(), 2u);
}

TEST_F(MachinePartitionerTest, AWaitingJobGetsInstancesThatForeignProcessesLeft) {
  json state = seven_small_instances();
  for (auto& gi : state["gpus"][0]["instances"]) gi["cis"][0]["processes"] = 1;  // someone else's work everywhere
  write_file_atomic(state_, state.dump());
  gpu::NvmlLibrary nvml(NVML_EMULATOR);
  std::vector<std::string> log;
  const auto devices = gpu::read_devices(nvml);
  MachinePartitioner partitioner(
      nvml, devices, {}, [&](const std::string& line) { log.push_back(line); }, 10.0);
  sched::ClusterView view;
  view.slots = device_slots(devices);
  view.jobs = {job(1, "3g.71gb:1")};
  view.now = 1000;
  // Every instance is busy: the job waits, and takes no instance meanwhile (one freed is the plan's to give).
  const auto same = partitioner.after_pass(view);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->size(), 7u);
  EXPECT_EQ(partitioner.waiting(), std::vector<sched::JobId>{1});
  take(view, *same, partitioner);
  EXPECT_FALSE(partitioner.after_pass(view).has_value());
  // The foreign processes on the instances at 4, 5 and 6 end: a 3g.71gb fits at 4 now.
  state = json::parse(read_file(state_));
  for (auto& gi : state["gpus"][0]["instances"])
    if (gi["start"].get<int>() >= 4) gi["cis"][0]["processes"] = 0;
  write_file_atomic(state_, state.dump());
  view.now = 1005;  // before the re-read is due: the devices as last read, so nothing is seen yet
  EXPECT_FALSE(partitioner.after_pass(view).has_value());
  view.now = 1010;
  const auto slots = settle(partitioner, view);
  ASSERT_TRUE(slots.has_value());
  EXPECT_GE(index_of(*slots, "mig:0:3g.71gb@4"), 0);
  EXPECT_EQ(index_of(*slots, "mig:0:1g.18gb@4"), -1);
  EXPECT_GE(index_of(*slots, "mig:0:1g.18gb@3"), 0);  // busy ones untouched
  EXPECT_EQ(slots->size(), 5u);
}

// A real GPU takes seconds per MIG step: they run on the partitioner's thread while the scheduler's passes go
// on, and the instances they destroy are offered to nobody meanwhile.
TEST_F(MachinePartitionerTest, PassesGoOnWhileSlowMigStepsRun) {
  ::setenv("NVML_EMULATOR_CHANGE_MS", "300", 1);  // 8 NVML changes here: about 2.4 s
  gpu::NvmlLibrary nvml(NVML_EMULATOR);
  std::vector<std::string> log;
  const auto devices = gpu::read_devices(nvml);
  MachinePartitioner partitioner(nvml, devices, {}, [&](const std::string& line) { log.push_back(line); });
  sched::ClusterView view;
  view.slots = device_slots(devices);
  view.jobs = {job(1, "1g.18gb:1", {index_of(view.slots, "mig:0:1g.18gb@0")}), job(2, "3g.71gb:1")};
  const auto during = partitioner.after_pass(view);
  ASSERT_TRUE(partitioner.applying());
  ASSERT_TRUE(during.has_value());
  ASSERT_EQ(during->size(), 7u);
  for (const auto& s : *during) {
    const bool destroyed = s.id == "mig:0:1g.18gb@4" || s.id == "mig:0:1g.18gb@5" || s.id == "mig:0:1g.18gb@6";
    EXPECT_EQ(s.reserved_for, destroyed ? sched::Slot::kVacating : 0) << s.id;
  }
  take(view, *during, partitioner);
  std::optional<std::vector<sched::Slot>> after;
  int passes = 0;
  while (!after && passes < 2000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = partitioner.after_pass(view);
    ++passes;
  }
  ::unsetenv("NVML_EMULATOR_CHANGE_MS");
  EXPECT_GT(passes, 5);  // passes answered while the steps ran
  EXPECT_FALSE(partitioner.applying());
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(index_of(*after, "mig:0:3g.71gb@4"), 0);
  EXPECT_EQ(after->size(), 5u);
  for (const auto& s : *after) EXPECT_EQ(s.reserved_for, s.id == "mig:0:3g.71gb@4" ? 2 : 0) << s.id;  // made for job 2
  EXPECT_EQ(json::parse(read_file(state_))["calls"].size(), 8u);
  EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) { return l.find("4 MIG step(s) on 1 GPU(s) start") != std::string::npos; }))
      << log.front();  // 3 instances destroyed, 1 made: 8 NVML changes
}

}  // namespace
}  // namespace ragmig::exec
