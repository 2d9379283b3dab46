// embed_texts (see embed.h).
#include "model/embed.h"

#include <algorithm>
#include <numeric>

#include "text/token_batch.h"

namespace ragmig::model {

torch::Tensor embed_texts(DualEncoder& model, const text::WordPieceTokenizer& tokenizer,
                          const std::vector<std::string>& texts, bool queries, int64_t max_tokens,
                          int64_t batch_size, const torch::Device& device) {
  std::vector<std::vector<int32_t>> seqs(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) seqs[i] = tokenizer.encode(texts[i], max_tokens);
  // Similar lengths together: far less padding to encode.
  std::vector<int64_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return seqs[a].size() < seqs[b].size(); });

  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor out;
  for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(batch_size)) {
    size_t end = std::min(order.size(), begin + static_cast<size_t>(batch_size));
    std::vector<std::vector<int32_t>> chunk;
    for (size_t i = begin; i < end; ++i) chunk.push_back(seqs[order[i]]);
    text::TokenBatch tb = text::make_token_batch(chunk, tokenizer.pad_id());
    torch::Tensor ids = torch::from_blob(tb.ids.data(), {tb.rows, tb.cols}, torch::kLong).to(device);
    torch::Tensor mask = torch::from_blob(tb.mask.data(), {tb.rows, tb.cols}, torch::kLong).to(device);
    torch::Tensor emb = (queries ? model->encode_queries(ids, mask) : model->encode_passages(ids, mask))
                            .to(torch::kCPU, torch::kFloat32);
    if (!out.defined()) out = torch::empty({static_cast<int64_t>(texts.size()), emb.size(1)}, torch::kFloat32);
    torch::Tensor idx = torch::from_blob(order.data() + begin, {static_cast<int64_t>(end - begin)}, torch::kLong);
    out.index_copy_(0, idx, emb);
  }
  if (was_training) model->train();
  if (!out.defined()) out = torch::empty({0, 0});
  return out;
}

}  // namespace ragmig::model
