// `ragmig lora merge BASE ADAPTER OUT`: a LoRA adapter folder (ragmig's or peft's) folded into its base model,
// written as a plain model folder that transformers and sentence-transformers load without peft.
#include <fmt/format.h>

#include "apps/command.h"
#include "core/error.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "model/packaged_models.h"

namespace ragmig::apps {

Command add_lora_command(CLI::App& root) {
  struct Args {
    std::string base, adapter, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("lora", "LoRA adapters: merge one into its base model");
  sub->require_subcommand(1, 1);
  CLI::App* merge = sub->add_subcommand("merge", "Write BASE with ADAPTER merged in (W + alpha/r B A) as a model folder OUT");
  merge->add_option("base", args->base, "the base model folder or package:NAME")->required();
  merge->add_option("adapter", args->adapter, "the adapter folder (adapter_config.json, adapter_model.safetensors)")->required();
  merge->add_option("out", args->out, "the model folder to write (replaced whole if it exists)")->required();
  return Command{sub, [args]() -> int {
                   model::LoadedModel base = model::load_model_folder(model::resolve_model_reference(args->base));
                   const model::DualAdapter adapter = model::load_adapter_folder(args->adapter);
                   model::merge_dual_adapter(base.model, adapter);
                   model::SaveOptions options = model::save_options_of(base);
                   options.prompts = adapter.prompts.value_or(base.prompts);
                   model::save_model_folder(args->out, base.model, base.tokenizer, options);
                   fmt::print("{}: {} with {} ({} LoRA parameters, r = {}) merged in\n", args->out, args->base,
                              args->adapter, adapter.query.parameter_count() + (adapter.passage ? adapter.passage->parameter_count() : 0),
                              adapter.query.spec.rank);
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
