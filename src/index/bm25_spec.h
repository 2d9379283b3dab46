// The BM25 spec string: `BM25(k1=0.9,b=0.4)` plus, only when not the default, `fields=multi` (title and text
// scored as two Lucene fields and summed, Pyserini's "multifield") instead of one title+text field ("flat"),
// `stemmer=english|none`, and `length=exact` instead of Lucene's lossy one-byte document lengths.
#pragma once

#include <string>

#include "index/analyzer.h"

namespace ragmig::index {

enum class Bm25Fields { kFlat, kMulti };
enum class Bm25Length { kLucene, kExact };

struct Bm25Spec {
  double k1 = 0.9;  ///< Anserini/Pyserini's defaults
  double b = 0.4;
  Bm25Fields fields = Bm25Fields::kFlat;
  Stemmer stemmer = Stemmer::kPorter;
  Bm25Length length = Bm25Length::kLucene;

  bool operator==(const Bm25Spec&) const = default;
};

/// "BM25" alone takes the defaults; unknown keys, k1 < 0 or b outside [0, 1] are ConfigErrors.
Bm25Spec parse_bm25_spec(const std::string& spec);
/// Canonical form: k1 and b always, the other keys only when not at their defaults.
std::string to_string(const Bm25Spec& spec);

}  // namespace ragmig::index
