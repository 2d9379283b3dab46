// Counter-based dropout masks (see keyed_dropout.h).
#include "model/keyed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <mutex>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::model {

uint64_t keyed_dropout_key() {
  // Under the generator's lock, as LibTorch's own kernels take it.
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

torch::Tensor keyed_dropout_mask(int64_t n, double p, uint64_t key, torch::ScalarType dtype) {
  RAGMIG_CHECK(p >= 0 && p < 1, "dropout probability in [0, 1)");
  // Element i keeps when its 16-bit uniform u (four per hash of (key, i / 4)) is >= drop, so P(drop) =
  // drop / 65536, p rounded to the nearest 1/65536.
  const auto drop = static_cast<uint32_t>(std::lround(p * 65536.0));
  torch::Tensor mask = torch::empty({n}, torch::kFloat);
  float* out = mask.data_ptr<float>();
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  constexpr int64_t kGrain = 1 << 15;  // a multiple of 4: each hash's four draws stay in one chunk
  at::parallel_for(0, (n + 3) / 4, kGrain / 4, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) {
      const uint64_t r = splitmix64(key ^ splitmix64(static_cast<uint64_t>(h)));
      const int64_t first = h * 4, last = std::min<int64_t>(first + 4, n);
      for (int64_t i = first; i < last; ++i) {
        const auto u = static_cast<uint32_t>((r >> (16 * (i - first))) & 0xFFFFu);
        out[i] = u >= drop ? scale : 0.0f;
      }
    }
  });
  return dtype == torch::kFloat ? mask : mask.to(dtype);
}

torch::Tensor keyed_dropout_mask_like(const torch::Tensor& x, double p, uint64_t key) {
  return keyed_dropout_mask(x.numel(), p, key, x.scalar_type()).view(x.sizes());
}

torch::Tensor keyed_dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, training);
  return x * keyed_dropout_mask_like(x, p, keyed_dropout_key());
}

}  // namespace ragmig::model
