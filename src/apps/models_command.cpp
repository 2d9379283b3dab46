// `ragmig models`: the pretrained encoders that installed Python packages carry, by the name that
// `model.init = "package:NAME"` and `ragmig eval --model package:NAME` take, and where they were looked for.
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "apps/command.h"
#include "model/packaged_models.h"

namespace ragmig::apps {

Command add_models_command(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* sub = root.add_subcommand("models", "List the pretrained encoders that installed Python packages carry");
  sub->add_flag("--json", *json, "one JSON object: search_path and models [{name, path, model_type, hidden_size, layers, sentence_transformers}]");
  sub->footer("Looked for in $RAGMIG_MODEL_PATH (':'-separated), the Python ragmig was built against (.venv), $VIRTUAL_ENV.");
  return Command{sub, [json]() -> int {
                   const auto path = model::model_search_path();
                   const auto models = model::find_packaged_models(path);
                   if (*json) {
                     nlohmann::json out = {{"search_path", path}, {"models", nlohmann::json::array()}};
                     for (const auto& m : models)
                       out["models"].push_back({{"name", m.name}, {"path", m.path}, {"model_type", m.model_type},
                                                {"hidden_size", m.hidden_size}, {"layers", m.layers},
                                                {"sentence_transformers", m.sentence_transformers}});
                     fmt::print("{}\n", out.dump(2));
                     return kOk;
                   }
                   for (const auto& m : models)
                     fmt::print("package:{:<28} {} {}x{}{}  {}\n", m.name, m.model_type, m.layers, m.hidden_size,
                                m.sentence_transformers ? "  sentence-transformers" : "", m.path);
                   if (models.empty()) fmt::print("no packaged encoders found\n");
                   fmt::print("searched: {}\n", fmt::join(path, ", "));
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
