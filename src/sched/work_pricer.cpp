// Estimates from counted work at the measured rate (see work_pricer.h).
#include "sched/work_pricer.h"

#include <algorithm>
#include <vector>

namespace ragmig::sched {

void WorkPricer::on_event(JobId id, const JobSpec::Work& work, const nlohmann::json& event, double speed,
                          double attained_s) {
  const JobEvent e = read_job_event(event);
  if (e.kind == "start") {
    on_start(jobs_[id], work, e, attained_s);
    return;
  }
  if (e.kind != "progress" || !e.step || !e.time || !e.batch_size) return;
  Job& job = jobs_[id];
  job.step = *e.step;
  job.batch_size = *e.batch_size;
  job.attained_s = attained_s;
  job.window.add(job.step, *e.time, job.batch_size);
  const auto measured = job.window.rate(work.step_flops, work.batch_size, speed);
  if (!measured) return;
  rates_[id] = {*measured, work.step_flops / static_cast<double>(work.batch_size)};
  std::vector<double> rates;
  rates.reserve(rates_.size());
  for (const auto& [other, m] : rates_) rates.push_back(m.rate);
  rate_ = median_rate(std::move(rates));
  like_rates_.clear();
}

void WorkPricer::on_start(Job& job, const JobSpec::Work& work, const JobEvent& event, double attained_s) {
  job.window.restart();
  // A restart resumes at its checkpoint's step: the steps it did past it before it stopped are to be done again
  // (the work it attained has them), so what is left counts from there now, not from its next progress event.
  if (!event.step) return;
  if (job.step < 0 && *event.step <= 0) return;  // a first start: all of it is left as it is
  job.step = *event.step;
  job.attained_s = attained_s;
  if (event.batch_size && *event.batch_size > 0)
    job.batch_size = *event.batch_size;
  else if (job.batch_size <= 0)
    job.batch_size = work.batch_size;
}

std::optional<double> WorkPricer::like_rate(const JobSpec::Work& work) const {
  if (!rate_ || !(work.step_flops > 0) || work.batch_size <= 0) return rate_;
  const double per_sample = work.step_flops / static_cast<double>(work.batch_size);
  if (const auto known = like_rates_.find(per_sample); known != like_rates_.end()) return known->second;
  std::vector<double> like;
  for (const auto& [id, m] : rates_)
    if (m.per_sample <= 2 * per_sample && per_sample <= 2 * m.per_sample) like.push_back(m.rate);
  const double rate = like.empty() ? *rate_ : *median_rate(std::move(like));
  like_rates_.emplace(per_sample, rate);
  return rate;
}

std::optional<double> WorkPricer::new_estimate(JobId id, const JobSpec::Work& work, double estimate_s,
                                               double unmeasured) const {
  const auto own = rates_.find(id);
  const double rate = own != rates_.end() ? own->second.rate : like_rate(work).value_or(unmeasured);
  if (!(work.flops > 0) || !(rate > 0)) return std::nullopt;
  double priced = work.flops / rate;
  const auto job = jobs_.find(id);
  if (job != jobs_.end() && job->second.step >= 0 && work.steps > 0 && work.batch_size > 0) {
    const Job& j = job->second;
    const double steps_left = static_cast<double>(std::max<int64_t>(0, work.steps - j.step));
    const double per_step = work.step_flops * static_cast<double>(j.batch_size) / static_cast<double>(work.batch_size);
    double evaluations = std::max(0.0, work.flops - static_cast<double>(work.steps) * work.step_flops);
    // Those done are in the seconds attained; one at the latest step may not have run yet.
    if (!work.eval_steps.empty()) {
      const auto left = std::count_if(work.eval_steps.begin(), work.eval_steps.end(),
                                      [&](int64_t at) { return at >= j.step; });
      evaluations *= static_cast<double>(left) / static_cast<double>(work.eval_steps.size());
    }
    priced = j.attained_s + (steps_left * per_step + evaluations) / rate;
  }
  if (estimate_s > 0 && !reprice(estimate_s, priced)) return std::nullopt;
  return priced;
}

}  // namespace ragmig::sched
