// Where a training loop stands, in and out of a checkpoint (see loop_position.h).
#include "train/loop_position.h"

#include <string>

namespace ragmig::train {
namespace {

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  torch::Tensor t;
  ar.read(key, t);
  return t.item<int64_t>();
}

}  // namespace

LoopPosition LoopPosition::start(const TrainOptions& t) {
  LoopPosition p;
  p.global_batch = p.epoch_batch = t.batch_size;
  p.chunk = t.chunk_size;
  return p;
}

void LoopPosition::write(torch::serialize::OutputArchive& ar) const {
  ar.write("step", torch::tensor(step));
  ar.write("epoch", torch::tensor(epoch));
  ar.write("batch_in_epoch", torch::tensor(batch_in_epoch));
  ar.write("samples", torch::tensor(samples));
  ar.write("batch_size", torch::tensor(global_batch));
  ar.write("chunk_size", torch::tensor(chunk));
  ar.write("epoch_batch_size", torch::tensor(epoch_batch));
  std::vector<int64_t> resizes;
  for (const auto& r : epoch_resizes) resizes.insert(resizes.end(), {r.position, r.batch_size});
  ar.write("epoch_resizes", torch::tensor(resizes, torch::kInt64).reshape({-1, 2}));
}

void LoopPosition::read(torch::serialize::InputArchive& ar) {
  step = read_int(ar, "step");
  epoch = read_int(ar, "epoch");
  batch_in_epoch = read_int(ar, "batch_in_epoch");
  samples = read_int(ar, "samples");
  torch::Tensor plan;
  if (!ar.try_read("batch_size", plan)) return;
  global_batch = plan.item<int64_t>();
  chunk = read_int(ar, "chunk_size");
  epoch_batch = read_int(ar, "epoch_batch_size");
  ar.read("epoch_resizes", plan);
  const auto rows = plan.accessor<int64_t, 2>();
  epoch_resizes.clear();
  for (int64_t i = 0; i < rows.size(0); ++i) epoch_resizes.push_back({rows[i][0], rows[i][1]});
}

}  // namespace ragmig::train
