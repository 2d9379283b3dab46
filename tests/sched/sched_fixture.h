// Shared by the tests that drive the real `ragmig submit | run | status | cancel`: a state folder, the
// commands with --state filled in, and waiting for a condition on `status --json`.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {

class SchedFixture : public ::testing::Test {
 protected:
  std::string state() const { return (dir_ / "state").string(); }

  ProcessResult ragmig(std::vector<std::string> args) {
    args.insert(args.begin(), RAGMIG_BINARY);
    args.push_back("--state");
    args.push_back(state());
    return run_process(args);
  }

  int64_t submit(std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    const auto r = ragmig(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return std::stoll(r.output);
  }

  nlohmann::json status() {
    const auto r = ragmig({"status", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output);
  }

  nlohmann::json job(int64_t id) {
    const auto r = ragmig({"status", std::to_string(id), "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output);
  }

  /// A scheduler in the background; its log goes to a file named after `tag`.
  std::unique_ptr<BackgroundProcess> start_scheduler(const std::vector<std::string>& options, const std::string& tag) {
    std::vector<std::string> argv = {RAGMIG_BINARY, "run", "--state", state()};
    argv.insert(argv.end(), options.begin(), options.end());
    return std::make_unique<BackgroundProcess>(argv, (dir_ / ("scheduler-" + tag + ".log")).string());
  }

  /// Polls `status --json` until `done(status)` or `seconds` pass; returns whether it happened.
  bool wait_for(const std::function<bool(const nlohmann::json&)>& done, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done(status())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  /// Whether `path` exists within 30 s: a job's own sign that it got somewhere (a trap set, a file written).
  static bool wait_until_exists(const std::filesystem::path& path) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return std::filesystem::exists(path);
  }

  static std::string state_of(const nlohmann::json& status, int64_t id) {
    for (const auto& j : status["jobs"])
      if (j["id"] == id) return j["state"];
    return "";
  }

  ScratchDir dir_;
};

}  // namespace ragmig::testing
