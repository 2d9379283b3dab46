// Atomic writes leave the old file or the whole new one, and no temporary files behind.
#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace ragmig {
namespace {

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporaries) {
  testing::ScratchDir dir;
  const auto path = dir / "f.txt";
  write_file_atomic(path, "one");
  write_file_atomic(path, "two two");
  EXPECT_EQ(read_file(path), "two two");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(AtomicFile, FailsCleanlyInAMissingFolder) {
  testing::ScratchDir dir;
  EXPECT_THROW(write_file_atomic(dir / "no/such/f.txt", "x"), IoError);
  EXPECT_THROW(read_file(dir / "absent"), IoError);
}

TEST(AtomicFile, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32_of("123456789"), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(crc32_of(""), 0u);
}

}  // namespace
}  // namespace ragmig
