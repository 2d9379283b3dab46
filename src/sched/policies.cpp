// The registered policies. Each is a ranking of the active jobs plus a rule for whom it may preempt;
// place_in_order (placement.cpp) turns that into decisions, so placement is the same for all of them.
// Ties always break by submission time and then id, so the same view gives the same decisions.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include "core/error.h"
#include "core/strings.h"
#include "sched/dynamic_batch.h"
#include "sched/placement.h"
#include "sched/policy.h"

namespace ragmig::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Parameters of one policy, read from its spec with defaults from the catalog.
class Params {
 public:
  Params(const PolicySpec& spec, const PolicyInfo& info) {
    for (const auto& p : info.params) values_[p.name] = p.default_value;
    for (const auto& [key, value] : spec.params) {
      if (!values_.count(key)) {
        std::string known;
        for (const auto& p : info.params) known += (known.empty() ? "" : ", ") + p.name;
        throw ConfigError(fmt::format("policy '{}': unknown parameter '{}' ({})", to_string(spec), key,
                                      known.empty() ? "it takes none" : "known: " + known));
      }
      values_[key] = value;
    }
    spec_ = to_string(spec);
  }

  double number(const std::string& key, double min) const {
    const std::string& text = values_.at(key);
    if (const auto value = finite_number(text, min)) return *value;
    throw ConfigError(fmt::format("policy '{}': {} must be a number >= {}, got '{}'", spec_, key, min, text));
  }

  std::vector<double> numbers(const std::string& key) const {  // "a:b:c", increasing
    std::vector<double> out;
    const std::string& text = values_.at(key);
    size_t start = 0;
    while (start <= text.size()) {
      const size_t end = std::min(text.find(':', start), text.size());
      const auto value = finite_number(std::string_view(text).substr(start, end - start));
      if (!value || !(*value > 0) || (!out.empty() && *value <= out.back()))
        throw ConfigError(fmt::format("policy '{}': {} must be increasing positive numbers separated by ':', got '{}'",
                                      spec_, key, text));
      out.push_back(*value);
      start = end + 1;
    }
    return out;
  }

 private:
  std::map<std::string, std::string> values_;
  std::string spec_;
};

// Which of the view's jobs a ranking lists: placement needs the running ones only to choose victims. On a full
// cluster nothing starts unless someone is preempted: there a ranking lists every job where some queued job may
// preempt, and none where nobody may (its may_preempt null), which a policy finds out without a sort.
enum class Ranked { Queued, All, AllIfPreempting };

// Each job's `key` by its place in view.jobs, computed once a pass: the ranking sorts by them and may_preempt,
// which placement asks about many pairs of jobs, compares them.
template <typename Key>
auto keys_of(const ClusterView& view, Key key) {
  std::vector<std::decay_t<std::invoke_result_t<Key, const JobView&>>> keys;
  keys.reserve(view.jobs.size());
  for (const auto& j : view.jobs) keys.push_back(key(j));
  return keys;
}

size_t place_of(const ClusterView& view, const JobView& j) {
  const auto place = static_cast<size_t>(&j - view.jobs.data());
  RAGMIG_CHECK(place < view.jobs.size(), "a job that is not the view's own");
  return place;
}

// Sorts pointers to the view's jobs (all, or the queued ones) by `key` (smaller first), then submission
// time, then id. Each job's key is computed once, not at every comparison; (key, submitted_at, id) orders
// all jobs, so the sort need not be stable, and the queued jobs' order is the same in both rankings.
// Ranked::AllIfPreempting lists nothing here: a ranking that finds some queued job may preempt asks for All
// instead (listed_as).
template <typename Key>
std::vector<const JobView*> rank_by(const ClusterView& view, Ranked which, Key key) {
  if (which == Ranked::AllIfPreempting) return {};
  using K = std::decay_t<std::invoke_result_t<Key, const JobView&>>;
  std::vector<std::pair<K, const JobView*>> keyed;
  keyed.reserve(view.jobs.size());
  const auto before = [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    const JobView &a = *x.second, &b = *y.second;
    if (a.submitted_at != b.submitted_at) return a.submitted_at < b.submitted_at;
    return a.id < b.id;
  };
  // The view is in id (so mostly submission) order: under fifo it is often sorted already. Whether it is, is
  // seen as the keys are taken, while each job is at hand (a second walk would read every job again).
  bool sorted = true;
  for (const auto& j : view.jobs) {
    if (which != Ranked::All && j.running()) continue;
    keyed.emplace_back(key(j), &j);
    sorted = sorted && (keyed.size() < 2 || !before(keyed.back(), keyed[keyed.size() - 2]));
  }
  if (!sorted) std::sort(keyed.begin(), keyed.end(), before);
  std::vector<const JobView*> ranked;
  ranked.reserve(keyed.size());
  for (const auto& [k, j] : keyed) ranked.push_back(j);
  return ranked;
}

