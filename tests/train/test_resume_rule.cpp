// The resume rule (train/resume_rule.h) as a table: which changed keys a run folder refuses and which it takes.
#include <gtest/gtest.h>

#include "train/resume_rule.h"

namespace ragmig::train {
namespace {

using nlohmann::json;

json config() {
  return {{"data", {{"max_passage_tokens", 64}, {"pairs", "p.jsonl"}}},
          {"model", {{"hidden_size", 32}, {"init", ""}}},
          {"train", {{"lr", 1e-3}, {"max_steps", 40}, {"batch_size", 16}, {"seed", 7}, {"device", "cpu"}}},
          {"eval", {{"split", "test"}}}};
}

TEST(ResumeRule, ShapeDataAndBatchKeysAreRefusedSteeringKeysAllowed) {
  for (const char* key : {"model.hidden_size", "model.init", "data.max_passage_tokens", "data.pairs",
                          "train.batch_size", "train.seed", "train.hard_negatives", "train.optimizer",
                          "train.accumulation", "parallel.replicas"})
    EXPECT_FALSE(may_change_on_resume(key)) << key;
  for (const char* key :
       {"train.max_steps", "train.lr", "train.warmup_steps", "train.checkpoint_every", "train.threads", "train.device",
        "train.precision", "train.bf16_residual", "train.activation_checkpointing", "eval.split", "eval.at_steps",
        "parallel.backend", "parallel.debug_kill_step"})
    EXPECT_TRUE(may_change_on_resume(key)) << key;
}

TEST(ResumeRule, ComparesEveryKeyAndNamesBothValues) {
  EXPECT_TRUE(compare_for_resume(config(), config()).refused.empty());
  EXPECT_TRUE(compare_for_resume(config(), config()).allowed.empty());

  json after = config();
  after["model"]["hidden_size"] = 64;
  after["data"]["pairs"] = "other.jsonl";
  after["train"]["lr"] = 5e-4;
  after["train"]["max_steps"] = 80;
  after["train"]["new_key_of_a_later_version"] = 1;  // the old config.json lacks it: not compared
  const ResumeCheck check = compare_for_resume(config(), after);
  ASSERT_EQ(check.refused.size(), 2u);
  EXPECT_EQ(check.refused[0].key, "data.pairs");
  EXPECT_EQ(check.refused[1].key, "model.hidden_size");
  EXPECT_EQ(check.refused[1].before, 32);
  EXPECT_EQ(check.refused[1].after, 64);
  ASSERT_EQ(check.allowed.size(), 2u);
  EXPECT_EQ(check.allowed[0].key, "train.lr");
  EXPECT_EQ(check.allowed[1].key, "train.max_steps");

  const std::string msg = refusal_message("runs/a", check.refused);
  EXPECT_NE(msg.find("run folder runs/a was trained with"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.hidden_size=32 (this config says 64)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("data.pairs=\"p.jsonl\" (this config says \"other.jsonl\")"), std::string::npos) << msg;
  EXPECT_NE(msg.find("use a new --run-dir"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ragmig::train
