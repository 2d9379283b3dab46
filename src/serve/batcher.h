// Dynamic batching: request threads queue their texts; one worker thread takes what has arrived, waiting at
// most max_wait for more while the batch is under its token budget (not when the oldest text came to a server
// idle for max_wait: a lone query after a quiet spell has no company coming, and waiting would only add max_wait
// to its latency), sorts the texts by length, cuts them into forward passes of at most max_batch_tokens padded
// tokens and hands each to the Embedder; texts of different requests and adapters share a pass. The queue is
// bounded: a full queue refuses (the server's 503) instead of growing without limit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "monitor/metrics.h"
#include "serve/embedder.h"

namespace ragmig::serve {

struct BatcherOptions {
  int64_t max_batch_tokens = 16384;  ///< padded tokens (rows x longest) per forward pass
  double max_wait_ms = 0;            ///< how long the oldest text waits for company (none after an idle spell)
  size_t max_queue_texts = 4096;     ///< texts queued or in the running batch; more are refused
};

/// Thrown by submit when the queue is full.
class Overloaded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Batcher {
 public:
  /// Starts the worker. `metrics` may be null.
  Batcher(Embedder& embedder, const BatcherOptions& options, monitor::Registry* metrics);
  /// stop().
  ~Batcher();

  /// Queues the texts of one request; the future gets their pooled rows (Embedder::embed's layout) or the
  /// exception the forward pass threw. Throws Overloaded (nothing queued) if they do not fit the queue, or
  /// std::logic_error after stop().
  std::future<std::vector<float>> submit(std::vector<TextItem> texts);

  /// Embeds everything queued, then ends the worker. Idempotent.
  void stop();

  /// Texts queued or being embedded.
  size_t depth() const;

 private:
  struct Request;
  struct Entry {
    std::shared_ptr<Request> request;
    size_t index;  // within the request
    size_t tokens() const;  // of its text
  };

  std::chrono::microseconds max_wait() const;
  void run();
  std::vector<Entry> take_batch(std::unique_lock<std::mutex>& lock);
  void embed(std::vector<Entry>& batch);

  Embedder& embedder_;
  BatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable arrived_;
  std::deque<Entry> queue_;
  size_t in_flight_ = 0;  // texts taken by the worker, not yet answered
  // The last text's arrival or the last pass's end (the batcher's start before either): a text arriving max_wait
  // or more after it, into an empty queue, finds the server idle and does not wait for company.
  std::chrono::steady_clock::time_point last_busy_ = std::chrono::steady_clock::now();
  bool stopping_ = false;
  std::thread worker_;
  // Metrics (null without a registry).
  monitor::Histogram* batch_texts_ = nullptr;
  monitor::Histogram* batch_tokens_ = nullptr;
  monitor::Histogram* forward_seconds_ = nullptr;
  monitor::Gauge* queue_depth_ = nullptr;
  monitor::Counter* tokens_ = nullptr;
};

}  // namespace ragmig::serve
