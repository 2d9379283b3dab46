// make_token_batch: padding to the longest row, row-major layout, and the mask.
#include "text/token_batch.h"

#include <gtest/gtest.h>

namespace ragmig::text {
namespace {

TEST(TokenBatch, PadsToLongest) {
  const TokenBatch b = make_token_batch({{2, 7, 3}, {2, 3}, {2, 8, 9, 10, 3}}, 0);
  EXPECT_EQ(b.rows, 3);
  EXPECT_EQ(b.cols, 5);
  EXPECT_EQ(b.ids, (std::vector<int64_t>{2, 7, 3, 0, 0, 2, 3, 0, 0, 0, 2, 8, 9, 10, 3}));
  EXPECT_EQ(b.mask, (std::vector<int64_t>{1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1}));
}

TEST(TokenBatch, PadIdAndEdgeCases) {
  const TokenBatch b = make_token_batch({{5}, {}}, 99);
  EXPECT_EQ(b.rows, 2);
  EXPECT_EQ(b.cols, 1);
  EXPECT_EQ(b.ids, (std::vector<int64_t>{5, 99}));
  EXPECT_EQ(b.mask, (std::vector<int64_t>{1, 0}));
  // Texts a tokenizer without special tokens encodes to nothing still make a batch: one column of padding.
  const TokenBatch none = make_token_batch({{}, {}}, 7);
  EXPECT_EQ(none.cols, 1);
  EXPECT_EQ(none.ids, (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(none.mask, (std::vector<int64_t>{0, 0}));
  const TokenBatch e = make_token_batch({}, 0);
  EXPECT_EQ(e.rows, 0);
  EXPECT_EQ(e.cols, 0);
  EXPECT_TRUE(e.ids.empty());
}

}  // namespace
}  // namespace ragmig::text
