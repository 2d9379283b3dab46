// Line reading of plain and gzip files, with line numbers and without the line ends.
#include "core/line_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"

namespace ragmig {
namespace {

std::vector<std::string> all_lines(const std::string& path) {
  LineReader r(path);
  std::vector<std::string> out;
  std::string line;
  while (r.next(line)) {
    out.push_back(line);
    EXPECT_EQ(r.line_number(), static_cast<int64_t>(out.size()));
  }
  return out;
}

TEST(LineReader, PlainFileWithCrLfAndNoFinalNewline) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "a.txt", "one\r\ntwo\n\nlast");
  EXPECT_EQ(all_lines(dir / "a.txt"), (std::vector<std::string>{"one", "two", "", "last"}));
}

TEST(LineReader, GzipFileLongerThanOneBuffer) {
  testing::ScratchDir dir;
  const std::string path = dir / "a.txt.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  std::string expected_last;
  for (int i = 0; i < 20000; ++i) {
    std::string line = "line number " + std::to_string(i) + std::string(static_cast<size_t>(i % 37), 'x');
    gzprintf(f, "%s\n", line.c_str());
    expected_last = line;
  }
  gzclose(f);
  auto lines = all_lines(path);
  ASSERT_EQ(lines.size(), 20000u);
  EXPECT_EQ(lines.back(), expected_last);
  EXPECT_EQ(resolve_maybe_gz((dir / "a.txt").string()), path);
}

TEST(LineReader, MissingFileIsAnIoError) {
  testing::ScratchDir dir;
  EXPECT_THROW(LineReader((dir / "absent").string()), IoError);
  EXPECT_THROW(resolve_maybe_gz((dir / "absent").string()), IoError);
  EXPECT_THROW(LineReader(dir.path().string()), IoError);
}

}  // namespace
}  // namespace ragmig
