// Fuzzes the training config (TOML through ConfigTable, as `ragmig train CONFIG` and a sweep's base read it):
// the file, validate(), a --set override taken from its first line, and the resume rule comparing the result
// with the defaults (what a restarted run does with the run folder's config.json).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "train/resume_rule.h"
#include "train/train_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] {
    ragmig::train::TrainConfig defaults;
    const nlohmann::json before = ragmig::train::make_config_table(defaults).to_json();
    ragmig::train::TrainConfig cfg;
    ragmig::ConfigTable table = ragmig::train::make_config_table(cfg);
    table.load_string(text, "fuzz.toml");
    const nlohmann::json after = table.to_json();
    ragmig::train::compare_for_resume(before, after);
    ragmig::train::compare_for_resume(after, before);
    ragmig::train::validate(cfg);
  });
  ragmig::fuzz::expect_typed_errors([&] {
    ragmig::train::TrainConfig cfg;
    ragmig::ConfigTable table = ragmig::train::make_config_table(cfg);
    table.apply_override(text.substr(0, text.find('\n')));
  });
  return 0;
}
