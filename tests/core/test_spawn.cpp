// spawn_process starts a real child: variables replace inherited ones, output goes to the log, and a program
// that cannot run exits 127 saying why.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/spawn.h"
#include "support/test_support.h"

namespace ragmig {
namespace {

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Spawn, EnvironmentReplacesAndOutputGoesToTheLog) {
  testing::ScratchDir dir;
  ::setenv("RAGMIG_SPAWN_TEST", "inherited", 1);
  ::setenv("RAGMIG_SPAWN_KEEP", "kept", 1);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo $RAGMIG_SPAWN_TEST $RAGMIG_SPAWN_KEEP $RAGMIG_SPAWN_NEW; exit 3"};
  o.env = {{"RAGMIG_SPAWN_TEST", "replaced"}, {"RAGMIG_SPAWN_NEW", "added"}};
  o.log_path = (dir / "log.txt").string();
  EXPECT_EQ(wait_for(spawn_process(o)), 3);
  EXPECT_EQ(read(dir / "log.txt"), "replaced kept added\n");
  EXPECT_EQ(wait_for(spawn_process(o)), 3);  // appended, not truncated
  EXPECT_EQ(read(dir / "log.txt"), "replaced kept added\nreplaced kept added\n");
}

TEST(Spawn, AProgramThatCannotRunExits127AndSaysWhy) {
  testing::ScratchDir dir;
  SpawnOptions o;
  o.argv = {"no-such-program-ragmig"};
  o.search_path = true;
  o.log_path = (dir / "log.txt").string();
  EXPECT_EQ(wait_for(spawn_process(o)), 127);
  EXPECT_NE(read(dir / "log.txt").find("cannot run no-such-program-ragmig"), std::string::npos) << read(dir / "log.txt");
  o.log_path = (dir / "missing-folder/log.txt").string();
  EXPECT_THROW(spawn_process(o), IoError);
}

}  // namespace
}  // namespace ragmig
