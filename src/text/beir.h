// Readers for the BEIR layout: corpus.jsonl ({"_id","title","text"}), queries.jsonl ({"_id","text"}) and
// qrels/<split>.tsv, each plain or gzip-compressed. Every malformed row is a DataError naming file:line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ragmig::text {

struct Document {
  std::string id, title, text;
};

struct Query {
  std::string id, text;
};

struct Corpus {
  std::vector<Document> docs;
  std::unordered_map<std::string, int64_t> index_of;  ///< id -> position in docs
};

struct QrelEntry {
  std::string query_id, doc_id;
  int32_t score = 0;
  int64_t line = 0;  ///< 1-based line in the qrels file, for error messages downstream
};

struct Qrels {
  std::string path;
  std::vector<QrelEntry> entries;
};

/// Rows {"_id", "title" (optional, may be null), "text"}; ids may be JSON numbers. Blank lines are skipped.
/// Throws IoError, or DataError(file, line) for bad JSON, a missing or ill-typed field, a duplicate id,
/// and DataError("... is empty") for a file with no rows. max_rows > 0: only the first that many.
Corpus read_corpus(const std::string& path, int64_t max_rows = 0);
/// read_corpus, handing each document to `each` as it is read and keeping only the ids (titles and texts
/// empty): for a consumer that needs the text once, such as a BM25 index build, in the memory of the ids.
Corpus read_corpus_ids(const std::string& path, const std::function<void(const Document&)>& each);

/// Rows {"_id", "text"}; same rules as read_corpus.
std::vector<Query> read_queries(const std::string& path, int64_t max_rows = 0);

/// BEIR TSV "query-id<TAB>corpus-id<TAB>score" with an optional header line, or TREC "qid 0 docid rel"
/// (whitespace separated). Throws IoError, or DataError(file, line) for a malformed row.
Qrels read_qrels(const std::string& path);

struct BeirFolder {
  Corpus corpus;
  std::vector<Query> queries;
  std::unordered_map<std::string, int64_t> query_index;  ///< query id -> position in queries
};

enum class CorpusText { kKeep, kDrop };

/// Reads dir/corpus.jsonl[.gz] and dir/queries.jsonl[.gz]. Throws IoError if either is missing. `each` (when
/// set) sees every document as it is read; with CorpusText::kDrop the folder keeps ids only (read_corpus_ids).
BeirFolder read_beir(const std::string& dir, CorpusText text = CorpusText::kKeep,
                     const std::function<void(const Document&)>& each = {});

/// dir/qrels/<split>.tsv (or .tsv.gz); IoError if neither exists.
std::string qrels_path(const std::string& dir, const std::string& split);

/// Whether dir/qrels has <split>.tsv or <split>.tsv.gz (what qrels_path finds).
bool has_qrels(const std::string& dir, const std::string& split);

/// Throws ConfigError naming `what` (the option or config key that chose the split) and the splits dir/qrels
/// holds, unless has_qrels: checked before work that would end on the missing file.
void require_qrels(const std::string& dir, const std::string& split, const std::string& what);

}  // namespace ragmig::text
