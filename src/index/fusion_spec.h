// How two ranked lists are fused, as a spec string: `RRF(k=60)` or `Linear(alpha=0.5)` (index/fusion.h fuses
// them). Kept apart from the fusing itself, so that what only checks a spec (a sweep file) links no FAISS.
#pragma once

#include <string>

namespace ragmig::index {

enum class FusionKind { kRrf, kLinear };

/// `RRF(k=60)` or `Linear(alpha=0.5)`: alpha weighs the first list (dense in ragmig eval), 1 - alpha the
/// second. "RRF" and "Linear" alone take those defaults; to_string always writes the parameter.
struct FusionSpec {
  FusionKind kind = FusionKind::kRrf;
  double rrf_k = 60;
  double alpha = 0.5;
  bool operator==(const FusionSpec&) const = default;
};

FusionSpec parse_fusion_spec(const std::string& spec);
std::string to_string(const FusionSpec& spec);

}  // namespace ragmig::index
