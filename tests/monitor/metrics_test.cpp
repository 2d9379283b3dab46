// The text exposition format as Prometheus reads it: HELP and TYPE lines, labels escaped, histograms with
// cumulative buckets, +Inf, _sum and _count; registration rules; concurrent updates.
#include "monitor/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace ragmig::monitor {
namespace {

TEST(Metrics, RendersCountersGaugesAndLabelsInTheTextFormat) {
  Registry r;
  r.counter("requests_total", "Requests answered", {{"code", "200"}}).inc();
  r.counter("requests_total", "Requests answered", {{"code", "200"}}).inc(2);
  r.counter("requests_total", "Requests answered", {{"code", "503"}}).inc();
  r.gauge("queue_depth", "Texts queued").set(7.5);
  const std::string text = r.render();
  EXPECT_EQ(text,
            "# HELP queue_depth Texts queued\n# TYPE queue_depth gauge\nqueue_depth 7.5\n"
            "# HELP requests_total Requests answered\n# TYPE requests_total counter\n"
            "requests_total{code=\"200\"} 3\nrequests_total{code=\"503\"} 1\n");
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry r;
  auto& h = r.histogram("latency_seconds", "Latency", {0.1, 1, 10}, {{"endpoint", "/embed"}});
  for (double v : {0.05, 0.1, 0.5, 3.0, 30.0}) h.observe(v);
  const std::string text = r.render();
  EXPECT_NE(text.find("latency_seconds_bucket{endpoint=\"/embed\",le=\"0.1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{endpoint=\"/embed\",le=\"1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{endpoint=\"/embed\",le=\"10\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{endpoint=\"/embed\",le=\"+Inf\"} 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_sum{endpoint=\"/embed\"} 33.65\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_count{endpoint=\"/embed\"} 5\n"), std::string::npos) << text;
  EXPECT_EQ(exponential_buckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
}

TEST(Metrics, LabelValuesAreEscapedAndBadNamesRefused) {
  Registry r;
  r.counter("x_total", "help with \\ and\nnewline", {{"path", "a\"b\\c\nd"}}).inc();
  const std::string text = r.render();
  EXPECT_NE(text.find(R"(x_total{path="a\"b\\c\nd"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(# HELP x_total help with \\ and\nnewline)"), std::string::npos) << text;
  EXPECT_THROW(r.gauge("x_total", "now a gauge"), std::invalid_argument);
  EXPECT_THROW(r.counter("1bad", "digit first"), std::invalid_argument);
  EXPECT_THROW(r.counter("ok_total", "", {{"bad-label", "v"}}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h", "", {1}, {{"le", "v"}}), std::invalid_argument);
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  Registry r;
  auto& c = r.counter("c_total", "");
  auto& h = r.histogram("h", "", {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(0.5);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000);
  EXPECT_EQ(h.snapshot().count, 40000u);
}

}  // namespace
}  // namespace ragmig::monitor
