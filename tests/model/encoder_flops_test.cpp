// An encoder's forward FLOPs from its shape: BERT-base's well-known figure, ModernBERT's sliding layers counted
// at their window, and the linear and quadratic parts scaling as they must.
#include "model/encoder_flops.h"

#include <gtest/gtest.h>

namespace ragmig::model {
namespace {

TEST(EncoderFlops, BertBaseAt128TokensIsItsKnownFigure) {
  const BertConfig base;  // Hugging Face's defaults: BERT-base, 12 x 768, FFN 3072
  // Per layer: Q, K, V and output projections 8 l h^2, the FFN 4 l h i, the two attention products 4 l^2 h.
  const double layer = 8.0 * 128 * 768 * 768 + 4.0 * 128 * 768 * 3072 + 4.0 * 128 * 128 * 768;
  EXPECT_DOUBLE_EQ(encoder_flops(base, 128), 12 * layer);
  EXPECT_NEAR(encoder_flops(base, 128) / 1e9, 22.35, 0.01);  // ~2 x 85M encoder weights x 128 tokens + attention
}

TEST(EncoderFlops, LinearPartsScaleWithLengthAndAttentionWithItsSquare) {
  BertConfig c;
  c.num_hidden_layers = 2;
  c.hidden_size = 64;
  c.intermediate_size = 256;
  const double h = 64, i = 256;
  for (const int64_t len : {1, 32, 300}) {
    const double l = static_cast<double>(len);
    EXPECT_DOUBLE_EQ(encoder_flops(c, len), 2 * (8 * l * h * h + 4 * l * h * i + 4 * l * l * h)) << len;
  }
  EXPECT_EQ(encoder_flops(c, 0), 0);
  BertConfig deeper = c;
  deeper.num_hidden_layers = 6;
  EXPECT_DOUBLE_EQ(encoder_flops(deeper, 32), 3 * encoder_flops(c, 32));
}

TEST(EncoderFlops, ModernBertSlidingLayersSeeOnlyTheirWindow) {
  const BertConfig m = bert_config_from_json({{"model_type", "modernbert"},
                                              {"hidden_size", 64},
                                              {"intermediate_size", 96},
                                              {"num_hidden_layers", 3},
                                              {"num_attention_heads", 2}},
                                             "config.json");
  ASSERT_EQ(m.modernbert.sliding_layers, (std::vector<bool>{false, true, true}));
  const double h = 64, i = 96, l = 512, window = 129;  // a token sees local_attention / 2 = 64 tokens each side
  const double linear = 8 * l * h * h + 6 * l * h * i;  // the gated FFN's Wi is twice as wide
  EXPECT_DOUBLE_EQ(encoder_flops(m, 512), 3 * linear + 4 * l * l * h + 2 * 4 * l * window * h);
  // Shorter than the window, a sliding layer computes what a global one does.
  const double s = 100;
  EXPECT_DOUBLE_EQ(encoder_flops(m, 100), 3 * (8 * s * h * h + 6 * s * h * i + 4 * s * s * h));
  // A shape without its layer pattern (sizes set by hand) counts every layer as global, and reads nothing past it.
  BertConfig bare = m;
  bare.modernbert.sliding_layers.clear();
  EXPECT_DOUBLE_EQ(encoder_flops(bare, 512), 3 * (linear + 4 * l * l * h));
}

}  // namespace
}  // namespace ragmig::model
