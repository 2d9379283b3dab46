// A model folder from `ragmig train` (or transformers / sentence-transformers) turned into an embedder for
// evaluation: queries with the query tower, passages with the passage tower, through model::embed_texts
// (batched, sorted by length), tokenised as the folder's tokenizer files say.
// LibTorch stays behind this header: the rest of eval sees float matrices.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "index/matrix.h"
#include "text/prompts.h"

namespace ragmig::eval {

struct EmbedOptions {
  int64_t batch_size = 64;           ///< texts of the longest length per forward pass (a token budget)
  int64_t max_query_tokens = 64;     ///< capped at the model's positions and the folder's max_seq_length
  int64_t max_passage_tokens = 256;  ///< likewise
  std::string precision = "auto";    ///< auto | fp32 | bf16 (model::choose_precision)
  /// Put before queries / passages (text/prompts.h); unset: the model folder's own.
  std::optional<std::string> query_prompt, passage_prompt;
};

/// "auto" becomes "cuda" when LibTorch sees a GPU, else "cpu"; "cuda[:n]" without CUDA is a DeviceError;
/// anything else a ConfigError.
std::string resolve_device(const std::string& device);

class Encoder {
 public:
  /// Loads the folder (DataError / IoError as model::load_model_folder) onto `device` (resolve_device).
  Encoder(const std::string& model_dir, const std::string& device, const EmbedOptions& options);
  ~Encoder();

  /// One row per text, in order. `on_batch`, when given, is told after each forward pass how many are done.
  index::FloatMatrix embed(const std::vector<std::string>& texts, bool queries,
                           const std::function<void(size_t done)>& on_batch = {});

  const std::string& device() const;
  /// The precision the model computes in ("fp32" | "bf16") and why (model::choose_precision).
  std::string precision() const;
  const std::string& precision_reason() const;
  /// The token limits in force after capping, which cached embeddings are keyed by.
  int64_t max_query_tokens() const;
  int64_t max_passage_tokens() const;
  /// The prompts in force: the options' where set, else the folder's. Cached embeddings are keyed by them too.
  const text::Prompts& prompts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ragmig::eval
