// Atomic writes leave the old file or the whole new one, and no temporary files behind.
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

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
  EXPECT_EQ(crc32_of("6789", crc32_of("12345")), 0xCBF43926u) << "in pieces";
}

TEST(AtomicFile, WriteFileInPiecesJoinsThem) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "f", {"ab", "", "cde"});
  EXPECT_EQ(read_file(dir / "f"), "abcde");
}

// What a writer killed before its rename leaves is removed by the next write of the same file; another live
// process's temporary, other files' and names that only look alike are not touched.
// A file streamed piece by piece appears whole at commit(); until then the old one is what readers see, and a
// writer dropped before it (an exception mid-write) leaves the old file and no temporary.
TEST(AtomicFile, AStreamedFileAppearsWholeAtCommitOrNotAtAll) {
  testing::ScratchDir dir;
  const auto path = dir / "ckpt.pt";
  write_file_atomic(path, "old");
  const auto entries = [&] {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.insert(e.path().filename().string());
    return names;
  };
  {
    AtomicFileWriter file(path);
    file.write("new ");
    file.write("bytes");
    EXPECT_EQ(read_file(path), "old");
    EXPECT_EQ(entries().size(), 2u) << "the temporary beside it";
    EXPECT_EQ(file.size(), 9u);
  }  // dropped uncommitted
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(entries(), std::set<std::string>{"ckpt.pt"});

  AtomicFileWriter file(path);
  file.write("new ");
  file.write("");
  file.write("bytes");
  file.commit();
  EXPECT_EQ(read_file(path), "new bytes");
  EXPECT_EQ(entries(), std::set<std::string>{"ckpt.pt"});
  EXPECT_THROW(file.write("more"), IoError);
  EXPECT_THROW(file.commit(), IoError);
  EXPECT_THROW(AtomicFileWriter(dir / "no/such/f.pt"), IoError);
}

// Small pieces are gathered and large ones written as they are: every mix of the two lands in order, and what was
// gathered reaches the file at commit().
TEST(AtomicFile, GatheredAndLargePiecesLandInOrder) {
  testing::ScratchDir dir;
  const auto path = dir / "run.txt";
  const std::string large((1 << 20) + 7, 'L'), almost((1 << 20) - 3, 'a');
  std::string expected;
  AtomicFileWriter file(path);
  for (const std::string& piece : {std::string("first\n"), large, std::string("x"), almost, std::string("yz"), large,
                                   std::string("last\n")}) {
    file.write(piece);
    expected += piece;
  }
  EXPECT_EQ(file.size(), expected.size());
  file.commit();
  EXPECT_EQ(read_file(path), expected);
}

TEST(AtomicFile, TheNextWriteRemovesTemporariesOfDeadWriters) {
  testing::ScratchDir dir;
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = "f.json.tmp." + std::to_string(dead);
  for (const std::string& name : {stale, std::string("f.json.tmp.1"), "g.json.tmp." + std::to_string(dead),
                                 std::string("f.json.tmp.x1"), std::string("f.json.tmpfile")})
    std::ofstream(dir / name) << "half";
  write_file_atomic(dir / "f.json", "{}");
  std::set<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"f.json", "f.json.tmp.1", "g.json.tmp." + std::to_string(dead), "f.json.tmp.x1",
                                         "f.json.tmpfile"}));
}

}  // namespace
}  // namespace ragmig
