// Forward FLOPs of an encoder (see encoder_flops.h).
#include "model/encoder_flops.h"

#include <algorithm>

namespace ragmig::model {

double encoder_flops(const BertConfig& c, int64_t len) {
  const double l = static_cast<double>(len), h = static_cast<double>(c.hidden_size);
  const double i = static_cast<double>(c.intermediate_size);
  const double ffn = (c.gated_mlp() ? 6 : 4) * l * h * i;  // gated MLPs: three matrices' worth
  // q and o [H, query width], k and v [H, key width]: 8 l h^2 where both widths are H (all but Qwen3 and Gemma 3)
  const double q = static_cast<double>(c.query_width()), kv = static_cast<double>(c.key_width());
  double flops = 0;
  for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    const bool sliding = c.sliding_layer(layer);
    const double keys = sliding ? std::min(l, static_cast<double>(2 * c.half_window() + 1)) : l;
    flops += 4 * l * h * (q + kv) + ffn + 4 * l * keys * q;
  }
  return flops;
}

}  // namespace ragmig::model
