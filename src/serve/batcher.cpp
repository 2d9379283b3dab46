#include "serve/batcher.h"

#include <algorithm>

#include "core/clock.h"
#include "model/embed.h"

namespace ragmig::serve {
namespace {

// A forward pass's fixed cost in tokens' worth of compute (kernel launches, pooling, copies): what splitting
// a batch in two must save to pay off.
constexpr size_t kPassCostTokens = 256;

}  // namespace

// A request's texts and the rows they get; answered when the last of its texts is embedded.
struct Batcher::Request {
  std::vector<TextItem> texts;
  std::vector<float> rows;
  size_t remaining = 0;
  bool failed = false;
  std::promise<std::vector<float>> promise;
  std::chrono::steady_clock::time_point arrived;
  bool after_idle = false;  // arrived into an empty queue, the server idle for max_wait or more
};

size_t Batcher::Entry::tokens() const { return request->texts[index].ids.size(); }

std::chrono::microseconds Batcher::max_wait() const {
  return std::chrono::microseconds(static_cast<int64_t>(options_.max_wait_ms * 1000));
}

Batcher::Batcher(Embedder& embedder, const BatcherOptions& options, monitor::Registry* metrics)
    : embedder_(embedder), options_(options) {
  if (metrics) {
    batch_texts_ = &metrics->histogram("ragmig_serve_batch_texts", "Texts per forward pass",
                                       monitor::exponential_buckets(1, 2, 12));
    batch_tokens_ = &metrics->histogram("ragmig_serve_batch_tokens", "Padded tokens per forward pass",
                                        monitor::exponential_buckets(64, 2, 12));
    forward_seconds_ = &metrics->histogram("ragmig_serve_forward_seconds", "Seconds per forward pass",
                                           monitor::exponential_buckets(0.001, 2, 16));
    queue_depth_ = &metrics->gauge("ragmig_serve_queue_texts", "Texts queued or being embedded");
    tokens_ = &metrics->counter("ragmig_serve_tokens_total", "Tokens embedded (no padding)");
  }
  worker_ = std::thread([this] { run(); });
}

Batcher::~Batcher() { stop(); }

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  arrived_.notify_all();
  if (worker_.joinable()) worker_.join();
}

size_t Batcher::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + in_flight_;
}

std::future<std::vector<float>> Batcher::submit(std::vector<TextItem> texts) {
  auto request = std::make_shared<Request>();
  request->texts = std::move(texts);
  request->remaining = request->texts.size();
  request->rows.resize(request->texts.size() * static_cast<size_t>(embedder_.dim()));
  request->arrived = std::chrono::steady_clock::now();
  auto future = request->promise.get_future();
  if (request->texts.empty()) {
    request->promise.set_value({});
    return future;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw std::logic_error("the batcher is stopping");
    if (queue_.size() + in_flight_ + request->texts.size() > options_.max_queue_texts)
      throw Overloaded("the queue holds " + std::to_string(queue_.size() + in_flight_) + " texts (at most " +
                       std::to_string(options_.max_queue_texts) + ")");
    request->after_idle = queue_.empty() && in_flight_ == 0 && request->arrived - last_busy_ >= max_wait();
    last_busy_ = request->arrived;
    for (size_t i = 0; i < request->texts.size(); ++i) queue_.push_back({request, i});
    if (queue_depth_) queue_depth_->set(static_cast<double>(queue_.size() + in_flight_));
  }
  arrived_.notify_one();
  return future;
}

void Batcher::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    arrived_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything answered
    std::vector<Entry> batch = take_batch(lock);
    in_flight_ = batch.size();
    lock.unlock();
    embed(batch);
    lock.lock();
    in_flight_ = 0;
    last_busy_ = std::chrono::steady_clock::now();
    if (queue_depth_) queue_depth_->set(static_cast<double>(queue_.size()));
  }
}

// The texts of the next round, oldest first: waits until max_wait after the oldest arrived unless the queue
// already holds a budget's worth of tokens, the oldest came to an idle server, or the server is stopping.
std::vector<Batcher::Entry> Batcher::take_batch(std::unique_lock<std::mutex>& lock) {
  const auto queued_tokens = [&] {
    size_t n = 0;
    for (const auto& e : queue_) n += e.tokens();
    return n;
  };
  const auto budget = static_cast<size_t>(options_.max_batch_tokens);
  const Request& oldest = *queue_.front().request;
  if (!oldest.after_idle)
    arrived_.wait_until(lock, oldest.arrived + max_wait(), [&] { return stopping_ || queued_tokens() >= budget; });
  // A round takes up to a few forward passes' worth, so that sorting by length has texts to choose from.
  std::vector<Entry> batch;
  size_t tokens = 0;
  while (!queue_.empty() && (batch.empty() || tokens + queue_.front().tokens() <= 4 * budget)) {
    tokens += queue_.front().tokens();
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return batch;
}

void Batcher::embed(std::vector<Entry>& batch) {
  std::stable_sort(batch.begin(), batch.end(), [](const Entry& a, const Entry& b) { return a.tokens() < b.tokens(); });
  std::vector<size_t> lengths;
  for (const auto& e : batch) lengths.push_back(e.tokens());
  const auto dim = static_cast<size_t>(embedder_.dim());
  // Short queries and long passages in one pass would pad every query to the longest passage (45 % of the
  // tokens computed on SciFact's mix, bench/serve); passes of similar lengths compute far less.
  for (const auto& [begin, end] : model::least_padding_batches(lengths, static_cast<size_t>(options_.max_batch_tokens),
                                                               kPassCostTokens)) {
    std::vector<const TextItem*> items;
    size_t tokens = 0;
    for (size_t i = begin; i < end; ++i) {
      items.push_back(&batch[i].request->texts[batch[i].index]);
      tokens += lengths[i];
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<float> rows;
    std::exception_ptr error;
    try {
      rows = embedder_.embed(items);
    } catch (...) {
      error = std::current_exception();
    }
    if (forward_seconds_)
      forward_seconds_->observe(seconds_since(t0));
    if (batch_texts_) batch_texts_->observe(static_cast<double>(end - begin));
    if (batch_tokens_) batch_tokens_->observe(static_cast<double>((end - begin) * lengths[end - 1]));
    if (tokens_ && !error) tokens_->inc(static_cast<double>(tokens));
    for (size_t i = begin; i < end; ++i) {
      Request& r = *batch[i].request;
      if (error) {
        if (!r.failed) r.promise.set_exception(error);
        r.failed = true;
        continue;
      }
      std::copy_n(rows.begin() + static_cast<int64_t>((i - begin) * dim), dim, r.rows.begin() + static_cast<int64_t>(batch[i].index * dim));
      if (--r.remaining == 0 && !r.failed) r.promise.set_value(std::move(r.rows));
    }
  }
}

}  // namespace ragmig::serve
