// `ragmig serve`: the embedding server (serve/server.h) on the command line.
#include <fmt/format.h>

#include <cstdio>

#include "apps/command.h"
#include "serve/server.h"

namespace ragmig::apps {

Command add_serve_command(CLI::App& root) {
  auto o = std::make_shared<serve::ServeOptions>();
  CLI::App* sub = root.add_subcommand("serve", "Serve embeddings over HTTP: OpenAI /v1/embeddings, TEI /embed, LoRA adapters by name");
  sub->add_option("--model", o->model, "model folder or package:NAME")->required();
  sub->add_option("--adapters", o->adapters, "folder of LoRA adapter folders; a request's \"model\" names one");
  sub->add_option("--name", o->name, "the base model's name in requests (default: the folder's or package's name)");
  sub->add_option("--host", o->host, "address to listen on")->capture_default_str();
  sub->add_option("--port", o->port, "port (0 = any free one, printed)")->capture_default_str();
  sub->add_option("--device", o->device, "auto | cpu | cuda | cuda:N")->capture_default_str();
  sub->add_option("--precision", o->precision, "auto | fp32 | bf16")->capture_default_str();
  sub->add_option("--threads", o->threads, "LibTorch threads (0 = all cores)")->capture_default_str();
  sub->add_option("--max-tokens", o->max_tokens, "longest input in tokens (0 = the model's)")->capture_default_str();
  sub->add_option("--oversize", o->oversize, "truncate | refuse longer inputs (TEI's truncate field wins)")->capture_default_str();
  sub->add_option("--query-prompt,--query-prefix", o->query_prompt,
                  "text put before queries (input_type query), e.g. \"query: \" (default: the model folder's prompt; "
                  "\"\" = none)");
  sub->add_option("--passage-prompt,--passage-prefix", o->passage_prompt,
                  "text put before passages (default: the model folder's prompt; \"\" = none)");
  sub->add_flag("--matryoshka", o->matryoshka,
                "allow `dimensions` at any size below the model's (truncated, renormalised); without it, only the "
                "folder's own sizes (truncate_dim, the Matryoshka sizes ragmig trained it for)");
  sub->add_option("--max-batch-tokens", o->max_batch_tokens, "padded tokens per forward pass")->capture_default_str();
  sub->add_option("--max-wait-ms", o->max_wait_ms,
                  "how long a text waits for others to batch with (0: a free server takes at once what queued during "
                  "its last pass); a text that finds the server idle this long does not wait")
      ->capture_default_str();
  sub->add_option("--max-queue", o->max_queue_texts, "texts queued at most; more get 503 + Retry-After")->capture_default_str();
  sub->add_option("--max-inputs", o->max_inputs, "texts per request at most")->capture_default_str();
  sub->add_option("--adapter-cache-mb", o->adapter_cache_mb, "memory for adapters (least recently used evicted)")->capture_default_str();
  sub->add_option("--http-threads", o->http_threads, "connections served at once")->capture_default_str();
  sub->add_option("--max-body-mb", o->max_body_mb, "larger request bodies get 413")->capture_default_str();
  sub->add_option("--read-timeout", o->read_timeout_s, "seconds a client may stall mid-request")->capture_default_str();
  sub->footer("SIGTERM or SIGINT: stop accepting, answer the requests in flight, exit 0.");
  return Command{sub, [o]() -> int {
                   return serve::run_server(*o, [&](int port) {
                     fmt::print("ragmig serve: listening on http://{}:{}\n", o->host, port);
                     std::fflush(stdout);
                   });
                 }};
}

}  // namespace ragmig::apps
