// Fusion specs (see fusion_spec.h).
#include "index/fusion_spec.h"

#include "core/error.h"
#include "index/spec_syntax.h"

namespace ragmig::index {

FusionSpec parse_fusion_spec(const std::string& text) {
  const SpecParts parts = split_spec(text, "fusion");
  FusionSpec spec;
  if (parts.head == "RRF") {
    spec.kind = FusionKind::kRrf;
  } else if (parts.head == "Linear") {
    spec.kind = FusionKind::kLinear;
  } else {
    throw ConfigError("unknown fusion spec '" + text + "' (expected RRF(k=60) or Linear(alpha=0.5))");
  }
  for (const auto& [key, value] : parts.params) {
    if (key == "k" && spec.kind == FusionKind::kRrf) {
      spec.rrf_k = spec_number(value, key, text);
      if (spec.rrf_k < 0) throw ConfigError("spec '" + text + "': k must be >= 0");
    } else if (key == "alpha" && spec.kind == FusionKind::kLinear) {
      spec.alpha = spec_number(value, key, text);
      if (spec.alpha < 0 || spec.alpha > 1) throw ConfigError("spec '" + text + "': alpha must be in [0, 1]");
    } else {
      throw ConfigError("spec '" + text + "': unknown parameter '" + key + "' (RRF takes k, Linear takes alpha)");
    }
  }
  return spec;
}

std::string to_string(const FusionSpec& spec) {
  if (spec.kind == FusionKind::kRrf) return join_spec("RRF", {{"k", format_number(spec.rrf_k)}});
  return join_spec("Linear", {{"alpha", format_number(spec.alpha)}});
}

}  // namespace ragmig::index
