// The rebalancer's plan (see mig_rebalance.h for the rules and why). Packings are asked of
// gpu::best_packing and remembered per (GPU model, fixed instances, jobs' speeds), which repeat: a sweep
// has a handful of job kinds.
#include "exec/mig_rebalance.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "gpu/mig_steps.h"
#include "gpu/packing.h"
#include "sched/dynamic_batch.h"

namespace ragmig::exec {
namespace {

constexpr double kInfeasible = -std::numeric_limits<double>::infinity();
// The most a late job's lateness counts (see running_jobs): one job far behind does not take every slice.
constexpr double kMaxLateness = 10;

// A job's speed on an instance of `profile` (the speed of its compute slices), or of `placement` in `cat`.
double speed_on(const SliceSpeeds& speeds, const gpu::MigProfile& profile) {
  return speeds[static_cast<size_t>(std::clamp(profile.compute_slices, 1, 7))];
}
double speed_on(const SliceSpeeds& speeds, const gpu::GpuCatalog& cat, const gpu::Placement& placement) {
  return speed_on(speeds, cat.profiles[static_cast<size_t>(placement.profile)]);
}

struct Member {
  const sched::JobView* job = nullptr;
  SliceSpeeds speeds{};
  bool running = false;
  int home = -1;                      ///< the GPU it runs on now (running members)
  std::optional<gpu::Placement> at;   ///< its instance there
  double speed_now = 0;
  double remaining_s = 0;             ///< whole-GPU seconds of work left
  double weight = 1;                  ///< what a unit of its speed is worth to the plan (efficiency, lateness)
};

// A job's most efficient slice size (of at least its min_compute slices) and its efficiency there: speed per
// compute slice over the whole GPU's (7 x speed / slices, at least 1: the whole GPU's).
struct Efficiency {
  int slices = 7;
  double value = 1;
};
Efficiency best_efficiency(const sched::JobView& job, const SliceSpeeds& speeds) {
  Efficiency best;
  for (int g = std::max(1, job.need.min_compute); g <= 7; ++g)
    if (const double e = 7 * speeds[static_cast<size_t>(g)] / g; e > best.value) best = {g, e};
  return best;
}

// (1 / the job's best efficiency)^alpha. alpha = 1 values each job's speed at the share of the cluster it would
// need at its most efficient slice size, so that the plan's summed value is the rate at which the work bound is
// worked off; alpha = 0 counts speeds as they are (MISO's objective).
double weight_of(const sched::JobView& job, const SliceSpeeds& speeds, double alpha) {
  return alpha == 0 ? 1 : std::pow(best_efficiency(job, speeds).value, -alpha);
}

using Members = std::vector<const Member*>;

class Plan {
 public:
  Plan(const std::vector<RebalanceGpu>& gpus, bool shrink) : gpus_(gpus), shrink_(shrink) {}

  const gpu::GpuCatalog& catalog(size_t g) const { return *gpus_[g].gpu.state.catalog; }

  std::vector<double> row(size_t g, const Member& m) {
    const auto& cat = catalog(g);
    const auto& slots = slots_of(cat);
    std::vector<double> r(cat.profiles.size(), 0.0);
    // With dynamic batch, an instance that holds the job's least batch holds it.
    const sched::Need need = shrink_ ? sched::least_need(*m.job) : m.job->need;
    for (size_t p = 0; p < cat.profiles.size(); ++p) {
      const auto& prof = cat.profiles[p];
      if (prof.media_extensions() || !sched::fits(need, slots[p])) continue;
      r[p] = m.weight * speed_on(m.speeds, prof);
    }
    return r;
  }

  gpu::SpeedTable table(size_t g, const Members& ms) {
    gpu::SpeedTable t;
    for (const Member* m : ms) t.push_back(row(g, *m));
    return t;
  }

