#include "serve/embedder.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/error.h"
#include "model/packaged_models.h"
#include "model/precision.h"
#include "text/token_batch.h"

namespace ragmig::serve {
namespace {

torch::Device pick_device(const std::string& device) {
  if (device == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (device == "cpu") return torch::kCPU;
  if (device.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available()) throw DeviceError("--device " + device + ": LibTorch sees no CUDA device here");
    return torch::Device(device);
  }
  throw ConfigError("--device: expected auto, cpu, cuda or cuda:N, got \"" + device + "\"");
}

model::LoraAdapter converted(const model::LoraAdapter& a, const torch::Device& device, torch::ScalarType dtype) {
  model::LoraAdapter out;
  out.spec = a.spec;
  for (const auto& [name, f] : a.layers) out.layers[name] = {f.a.to(device, dtype), f.b.to(device, dtype)};
  return out;
}

}  // namespace

Embedder::Embedder(const std::string& model_reference, const EmbedderOptions& options)
    : loaded_(model::load_model_folder(model::resolve_model_reference(model_reference))),
      tokenizer_(text::make_tokenizer(loaded_.tokenizer)),
      options_(options),
      device_(pick_device(options.device)) {
  const auto choice = model::choose_precision(options.precision, device_.is_cuda(), model::cpu_bf16(), "--precision");
  precision_ = model::to_string(choice.precision);
  if (choice.precision == model::Precision::Bf16) dtype_ = torch::kBFloat16;
  loaded_.model->to(device_, dtype_);
  loaded_.model->eval();
  const auto& spec = loaded_.model->spec();
  dim_ = spec.embedding_dim();
  normalize_ = spec.normalize;
  const int64_t limit =
      loaded_.max_length > 0 ? std::min(loaded_.max_length, spec.bert.max_tokens()) : spec.bert.max_tokens();
  max_tokens_ = options.max_tokens > 0 ? std::min(options.max_tokens, limit) : limit;
  prompts_ = text::replaced(loaded_.prompts, options.query_prompt, options.passage_prompt);
}

std::vector<int32_t> Embedder::tokenize(const std::string& text, Mode mode, bool truncate,
                                        const ServedAdapter* adapter) const {
  const std::string& prompt = (adapter ? adapter->prompts : prompts_).of(mode == Mode::Query);
  // One token over the limit is enough to know the text is too long: the tokenizer stops there.
  const int64_t limit = truncate ? max_tokens_ : max_tokens_ + 1;
  return text::encode_with_prompt(*tokenizer_, prompt, text, limit);
}

std::vector<float> Embedder::embed(const std::vector<const TextItem*>& items) {
  std::vector<float> out(items.size() * static_cast<size_t>(dim_));
  const bool separate = !loaded_.model->spec().shared_towers;
  // Rows in (tower, adapter) order so that each adapter's rows are one contiguous range.
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  auto tower_of = [&](size_t i) { return separate && items[i]->mode == Mode::Query ? 0 : 1; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(tower_of(a), items[a]->adapter.get()) < std::make_pair(tower_of(b), items[b]->adapter.get());
  });
  c10::InferenceMode inference;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && tower_of(order[end]) == tower_of(order[begin])) ++end;
    const bool query_tower = tower_of(order[begin]) == 0;
    model::BertModel tower = query_tower ? loaded_.model->query_tower() : loaded_.model->passage_tower();

    std::vector<std::vector<int32_t>> seqs;
    std::vector<model::AdapterRange> ranges;
    for (size_t i = begin; i < end; ++i) {
      const TextItem& item = *items[order[i]];
      seqs.push_back(item.ids);
      const int64_t row = static_cast<int64_t>(i - begin);
      const model::LoraAdapter* adapter = nullptr;
      // With separate towers, passages go through the adapter's passage part, or the base tower when it has
      // none (as model::merge_dual_adapter does).
      if (item.adapter && (!separate || query_tower)) adapter = &item.adapter->query;
      else if (item.adapter && item.adapter->passage) adapter = &*item.adapter->passage;
      if (!ranges.empty() && ranges.back().adapter == adapter) ranges.back().end = row + 1;
      else ranges.push_back({row, row + 1, adapter});
    }
    text::TokenBatch tb = text::make_token_batch(seqs, tokenizer_->pad_id());
    auto ids = torch::from_blob(tb.ids.data(), {tb.rows, tb.cols}, torch::kLong).to(device_);
    auto mask = torch::from_blob(tb.mask.data(), {tb.rows, tb.cols}, torch::kLong).to(device_);
    torch::Tensor pooled;
    {
      model::AdapterRouting routing(tower, ranges);
      pooled = model::pool(tower->forward(ids, mask), mask, loaded_.model->spec().pooling);
    }
    pooled = loaded_.model->project(pooled, !query_tower);
    pooled = pooled.to(torch::kCPU, torch::kFloat).contiguous();
    const float* p = pooled.data_ptr<float>();
    for (size_t i = begin; i < end; ++i)
      std::copy_n(p + (i - begin) * dim_, dim_, out.begin() + static_cast<int64_t>(order[i]) * dim_);
    begin = end;
  }
  return out;
}

std::shared_ptr<const ServedAdapter> Embedder::load_adapter(const std::string& dir, const std::string& name) const {
  const model::DualAdapter read = model::load_adapter_folder(dir);
  auto served = std::make_shared<ServedAdapter>();
  served->name = name;
  served->query = converted(read.query, device_, dtype_);
  if (read.passage) served->passage = converted(*read.passage, device_, dtype_);
  served->prompts =
      text::replaced(read.prompts.value_or(loaded_.prompts), options_.query_prompt, options_.passage_prompt);
  served->sizes = {loaded_.sizes.truncate_dim, read.matryoshka_dims};
  model::check_matryoshka_dims(read.matryoshka_dims, dim_, dir);
  // Checked now, on load: a misfit adapter is the client's 4xx, not a failed batch of other clients' texts.
  model::BertModel query = loaded_.model->query_tower();
  model::BertModel passage = loaded_.model->passage_tower();
  try {
    model::check_adapter_fits(query, served->query);
    if (served->passage) model::check_adapter_fits(passage, *served->passage);
  } catch (const DataError& e) {
    throw DataError(dir + ": " + e.what());
  }
  const size_t element = dtype_ == torch::kFloat ? 4 : 2;
  served->bytes = static_cast<size_t>(served->query.parameter_count() + (served->passage ? served->passage->parameter_count() : 0)) * element;
  return served;
}

}  // namespace ragmig::serve
