// Base64 against RFC 4648's test vectors, both ways, and the malformed inputs decoding refuses.
#include "core/base64.h"

#include <gtest/gtest.h>

namespace ragmig {
namespace {

TEST(Base64, Rfc4648VectorsBothWays) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},         {"f", "Zg=="},     {"fo", "Zm8="},
                                                         {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(base64_encode(bytes.data(), bytes.size()), text);
    EXPECT_EQ(base64_decode(text), bytes) << text;
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(base64_decode(base64_encode(all.data(), all.size())), all);
}

TEST(Base64, MalformedTextIsRefused) {
  for (const char* bad : {"Zg=", "Zg=a", "Z===", "Zm9v!A==", "Zg==Zm9v", "Zm 9v"})
    EXPECT_FALSE(base64_decode(bad)) << bad;
}

}  // namespace
}  // namespace ragmig