// What a ranking lists, once it knows whether some queued job may preempt.
Ranked listed_as(Ranked which, bool preempting) {
  return which == Ranked::AllIfPreempting && preempting ? Ranked::All : which;
}

double ran_for(const JobView& j, double now) { return now - j.started_at; }

// A running job placement could preempt: not stopping already, and run min_run.
bool preemptible(const JobView& j, double now, double min_run) {
  return j.running() && !j.stopping && ran_for(j, now) >= min_run;
}

// Whether some queued job's `key` is below that of a preemptible running job. Where none is, no pair qualifies:
// the ranking's may_preempt is null, and placement asks about no pair (with a long queue and a full cluster, that
// is what a pass of a preemptive policy would spend its time on).
template <typename Key>
bool some_queued_below(const ClusterView& view, Key key, double min_run) {
  using K = std::decay_t<std::invoke_result_t<Key, const JobView&>>;
  std::optional<K> lowest_queued, highest_victim;
  for (const auto& j : view.jobs) {
    const bool victim = preemptible(j, view.now, min_run);
    if (!victim && j.running()) continue;
    auto& bound = victim ? highest_victim : lowest_queued;
    const K k = key(j);
    if (!bound || (victim ? *bound < k : k < *bound)) bound = k;
  }
  return lowest_queued && highest_victim && *lowest_queued < *highest_victim;
}

// Whether some queued job has both a higher priority and a smaller `key` than a preemptible running job (which
// implies some_queued_below): the victims sorted by priority, each queued job looks for a larger key among those
// below its priority (O(n log n); on a crowded cluster most running jobs waited long enough to outrank the queued
// ones of higher priority, and passes where none qualify need no ranking of every job).
template <typename Key>
bool some_queued_outranks(const ClusterView& view, Key key, double min_run) {
  std::vector<std::pair<int64_t, double>> victims;  // (priority, key), then the largest key at or below each
  for (const auto& j : view.jobs)
    if (preemptible(j, view.now, min_run)) victims.emplace_back(j.priority, key(j));
  if (victims.empty()) return false;
  std::sort(victims.begin(), victims.end());
  for (size_t i = 1; i < victims.size(); ++i) victims[i].second = std::max(victims[i].second, victims[i - 1].second);
  // The largest key below a priority, looked up once for a run of queued jobs of that priority (a queue has few
  // priorities), and not at all for one no victim is below.
  std::optional<int64_t> looked_up;
  double largest_below = -kInf;
  for (const auto& j : view.jobs) {
    if (j.running() || j.priority <= victims.front().first) continue;
    if (looked_up != j.priority) {
      const auto below = std::lower_bound(victims.begin(), victims.end(), std::pair{j.priority, -kInf});
      largest_below = std::prev(below)->second;
      looked_up = j.priority;
    }
    if (largest_below > key(j)) return true;
  }
  return false;
}

