// Smoothing is an exponential moving average with weight 1/3 on the newest interval: a slow first window
// (start-up, the first evaluation) fades within a few events.
#include "monitor/job_watch.h"

#include <cmath>

namespace ragmig::monitor {
namespace {

double smooth(double previous, double sample) { return previous > 0 ? previous + (sample - previous) / 3.0 : sample; }

std::optional<double> number(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  if (it == event.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A step count: a number that is whole and fits int64 (a writer's 1e20 or 2.5 is not one, and is ignored).
std::optional<int64_t> count(const nlohmann::json& event, const char* key) {
  const auto n = number(event, key);
  if (!n || *n != std::floor(*n) || std::abs(*n) >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(*n);
}

}  // namespace

void fold_event(JobWatch& w, const nlohmann::json& event, double received_at) {
  if (!event.is_object()) return;
  const auto kind_it = event.find("event");
  if (kind_it == event.end() || !kind_it->is_string()) return;
  const std::string kind = kind_it->get<std::string>();
  const double at = number(event, "time").value_or(received_at);
  const auto step = count(event, "step");

  if (kind == "start") {
    w.attempt_started_at = w.last_progress_at = at;
    w.progress_events = 0;
    w.lowest_loss = std::numeric_limits<double>::infinity();
    w.loss_not_finite = false;
    w.loss_text.clear();
    w.loss.reset();
    w.message.clear();
    w.finished_at = 0;
    if (step) w.step = *step;
    const auto config = event.find("config");
    if (config != event.end() && config->is_object()) {
      const auto train = config->find("train");
      if (train != config->end() && train->is_object())
        if (const auto max = count(*train, "max_steps")) w.max_steps = *max;
    }
  } else if (kind == "progress") {
    if (step) {
      const double dt = at - w.last_progress_at;
      const double steps = static_cast<double>(*step) - static_cast<double>(w.step);
      // The first event of an attempt measures start-up too; only later intervals count as usual.
      if (w.progress_events > 0 && dt > 0) {
        w.progress_interval_s = smooth(w.progress_interval_s, dt);
        if (steps > 0) w.step_time_s = smooth(w.step_time_s, dt / steps);
      } else if (w.step_time_s == 0 && dt > 0 && steps > 0) {
        w.step_time_s = dt / steps;
      }
      w.step = *step;
    }
    w.last_progress_at = at;
    ++w.progress_events;
    if (const auto message = event.find("message"); message != event.end() && message->is_string())
      w.message = message->get<std::string>();
    if (const auto loss = number(event, "loss")) {
      w.loss = *loss;
      if (!std::isfinite(*loss)) {
        w.loss_not_finite = true;
        w.loss_text = std::isnan(*loss) ? "nan" : "inf";
      } else {
        w.lowest_loss = std::min(w.lowest_loss, *loss);
      }
    } else if (const auto it = event.find("loss"); it != event.end() && !it->is_number()) {
      w.loss_not_finite = true;  // JSON has no NaN: a writer puts null or a string there
      w.loss_text = it->is_string() ? it->get<std::string>() : "null";
    }
    if (const auto sps = number(event, "samples_per_s")) w.samples_per_s = *sps;
    if (const auto rss = number(event, "rss_mb")) w.rss_mb = *rss;
  } else if (kind == "diverged") {
    w.loss_not_finite = true;
    const auto it = event.find("loss");
    w.loss_text = it == event.end() ? "nan" : it->is_string() ? it->get<std::string>() : it->dump();
    if (step) w.step = *step;
  } else if (kind == "checkpoint") {
    if (step) w.checkpoint_step = *step;
    w.checkpoint_at = at;
  } else if (kind == "oom") {
    w.oom_at = at;
    const auto it = event.find("error");
    w.oom_detail = it != event.end() && it->is_string() ? it->get<std::string>() : "out of memory";
  } else if (kind == "done") {
    if (step) w.step = *step;
    w.finished_at = at;
  }
}

void fold_attempt_end(JobWatch& w, const std::string& outcome, int64_t exit_code, int64_t signal, double at) {
  (void)exit_code;
  w.last_progress_at = 0;
  w.progress_events = 0;
  if (outcome == "preempted") ++w.preemptions;
  if (outcome == "failed" || outcome == "lost") w.failures_at.push_back(at);
  if (outcome == "failed" && signal == 9 && w.oom_at < w.attempt_started_at) {
    w.oom_at = at;
    w.oom_detail = "killed by SIGKILL, not by ragmig: most likely the kernel's out-of-memory killer";
  }
}

std::optional<double> eta_seconds(const JobWatch& w) {
  if (w.max_steps <= 0 || w.step_time_s <= 0 || w.step < 0) return std::nullopt;
  return std::max<double>(0.0, static_cast<double>(w.max_steps - w.step)) * w.step_time_s;
}

}  // namespace ragmig::monitor
