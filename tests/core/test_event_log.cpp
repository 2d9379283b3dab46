// EventLog: one JSON object per line, and a line torn by a writer's death is dropped on the next open, so
// every line stays valid JSON whatever point a kill -9 hit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/atomic_file.h"
#include "core/event_log.h"
#include "support/test_support.h"

namespace ragmig {
namespace {

std::vector<nlohmann::json> read_lines(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));  // throws if torn
  return out;
}

TEST(EventLog, AppendsOneObjectPerLineWithATime) {
  testing::ScratchDir dir;
  {
    EventLog log((dir / "events.jsonl").string());
    log.append({{"event", "start"}});
    log.append({{"event", "done"}, {"step", 3}});
  }
  const auto lines = read_lines(dir / "events.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["step"], 3);
  EXPECT_TRUE(lines[0]["time"].is_number());
}

TEST(EventLog, ATornLastLineIsDroppedBeforeTheNextAppend) {
  // A log cut at every byte of its last line (and, for a long line, across the 4 KiB read blocks).
  const std::string good = nlohmann::json({{"event", "start"}}).dump() + "\n";
  const std::string last = nlohmann::json({{"event", "progress"}, {"pad", std::string(9000, 'x')}}).dump() + "\n";
  std::mt19937 rng(3);
  std::vector<size_t> cuts = {0, 1, last.size() - 1, 4095, 4096, 4097, 8192};
  for (int i = 0; i < 20; ++i) cuts.push_back(std::uniform_int_distribution<size_t>(1, last.size() - 1)(rng));
  for (const size_t cut : cuts) {
    testing::ScratchDir dir;
    write_file_atomic(dir / "events.jsonl", good + last.substr(0, cut));
    EventLog((dir / "events.jsonl").string()).append({{"event", "resumed"}});
    const auto lines = read_lines(dir / "events.jsonl");
    ASSERT_EQ(lines.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(lines[0]["event"], "start");
    EXPECT_EQ(lines[1]["event"], "resumed");
  }
  // Only a torn line: the file restarts empty.
  testing::ScratchDir dir;
  write_file_atomic(dir / "events.jsonl", "{\"event\": \"sta");
  EventLog((dir / "events.jsonl").string()).append({{"event", "start"}});
  EXPECT_EQ(read_lines(dir / "events.jsonl").size(), 1u);
}

}  // namespace
}  // namespace ragmig