// Ranks by `key`: a queued job may preempt a running one of a larger key that has run min_run and, with
// `higher_priority`, a lower priority as submitted. Keys are computed once, for the ranking and both checks.
template <typename Key>
Ranking rank_preempting_by(const ClusterView& view, Ranked which, Key key, double min_run, bool higher_priority) {
  auto keys = keys_of(view, key);
  const auto key_at = [&](const JobView& j) { return keys[place_of(view, j)]; };
  const bool preempting =
      higher_priority ? some_queued_outranks(view, key_at, min_run) : some_queued_below(view, key_at, min_run);
  Ranking ranking{rank_by(view, listed_as(which, preempting), key_at), nullptr};
  if (preempting)
    ranking.may_preempt = [&view, keys = std::move(keys), min_run, higher_priority](const JobView& want,
                                                                                    const JobView& victim) {
      return (!higher_priority || want.priority > victim.priority) &&
             keys[place_of(view, want)] < keys[place_of(view, victim)] && ran_for(victim, view.now) >= min_run;
    };
  return ranking;
}

// Every policy places queued jobs (and preempts only for them): with none waiting there is nothing to decide,
// and the ranking need not be built.
// Without preemption nothing can start while every slot is held by a running job that is not stopping.
bool every_slot_kept(const ClusterView& view) {
  // Running jobs are the older ones, so in the view's id order a full cluster is seen before the queue is read.
  size_t kept = 0;
  for (const auto& j : view.jobs)
    if (!j.stopping && (kept += j.slots.size()) >= view.slots.size()) return true;
  return view.slots.empty();
}

bool nothing_waits(const ClusterView& view) {
  return std::all_of(view.jobs.begin(), view.jobs.end(), [](const JobView& j) { return j.running(); });
}

double remaining(const JobView& j, double now) {
  return j.estimate_s > 0 ? std::max(0.0, j.estimate_s - j.work_s(now)) : kInf;
}

Ranking fifo(const ClusterView& view, Ranked which) {
  return {rank_by(view, which, [](const JobView&) { return 0; }), nullptr};
}

// Priority with aging: every hour queued adds `aging` to a job's priority, so a low-priority job waits
// at most (difference in priority) / aging hours for any newer job. Preemptive when preempt=1: a queued job
// preempts a running one of a lower priority as submitted (and a lower effective one). Aging orders the queue but
// never preempts (as in Slurm and Kubernetes): a running job's wait stands still while a queued one's grows, so
// equals would take turns every min_run, each turn a checkpoint and a restart (850,007 preemptions for 10,000
// jobs of Philly's trace on 400 V100s, 2.3x the average JCT). Only a higher priority preempts: no cycles.
Ranking priority(const ClusterView& view, Ranked which, double aging, bool preempt, double min_run) {
  const auto less_effective = [aging, now = view.now](const JobView& j) {
    return -(static_cast<double>(j.priority) + aging * j.waited_s(now) / 3600.0);
  };
  if (!preempt) return {rank_by(view, which, less_effective), nullptr};
  return rank_preempting_by(view, which, less_effective, min_run, /*higher_priority=*/true);
}

// Round-robin: a running job keeps its slots for `quantum` seconds, then yields them to the job that has
// waited longest. Running jobs inside their quantum rank first, then queued jobs by how long they have
// been waiting, then running jobs whose quantum is used up (who keep running when nobody waits).
Ranking round_robin(const ClusterView& view, Ranked which, double quantum) {
  auto key = [&](const JobView& j) -> std::pair<int, double> {
    if (!j.running()) return {1, j.queued_since};
    return {ran_for(j, view.now) < quantum ? 0 : 2, j.started_at};
  };
  // Some queued job may preempt where one waits and one's time is up.
  const bool preempting = some_queued_below(view, [](const JobView& j) { return j.running(); }, quantum);
  Ranking ranking{rank_by(view, listed_as(which, preempting), key), nullptr};
  if (preempting)
    ranking.may_preempt = [&view, quantum](const JobView&, const JobView& victim) {
      return ran_for(victim, view.now) >= quantum;
    };
  return ranking;
}

Ranking sjf(const ClusterView& view, Ranked which) {
  return {rank_by(view, which, [](const JobView& j) { return j.estimate_s > 0 ? j.estimate_s : kInf; }), nullptr};
}

// Longest processing time first (Graham's LPT): a batch submitted at once ends sooner when its long jobs start
// first and the short ones fill in around them; jobs without an estimate come last.
Ranking ljf(const ClusterView& view, Ranked which) {
  return {rank_by(view, which, [](const JobView& j) { return j.estimate_s > 0 ? -j.estimate_s : kInf; }), nullptr};
}

