// Counters, gauges and histograms with labels, rendered in Prometheus' text exposition format (version 0.0.4),
// the format every Prometheus server, Grafana agent and prometheus-client parser reads. Thread-safe: request
// threads update them while /metrics renders. Metrics live as long as their Registry; references stay valid.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ragmig::monitor {

/// Label names and values, e.g. {{"endpoint", "/embed"}, {"code", "200"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void inc(double by = 1.0) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  /// `bounds`: the buckets' upper bounds, ascending; +Inf is added.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  ///< per bound, then +Inf (= count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), the last one +Inf
  double sum_ = 0;
};

/// `count` bounds from `start`, each `factor` times the previous (Prometheus' ExponentialBuckets).
std::vector<double> exponential_buckets(double start, double factor, int count);

class Registry {
 public:
  /// The metric `name` with `labels`, created on first use. Throws std::invalid_argument if `name` was
  /// registered as another type or is not a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), or a label name is
  /// invalid; a histogram's bounds are those of its first registration.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, const std::vector<double>& bounds,
                       const Labels& labels = {});

  /// Every metric in the text format: # HELP and # TYPE per family, families by name, series by labels.
  std::string render() const;

 private:
  enum class Type { Counter, Gauge, Histogram };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> bounds;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family& family(const std::string& name, Type type, const std::string& help, const Labels& labels);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

/// A label value escaped for the text format (backslash, double quote, line feed).
std::string escape_label_value(const std::string& value);

}  // namespace ragmig::monitor
