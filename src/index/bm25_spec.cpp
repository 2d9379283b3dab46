// BM25 spec strings (see bm25_spec.h).
#include "index/bm25_spec.h"

#include "core/error.h"
#include "index/spec_syntax.h"

namespace ragmig::index {

Bm25Spec parse_bm25_spec(const std::string& text) {
  const SpecParts parts = split_spec(text, "BM25");
  if (parts.head != "BM25") throw ConfigError("not a BM25 spec: '" + text + "' (expected BM25(k1=..,b=..))");
  Bm25Spec spec;
  for (const auto& [key, value] : parts.params) {
    if (key == "k1") {
      spec.k1 = spec_number(value, key, text);
      if (spec.k1 < 0) throw ConfigError("spec '" + text + "': k1 must be >= 0");
    } else if (key == "b") {
      spec.b = spec_number(value, key, text);
      if (spec.b < 0 || spec.b > 1) throw ConfigError("spec '" + text + "': b must be in [0, 1]");
    } else if (key == "fields") {
      if (value == "flat") spec.fields = Bm25Fields::kFlat;
      else if (value == "multi") spec.fields = Bm25Fields::kMulti;
      else throw ConfigError("spec '" + text + "': fields expects flat or multi, got '" + value + "'");
    } else if (key == "stemmer") {
      spec.stemmer = parse_stemmer(value);
    } else if (key == "length") {
      if (value == "lucene") spec.length = Bm25Length::kLucene;
      else if (value == "exact") spec.length = Bm25Length::kExact;
      else throw ConfigError("spec '" + text + "': length expects lucene or exact, got '" + value + "'");
    } else {
      throw ConfigError("spec '" + text + "': unknown BM25 parameter '" + key + "' (k1, b, fields, stemmer, length)");
    }
  }
  return spec;
}

std::string to_string(const Bm25Spec& spec) {
  const Bm25Spec defaults;
  std::vector<std::pair<std::string, std::string>> params = {{"k1", format_number(spec.k1)},
                                                              {"b", format_number(spec.b)}};
  if (spec.fields != defaults.fields) params.emplace_back("fields", "multi");
  if (spec.stemmer != defaults.stemmer) params.emplace_back("stemmer", to_string(spec.stemmer));
  if (spec.length != defaults.length) params.emplace_back("length", "exact");
  return join_spec("BM25", params);
}

}  // namespace ragmig::index
