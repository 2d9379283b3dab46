// Exact dense retrieval and recall@k (see dense_eval.h).
#include "train/dense_eval.h"

#include <algorithm>
#include <chrono>
#include <vector>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "core/error.h"
#include "text/pairs.h"
#include "train/contrastive_loss.h"

namespace ragmig::train {

RecallResult evaluate_recall(model::DualEncoder& model, const text::Tokenizer& tokenizer,
                             const text::BeirFolder& beir, const text::Qrels& qrels, const RecallOptions& opts,
                             const torch::Device& device) {
  const auto start = std::chrono::steady_clock::now();
  // Relevant documents per query, in first-seen order of the qrels.
  std::vector<int64_t> query_rows;
  std::unordered_map<int64_t, std::unordered_set<int64_t>> relevant;
  for (const auto& e : qrels.entries) {
    auto q = beir.query_index.find(e.query_id);
    if (q == beir.query_index.end()) throw DataError(qrels.path, e.line, "unknown query id '" + e.query_id + "'");
    auto d = beir.corpus.index_of.find(e.doc_id);
    if (d == beir.corpus.index_of.end()) throw DataError(qrels.path, e.line, "unknown corpus id '" + e.doc_id + "'");
    if (e.score <= 0) continue;
    auto [it, fresh] = relevant.try_emplace(q->second);
    if (fresh) query_rows.push_back(q->second);
    it->second.insert(d->second);
  }
  if (opts.max_queries > 0 && static_cast<int64_t>(query_rows.size()) > opts.max_queries)
    query_rows.resize(static_cast<size_t>(opts.max_queries));
  if (query_rows.empty()) throw DataError(qrels.path + ": no query with a relevant document");

  // The corpus rows searched: all, or the evaluated queries' relevant passages first, then the others.
  const int64_t corpus_size = static_cast<int64_t>(beir.corpus.docs.size());
  std::vector<int64_t> doc_rows;
  if (opts.max_passages > 0 && opts.max_passages < corpus_size) {
    std::vector<char> taken(static_cast<size_t>(corpus_size), 0);
    for (int64_t row : query_rows)
      for (int64_t d : relevant.at(row))
        if (!taken[static_cast<size_t>(d)]) taken[static_cast<size_t>(d)] = 1, doc_rows.push_back(d);
    std::sort(doc_rows.begin(), doc_rows.end());
    for (int64_t d = 0; d < corpus_size && static_cast<int64_t>(doc_rows.size()) < opts.max_passages; ++d)
      if (!taken[static_cast<size_t>(d)]) doc_rows.push_back(d);
  } else {
    doc_rows.resize(static_cast<size_t>(corpus_size));
    for (int64_t d = 0; d < corpus_size; ++d) doc_rows[static_cast<size_t>(d)] = d;
  }
  std::vector<std::string> passages;
  passages.reserve(doc_rows.size());
  for (int64_t d : doc_rows) passages.push_back(text::document_text(beir.corpus.docs[static_cast<size_t>(d)]));
  std::vector<std::string> queries;
  for (int64_t row : query_rows) queries.push_back(beir.queries[static_cast<size_t>(row)].text);

  torch::Tensor p = embed_texts(model, tokenizer, passages, false, opts.max_passage_tokens, opts.batch_size, device,
                                opts.prompts.passage);
  torch::Tensor q = embed_texts(model, tokenizer, queries, true, opts.max_query_tokens, opts.batch_size, device,
                                opts.prompts.query);

  if (opts.dimensions > 0 && opts.dimensions < p.size(1)) {
    p = matryoshka_prefix(p, opts.dimensions, model->spec().normalize);
    q = matryoshka_prefix(q, opts.dimensions, model->spec().normalize);
  }
  const int64_t k = std::min<int64_t>(opts.k, p.size(0));
  double sum = 0;
  const int64_t chunk = 1024;
  for (int64_t begin = 0; begin < q.size(0); begin += chunk) {
    torch::Tensor scores = torch::matmul(q.slice(0, begin, std::min(q.size(0), begin + chunk)), p.t());
    torch::Tensor top = std::get<1>(scores.topk(k, 1)).contiguous();
    auto acc = top.accessor<int64_t, 2>();
    for (int64_t r = 0; r < top.size(0); ++r) {
      const auto& rel = relevant.at(query_rows[static_cast<size_t>(begin + r)]);
      int64_t hits = 0;
      for (int64_t j = 0; j < k; ++j) hits += rel.count(doc_rows[static_cast<size_t>(acc[r][j])]) ? 1 : 0;
      sum += static_cast<double>(hits) / static_cast<double>(rel.size());
    }
  }
  RecallResult result;
  result.queries = q.size(0);
  result.passages = p.size(0);
  result.recall = sum / static_cast<double>(q.size(0));
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace ragmig::train