Ranking srtf(const ClusterView& view, Ranked which, double min_run) {
  return rank_preempting_by(
      view, which, [now = view.now](const JobView& j) { return remaining(j, now); }, min_run, false);
}

// Tiresias' discretised least-attained-service: queue k holds jobs whose attained service (slot-seconds)
// has passed k thresholds; lower queues first, FIFO inside a queue; only a lower queue preempts.
Ranking las(const ClusterView& view, Ranked which, const std::vector<double>& thresholds, double min_run) {
  auto queue = [&thresholds, now = view.now](const JobView& j) {
    return static_cast<int>(std::upper_bound(thresholds.begin(), thresholds.end(), j.service_s(now)) -
                            thresholds.begin());
  };
  return rank_preempting_by(view, which, queue, min_run, false);
}

}  // namespace

const std::vector<PolicyInfo>& policy_catalog() {
  static const std::vector<PolicyInfo> catalog = {
      {"fifo", "first come, first served; later jobs fill slots the first cannot use (backfilling)", {}},
      {"priority",
       "highest priority first; waiting raises a job's priority (aging) so nothing starves",
       {{"aging", "1", "priority points gained per hour queued"},
        {"preempt", "0",
         "1: a queued job preempts running jobs of lower priority (aging orders the queue, never preempts)"},
        {"min_run", "60", "seconds a job runs before it may be preempted"}}},
      {"rr", "round-robin time slices through preemption", {{"quantum", "300", "seconds per slice"}}},
      {"sjf", "shortest job (estimate_s) first, not preemptive", {}},
      {"ljf", "longest job (estimate_s) first, not preemptive: a batch's makespan (LPT)", {}},
      {"srtf",
       "shortest remaining time (estimate_s minus work done) first, preemptive",
       {{"min_run", "60", "seconds a job runs before it may be preempted"}}},
      {"las",
       "least attained service (Tiresias): queues by slot-seconds received, lower queues preempt higher",
       {{"thresholds", "3600:36000", "slot-seconds at which a job moves to the next queue"},
        {"min_run", "60", "seconds a job runs before it may be preempted"}}},
  };
  return catalog;
}

