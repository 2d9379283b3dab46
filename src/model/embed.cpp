// embed_texts (see embed.h).
#include "model/embed.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "model/host_copy.h"
#include "text/prompts.h"
#include "text/token_batch.h"

namespace ragmig::model {

std::vector<std::pair<size_t, size_t>> token_budget_batches(const std::vector<size_t>& lengths, size_t budget) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t begin = 0, end = 0; begin < lengths.size(); begin = end) {
    end = begin + 1;
    while (end < lengths.size() && (end - begin + 1) * lengths[end] <= budget) ++end;
    out.emplace_back(begin, end);
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> least_padding_batches(const std::vector<size_t>& lengths, size_t budget,
                                                             size_t pass_cost) {
  // best[j]: the least cost of the first j texts; from[j]: where the last batch of that plan starts.
  const size_t n = lengths.size();
  std::vector<size_t> best(n + 1, std::numeric_limits<size_t>::max()), from(n + 1, 0);
  best[0] = 0;
  for (size_t j = 1; j <= n; ++j)
    for (size_t i = j; i-- > 0;) {
      const size_t padded = (j - i) * lengths[j - 1];
      if (padded > budget && j - i > 1) break;  // more rows only pad more
      if (best[i] + padded + pass_cost < best[j]) {
        best[j] = best[i] + padded + pass_cost;
        from[j] = i;
      }
    }
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t j = n; j > 0; j = from[j]) out.emplace_back(from[j], j);
  std::reverse(out.begin(), out.end());
  return out;
}

torch::Tensor embed_texts(DualEncoder& model, const text::Tokenizer& tokenizer,
                          const std::vector<std::string>& texts, bool queries, int64_t max_tokens,
                          int64_t batch_size, const torch::Device& device, std::string_view prompt,
                          const std::function<void(size_t done)>& on_batch) {
  std::vector<std::vector<int32_t>> seqs(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) seqs[i] = text::encode_with_prompt(tokenizer, prompt, texts[i], max_tokens);
  // Similar lengths together: far less padding to encode.
  std::vector<int64_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return seqs[a].size() < seqs[b].size(); });

  const bool was_training = model->is_training();
  model->eval();
  torch::Tensor out;  // a normal tensor (not an inference one): callers may change it in place
  // On a GPU the host runs ahead of the device: a batch's ids go over through pinned memory without waiting (the
  // towers take the mask from the host themselves), and embeddings stay on the device until about 256 MB of them
  // wait, then come back in one copy. On the CPU each batch's rows are put in place at once.
  const size_t hold_bytes = device.is_cpu() ? 0 : (size_t{256} << 20);
  std::vector<torch::Tensor> held;  // embeddings of sorted rows [held_from, ...), batch by batch
  size_t held_from = 0, held_bytes = 0;
  const auto put_in_place = [&](size_t upto) {
    if (held.empty()) return;
    const torch::Tensor emb = torch::cat(held).to(torch::kCPU, torch::kFloat32);
    held.clear();
    held_bytes = 0;
    if (!out.defined()) out = torch::empty({static_cast<int64_t>(texts.size()), emb.size(1)}, torch::kFloat32);
    const auto idx = torch::from_blob(order.data() + held_from, {static_cast<int64_t>(upto - held_from)}, torch::kLong);
    out.index_copy_(0, idx, emb);
    held_from = upto;
  };
  // A budget of padded tokens per forward pass rather than a count of texts: short texts go many at a time.
  std::vector<size_t> lengths(order.size());
  for (size_t i = 0; i < order.size(); ++i) lengths[i] = seqs[static_cast<size_t>(order[i])].size();
  const auto budget = static_cast<size_t>(batch_size * std::max<int64_t>(1, max_tokens));
  for (const auto& [begin, end] : token_budget_batches(lengths, budget)) {
    std::vector<std::vector<int32_t>> chunk;
    for (size_t i = begin; i < end; ++i) chunk.push_back(seqs[order[i]]);
    text::TokenBatch tb = text::make_token_batch(chunk, tokenizer.pad_id());
    const torch::Tensor ids =
        to_device_without_waiting(torch::from_blob(tb.ids.data(), {tb.rows, tb.cols}, torch::kLong), device);
    const torch::Tensor mask = torch::from_blob(tb.mask.data(), {tb.rows, tb.cols}, torch::kLong);
    {
      c10::InferenceMode inference;
      held.push_back(queries ? model->encode_queries(ids, mask) : model->encode_passages(ids, mask));
    }
    held_bytes += static_cast<size_t>(held.back().numel()) * held.back().element_size();
    if (held_bytes >= hold_bytes) put_in_place(end);
    if (on_batch) on_batch(end);
  }
  put_in_place(order.size());
  if (was_training) model->train();
  if (!out.defined()) out = torch::empty({0, 0});
  return out;
}

}  // namespace ragmig::model
