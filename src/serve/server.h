// `ragmig serve`: one base encoder and a folder of its LoRA adapters behind one HTTP endpoint, in the schemas
// clients already speak — OpenAI's POST /v1/embeddings (also /embeddings), text-embeddings-inference's
// POST /embed — plus GET /health, GET /metrics (Prometheus) and GET /v1/models. Requests go through the
// Batcher; adapters through the AdapterCache; SIGTERM or SIGINT stops accepting, answers what is in flight,
// and returns.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ragmig::serve {

struct ServeOptions {
  std::string model;            ///< model folder or package:NAME
  std::string name;             ///< the base model's name in requests; "" = the folder's (package's) name
  std::string adapters;         ///< folder of adapter folders, one per name; "" = none
  std::string host = "127.0.0.1";
  int port = 8080;              ///< 0 = any free port (printed)
  std::string device = "auto";
  std::string precision = "auto";
  int threads = 0;              ///< LibTorch intra-op threads (0 = all cores)
  int64_t max_tokens = 0;       ///< longest input in tokens (0 = the model's)
  std::string oversize = "truncate";  ///< truncate | refuse: what happens to longer inputs (TEI's truncate wins)
  std::optional<std::string> query_prompt, passage_prompt;  ///< unset: the model folder's (text/prompts.h)
  /// Allow OpenAI's `dimensions` at any size below the model's (truncate, renormalise); without it, only the sizes
  /// the folder names (model/embedding_sizes.h: truncate_dim, the Matryoshka sizes ragmig trained it for).
  bool matryoshka = false;
  int64_t max_batch_tokens = 16384;
  double max_wait_ms = 0;  ///< how long a text waits for company (serve/batcher.h); 0: what queued during a pass
  size_t max_queue_texts = 4096;
  size_t max_inputs = 2048;     ///< texts per request
  double adapter_cache_mb = 512;
  int http_threads = 64;        ///< connections served at once (slow clients hold one each)
  double read_timeout_s = 10;   ///< a client silent this long mid-request is dropped
  double max_body_mb = 64;      ///< larger bodies get 413 before they are parsed
};

/// Checks values the types cannot (port range, oversize policy, positive limits). Throws ConfigError naming
/// the option.
void validate(const ServeOptions& options);

/// Serves until SIGTERM or SIGINT, then drains: the listening socket closes, requests already received are
/// answered, and it returns 0. `on_listening(port)` runs once the socket listens (the CLI prints it).
/// Throws ConfigError / DataError / IoError for bad options or a model that does not load, IoError if the
/// port cannot be bound.
int run_server(const ServeOptions& options, const std::function<void(int port)>& on_listening);

}  // namespace ragmig::serve
