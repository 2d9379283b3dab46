// Encoder (see encoder.h).
#include "eval/encoder.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "model/embed.h"
#include "model/model_folder.h"
#include "model/precision.h"
#include "text/tokenizer.h"

namespace ragmig::eval {

std::string resolve_device(const std::string& device) {
  if (device == "auto") return torch::cuda::is_available() ? "cuda" : "cpu";
  if (device == "cpu") return device;
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available()) throw DeviceError("device " + device + " was asked for, but CUDA is not available here");
    return device;
  }
  throw ConfigError("unknown device '" + device + "' (expected auto, cpu, cuda or cuda:N)");
}

struct Encoder::Impl {
  model::LoadedModel loaded;
  std::unique_ptr<const text::Tokenizer> tokenizer;
  torch::Device device;
  std::string device_name;
  EmbedOptions options;
  model::PrecisionChoice precision;
  text::Prompts prompts;

  Impl(model::LoadedModel m, const std::string& dev, const EmbedOptions& o)
      : loaded(std::move(m)),
        tokenizer(text::make_tokenizer(loaded.tokenizer)),
        device(dev),
        device_name(dev),
        options(o) {}
};

Encoder::Encoder(const std::string& model_dir, const std::string& device, const EmbedOptions& options) {
  if (options.batch_size < 1) throw ConfigError("embedding batch size must be at least 1");
  if (options.max_query_tokens < 2 || options.max_passage_tokens < 2)
    throw ConfigError("token limits must be at least 2 ([CLS] and [SEP])");
  const std::string dev = resolve_device(device);
  auto precision = model::choose_precision(options.precision, dev != "cpu", model::cpu_bf16(), "--precision");
  impl_ = std::make_unique<Impl>(model::load_model_folder(model_dir), dev, options);
  impl_->precision = std::move(precision);
  // bf16 weights and activations; pooling and the embeddings stay float32 (DualEncoder widens before pooling).
  if (impl_->precision.precision == model::Precision::Bf16) impl_->loaded.model->to(torch::kBFloat16);
  impl_->loaded.model->to(impl_->device);
  impl_->loaded.model->eval();
  // The model's positions, and the folder's own limit (sentence-transformers' max_seq_length) where it says one.
  int64_t limit = impl_->loaded.model->spec().bert.max_tokens();
  if (impl_->loaded.max_length > 0) limit = std::min(limit, impl_->loaded.max_length);
  impl_->options.max_query_tokens = std::min(options.max_query_tokens, limit);
  impl_->options.max_passage_tokens = std::min(options.max_passage_tokens, limit);
  impl_->prompts = text::replaced(impl_->loaded.prompts, options.query_prompt, options.passage_prompt);
}

Encoder::~Encoder() = default;

const std::string& Encoder::device() const { return impl_->device_name; }
std::string Encoder::precision() const { return model::to_string(impl_->precision.precision); }
const std::string& Encoder::precision_reason() const { return impl_->precision.reason; }
int64_t Encoder::max_query_tokens() const { return impl_->options.max_query_tokens; }
int64_t Encoder::max_passage_tokens() const { return impl_->options.max_passage_tokens; }
const text::Prompts& Encoder::prompts() const { return impl_->prompts; }

index::FloatMatrix Encoder::embed(const std::vector<std::string>& texts, bool queries,
                                  const std::function<void(size_t done)>& on_batch) {
  const int64_t max_tokens = queries ? impl_->options.max_query_tokens : impl_->options.max_passage_tokens;
  torch::Tensor t = model::embed_texts(impl_->loaded.model, *impl_->tokenizer, texts, queries, max_tokens,
                                       impl_->options.batch_size, impl_->device, impl_->prompts.of(queries), on_batch)
                        .contiguous();
  index::FloatMatrix m;
  if (t.dim() != 2 || t.size(0) == 0) return m;
  if (const auto bad = torch::nonzero(~torch::isfinite(t).all(1)); bad.size(0) > 0)
    throw DataError(fmt::format("the model gave NaN or infinite embeddings for {} of {} {} (the first: #{}, \"{:.60}\")",
                                bad.size(0), t.size(0), queries ? "queries" : "passages", bad[0][0].item<int64_t>(),
                                texts[static_cast<size_t>(bad[0][0].item<int64_t>())]));
  m.rows = t.size(0);
  m.cols = t.size(1);
  m.data.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  return m;
}

}  // namespace ragmig::eval
