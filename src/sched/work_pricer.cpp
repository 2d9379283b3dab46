// Estimates from counted work at the measured rate (see work_pricer.h).
#include "sched/work_pricer.h"

#include <vector>

namespace ragmig::sched {

void WorkPricer::on_event(JobId id, const JobSpec::Work& work, const nlohmann::json& event, double speed) {
  const std::string kind = event.value("event", std::string());
  if (kind == "start") windows_[id].restart();
  if (kind != "progress") return;
  const auto step = event.find("step"), time = event.find("time"), batch = event.find("batch_size");
  if (step == event.end() || !step->is_number_integer() || time == event.end() || !time->is_number() ||
      batch == event.end() || !batch->is_number_integer())
    return;
  ProgressWindow& window = windows_[id];
  window.add(step->get<int64_t>(), time->get<double>(), batch->get<int64_t>());
  const auto measured = window.rate(work.step_flops, work.batch_size, speed);
  if (!measured) return;
  rates_[id] = *measured;
  std::vector<double> rates;
  rates.reserve(rates_.size());
  for (const auto& [job, rate] : rates_) rates.push_back(rate);
  rate_ = median_rate(std::move(rates));
}

std::optional<double> WorkPricer::new_estimate(const JobSpec::Work& work, double estimate_s, double unmeasured) const {
  const double rate = rate_.value_or(unmeasured);
  if (!(work.flops > 0) || !(rate > 0)) return std::nullopt;
  const double priced = work.flops / rate;
  if (estimate_s > 0 && !reprice(estimate_s, priced)) return std::nullopt;
  return priced;
}

}  // namespace ragmig::sched
