#include "serve/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "core/stop_signal.h"
#include "model/embedding_sizes.h"
#include "model/lora.h"
#include "monitor/metrics.h"
#include "serve/adapter_cache.h"
#include "serve/batcher.h"
#include "serve/embed_request.h"
#include "serve/embedder.h"

namespace fs = std::filesystem;

namespace ragmig::serve {
namespace {

enum class Schema { OpenAI, Tei };

// The name requests use for the base model: the package's name, or the folder's.
std::string default_name(const std::string& reference) {
  if (reference.rfind("package:", 0) == 0) return reference.substr(8);
  fs::path p(reference);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

bool safe_adapter_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

class Service {
 public:
  explicit Service(const ServeOptions& o)
      : options_(o),
        name_(o.name.empty() ? default_name(o.model) : o.name),
        embedder_(o.model, EmbedderOptions{o.device, o.precision, o.query_prompt, o.passage_prompt, o.max_tokens}),
        cache_(static_cast<size_t>(o.adapter_cache_mb * 1024 * 1024),
               [this](const std::string& name) { return embedder_.load_adapter((fs::path(options_.adapters) / name).string(), name); },
               &metrics_),
        batcher_(embedder_, BatcherOptions{o.max_batch_tokens, o.max_wait_ms, o.max_queue_texts}, &metrics_) {
    limits_.max_inputs = o.max_inputs;
  }

  void embed(Schema schema, const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const char* endpoint = schema == Schema::OpenAI ? "/v1/embeddings" : "/embed";
    try {
      const EmbedRequest r = schema == Schema::OpenAI ? parse_openai_request(req.body, limits_) : parse_tei_request(req.body, limits_);
      const auto adapter = resolve(r.model, schema);
      const int64_t dim = output_dim(r, adapter.get());
      const bool truncate = r.truncate.value_or(options_.oversize == "truncate");
      std::vector<TextItem> items(r.texts.size());
      int64_t tokens = 0;
      for (size_t i = 0; i < r.texts.size(); ++i) {
        items[i] = {embedder_.tokenize(r.texts[i], r.mode, truncate, adapter.get()), adapter, r.mode};
        if (static_cast<int64_t>(items[i].ids.size()) > embedder_.max_tokens())
          throw RequestError(schema == Schema::OpenAI ? 400 : 413,
                             fmt::format("{}[{}] is longer than the model's {} tokens (send truncate, or start the server "
                                         "with --oversize truncate)", schema == Schema::OpenAI ? "input" : "inputs", i,
                                         embedder_.max_tokens()),
                             schema == Schema::OpenAI ? "input" : "inputs");
        tokens += static_cast<int64_t>(items[i].ids.size());
      }
      std::vector<float> rows = batcher_.submit(std::move(items)).get();
      rows = finish(rows, dim, r.normalize);
      res.status = 200;
      res.set_content(schema == Schema::OpenAI ? openai_response(rows, dim, r.model.empty() ? name_ : r.model, r.base64, tokens)
                                               : tei_response(rows, dim),
                      "application/json");
    } catch (const RequestError& e) {
      fail(schema, res, e.status(), e.what(), e.field());
    } catch (const Overloaded& e) {
      res.set_header("Retry-After", "1");
      fail(schema, res, 503, std::string("overloaded: ") + e.what() + "; retry later", "");
    } catch (const std::exception& e) {
      // The forward pass failed (or the server is stopping): the client's texts were fine.
      fail(schema, res, 500, std::string("embedding failed: ") + e.what(), "");
    }
    count(endpoint, res.status, t0);
  }

  void health(httplib::Response& res) {
    res.set_content(nlohmann::json{{"status", "ok"}, {"model", name_}, {"queue_texts", batcher_.depth()}}.dump(), "application/json");
  }

  // OpenAI's list, each entry with what a client needs to size its index: the default `dimensions`, the sizes the
  // model was trained for (any size up to the full one with --matryoshka) and the longest input in tokens.
  void models(httplib::Response& res) {
    const auto entry = [&](const std::string& id, const model::EmbeddingSizes& sizes) {
      const int64_t full = embedder_.dim();
      return nlohmann::json{{"id", id}, {"object", "model"}, {"owned_by", "ragmig"},
                            {"dimensions", model::default_size(sizes, full)},
                            {"trained_dimensions", model::trained_sizes(sizes, full)},
                            {"any_dimensions", options_.matryoshka}, {"max_input_tokens", embedder_.max_tokens()}};
    };
    nlohmann::json data = nlohmann::json::array({entry(name_, embedder_.sizes())});
    if (!options_.adapters.empty() && fs::is_directory(options_.adapters))
      for (const auto& dir : fs::directory_iterator(options_.adapters)) {
        const std::string id = dir.path().filename().string();
        if (!model::is_adapter_folder(dir.path().string()) || !safe_adapter_name(id)) continue;
        model::EmbeddingSizes sizes{embedder_.sizes().truncate_dim, {}};  // as Embedder::load_adapter has them
        try {
          sizes.matryoshka_dims = model::read_matryoshka_dims(dir.path().string());
        } catch (const Error&) {
          // Listed all the same: a request for it gets the 400 that says what is wrong with its ragmig.json.
        }
        nlohmann::json e = entry(id, sizes);
        e["parent"] = name_;
        data.push_back(std::move(e));
      }
    res.set_content(nlohmann::json{{"object", "list"}, {"data", data}}.dump(), "application/json");
  }

  void metrics(httplib::Response& res) { res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8"); }

  void not_found(const httplib::Request& req, httplib::Response& res) {
    res.set_content(openai_error(req.method + " " + req.path + ": no such endpoint (POST /v1/embeddings, POST /embed, "
                                 "GET /health, GET /metrics, GET /v1/models)", "invalid_request_error", ""),
                    "application/json");
  }

  void stop() { batcher_.stop(); }
  int64_t dim() const { return embedder_.dim(); }
  const Embedder& embedder() const { return embedder_; }
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<const ServedAdapter> resolve(const std::string& model, Schema schema) {
    if (model.empty() || model == name_ || model == options_.model) return nullptr;
    const std::string field = "model";
    if (options_.adapters.empty() || !safe_adapter_name(model) ||
        !model::is_adapter_folder((fs::path(options_.adapters) / model).string()))
      throw RequestError(404, fmt::format("model \"{}\" not found: this server serves \"{}\"{}", model, name_,
                                          options_.adapters.empty() ? "" : " and the adapter folders in " + options_.adapters),
                         field);
    try {
      return cache_.get(model);
    } catch (const Error& e) {
      throw RequestError(schema == Schema::OpenAI ? 400 : 422, fmt::format("adapter \"{}\" cannot be used: {}", model, e.what()), field);
    }
  }

  // The size a request gets: its `dimensions`, else the model's default (the folder's truncate_dim, else all); below
  // all, only a size the model was trained for (model::trained_sizes), or any with --matryoshka.
  int64_t output_dim(const EmbedRequest& r, const ServedAdapter* adapter) const {
    const model::EmbeddingSizes& sizes = adapter ? adapter->sizes : embedder_.sizes();
    const int64_t full = embedder_.dim();
    if (!r.dimensions) return model::default_size(sizes, full);
    if (*r.dimensions > full)
      throw RequestError(400, fmt::format("\"dimensions\": this model gives {}-dimensional embeddings at most", full),
                         "dimensions");
    const std::vector<int64_t> trained = model::trained_sizes(sizes, full);
    if (!options_.matryoshka && std::find(trained.begin(), trained.end(), *r.dimensions) == trained.end())
      throw RequestError(400, fmt::format("\"dimensions\": this model gives embeddings of {} dimensions (start the "
                                          "server with --matryoshka to allow any size up to {})",
                                          fmt::join(trained, ", "), full),
                         "dimensions");
    return *r.dimensions;
  }

  // Rows cut to `dim` and L2-normalised when the model normalises (and the request did not say otherwise).
  std::vector<float> finish(const std::vector<float>& rows, int64_t dim, bool normalize) const {
    const int64_t full = embedder_.dim(), n = static_cast<int64_t>(rows.size()) / full;
    std::vector<float> out(static_cast<size_t>(n * dim));
    for (int64_t r = 0; r < n; ++r) {
      double norm = 0;
      for (int64_t c = 0; c < dim; ++c) norm += static_cast<double>(rows[r * full + c]) * rows[r * full + c];
      const double scale = embedder_.normalize() && normalize ? 1.0 / std::max(std::sqrt(norm), 1e-12) : 1.0;
      for (int64_t c = 0; c < dim; ++c) out[r * dim + c] = static_cast<float>(rows[r * full + c] * scale);
    }
    return out;
  }

  void fail(Schema schema, httplib::Response& res, int status, const std::string& message, const std::string& field) {
    res.status = status;
    const std::string type = status >= 500 ? (status == 503 ? "overloaded" : "server_error")
                             : status == 404 ? "not_found" : "invalid_request_error";
    res.set_content(schema == Schema::OpenAI ? openai_error(message, type, field, status == 404 ? "model_not_found" : "")
                                             : tei_error(message, status == 503 ? "Overloaded" : status >= 500 ? "Backend" : "Validation"),
                    "application/json");
  }

  void count(const char* endpoint, int status, std::chrono::steady_clock::time_point t0) {
    metrics_.counter("ragmig_serve_requests_total", "Requests answered, by endpoint and status",
                     {{"endpoint", endpoint}, {"code", std::to_string(status)}})
        .inc();
    metrics_.histogram("ragmig_serve_request_seconds", "Request latency in seconds, by endpoint",
                       monitor::exponential_buckets(0.001, 2, 16), {{"endpoint", endpoint}})
        .observe(seconds_since(t0));
  }

  ServeOptions options_;
  std::string name_;
  monitor::Registry metrics_;
  Embedder embedder_;
  AdapterCache cache_;
  Batcher batcher_;
  RequestLimits limits_;
};

}  // namespace

void validate(const ServeOptions& o) {
  auto require = [](bool ok, const std::string& option, const std::string& what) {
    if (!ok) throw ConfigError(option + ": " + what);
  };
  require(!o.model.empty(), "--model", "is required");
  require(o.port >= 0 && o.port <= 65535, "--port", "must be in 0..65535 (0 = any free port)");
  require(o.oversize == "truncate" || o.oversize == "refuse", "--oversize", "expected truncate or refuse");
  require(o.max_batch_tokens >= 1, "--max-batch-tokens", "must be positive");
  require(o.max_wait_ms >= 0, "--max-wait-ms", "must be >= 0");
  require(o.max_queue_texts >= 1, "--max-queue", "must be positive");
  require(o.max_inputs >= 1, "--max-inputs", "must be positive");
  require(o.adapter_cache_mb >= 0, "--adapter-cache-mb", "must be >= 0");
  require(o.http_threads >= 1, "--http-threads", "must be positive");
  require(o.read_timeout_s > 0, "--read-timeout", "must be positive");
  require(o.max_body_mb > 0, "--max-body-mb", "must be positive");
  require(o.threads >= 0, "--threads", "must be >= 0");
  if (!o.adapters.empty() && !fs::is_directory(o.adapters))
    throw InputFileError(o.adapters + ": adapters folder not found");
}

int run_server(const ServeOptions& options, const std::function<void(int port)>& on_listening) {
  validate(options);
  install_stop_handlers();  // before the batcher's and the HTTP pool's threads, which then block the signals
  if (options.threads > 0) at::set_num_threads(options.threads);
  Service service(options);

  httplib::Server http;
  const auto threads = static_cast<size_t>(options.http_threads);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const auto seconds = static_cast<time_t>(options.read_timeout_s);
  const auto micros = static_cast<time_t>((options.read_timeout_s - static_cast<double>(seconds)) * 1e6);
  http.set_read_timeout(seconds, micros);
  // httplib writes an answer's headers and body apart: with Nagle's algorithm the body waited for the client's
  // delayed ACK of the headers, 40 ms on Linux, on every request of a kept-alive connection (the openai client's).
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(static_cast<size_t>(options.max_body_mb * 1024 * 1024));
  http.Post("/v1/embeddings", [&](const auto& req, auto& res) { service.embed(Schema::OpenAI, req, res); });
  http.Post("/embeddings", [&](const auto& req, auto& res) { service.embed(Schema::OpenAI, req, res); });
  http.Post("/embed", [&](const auto& req, auto& res) { service.embed(Schema::Tei, req, res); });
  http.Get("/health", [&](const auto&, auto& res) { service.health(res); });
  http.Get("/metrics", [&](const auto&, auto& res) { service.metrics(res); });
  http.Get("/v1/models", [&](const auto&, auto& res) { service.models(res); });
  http.Get("/models", [&](const auto&, auto& res) { service.models(res); });
  http.set_error_handler([&](const auto& req, auto& res) {
    if (!res.body.empty()) return;  // an answer of ours (a 404 naming the model), not httplib's
    if (res.status == 404) {
      service.not_found(req, res);
      return;
    }
    // httplib's own refusals, before any handler: say what was wrong with the request, not just its code.
    std::string what = fmt::format("HTTP {}", res.status);
    if (res.status == 413)
      what = fmt::format("the request body is larger than this server's limit of {} MB (--max-body-mb)",
                         options.max_body_mb);
    else if (res.status == 400)
      what = "malformed HTTP request (its request line, a header or the body's length or encoding)";
    else if (res.status == 414)
      what = "the request line is too long";
    res.set_content(openai_error(what, "invalid_request_error", ""), "application/json");
  });
  http.set_exception_handler([](const auto&, auto& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(openai_error(what, "server_error", ""), "application/json");
  });

  int port = options.port;
  if (port == 0) {
    port = http.bind_to_any_port(options.host);
    if (port < 0) throw IoError("cannot listen on " + options.host + " (any port)");
  } else if (!http.bind_to_port(options.host, port)) {
    throw IoError(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", options.host, port));
  }
  // SIGTERM / SIGINT set the stop flag (stop_signal.h); this thread turns it into a stop of the HTTP server, once
  // that listens (one that came while the model loaded would otherwise be lost: stop() before listening is none).
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done && !(stop_requested() && http.is_running()))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    http.stop();
  });
  on_listening(port);
  http.listen_after_bind();  // returns after stop(), once every connection's handler has finished
  done = true;
  watcher.join();
  service.stop();
  return 0;
}

}  // namespace ragmig::serve
