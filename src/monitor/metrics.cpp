#include "monitor/metrics.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace ragmig::monitor {
namespace {

bool valid_name(const std::string& name, bool metric) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Go's strconv.FormatFloat('g') as Prometheus writes samples: +Inf, -Inf, NaN, shortest round-trip digits.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string label_text(const Labels& labels, const std::string& extra_name = "", const std::string& extra_value = "") {
  std::string out;
  auto add = [&](const std::string& k, const std::string& v) {
    out += (out.empty() ? "{" : ",") + k + "=\"" + escape_label_value(v) + "\"";
  };
  for (const auto& [k, v] : labels) add(k, v);
  if (!extra_name.empty()) add(extra_name, extra_value);
  return out.empty() ? out : out + "}";
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end())) throw std::invalid_argument("histogram bounds must ascend");
}

void Histogram::observe(double v) {
  const size_t bucket = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[bucket];
  sum_ += v;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  s.count = running;
  s.sum = sum_;
  return s;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(start * std::pow(factor, i));
  return out;
}

Registry::Family& Registry::family(const std::string& name, Type type, const std::string& help, const Labels& labels) {
  if (!valid_name(name, true)) throw std::invalid_argument("invalid metric name \"" + name + "\"");
  for (const auto& [k, v] : labels)
    if (!valid_name(k, false) || k.rfind("__", 0) == 0 || k == "le") throw std::invalid_argument("invalid label name \"" + k + "\"");
  auto [it, added] = families_.try_emplace(name, Family{type, help, {}, {}, {}, {}});
  if (!added && it->second.type != type) throw std::invalid_argument("metric \"" + name + "\" has another type");
  return it->second;
}

Counter& Registry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = family(name, Type::Counter, help, labels).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = family(name, Type::Gauge, help, labels).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::histogram(const std::string& name, const std::string& help, const std::vector<double>& bounds,
                               const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = family(name, Type::Histogram, help, labels);
  if (f.histograms.empty()) f.bounds = bounds;
  auto& slot = f.histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(f.bounds);
  return *slot;
}

std::string Registry::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.type == Type::Counter ? "counter" : f.type == Type::Gauge ? "gauge" : "histogram";
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(f.help), name, type);
    for (const auto& [labels, c] : f.counters) out += name + label_text(labels) + " " + number(c->value()) + "\n";
    for (const auto& [labels, g] : f.gauges) out += name + label_text(labels) + " " + number(g->value()) + "\n";
    for (const auto& [labels, h] : f.histograms) {
      const auto s = h->snapshot();
      for (size_t i = 0; i < s.bounds.size(); ++i)
        out += name + "_bucket" + label_text(labels, "le", number(s.bounds[i])) + " " + std::to_string(s.cumulative[i]) + "\n";
      out += name + "_bucket" + label_text(labels, "le", "+Inf") + " " + std::to_string(s.count) + "\n";
      out += name + "_sum" + label_text(labels) + " " + number(s.sum) + "\n";
      out += name + "_count" + label_text(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace ragmig::monitor
