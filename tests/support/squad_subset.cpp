// Written from the real SQuAD train folder in BEIR layout: queries, qrels and the passages they need.
#include "support/squad_subset.h"

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/atomic_file.h"
#include "support/test_support.h"
#include "text/beir.h"

namespace ragmig::testing {

void write_squad_subset(const std::filesystem::path& dir) {
  const std::string src = (data_dir() / "beir/squad-train").string();
  const text::BeirFolder beir = text::read_beir(src);
  std::set<std::string> docs, queries;
  std::ostringstream corpus, query_lines;
  const auto take = [&](const std::string& split, size_t limit) {
    const text::Qrels qrels = text::read_qrels(text::qrels_path(src, split));
    std::ostringstream out;
    out << "query-id\tcorpus-id\tscore\n";
    std::set<std::string> taken;
    for (const auto& e : qrels.entries) {
      if (taken.size() >= limit && !taken.count(e.query_id)) continue;
      taken.insert(e.query_id);
      queries.insert(e.query_id);
      docs.insert(e.doc_id);
      out << e.query_id << '\t' << e.doc_id << '\t' << e.score << '\n';
    }
    std::filesystem::create_directories(dir / "qrels");
    write_file_atomic(dir / "qrels" / (split + ".tsv"), out.str());
  };
  take("train", 400);
  take("test", 150);
  for (size_t i = 0, extra = 0; i < beir.corpus.docs.size() && extra < 300; ++i)
    if (docs.insert(beir.corpus.docs[i].id).second) ++extra;
  for (const auto& d : beir.corpus.docs)
    if (docs.count(d.id)) corpus << nlohmann::json{{"_id", d.id}, {"title", d.title}, {"text", d.text}}.dump() << '\n';
  for (const auto& q : beir.queries)
    if (queries.count(q.id)) query_lines << nlohmann::json{{"_id", q.id}, {"text", q.text}}.dump() << '\n';
  write_file_atomic(dir / "corpus.jsonl", corpus.str());
  write_file_atomic(dir / "queries.jsonl", query_lines.str());
}

}  // namespace ragmig::testing
