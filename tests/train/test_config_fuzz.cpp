// Every key of the training config given values of every type and edge (what a typo or a script's bug writes):
// the config table and validate() either accept it or refuse it with a ConfigError naming the key — never another
// exception — and what they accept prints (`--print-config`).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config_table.h"
#include "core/error.h"
#include "train/train_config.h"

namespace ragmig::train {
namespace {

TEST(TrainConfigFuzz, EveryKeyWithEveryEdgeValueIsAcceptedOrRefusedByName) {
  const std::vector<std::string> values = {
      "0", "-1", "1", "9223372036854775807", "-9223372036854775808", "1e308", "-1e308", "0.5", "nan", "inf",
      "true", "\"\"", "\"x\"", "\"-1\"", "[]", "[0]", "[-1, 9223372036854775807]", "[\"\"]", "{ a = 1 }"};
  TrainConfig defaults;
  {
    ConfigTable table = make_config_table(defaults);
    table.apply_override("data.pairs=pairs.jsonl");
    ASSERT_NO_THROW(validate(defaults)) << "the base every edit starts from";
  }
  std::vector<std::string> keys;
  const ConfigTable all = make_config_table(defaults);
  for (const auto& field : all.fields()) keys.push_back(field.key);
  ASSERT_GT(keys.size(), 50u);
  int accepted = 0, refused = 0;
  for (const std::string& key : keys)
    for (const std::string& value : values) {
      TrainConfig cfg;
      ConfigTable table = make_config_table(cfg);
      try {
        if (key != "data.beir") table.apply_override("data.pairs=pairs.jsonl");  // else no config is valid
        table.apply_override(key + "=" + value);
        validate(cfg);
        (void)table.to_json().dump();
        ++accepted;
      } catch (const ConfigError& e) {
        ++refused;
        if (std::string(e.what()).find(key) == std::string::npos)
          ADD_FAILURE() << key << "=" << value << ": the error does not name the key: " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << key << "=" << value << " escaped as: " << e.what();
      }
    }
  std::printf("%zu keys x %zu values: %d accepted, %d refused\n", keys.size(), values.size(), accepted, refused);
  EXPECT_GT(refused, accepted);
}

// Sizes no machine holds are refused by name before the run starts (they failed as an allocation, after minutes
// of swapping or with LibTorch's message, exit 1).
TEST(TrainConfigFuzz, SizesNoMachineHoldsAreRefusedByName) {
  const auto message = [](const std::string& assignment, const std::string& also = "model.pooling=mean") {
    TrainConfig cfg;
    ConfigTable table = make_config_table(cfg);
    table.apply_override("data.pairs=pairs.jsonl");
    table.apply_override(assignment);
    table.apply_override(also);
    try {
      validate(cfg);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("model.layers=100000000").find("'model.layers', 'model.intermediate_size'"), std::string::npos);
  EXPECT_NE(message("model.layers=100000000").find("make a model of 1.97e+13 weights; a new model has at most 1e+11"),
            std::string::npos)
      << message("model.layers=100000000");
  EXPECT_EQ(message("model.layers=24"), "accepted") << "BERT-large's depth at the default width";
  EXPECT_EQ(message("model.layers=100000000", "model.init=package:x"), "accepted")
      << "model.init's folder has its own sizes (and the weights to check them against)";
  EXPECT_NE(message("train.threads=4096").find("'train.threads': must be in [0, 1024]"), std::string::npos);
  EXPECT_NE(message("train.hard_negatives=100000000").find("passages a step"), std::string::npos);
  EXPECT_NE(message("model.dense_dim=9223372036854775807").find("'model.dense_dim': must be <= 1048576"),
            std::string::npos);
}

// eval.at_steps past the last step would never be evaluated (the run ended without them, silently).
TEST(TrainConfigFuzz, EvalStepsPastTheLastStepAreRefused) {
  const auto message = [](const std::string& at_steps) {
    TrainConfig cfg;
    ConfigTable table = make_config_table(cfg);
    for (const char* s : {"data.beir=beir", "eval.split=dev", "train.max_steps=100"}) table.apply_override(s);
    table.apply_override("eval.at_steps=" + at_steps);
    try {
      validate(cfg);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("[25, 50, 100]"), "accepted") << "the last step is one";
  EXPECT_NE(message("[25, 500]").find("config key 'eval.at_steps': step 500 is past train.max_steps = 100: it would "
                                      "never be evaluated"),
            std::string::npos)
      << message("[25, 500]");
}

// The loss's terms are refused by name where sentence-transformers refuses them, and where they would do nothing.
TEST(TrainConfigFuzz, LossTermsAreCheckedByName) {
  const auto message = [](const std::vector<std::string>& sets) {
    TrainConfig cfg;
    ConfigTable table = make_config_table(cfg);
    table.apply_override("data.pairs=pairs.jsonl");
    for (const auto& s : sets) table.apply_override(s);
    try {
      validate(cfg);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({"train.loss_directions=[\"query_to_doc\", \"doc_to_query\"]", "train.loss_partition=per_direction"}),
            "accepted");
  EXPECT_EQ(message({"train.loss_directions=[\"query_to_doc\", \"query_to_query\", \"doc_to_query\", \"doc_to_doc\"]"}),
            "accepted");
  EXPECT_NE(message({"train.loss_directions=[\"doc_to_query\"]"}).find("must include query_to_doc"), std::string::npos);
  EXPECT_NE(message({"train.loss_directions=[\"query_to_doc\", \"query_to_doc\"]"}).find("lists query_to_doc twice"),
            std::string::npos);
  EXPECT_NE(message({"train.loss_directions=[\"query_to_doc\", \"q2d\"]"}).find("(got \"q2d\")"), std::string::npos);
  EXPECT_NE(message({"train.loss_directions=[\"query_to_doc\", \"doc_to_doc\"]", "train.loss_partition=per_direction"})
                .find("'train.loss_partition'"),
            std::string::npos);
  EXPECT_NE(message({"train.hardness_mode=all_negatives"}).find("'train.hardness_strength': must be positive"),
            std::string::npos);
  EXPECT_NE(message({"train.hardness_mode=hard_negatives", "train.hardness_strength=5"}).find("set train.hard_negatives"),
            std::string::npos);
  EXPECT_EQ(message({"train.hardness_mode=hard_negatives", "train.hardness_strength=5", "train.hard_negatives=1"}),
            "accepted");
}

}  // namespace
}  // namespace ragmig::train
