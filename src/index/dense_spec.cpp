// Dense index spec strings (see dense_spec.h).
#include "index/dense_spec.h"

#include <algorithm>
#include <regex>

#include "core/error.h"
#include "index/spec_syntax.h"

namespace ragmig::index {

int64_t default_nprobe(int64_t nlist) { return std::min<int64_t>(nlist, std::max<int64_t>(8, nlist / 16)); }

std::string DenseSpec::factory() const {
  switch (kind) {
    case DenseKind::kFlat: return "Flat";
    case DenseKind::kHnsw: return "HNSW" + std::to_string(hnsw_m);
    case DenseKind::kIvfFlat: return "IVF" + std::to_string(nlist) + ",Flat";
    case DenseKind::kIvfPq: return "IVF" + std::to_string(nlist) + ",PQ" + std::to_string(pq_m);
    case DenseKind::kPq: return "PQ" + std::to_string(pq_m);
    case DenseKind::kLsh: return lsh_bits > 0 ? "LSH" + std::to_string(lsh_bits) : "LSH";
  }
  return "?";
}

DenseSpec parse_dense_spec(const std::string& text) {
  const SpecParts parts = split_spec(text, "index");
  const std::string& h = parts.head;
  DenseSpec spec;
  std::smatch m;
  // Numbers without leading zeros, so that the written text is the canonical one.
  static const std::regex hnsw("HNSW([1-9][0-9]*)"), ivf_flat("IVF([1-9][0-9]*),Flat"),
      ivf_pq("IVF([1-9][0-9]*),PQ([1-9][0-9]*)"), pq("PQ([1-9][0-9]*)"), lsh("LSH([1-9][0-9]*)?");
  auto number = [&](size_t i) { return spec_integer(m[i].str(), "size", text, 1); };
  if (h == "Flat") {
    spec.kind = DenseKind::kFlat;
  } else if (std::regex_match(h, m, hnsw)) {
    spec.kind = DenseKind::kHnsw;
    spec.hnsw_m = number(1);
  } else if (std::regex_match(h, m, ivf_flat)) {
    spec.kind = DenseKind::kIvfFlat;
    spec.nlist = number(1);
  } else if (std::regex_match(h, m, ivf_pq)) {
    spec.kind = DenseKind::kIvfPq;
    spec.nlist = number(1);
    spec.pq_m = number(2);
  } else if (std::regex_match(h, m, pq)) {
    spec.kind = DenseKind::kPq;
    spec.pq_m = number(1);
  } else if (std::regex_match(h, m, lsh)) {
    spec.kind = DenseKind::kLsh;
    spec.lsh_bits = m[1].matched ? number(1) : 0;
  } else {
    throw ConfigError("unknown index spec '" + text +
                      "' (expected Flat, HNSW<M>, IVF<n>,Flat, IVF<n>,PQ<m>, PQ<m>, LSH or LSH<bits>, "
                      "optionally with (efSearch=..,efConstruction=..) or (nprobe=..))");
  }
  const bool hnsw_kind = spec.kind == DenseKind::kHnsw;
  const bool ivf_kind = spec.kind == DenseKind::kIvfFlat || spec.kind == DenseKind::kIvfPq;
  for (const auto& [key, value] : parts.params) {
    if (key == "efSearch" && hnsw_kind) spec.ef_search = spec_integer(value, key, text, 1);
    else if (key == "efConstruction" && hnsw_kind) spec.ef_construction = spec_integer(value, key, text, 1);
    else if (key == "nprobe" && ivf_kind) spec.nprobe = spec_integer(value, key, text, 1);
    else
      throw ConfigError("spec '" + text + "': parameter '" + key + "' does not apply to " + spec.factory() +
                        " (HNSW takes efSearch and efConstruction, IVF takes nprobe)");
  }
  if (ivf_kind && spec.nprobe > spec.nlist)
    throw ConfigError("spec '" + text + "': nprobe cannot exceed the " + std::to_string(spec.nlist) + " lists");
  return spec;
}

std::string to_string(const DenseSpec& spec) {
  std::vector<std::pair<std::string, std::string>> params;
  if (spec.ef_search > 0) params.emplace_back("efSearch", std::to_string(spec.ef_search));
  if (spec.ef_construction > 0) params.emplace_back("efConstruction", std::to_string(spec.ef_construction));
  if (spec.nprobe > 0) params.emplace_back("nprobe", std::to_string(spec.nprobe));
  return join_spec(spec.factory(), params);
}

}  // namespace ragmig::index
