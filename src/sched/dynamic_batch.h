// Dynamic batch size (seed 000 §4: "adjust batch sizes based on available GPU memory and current workload"), as
// a layer over any ordering policy ("fifo+dynbatch", "las+dynbatch"): the ordering policy decides what starts
// where at each job's own batch; this adds the Resizes that let a resizable job (JobSpec::resizable) start now
// on a slice with less memory than its Need names, and grow back when its slice allows. Pure.
#pragma once

#include <vector>

#include "sched/policy.h"

namespace ragmig::sched {

/// What a resizable job needs at the least under dynamic batch: its Need with the memory its min_batch_size
/// takes by the prior (memory_model.h), as placement sees it before the job has run. Other jobs: their Need.
Need least_need(const JobSpec& spec);
/// The same of a job in the view, by its memory model as the scheduler knows it now (JobView::memory: learned
/// from its events, else the prior): what a slice must hold for it to start there under dynamic batch.
Need least_need(const JobView& job);

/// The memory a slot offers a need: what its MIG profile names when set (as `fits` compares), else NVML's.
int64_t slot_memory_mb(const Slot& slot);
/// The least slot_memory_mb among slots[indices] (a gang runs at its smallest slot's memory); INT64_MAX for none.
int64_t least_memory_mb(const std::vector<Slot>& slots, const std::vector<int>& indices);

/// Whether dynamic batch may size a job in the view: a GPU job with a configured and a least batch size.
bool resizable(const JobView& job);

/// `decisions` (the ordering policy's, on `view`) with dynamic batch added:
///  - shrink to start: each resizable queued job, in `queue_order`, that the decisions do not start and that
///    no slot is being made for, starts on free slots (held by no job, chosen by no start, reserved for nobody
///    else; no reshapable one for a job a MIG plan left waiting) with the compute its Need asks for and the
///    memory of at least its min_batch_size, at the largest batch their memory holds (its memory model:
///    JobView::memory); the slots that hold the largest batch first, then the smallest. None while the
///    decisions preempt: a preemption makes room for a job that should not start elsewhere meanwhile.
///  - grow: a resizable job that runs (or starts now) below its configured batch is resized up to the
///    largest batch its slots hold, at most the configured one (after a move to a larger slice, or once its
///    learned memory shows more fits than the prior said).
/// A running job is never shrunk: it already fits where it runs.
Decisions add_dynamic_batch(const ClusterView& view, Decisions decisions, const std::vector<JobId>& queue_order);

}  // namespace ragmig::sched
