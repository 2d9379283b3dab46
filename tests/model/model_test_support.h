// What the model folder tests share (model_folder_test.cpp, dense_test.cpp): a tiny WordPiece vocabulary, random
// weights, and a small batch with padding.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/dual_encoder.h"

namespace ragmig::model::test {

/// [PAD] [UNK] [CLS] [SEP] [MASK] then tok5 ... tok<n-1>.
inline std::vector<std::string> tiny_vocab(int n = 38) {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = static_cast<int>(v.size()); i < n; ++i) v.push_back("tok" + std::to_string(i));
  return v;
}

/// Every parameter gets random values, so that a load that skipped or swapped a tensor shows.
inline void randomize(DualEncoder& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m->parameters()) p.normal_(0.0, 0.5);
}

struct Batch {
  torch::Tensor ids, mask;
};

/// Three rows of 8 token ids below 40, the last with 3 positions of padding (seeded: the same every call).
inline Batch sample_batch() {
  torch::manual_seed(99);
  Batch b{torch::randint(1, 40, {3, 8}, torch::kLong), torch::ones({3, 8}, torch::kLong)};
  b.mask[2].slice(0, 5).fill_(0);
  return b;
}

}  // namespace ragmig::model::test
