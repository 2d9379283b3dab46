// bench_monitor: what monitoring costs the scheduler loop. The real Scheduler on a real SQLite store with
// 1,000 queued jobs and 16 busy slots, stepped pass after pass: once bare, once with the monitor listening and
// sampling as `ragmig run` does (every [alerts] interval_s of the scheduler's clock, which advances by the
// default tick of 0.5 s per pass), and once sampling after every pass (the worst case). The store lives on
// tmpfs so that the disk's sync times do not hide the monitor's CPU cost. Prints the loop's mean time per
// pass and its ratio to the bare run of the same round (median over 15 rounds, and their range), and what a
// scrape of /metrics costs (on the server's thread, not the loop's).
#include <fmt/format.h>
#include <stdlib.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "monitor/monitor.h"
#include "sched/scheduler.h"

using namespace ragmig;
using namespace ragmig::sched;

namespace {

// Starts nothing real: every job it is given keeps running, reports a little utilisation and, every few
// passes, a progress event, so that the monitor folds events as it would for live workers.
class BusyExecutor : public Executor {
 public:
  int64_t start(const Launch& launch) override {
    running_.push_back(launch);
    return 0;
  }
  void stop(JobId, double) override {}
  ExecUpdate poll(double now) override {
    ExecUpdate u;
    ++polls_;
    for (const auto& l : running_) {
      u.usage.push_back({l.job, 0.9});
      if (polls_ % 4 == 0)
        u.events.push_back({l.job, l.attempt_id,
                            {fmt::format(R"({{"event":"progress","step":{},"loss":1.5,"samples_per_s":40,"time":{}}})",
                                         polls_, now)},
                            static_cast<int64_t>(polls_) * 100});
    }
    return u;
  }
  std::optional<ExitStatus> reattach(const Launch&, int64_t) override { return std::nullopt; }
  double next_event_time(double now) override { return now + 1e9; }

 private:
  std::vector<Launch> running_;
  int64_t polls_ = 0;
};

class SteppedClock : public Clock {
 public:
  double now() override { return t_; }
  void wait_until(double t) override { t_ = std::max(t_, t); }
  void advance(double s) { t_ += s; }

 private:
  double t_ = 1.8e9;
};

struct Result {
  double mean_ms = 0;    ///< the loop's time per pass, periodic work (status rows, events, samples) included
  double median_ms = 0;  ///< a typical pass
  double render_ms = 0;
  size_t render_bytes = 0;
};

// mode 0: bare; 1: monitor with its default interval; 2: monitor sampling every pass.
Result run(int mode, int passes) {
  char tmpl[] = "/dev/shm/bench-monitor-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  Result result;
  {
    Store store(dir);
    BusyExecutor executor;
    SteppedClock clock;
    std::vector<Slot> slots;
    for (int i = 0; i < 16; ++i) {
      Slot slot;
      slot.id = "cpu:" + std::to_string(i);
      slots.push_back(slot);
    }
    SchedulerOptions options;
    Scheduler scheduler(store, executor, clock, slots, options);
    JobSpec spec;
    spec.argv = {"true"};
    for (int i = 0; i < 1016; ++i) {
      spec.name = "job" + std::to_string(i);
      scheduler.submit(spec);
    }
    scheduler.recover();
    monitor::AlertThresholds thresholds;
    if (mode == 2) thresholds.interval_s = 0;
    monitor::Monitor mon(store, thresholds);
    if (mode) {
      mon.restore(scheduler);
      scheduler.set_listener(&mon);
    }
    std::vector<double> times;
    for (int p = 0; p < passes; ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      scheduler.step();
      if (mode) mon.after_pass(scheduler, clock.now());
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      clock.advance(options.tick_s);
    }
    for (double t : times) result.mean_ms += t / static_cast<double>(times.size());
    std::sort(times.begin(), times.end());
    result.median_ms = times[times.size() / 2];
    if (mode) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::string text = mon.render();
      result.render_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      result.render_bytes = text.size();
    }
  }
  std::filesystem::remove_all(dir);
  return result;
}

}  // namespace

int main() {
  const int passes = 2000;
  if (const char* only = std::getenv("BENCH_MONITOR_MODE")) {  // one mode alone, for a profiler
    const Result r = run(std::atoi(only), passes * 5);
    fmt::print("mode {}: mean pass {:.4f} ms\n", only, r.mean_ms);
    return 0;
  }
  fmt::print("bench_monitor: {} scheduler passes, 1,000 queued jobs, 16 running, SQLite store on tmpfs\n", passes);
  run(0, 200);  // warm the page cache and the allocator
  // Rounds of the three side by side, in an order that rotates so none always runs first; each round's ratios
  // to its own bare run, then the median over rounds: drift of the machine between rounds cancels.
  const int round_count = 15;
  std::vector<Result> rounds[3];
  std::vector<double> ratios[3];
  for (int round = 0; round < round_count; ++round) {
    Result got[3];
    for (int k = 0; k < 3; ++k) {
      const int mode = (round + k) % 3;
      got[mode] = run(mode, passes);
    }
    for (int mode = 0; mode < 3; ++mode) {
      rounds[mode].push_back(got[mode]);
      ratios[mode].push_back(got[mode].mean_ms / got[0].mean_ms);
    }
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  Result r[3];
  for (int mode = 0; mode < 3; ++mode) {
    auto& v = rounds[mode];
    std::sort(v.begin(), v.end(), [](const Result& a, const Result& b) { return a.mean_ms < b.mean_ms; });
    r[mode] = v[v.size() / 2];
  }
  const char* names[3] = {"metrics off (no monitor)", "metrics on (default: samples every 5 s)",
                          "metrics on, sampling every pass (worst case)"};
  fmt::print("{:<46} {:>14} {:>22} {:>16}\n", "", "mean pass (ms)", "vs off (paired, range)", "median pass (ms)");
  for (int mode = 0; mode < 3; ++mode) {
    const auto [lo, hi] = std::minmax_element(ratios[mode].begin(), ratios[mode].end());
    fmt::print("{:<46} {:>14.4f} {:>7.3f}x ({:.3f}-{:.3f}) {:>16.4f}\n", names[mode], r[mode].mean_ms,
               median(ratios[mode]), *lo, *hi, r[mode].median_ms);
  }
  const Result last = r[1];
  fmt::print("one /metrics render: {:.3f} ms, {} bytes (on the server's thread)\n", last.render_ms, last.render_bytes);
  return 0;
}