Policy make_policy(const std::string& text) {
  PolicySpec spec = parse_policy_spec(text);
  const auto& catalog = policy_catalog();
  const auto info = std::find_if(catalog.begin(), catalog.end(), [&](const PolicyInfo& p) { return p.name == spec.name; });
  if (info == catalog.end()) {
    std::string known;
    for (const auto& p : catalog) known += (known.empty() ? "" : ", ") + p.name;
    throw ConfigError(fmt::format("unknown policy '{}' (known: {})", spec.name, known));
  }
  const Params params(spec, *info);
  std::function<Ranking(const ClusterView&, Ranked)> ranking;
  if (spec.name == "fifo") {
    ranking = fifo;
  } else if (spec.name == "priority") {
    const double aging = params.number("aging", 0);
    const double preempt = params.number("preempt", 0);
    if (preempt != 0 && preempt != 1) throw ConfigError("policy '" + text + "': preempt must be 0 or 1");
    const double min_run = params.number("min_run", 0);
    ranking = [=](const ClusterView& v, Ranked w) { return priority(v, w, aging, preempt == 1, min_run); };
  } else if (spec.name == "rr") {
    const double quantum = params.number("quantum", 0);
    ranking = [=](const ClusterView& v, Ranked w) { return round_robin(v, w, quantum); };
  } else if (spec.name == "sjf") {
    ranking = sjf;
  } else if (spec.name == "ljf") {
    ranking = ljf;
  } else if (spec.name == "srtf") {
    const double min_run = params.number("min_run", 0);
    ranking = [=](const ClusterView& v, Ranked w) { return srtf(v, w, min_run); };
  } else {
    RAGMIG_CHECK(spec.name == "las");
    const auto thresholds = params.numbers("thresholds");
    const double min_run = params.number("min_run", 0);
    ranking = [=](const ClusterView& v, Ranked w) { return las(v, w, thresholds, min_run); };
  }
  const bool preemptive = spec.name == "rr" || spec.name == "srtf" || spec.name == "las" ||
                          (spec.name == "priority" && params.number("preempt", 0) == 1);
  Policy policy{spec, nullptr, nullptr, nullptr, preemptive};
  policy.decide = [ranking, preemptive](const ClusterView& v) {
    if (nothing_waits(v)) return Decisions{};  // most passes end here
    // With every slot kept, nothing starts unless somebody is preempted.
    if (every_slot_kept(v)) {
      if (!preemptive) return Decisions{};
      const Ranking all = ranking(v, Ranked::AllIfPreempting);
      return all.may_preempt ? place_in_order(v, all) : Decisions{};
    }
    // Running jobs matter to placement only as victims, and ranking them is most of a pass's work (a sort
    // of every job): place the queued jobs alone first. That gives the same decisions as the whole ranking
    // unless some queued job may preempt (may_preempt is not null) and one is left that only preemption could
    // place.
    const Ranking queued = ranking(v, Ranked::Queued);
    size_t unplaced = 0;
    Decisions decisions = place_in_order(v, queued, queued.may_preempt ? &unplaced : nullptr);
    if (!queued.may_preempt || unplaced == 0) return decisions;
    return place_in_order(v, ranking(v, Ranked::All));
  };
  policy.rank = [ranking](const ClusterView& v) { return ranking(v, Ranked::All); };
  policy.queue_order = [ranking](const ClusterView& v) {
    std::vector<JobId> order;
    for (const JobView* j : ranking(v, Ranked::Queued).ranked) order.push_back(j->id);
    return order;
  };
  if (spec.dynamic_batch)
    policy.decide = [order = policy.queue_order, decide = std::move(policy.decide)](const ClusterView& v) {
      Decisions decisions = decide(v);
      // A view with no resizable job (a trace's) needs no queue order: that is a ranking of the queue a pass.
      if (std::none_of(v.jobs.begin(), v.jobs.end(), resizable)) return decisions;
      return add_dynamic_batch(v, std::move(decisions), order(v));
    };
  return policy;
}

PolicySpec parse_policy_spec(const std::string& full) {
  auto bad = [&](const std::string& why) {
    return ConfigError(fmt::format("policy '{}': {} (expected name or name(key=value,...), then +dynbatch or nothing)",
                                   full, why));
  };
  PolicySpec spec;
  std::string text = full;
  if (const size_t plus = text.find('+'); plus != std::string::npos) {
    if (text.substr(plus) != kDynamicBatchSuffix) throw bad("unknown '" + text.substr(plus) + "'");
    spec.dynamic_batch = true;
    text.resize(plus);
  }
  const size_t open = text.find('(');
  spec.name = text.substr(0, open);
  auto is_word = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  if (!is_word(spec.name)) throw bad("bad name");
  if (open == std::string::npos) return spec;
  if (text.back() != ')') throw bad("missing ')'");
  const std::string inside = text.substr(open + 1, text.size() - open - 2);
  size_t start = 0;
  while (start <= inside.size()) {
    const size_t end = std::min(inside.find(',', start), inside.size());
    const std::string item = inside.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw bad("parameter '" + item + "' has no '='");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (!is_word(key)) throw bad("bad parameter name '" + key + "'");
    if (value.empty() || value.find_first_of("(),= ") != std::string::npos) throw bad("bad value for '" + key + "'");
    for (const auto& [k, v] : spec.params)
      if (k == key) throw bad("parameter '" + key + "' given twice");
    spec.params.emplace_back(key, value);
    start = end + 1;
  }
  return spec;
}

std::string to_string(const PolicySpec& spec) {
  std::string out = spec.name;
  if (!spec.params.empty()) {
    out += "(";
    for (size_t i = 0; i < spec.params.size(); ++i)
      out += (i ? "," : "") + spec.params[i].first + "=" + spec.params[i].second;
    out += ")";
  }
  return spec.dynamic_batch ? out + kDynamicBatchSuffix : out;
}

}  // namespace ragmig::sched