  /// The best summed value (weighted speed) of `ms` on GPU g beside `fixed`, or kInfeasible.
  double throughput(size_t g, const Members& ms, const gpu::Layout& fixed) {
    if (ms.empty()) return 0;
    auto rows = table(g, ms);
    std::sort(rows.begin(), rows.end());
    auto key = std::make_tuple(&catalog(g), gpu::canonical(fixed), std::move(rows));
    thread_local std::map<decltype(key), double> memo;
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    if (memo.size() > 200000) memo.clear();
    const auto p = gpu::best_packing(catalog(g), std::get<2>(key), fixed);
    const double t = p ? p->throughput : kInfeasible;
    memo.emplace(std::move(key), t);
    return t;
  }

 private:
  /// The slot each of the catalog's profiles makes (mig_slot parses the profile's name: once per plan).
  const std::vector<sched::Slot>& slots_of(const gpu::GpuCatalog& cat) {
    auto& slots = slots_[&cat];
    if (slots.empty())
      for (const auto& prof : cat.profiles) slots.push_back(mig_slot(prof));
    return slots;
  }

  const std::vector<RebalanceGpu>& gpus_;
  const bool shrink_;
  std::unordered_map<const gpu::GpuCatalog*, std::vector<sched::Slot>> slots_;
};

double remaining_s(const sched::JobView& job, double now, const RebalanceOptions& options) {
  if (job.estimate_s <= 0) return options.unknown_remaining_s;
  const double rest = job.estimate_s - job.work_s(now);
  return rest > 0 ? rest : options.overrun_remaining_s;
}

Members without(const Members& ms, const Member* m) {
  Members out;
  for (const Member* x : ms)
    if (x != m) out.push_back(x);
  return out;
}

// Running members that stay on GPU g pin their instances; the others join one by one, in order, while
// they still fit. Returns the packing of those that joined (with them) and its summed value, running
// members' current speed included.
struct Pinned {
  Members joined;
  gpu::Packing packing;
  double throughput = 0;
};
Pinned pinned_plan(Plan& plan, size_t g, const Members& ms, gpu::Layout fixed) {
  Pinned out;
  for (const Member* m : ms)
    if (m->running && m->home == static_cast<int>(g)) {
      fixed.push_back(*m->at);
      out.throughput += m->weight * m->speed_now;
    }
  for (const Member* m : ms) {
    if (m->running && m->home == static_cast<int>(g)) continue;
    Members trial = out.joined;
    trial.push_back(m);
    if (auto p = gpu::best_packing(plan.catalog(g), plan.table(g, trial), fixed)) {
      out.joined = std::move(trial);
      out.packing = std::move(*p);
    }
  }
  out.throughput += out.packing.throughput;
  return out;
}

// What the plan works on: every GPU's fixed instances, the jobs it holds (running and admitted) and their
// best summed value (weighted speed).
struct State {
  std::deque<Member> all;  // stable addresses
  std::vector<Members> members;
  std::vector<gpu::Layout> fixed;
  std::vector<double> base;
  /// Queued jobs admit_queue looked at (planned on a GPU, or left waiting).
  std::vector<sched::JobId> considered;
  /// Seconds until no running job holds the GPU (infinity: busy outside ragmig); while the queue is admitted,
  /// also until the jobs planned on it in this pass are done.
  std::vector<double> free_in;
};

using InstanceOf = std::unordered_map<std::string, std::pair<size_t, size_t>>;  // slot id -> (GPU, instance)

// Where each slot's instance is; instances busy outside ragmig fixed, their GPUs never free.
InstanceOf index_instances(const std::vector<RebalanceGpu>& gpus, State& st) {
  InstanceOf where;
  for (size_t g = 0; g < gpus.size(); ++g) {
    const auto& pg = gpus[g].gpu;
    for (size_t k = 0; k < pg.state.instances.size(); ++k) {
      if (k < pg.slot_ids.size() && !pg.slot_ids[k].empty()) where[pg.slot_ids[k]] = {g, k};
      if (pg.state.instances[k].busy) {
        st.fixed[g].push_back(pg.state.instances[k].placement);
        st.free_in[g] = std::numeric_limits<double>::infinity();
      }
    }
  }
  return where;
}

// An idle instance made for a job stays until the job is on it: a queued one, or a moved one still stopping
// (once it runs there, it is the job's like any other). Held for a job gone, or started elsewhere, it is
// free: the view may be a pass older than the reservations.
void fix_reserved_instances(const sched::ClusterView& view, const std::vector<RebalanceGpu>& gpus,
                            const InstanceOf& where, State& st) {
  std::vector<char> occupied(view.slots.size(), 0);
  std::vector<sched::JobId> coming;
  for (const auto& job : view.jobs) {
    for (int s : job.slots) occupied[static_cast<size_t>(s)] = 1;
    if (!job.running() || job.stopping) coming.push_back(job.id);
  }
  std::sort(coming.begin(), coming.end());
  const auto held = [&](const sched::Slot& s) {
    return s.reserved_for == sched::Slot::kVacating ||
           (s.reserved_for != 0 && std::binary_search(coming.begin(), coming.end(), s.reserved_for));
  };
  for (size_t i = 0; i < view.slots.size(); ++i)
    if (const auto it = where.find(view.slots[i].id); it != where.end() && held(view.slots[i]) && !occupied[i])
      st.fixed[it->second.first].push_back(gpus[it->second.first].gpu.state.instances[it->second.second].placement);
}

// The last jobs of a batch: the makespan is what is left to win. A job that even at its most efficient slice
// size would run past the work left (every job at its most efficient size, over these GPUs), by a factor c,
// counts c^lateness_weight more, so that the long jobs take the larger slices and all end nearer together.
void weigh_late_members(double work_s, size_t n_gpus, double lateness_weight, State& st) {
  const double bound_s = work_s / static_cast<double>(n_gpus);
  for (Member& m : st.all) {
    const size_t best = static_cast<size_t>(best_efficiency(*m.job, m.speeds).slices);
    const double late = m.remaining_s / m.speeds[best] / bound_s;
    if (late > 1) m.weight *= std::pow(std::min(late, kMaxLateness), lateness_weight);
  }
}

// 1. Each GPU's running jobs: movable ones become members, the rest (and busy instances) fixed.
State running_jobs(const sched::ClusterView& view, const std::vector<RebalanceGpu>& gpus, const SpeedOf& speed_of,
                   const RebalanceOptions& options, Plan& plan) {
  const size_t n = gpus.size();
  State st;
  st.members.resize(n);
  st.fixed.resize(n);
  st.base.resize(n);
  st.free_in.assign(n, 0.0);
  const InstanceOf where = index_instances(gpus, st);
  fix_reserved_instances(view, gpus, where, st);
  // The cool-down keeps arrivals from making a GPU thrash. With no GPU job queued the set of jobs only shrinks
  // and every re-pack must still win gain_factor x its cost: slices freed by a job's end are given to its
  // neighbours at once (bench/sim --mig (b): makespan 1.10x -> 1.08x the work bound; mean of seeds 1-5 1.12x ->
  // 1.10x), where they sat idle up to min_interval_s.
  const bool queued = std::any_of(view.jobs.begin(), view.jobs.end(),
                                  [](const sched::JobView& j) { return !j.running() && !j.need.cpu; });
  double last_arrival = -std::numeric_limits<double>::infinity();
  for (const auto& job : view.jobs) last_arrival = std::max(last_arrival, job.submitted_at);
  const bool draining = !queued && options.drain_after_s >= 0 && view.now - last_arrival >= options.drain_after_s;
  double work_s = 0;  // GPU-seconds left of the jobs on these GPUs, each at its most efficient slice size
  for (const auto& job : view.jobs) {
    if (!job.running()) continue;
    std::vector<std::pair<size_t, size_t>> held;
    for (int s : job.slots)
      if (const auto it = where.find(view.slots[static_cast<size_t>(s)].id); it != where.end()) held.push_back(it->second);
    const SliceSpeeds speeds = speed_of(job);
    const double left_s = remaining_s(job, view.now, options);
    for (const auto& [g, k] : held) {  // when its GPU is free of it
      const double speed = speed_on(speeds, plan.catalog(g), gpus[g].gpu.state.instances[k].placement);
      st.free_in[g] = std::max(st.free_in[g], left_s / std::max(speed, 1e-9));
    }
    work_s += left_s * static_cast<double>(held.size()) / best_efficiency(job, speeds).value;
    // A job that started this very moment stays (a move is told apart from the attempt it ends by time), and
    // so does one on a GPU that moved jobs less than min_interval_s ago while jobs are queued.
    const bool movable = options.migrate && !job.stopping && job.started_at < view.now && job.slots.size() == 1 &&
                         held.size() == 1 &&
                         (!queued || view.now - gpus[held[0].first].last_move_at >= min_interval(options));
    if (!movable) {
      for (const auto& [g, k] : held) st.fixed[g].push_back(gpus[g].gpu.state.instances[k].placement);
      continue;
    }
    const auto [g, k] = held[0];
    Member m;
    m.job = &job;
    m.speeds = speeds;
    m.running = true;
    m.home = static_cast<int>(g);
    m.at = gpus[g].gpu.state.instances[k].placement;
    m.speed_now = speed_on(m.speeds, plan.catalog(g), *m.at);
    m.remaining_s = left_s;
    m.weight = weight_of(job, speeds, options.efficiency_weight);
    st.all.push_back(m);
    st.members[g].push_back(&st.all.back());
  }
  if (draining && work_s > 0) weigh_late_members(work_s, n, options.lateness_weight, st);
  for (size_t g = 0; g < n; ++g) {
    st.fixed[g] = gpu::canonical(st.fixed[g]);  // an instance may be busy for two reasons: once
    st.fixed[g].erase(std::unique(st.fixed[g].begin(), st.fixed[g].end()), st.fixed[g].end());
    st.base[g] = plan.throughput(g, st.members[g], st.fixed[g]);
    if (st.base[g] == kInfeasible) {  // cannot happen for a valid current layout; pin them rather than guess
      for (const Member* m : st.members[g]) st.fixed[g].push_back(*m->at);
      st.members[g].clear();
      st.fixed[g] = gpu::canonical(st.fixed[g]);
      st.base[g] = 0;
    }
  }
  return st;
}

// When the last of GPU g's members ends in their best packing (whole-GPU seconds left over the speed of the
// instance each gets).
double members_end_in(Plan& plan, size_t g, const State& st) {
  const auto& cat = plan.catalog(g);
  const auto p = gpu::best_packing(cat, plan.table(g, st.members[g]), st.fixed[g]);
  double end = 0;
  for (size_t i = 0; p && i < st.members[g].size(); ++i) {
    const Member& m = *st.members[g][i];
    end = std::max(end, m.remaining_s / std::max(speed_on(m.speeds, cat, p->instance_of[i]), 1e-9));
  }
  return end;
}

// Seconds until the GPU that frees last (of those ragmig alone uses) is free; negative when none is.
double latest_free_in(const State& st) {
  double latest = -1;
  for (const double t : st.free_in)
    if (std::isfinite(t)) latest = std::max(latest, t);
  return latest;
}

// Without moves a job planned now keeps its slice to the end: whether waiting for the GPU that frees last, `latest`
// seconds from now, and then running whole would end `m` sooner than its `on_slice` seconds on a slice.
bool waiting_wins(const Member& m, double on_slice, double latest) {
  return latest >= 0 && latest + m.remaining_s / m.speeds[7] < on_slice;
}

// 2. Queued jobs, in the policy's order, to the GPU that gains the most. Jobs held for an instance made for
// them (moved, or planned by an earlier plan) are not queued for a new one.
void admit_queue(const sched::ClusterView& view, const SpeedOf& speed_of, const RebalanceOptions& options,
                 const std::vector<sched::JobId>& queue_order, Plan& plan, State& st) {
  std::vector<sched::JobId> held = view.awaiting;
  for (const auto& s : view.slots)
    if (s.reserved_for > 0) held.push_back(s.reserved_for);
  std::sort(held.begin(), held.end());
  std::vector<const sched::JobView*> queue;
  for (const auto& job : view.jobs)
    if (!job.running() && !job.need.cpu && job.need.replicas == 1 && !std::binary_search(held.begin(), held.end(), job.id))
      queue.push_back(&job);
  std::unordered_map<sched::JobId, size_t> rank;  // the ordering policy's, where given
  for (size_t i = 0; i < queue_order.size(); ++i) rank.emplace(queue_order[i], i);
  auto rank_of = [&](const sched::JobView* j) {
    const auto it = rank.find(j->id);
    return it == rank.end() ? queue_order.size() : it->second;
  };
  std::sort(queue.begin(), queue.end(), [&](const sched::JobView* a, const sched::JobView* b) {
    return std::make_tuple(rank_of(a), -a->priority, a->submitted_at, a->id) <
           std::make_tuple(rank_of(b), -b->priority, b->submitted_at, b->id);
  });
  if (queue.size() > options.max_queue_scan) queue.resize(options.max_queue_scan);
  const size_t n = st.members.size();
  std::vector<char> awaited(n, 0);  // GPUs a queued job waits to have whole
  // Without moves a job planned now keeps its slice to the end, so a later job may join a GPU only where the
  // packing with it leaves every job planned there in this pass no later than waiting for the GPU that frees last
  // and running whole would (sweep:10 on 2xH200 on ragmig's H200 speeds: a BERT-base trial admitted at 55 % of
  // the GPU was squeezed onto a 1g by the two trials planned after it, 28,800 s for 6,100 s of work; 1.03x whole
  // GPUs' average JCT).
  auto keeps_its_waiters = [&](size_t g, const Members& trial) {
    if (options.migrate) return true;
    const double latest = latest_free_in(st);
    const auto& cat = plan.catalog(g);
    const auto p = gpu::best_packing(cat, plan.table(g, trial), st.fixed[g]);
    for (size_t i = 0; p && i < trial.size(); ++i) {
      const Member& m = *trial[i];
      if (!m.running &&
          waiting_wins(m, m.remaining_s / std::max(speed_on(m.speeds, cat, p->instance_of[i]), 1e-9), latest))
        return false;
    }
    return true;
  };
  for (const sched::JobView* job : queue) {
    st.considered.push_back(job->id);
    Member m;
    m.job = job;
    m.speeds = speed_of(*job);
    m.remaining_s = remaining_s(*job, view.now, options);
    m.weight = weight_of(*job, m.speeds, options.efficiency_weight);
    st.all.push_back(m);
    const Member* q = &st.all.back();
    size_t best = n;
    double best_gain = 1e-9, best_t = 0;
    for (size_t g = 0; g < n; ++g) {
      Members trial = st.members[g];
      trial.push_back(q);
      const double t = plan.throughput(g, trial, st.fixed[g]);
      if (t - st.base[g] > best_gain && keeps_its_waiters(g, trial)) {
        best = g;
        best_gain = t - st.base[g];
        best_t = t;
      }
    }
    // A GPU that holds jobs (running, or planned on it in this pass) often frees before a job packed on a
    // slice now would have gained: the job waits for the GPU that frees first (one waiter per GPU) when that
    // wait and its time on the whole GPU are shorter than its time on the slice, the summed value it adds
    // (over its weight) counted as its own speed. Counting planned jobs matters when many arrive at once: a
    // sweep submitted in one go would otherwise be packed onto slices all together, its long jobs kept on
    // small slices long after the short ones ended. With moves, the slice is taken now and left for the whole
    // GPU when it frees (a move's cost later): waiting wins only when the GPU frees within about a move's cost
    // (bench/sim --mig, MISO's trace at 5 s a move: 17 % to 18 % below the best static layout, mean of seeds
    // 1-5).
    const double speed = best == n ? 0 : best_gain / q->weight;  // its own, at the summed value it adds
    double on_slice = best == n ? 0 : q->remaining_s / speed;
    size_t soonest = n;
    for (size_t h = 0; h < n; ++h)
      if (!awaited[h] && st.free_in[h] > 0 && (soonest == n || st.free_in[h] < st.free_in[soonest])) soonest = h;
    if (options.migrate && soonest != n && best != n && st.free_in[soonest] < on_slice)
      on_slice = std::min(on_slice, st.free_in[soonest] + move_seconds(options) +
                                        (q->remaining_s - speed * st.free_in[soonest]) / q->speeds[7]);
    if (soonest != n && (best == n || st.free_in[soonest] + q->remaining_s / q->speeds[7] < on_slice)) {
      awaited[soonest] = 1;
      continue;
    }
    if (best == n) continue;
    // Without moves a job packed now keeps its slice to the end: not where even waiting for the GPU that frees
    // last (of those ragmig alone uses) and then running whole would end it sooner (ten trials on two GPUs,
    // both with a job waiting for them, packed a 6,000 s trial onto a 1g for 34,000 s: 1.10x whole GPUs'
    // average JCT). It waits.
    if (!options.migrate && waiting_wins(*q, on_slice, latest_free_in(st))) continue;
    st.members[best].push_back(q);
    st.base[best] = best_t;
    st.free_in[best] = std::max(st.free_in[best], members_end_in(plan, best, st));
  }
}

double move_cost(const Member& m, const RebalanceOptions& options) {
  return m.weight * m.speed_now * move_seconds(options);
}

// How GPU g holds `ms`: their best packing when the running jobs it moves (`moved_here`) win back gain_factor x
// what their moves cost, else running jobs stay where they are and the others join around them while they fit
// (`ms` then lists only those placed).
struct Decision {
  Members ms;
  gpu::Packing packing;
  std::vector<sched::JobId> moved_here;
};
Decision decide(size_t g, const Members& members, const RebalanceOptions& options, Plan& plan, const State& st) {
  const auto& cat = plan.catalog(g);
  const int home = static_cast<int>(g);
  Decision d;
  d.ms = members;
  if (d.ms.empty()) return d;
  std::vector<std::optional<gpu::Placement>> current;
  for (const Member* m : d.ms) current.push_back(m->home == home ? m->at : std::nullopt);
  auto packing = gpu::best_packing(cat, plan.table(g, d.ms), st.fixed[g], current);
  if (packing)
    for (size_t i = 0; i < d.ms.size(); ++i)
      if (d.ms[i]->running && d.ms[i]->home == home && packing->instance_of[i] != *d.ms[i]->at)
        d.moved_here.push_back(d.ms[i]->job->id);
  if (packing && d.moved_here.empty()) {
    d.packing = std::move(*packing);
    return d;
  }
  const Pinned pinned = pinned_plan(plan, g, d.ms, st.fixed[g]);
  if (packing) {
    double horizon = options.max_horizon_s, cost = 0;
    for (size_t i = 0; i < d.ms.size(); ++i) {
      const Member& m = *d.ms[i];
      horizon = std::min(horizon, m.remaining_s / std::max(speed_on(m.speeds, cat, packing->instance_of[i]), 1e-9));
      if (std::find(d.moved_here.begin(), d.moved_here.end(), m.job->id) != d.moved_here.end()) {
        cost += move_cost(m, options);
        // Left in place it ends by then, and the GPU is re-packed at no cost: the move wins only until then.
        horizon = std::min(horizon, m.remaining_s / std::max(m.speed_now, 1e-9));
      }
    }
    if ((packing->throughput - pinned.throughput) * horizon > options.gain_factor * cost) {
      d.packing = std::move(*packing);
      return d;
    }
  }
  // Running jobs stay where they are; the others join around them while they fit.
  d.moved_here.clear();
  d.ms.clear();
  for (const Member* m : members)
    if (m->running && m->home == home) {
      d.ms.push_back(m);
      d.packing.instance_of.push_back(*m->at);
    }
  for (size_t i = 0; i < pinned.joined.size(); ++i) {
    d.ms.push_back(pinned.joined[i]);
    d.packing.instance_of.push_back(pinned.packing.instance_of[i]);
  }
  return d;
}

// 3. A running job moves to another GPU (an idle one, or one with room) when the summed value gained there and
// where it leaves, over the time it would run there, wins back gain_factor x what the move costs, its new GPU's
// own moves included — the one that gains most first, while one pays. Candidates are ranked by the plan's
// memoised throughputs; the first is checked against the decision the new GPU's change will make (decide), so
// that a job is never stopped for a place it would not get. Moving to where neighbours ended, not only to idle
// GPUs: bench/sim --mig (a) at 5 s a move, 16 % -> 20 % below the best static layout on seed 1, every one of
// seeds 1-5 better; alone it lengthened a sweep's tail ((b) seeds 1-10 mean makespan 1.101x -> 1.121x the
// bound), which the weight for a batch's end (running_jobs) more than wins back (1.086x).
void move_between_gpus(const RebalanceOptions& options, Plan& plan, State& st) {
  const size_t n = st.members.size();
  struct Candidate {
    double score;
    size_t from, to;
    const Member* m;
    double rest;  ///< the summed value of `from` without it
  };
  for (size_t round = 0; round < n; ++round) {
    std::vector<Candidate> candidates;
    for (size_t g = 0; g < n; ++g) {
      if (st.members[g].size() < 2) continue;  // a job alone on its GPU has it all
      for (const Member* m : st.members[g]) {
        if (!m->running || m->home != static_cast<int>(g)) continue;
        const double t_rest = plan.throughput(g, without(st.members[g], m), st.fixed[g]);
        if (t_rest == kInfeasible) continue;
        for (size_t e = 0; e < n; ++e) {
          if (e == g) continue;
          Members there = st.members[e];
          there.push_back(m);
          const double t_e = plan.throughput(e, there, st.fixed[e]);
          if (t_e == kInfeasible) continue;
          const double gain = t_rest + t_e - st.base[g] - st.base[e];
          if (gain <= 0) continue;
          // Over the time it runs there (its own speed is at least the value it adds, over its weight).
          const double horizon = std::min(m->remaining_s / ((t_e - st.base[e]) / m->weight), options.max_horizon_s);
          if (gain * horizon > options.gain_factor * move_cost(*m, options))
            candidates.push_back({gain * horizon, g, e, m, t_rest});
        }
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    bool moved = false;
    for (const Candidate& c : candidates) {
      // What the new GPU will really do with it (the decision its change will make), and what it costs.
      Members there = st.members[c.to];
      there.push_back(c.m);
      const Decision d = decide(c.to, there, options, plan, st);
      const auto it = std::find(d.ms.begin(), d.ms.end(), c.m);
      if (it == d.ms.end()) continue;
      const auto& cat = plan.catalog(c.to);
      const double speed = speed_on(c.m->speeds, cat, d.packing.instance_of[static_cast<size_t>(it - d.ms.begin())]);
      double cost = move_cost(*c.m, options), now = 0;
      for (size_t i = 0; i < d.ms.size(); ++i) {
        const Member& x = *d.ms[i];
        now += x.weight * speed_on(x.speeds, cat, d.packing.instance_of[i]);
        if (std::find(d.moved_here.begin(), d.moved_here.end(), x.job->id) != d.moved_here.end())
          cost += move_cost(x, options);
      }
      const double gain = c.rest + now - st.base[c.from] - st.base[c.to];
      const double horizon = std::min(c.m->remaining_s / std::max(speed, 1e-9), options.max_horizon_s);
      if (gain * horizon <= options.gain_factor * cost) continue;
      st.members[c.from] = without(st.members[c.from], c.m);
      st.members[c.to] = std::move(there);
      st.base[c.from] = c.rest;
      st.base[c.to] = plan.throughput(c.to, st.members[c.to], st.fixed[c.to]);
      moved = true;
      break;
    }
    if (!moved) break;
  }
}

// 4. GPU g's change: its packing, moves weighed against pinning its running jobs; nullopt when nothing changes.
std::optional<GpuChange> change_for(size_t g, const RebalanceGpu& rg, const RebalanceOptions& options, Plan& plan,
                                    const State& st) {
  const auto& pg = rg.gpu;
  const auto& cat = plan.catalog(g);
  const int home = static_cast<int>(g);
  std::vector<sched::JobId> moved_out;
  for (size_t h = 0; h < st.members.size(); ++h)
    for (const Member* m : st.members[h])
      if (m->running && m->home == home && h != g) moved_out.push_back(m->job->id);

  const Decision d = decide(g, st.members[g], options, plan, st);
  const Members& ms = d.ms;
  const gpu::Packing& packing = d.packing;
  const std::vector<sched::JobId>& moved_here = d.moved_here;

  // The target: fixed instances, the packing's, and idle instances that exist and still fit. A GPU nobody uses
  // or is planned on goes back to one instance of all of it: left in slices it would give the next job that
  // arrives (placed before the next plan sees it) only a slice of it. Without moves that job then keeps the
  // whole GPU until it ends, which costs packing later (bench/sim --mig (a) without moves: makespan 18,162 s
  // against 12,664 s with the slices kept), but kept slices put arrivals of a light load on slices for good
  // (part (d): up to 1.07x whole GPUs' average JCT; 1.00x at most with this).
  gpu::Layout target = st.fixed[g];
  for (const auto& p : packing.instance_of) target.push_back(p);
  if (target.empty())
    for (size_t p = 0; p < cat.profiles.size(); ++p)
      if (!cat.profiles[p].media_extensions() && cat.profiles[p].compute_slices == cat.compute_slices &&
          !cat.profiles[p].starts.empty()) {
        target.push_back({static_cast<int>(p), cat.profiles[p].starts.front()});
        break;
      }
  std::vector<gpu::CurrentInstance> now_instances = pg.state.instances;
  for (auto& inst : now_instances)
    inst.busy = std::find(st.fixed[g].begin(), st.fixed[g].end(), inst.placement) != st.fixed[g].end();
  for (const auto& inst : pg.state.instances)
    if (std::find(target.begin(), target.end(), inst.placement) == target.end() && gpu::can_add(cat, target, inst.placement))
      target.push_back(inst.placement);
  target = gpu::canonical(std::move(target));

  GpuChange change;
  change.gpu = pg.state.index;
  change.target = target;
  change.moved = moved_out;
  change.moved.insert(change.moved.end(), moved_here.begin(), moved_here.end());
  for (size_t i = 0; i < ms.size(); ++i) {
    const bool stays = ms[i]->running && ms[i]->home == home && packing.instance_of[i] == *ms[i]->at;
    if (!stays) change.reserved.emplace_back(ms[i]->job->id, packing.instance_of[i]);
  }
  gpu::Layout before;
  for (const auto& inst : pg.state.instances) before.push_back(inst.placement);
  if (gpu::canonical(before) == target && change.moved.empty() && change.reserved.empty()) return std::nullopt;
  change.steps = gpu::sequence_steps(cat, now_instances, target).size();
  return change;
}

}  // namespace

double move_seconds(const RebalanceOptions& options) {
  return options.checkpoint_s + options.restart_s + 2 * options.mig_step_s;
}

double min_interval(const RebalanceOptions& options) {
  return options.min_interval_s >= 0 ? options.min_interval_s : kIntervalMoves * move_seconds(options);
}

SliceSpeeds power_law_speeds(double exponent) {
  SliceSpeeds s{};
  for (int g = 1; g <= 7; ++g) s[static_cast<size_t>(g)] = std::pow(g / 7.0, exponent);
  return s;
}

std::vector<GpuChange> plan_rebalance(const sched::ClusterView& view, const std::vector<RebalanceGpu>& gpus,
                                      const SpeedOf& speed_of, const RebalanceOptions& options,
                                      const std::vector<sched::JobId>& queue_order,
                                      std::vector<sched::JobId>* waiting) {
  Plan plan(gpus, options.shrink);
  State st = running_jobs(view, gpus, speed_of, options, plan);
  admit_queue(view, speed_of, options, queue_order, plan, st);
  if (options.migrate) move_between_gpus(options, plan, st);
  std::vector<GpuChange> changes;
  for (size_t g = 0; g < gpus.size(); ++g)
    if (auto change = change_for(g, gpus[g], options, plan, st)) changes.push_back(std::move(*change));
  if (waiting) {
    std::vector<sched::JobId> planned;
    for (const auto& c : changes)
      for (const auto& [id, at] : c.reserved) planned.push_back(id);
    std::sort(planned.begin(), planned.end());
    waiting->clear();
    for (sched::JobId id : st.considered)
      if (!std::binary_search(planned.begin(), planned.end(), id)) waiting->push_back(id);
    std::sort(waiting->begin(), waiting->end());
  }
  return changes;
}

}  // namespace ragmig::exec
