// The model side of the server: one base encoder in memory, its tokenizer, and the forward pass of one batch
// whose rows may each use another LoRA adapter of that base (and, with separate towers, another tower): the
// rows are grouped by tower and adapter, the base product is computed once per group of rows sharing a tower,
// each adapter adds its low-rank delta to its own rows (model::AdapterRouting).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "model/embedding_sizes.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "serve/embed_request.h"
#include "text/prompts.h"
#include "text/tokenizer.h"

namespace ragmig::serve {

/// An adapter as the server keeps it: converted to the model's device and dtype, checked against its towers.
struct ServedAdapter {
  std::string name;
  model::LoraAdapter query;
  std::optional<model::LoraAdapter> passage;
  text::Prompts prompts;  ///< its texts' prompts: the command line's, else the adapter folder's own, else the base's
  model::EmbeddingSizes sizes;  ///< the base's truncate_dim and the adapter's own Matryoshka sizes
  size_t bytes = 0;  ///< what its tensors take
};

/// One text to embed: its token ids, the adapter (null = the base model) and the tower it goes through.
struct TextItem {
  std::vector<int32_t> ids;
  std::shared_ptr<const ServedAdapter> adapter;
  Mode mode = Mode::Passage;
};

struct EmbedderOptions {
  std::string device = "auto";     ///< auto (CUDA if LibTorch sees a GPU) | cpu | cuda | cuda:N
  std::string precision = "auto";  ///< auto | fp32 | bf16 (model::choose_precision)
  /// Put before query / passage texts (e5's "query: ", text/prompts.h); unset: the model folder's prompts.
  std::optional<std::string> query_prompt, passage_prompt;
  int64_t max_tokens = 0;          ///< longest input, [CLS] and [SEP] included; 0 = the model's own limit
};

/// Not thread-safe: one thread embeds at a time (the Batcher's worker); load_adapter and tokenize may run
/// beside it.
class Embedder {
 public:
  /// Loads the model folder (or package:NAME). Throws as model::load_model_folder.
  Embedder(const std::string& model_reference, const EmbedderOptions& options);

  /// Token ids of `text` in `mode` (the prompt of `adapter`, or of the base model when null, first), at most
  /// max_tokens() of them when `truncate`; without truncation an input longer than that comes back whole, for
  /// the caller to refuse.
  std::vector<int32_t> tokenize(const std::string& text, Mode mode, bool truncate,
                                const ServedAdapter* adapter = nullptr) const;

  /// Pooled embeddings of `items`, row i for items[i], float32 [n * dim()], not normalised (normalize() says
  /// whether the model normalises). One padded forward per tower present.
  std::vector<float> embed(const std::vector<const TextItem*>& items);

  /// Reads an adapter folder (PEFT's, or ragmig's with passage/) for this model. Throws DataError naming the
  /// folder and layer (or Matryoshka size) if it does not fit the model, IoError if it is missing.
  std::shared_ptr<const ServedAdapter> load_adapter(const std::string& dir, const std::string& name) const;

  int64_t dim() const { return dim_; }
  /// The base model's embedding sizes (model/embedding_sizes.h).
  const model::EmbeddingSizes& sizes() const { return loaded_.sizes; }
  bool normalize() const { return normalize_; }
  int64_t max_tokens() const { return max_tokens_; }
  /// The base model's prompts in force (the options' where set, else the folder's).
  const text::Prompts& prompts() const { return prompts_; }
  const std::string& precision() const { return precision_; }
  std::string device() const { return device_.str(); }

 private:
  model::LoadedModel loaded_;
  std::unique_ptr<const text::Tokenizer> tokenizer_;
  EmbedderOptions options_;
  torch::Device device_;
  torch::ScalarType dtype_ = torch::kFloat;
  std::string precision_;
  int64_t dim_ = 0, max_tokens_ = 0;
  bool normalize_ = true;
  text::Prompts prompts_;
};

}  // namespace ragmig::serve
