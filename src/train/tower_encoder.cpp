// A dual encoder as a step's encoder (see tower_encoder.h).
#include "train/tower_encoder.h"

namespace ragmig::train {

std::vector<torch::Tensor> encode_towers(model::DualEncoder& net, const std::vector<TowerInput>& inputs,
                                         bool one_pass) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TowerInput& in = inputs[i];
    if (one_pass && in.tower == Tower::Query && i + 1 < inputs.size() && inputs[i + 1].tower == Tower::Passage) {
      const TowerInput& passages = inputs[++i];
      auto [q, p] = net->encode_pair(in.ids, in.mask, passages.ids, passages.mask);
      out.push_back(q);
      out.push_back(p);
    } else {
      out.push_back(in.tower == Tower::Query ? net->encode_queries(in.ids, in.mask)
                                             : net->encode_passages(in.ids, in.mask));
    }
  }
  return out;
}

torch::Tensor encode_one(const EncodeFn& encode, const torch::Tensor& ids, const torch::Tensor& mask, Tower tower) {
  return encode({{ids, mask, tower}}).front();
}

}  // namespace ragmig::train
