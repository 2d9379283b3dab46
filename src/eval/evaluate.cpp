// The evaluation pipeline (see evaluate.h): read, judge, retrieve, fuse or re-score, write the run, score.
#include "eval/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/clock.h"
#include "core/error.h"
#include "core/line_reader.h"
#include "core/path_check.h"
#include "core/strings.h"
#include "eval/run_file.h"
#include "index/bm25_index.h"
#include "index/dense_spec.h"
#include "index/fusion.h"
#include "model/st_folder.h"
#include "model/training_record.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/query_holdout.h"

namespace ragmig::eval {
namespace {

using Clock = std::chrono::steady_clock;

// The judgments of the queries `ids` only.
Judgments restrict_to(const Judgments& judgments, const std::vector<std::string>& ids) {
  Judgments out;
  out.source = judgments.source;
  for (const auto& id : ids)
    if (const auto it = judgments.by_query.find(id); it != judgments.by_query.end()) out.by_query.insert(*it);
  return out;
}

HitLists hit_lists(const index::SearchResult& r) {
  HitLists out(static_cast<size_t>(r.queries));
  for (int64_t q = 0; q < r.queries; ++q)
    for (int64_t j = 0; j < r.k; ++j)
      if (r.id(q, j) >= 0) out[static_cast<size_t>(q)].push_back(index::Hit{r.id(q, j), r.score(q, j)});
  return out;
}

// Inner products of one query with the candidate rows, best first (ties by row), cut to k.
std::vector<index::Hit> rescore(const std::vector<index::Hit>& candidates, const float* query,
                                const index::FloatMatrix& docs, int64_t k) {
  std::vector<index::Hit> out;
  for (const index::Hit& c : candidates) {
    const float* d = docs.row(c.doc);
    float s = 0;
    for (int64_t j = 0; j < docs.cols; ++j) s += query[j] * d[j];
    out.push_back(index::Hit{c.doc, s});
  }
  std::sort(out.begin(), out.end(), [](const index::Hit& a, const index::Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  });
  if (static_cast<int64_t>(out.size()) > k) out.resize(static_cast<size_t>(k));
  return out;
}

std::function<std::string(int64_t)> doc_id_of(const text::BeirFolder& beir) {
  return [&beir](int64_t row) { return beir.corpus.docs[static_cast<size_t>(row)].id; };
}

// The metrics of one retriever's hits, each list cut to k, as evaluate() scores its run.
MetricReport score_hits(const std::vector<std::string>& query_ids, const HitLists& hits, int64_t k,
                        const std::function<std::string(int64_t)>& doc_id, const Judgments& judgments,
                        const EvalOptions& o) {
  return evaluate_run(hits_to_run(query_ids, hits, doc_id, k), judgments, o.metrics, o.metric_options);
}

// Cuts each query's two lists to the depth the rule gives it, and records the mean depth and the pool recall it
// gave beside that of each fixed depth of the grid (reported only: the rule was fitted on validation queries).
void cut_to_adaptive_depth(const std::vector<std::string>& query_ids, HitLists& dense, HitLists& sparse,
                           const Judgments& judgments, const std::function<std::string(int64_t)>& doc_id,
                           EvalResult::AdaptiveDepth& out) {
  out.fixed_recall.assign(out.rule.depths.size(), 0);
  int64_t judged = 0;
  double depth_sum = 0;
  for (size_t q = 0; q < query_ids.size(); ++q) {
    const int64_t depth = choose_depth(out.rule, dense[q], sparse[q]);
    depth_sum += static_cast<double>(depth);
    if (const auto it = judgments.by_query.find(query_ids[q]); it != judgments.by_query.end()) {
      ++judged;
      out.pool_recall += pool_recall(dense[q], sparse[q], depth, it->second, doc_id);
      for (size_t d = 0; d < out.rule.depths.size(); ++d)
        out.fixed_recall[d] += pool_recall(dense[q], sparse[q], out.rule.depths[d], it->second, doc_id);
    }
    if (static_cast<int64_t>(dense[q].size()) > depth) dense[q].resize(static_cast<size_t>(depth));
    if (static_cast<int64_t>(sparse[q].size()) > depth) sparse[q].resize(static_cast<size_t>(depth));
  }
  out.mean_depth = depth_sum / static_cast<double>(std::max<size_t>(query_ids.size(), 1));
  if (judged > 0) {
    out.pool_recall /= static_cast<double>(judged);
    for (double& r : out.fixed_recall) r /= static_cast<double>(judged);
  }
}

// The BM25 side as the corpus is about to be read: the cached index when present and intact, else a builder
// that every document is handed to as it is read, so an evaluation by BM25 alone never holds the corpus text.
struct Bm25Start {
  std::optional<index::Bm25Index> index;
  std::unique_ptr<index::Bm25Builder> builder;
  std::string path;  // the cache entry ("" without a cache)
  double seconds = 0;
};

Bm25Start start_bm25(const std::string& corpus_file, const EvalOptions& o, const EvalCache& cache, EvalResult& result) {
  const auto t0 = Clock::now();
  Bm25Start start;
  const index::Bm25Spec spec = index::parse_bm25_spec(o.bm25_spec);
  if (cache.enabled())
    start.path = cache.path("bm25",
                            hash_parts({"bm25-v2", hash_file(corpus_file), index::to_string(spec)}) + "-" +
                                file_safe(index::to_string(spec)),
                            ".idx");
  if (cache.enabled() && std::filesystem::exists(start.path)) {
    try {
      start.index.emplace(index::Bm25Index::load(start.path));
    } catch (const Error& e) {
      result.warnings.push_back(std::string("ignoring a damaged cache entry, rebuilding it: ") + e.what());
    }
  }
  if (!start.index) start.builder = std::make_unique<index::Bm25Builder>(spec, o.threads);
  start.seconds = seconds_since(t0);
  return start;
}

struct Bm25Side {
  std::optional<index::Bm25Index> index;
  HitLists hits;  // empty unless searched up front
  double index_seconds = 0, search_seconds = 0;
  int64_t without_terms = 0;
};

// The BM25 index once the corpus has been read (and handed to start.builder, if any), and with `search` the
// hits of every query; without_terms counts the first `scored` queries (the rest are validation queries).
Bm25Side run_bm25(Bm25Start start, const text::BeirFolder& beir, const std::string& corpus_file,
                  const std::vector<std::string>& queries, size_t scored, int64_t depth, bool search,
                  const EvalOptions& o, const EvalCache& cache, EvalResult& result,
                  const std::function<void(const std::string&)>& log) {
  Bm25Side side;
  const auto n_docs = static_cast<int64_t>(beir.corpus.docs.size());
  if (start.index && start.index->size() != n_docs) {  // the key hashes the corpus, so only a foreign file does this
    result.warnings.push_back("ignoring the cached BM25 index " + start.path + ": it holds " +
                              std::to_string(start.index->size()) + " documents, the corpus " + std::to_string(n_docs) +
                              "; rebuilding it");
    start.index.reset();
    start.builder = std::make_unique<index::Bm25Builder>(index::parse_bm25_spec(o.bm25_spec), o.threads);
    text::read_corpus_ids(corpus_file, [&](const text::Document& d) { start.builder->add({d.id, d.title, d.text}); });
  }
  const auto t_index = Clock::now();
  side.index_seconds = start.seconds;
  if (start.index) {
    result.cache.push_back({"bm25_index", "hit", start.path});
  } else {
    log("indexed " + std::to_string(n_docs) + " documents with " + o.bm25_spec + " as they were read");
    side.index_seconds += start.builder->busy_seconds();  // the analysis done while the corpus was read
    index::Bm25Index built = start.builder->finish();
    result.cache.push_back(
        {"bm25_index", cache.store(start.path, [&] { built.save(start.path); }, result.warnings), start.path});
    start.index.emplace(std::move(built));
  }
  side.index_seconds += seconds_since(t_index);
  side.index = std::move(start.index);
  const index::Bm25Index& bm25 = *side.index;
  for (size_t q = 0; q < scored && q < queries.size(); ++q)
    side.without_terms += bm25.query_terms(queries[q]).empty() ? 1 : 0;
  if (!search) return side;
  log("searching " + std::to_string(queries.size()) + " queries with BM25");
  const auto t_search = Clock::now();
  side.hits = bm25.search_batch(queries, depth, o.threads);
  side.search_seconds = seconds_since(t_search);
  return side;
}

void validate(const EvalOptions& o) {
  if (o.data_dir.empty()) throw ConfigError("--data: a BEIR folder is required");
  if (const std::string problem = path_problem(o.data_dir, true); !problem.empty())
    throw ConfigError("--data: " + problem);
  text::require_qrels(o.data_dir, o.split, "--split " + o.split);
  if (o.target_recall != 0) {
    if (!(o.target_recall > 0 && o.target_recall <= 1))
      throw ConfigError(fmt::format("--target-recall: expected a recall in (0, 1], got {}", o.target_recall));
    if (o.retriever != RetrieverKind::kHybrid)
      throw ConfigError("--target-recall: the depth of the lists fused, for --retriever hybrid only");
  }
  if (o.retriever == RetrieverKind::kHybrid && (o.fusion_spec == "auto" || o.target_recall > 0)) {
    const std::string what = o.fusion_spec == "auto" ? "--fusion auto" : "--target-recall";
    if (o.fusion_validation_split == o.split)
      throw ConfigError(what + ": the validation split '" + o.split +
                        "' is the evaluated split; fusion and depth must "
                        "be chosen on other queries (--fusion-validation names a split, e.g. train or dev)");
    text::require_qrels(o.data_dir, o.fusion_validation_split,
                        what + " (its validation split, --fusion-validation " + o.fusion_validation_split + ")");
  }
  if (o.k < 1) throw ConfigError("--k must be at least 1");
  if (o.candidates < 1) throw ConfigError("--candidates must be at least 1");
  if (o.max_queries < 0) throw ConfigError("--max-queries must be >= 0");
  if (o.dense.dimensions < 0) throw ConfigError("--dimensions must be >= 0");
  if (o.metrics.empty()) throw ConfigError("no metrics to compute");
  const bool needs_model = o.retriever != RetrieverKind::kBm25;
  if (needs_model && o.dense.model_dir.empty())
    throw ConfigError("--retriever " + to_string(o.retriever) +
                      " needs --model DIR (a model folder from ragmig train)");
  if (const std::string problem = needs_model ? path_problem(o.dense.model_dir, true) : ""; !problem.empty())
    throw ConfigError("--model: " + problem);
  if (needs_model) model::check_model_folder(o.dense.model_dir);  // before minutes of reading a corpus
  // Parse every spec up front, so a typo fails before minutes of indexing.
  index::parse_bm25_spec(o.bm25_spec);
  index::parse_dense_spec(o.dense.index_spec);
  if (o.fusion_spec != "auto") index::parse_fusion_spec(o.fusion_spec);
}

using Log = std::function<void(const std::string&)>;

// The judged queries of the evaluated split, in id order, cut to --max-queries.
Judgments judged_queries(const EvalOptions& o, const text::BeirFolder& beir, const std::string& queries_file,
                         EvalResult& result) {
  const text::Qrels qrels = text::read_qrels(text::qrels_path(o.data_dir, o.split));
  Judgments judgments = resolve_judgments(qrels, beir, &result.qrels_check);
  result.warnings.insert(result.warnings.end(), result.qrels_check.warnings.begin(), result.qrels_check.warnings.end());
  if (judgments.by_query.empty())
    throw DataError(qrels.path + ": none of its queries is in " + queries_file + ", nothing to evaluate");
  if (o.max_queries > 0 && static_cast<int64_t>(judgments.by_query.size()) > o.max_queries)
    judgments.by_query.erase(std::next(judgments.by_query.begin(), o.max_queries), judgments.by_query.end());
  return judgments;
}

// The validation queries that choose the fusion ("auto") or fit the depth (target recall): judged queries of the
// validation split outside the evaluated ones, those the model's training held out when it records them.
Judgments validation_queries(const EvalOptions& o, const text::BeirFolder& beir, const Judgments& evaluated,
                             EvalResult& result) {
  const text::Qrels vq = text::read_qrels(text::qrels_path(o.data_dir, o.fusion_validation_split));
  Judgments pool = resolve_judgments(vq, beir, nullptr);
  // A model that records its training queries: choose on those it held out, and say so when it held none.
  if (const auto training = model::read_training_queries(o.dense.model_dir);
      training && training->split == o.fusion_validation_split) {
    if (training->held_out.empty()) {
      result.warnings.push_back("the model trained on the queries of split " + training->split +
                                " that the fusion and depth are chosen on, so the choice favours the model; "
                                "train with data.holdout_queries = N to keep N of them for the choice");
    } else {
      pool = restrict_to(pool, training->held_out);
      if (pool.by_query.empty())
        throw DataError(o.dense.model_dir + "/ragmig.json: none of the " + std::to_string(training->held_out.size()) +
                        " queries its training held out is judged in " + vq.path +
                        " (was the model trained on other data?)");
      result.validation_held_out = true;
    }
  }
  Judgments validation = carve_validation(pool, evaluated, o.fusion_validation_queries, text::kHoldoutSeed);
  if (validation.by_query.empty())
    throw DataError(vq.path + ": no judged query outside the evaluated split to choose the fusion on");
  return validation;
}

// Every query retrieved for: the scored ones first, then the validation queries (fusion "auto", adaptive depth),
// which ride along through the one BM25 search and the one embedding pass and are split off before scoring.
struct QuerySet {
  std::vector<std::string> ids, texts;
  size_t scored = 0;     // ids[0, scored) are the evaluated queries
  Judgments validation;  // the judgments of the rest

  std::vector<std::string> scored_ids() const {
    return {ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(scored)};
  }
};

bool chooses_on_validation(const EvalOptions& o) {
  return o.retriever == RetrieverKind::kHybrid && (o.fusion_spec == "auto" || o.target_recall > 0);
}

QuerySet query_set(const EvalOptions& o, const text::BeirFolder& beir, const Judgments& judgments, EvalResult& result) {
  QuerySet set;
  const auto add = [&](const std::string& qid) {
    set.ids.push_back(qid);
    set.texts.push_back(beir.queries[static_cast<size_t>(beir.query_index.at(qid))].text);
  };
  std::vector<std::string> blank_ids;
  for (const auto& [qid, judged] : judgments.by_query) {
    add(qid);
    if (is_blank(set.texts.back())) blank_ids.push_back(qid);
  }
  set.scored = set.ids.size();
  result.empty_queries = static_cast<int64_t>(blank_ids.size());
  if (!blank_ids.empty()) {
    std::string ids;
    for (size_t i = 0; i < blank_ids.size() && i < 5; ++i) ids += (i ? ", " : "") + blank_ids[i];
    result.warnings.push_back(std::to_string(blank_ids.size()) + " queries have empty text (" + ids +
                              (blank_ids.size() > 5 ? ", ..." : "") + "); they are scored with whatever they retrieve");
  }
  if (chooses_on_validation(o)) {
    set.validation = validation_queries(o, beir, judgments, result);
    for (const auto& [qid, judged] : set.validation.by_query) add(qid);
  }
  return set;
}

// How deep each list goes. One extra result when the query's own id will be dropped, so the scored run still
// reaches k; `candidates` is not raised to k: a re-ranked run holds at most that many documents, the point of it.
struct Depths {
  int64_t k = 0;           // of the scored run
  int64_t candidates = 0;  // of each list fused (hybrid) or re-scored (rerank)
};

Depths depths(const EvalOptions& o) {
  const int64_t own_id = o.metric_options.ignore_identical_ids ? 1 : 0;
  return Depths{o.k + own_id, o.candidates + own_id};
}

void record_dense(const DenseRetrieval& dense, EvalResult& result) {
  result.ann = dense.ann;
  result.device = dense.device;
  result.precision = dense.precision;
  result.precision_reason = dense.precision_reason;
  result.prompts = dense.prompts;
  result.dimensions = dense.dimensions;
  result.embed_seconds = dense.embed_seconds;
  result.index_seconds += dense.index_seconds;
  result.search_seconds += dense.search_seconds;
  result.cache.insert(result.cache.end(), dense.cache.begin(), dense.cache.end());
  result.warnings.insert(result.warnings.end(), dense.warnings.begin(), dense.warnings.end());
}

// The hybrid's run: the fusion ("auto": chosen on the validation queries) of the dense and BM25 lists, each cut
// to the fitted depth with a target recall; both parts alone are scored beside it on the same queries.
HitLists fuse_hits(const EvalOptions& o, const QuerySet& queries, HitLists dense, HitLists sparse,
                   const text::BeirFolder& beir, const Judgments& judgments, const Depths& d, EvalResult& result,
                   const Log& log) {
  const bool auto_fusion = o.fusion_spec == "auto";
  index::FusionSpec fusion = auto_fusion ? index::FusionSpec{} : index::parse_fusion_spec(o.fusion_spec);
  const std::vector<std::string> scored_ids = queries.scored_ids();
  if (chooses_on_validation(o)) {
    const auto from = static_cast<std::ptrdiff_t>(queries.scored);
    const std::vector<std::string> ids(queries.ids.begin() + from, queries.ids.end());
    const HitLists vd(dense.begin() + from, dense.end());
    const HitLists vs(sparse.begin() + from, sparse.end());
    const std::string on = std::to_string(ids.size()) + " queries of split " + o.fusion_validation_split +
                           (result.validation_held_out ? ", held out of the model's training" : "");
    if (auto_fusion) {
      log("choosing the fusion on " + on);
      result.fusion_choice =
          choose_fusion(fusion_grid(), ids, vd, vs, doc_id_of(beir), queries.validation, parse_metric("ndcg@10"), d.k);
      fusion = result.fusion_choice->chosen;
    }
    if (o.target_recall > 0) {
      log("fitting the retrieval depth on " + on);
      result.depth = EvalResult::AdaptiveDepth{
          fit_depth_rule(ids, vd, vs, queries.validation, doc_id_of(beir), o.target_recall, depth_grid(d.candidates)),
          0,
          0,
          {}};
    }
    dense.resize(queries.scored);
    sparse.resize(queries.scored);
  }
  result.parts = {{"bm25", score_hits(scored_ids, sparse, d.k, doc_id_of(beir), judgments, o)},
                  {"dense", score_hits(scored_ids, dense, d.k, doc_id_of(beir), judgments, o)}};
  if (result.depth) cut_to_adaptive_depth(scored_ids, dense, sparse, judgments, doc_id_of(beir), *result.depth);
  HitLists fused(queries.scored);
  for (size_t q = 0; q < queries.scored; ++q) fused[q] = index::fuse(fusion, dense[q], sparse[q], d.k);
  return fused;
}

// The run of a retriever with a dense side: dense alone, fused with BM25's lists, or BM25's lists re-scored.
HitLists dense_hits(const EvalOptions& o, const QuerySet& queries, HitLists sparse, const text::BeirFolder& beir,
                    const std::string& corpus_file, const std::string& queries_file, const Judgments& judgments,
                    const Depths& d, const EvalCache& cache, EvalResult& result, const Log& log) {
  std::vector<std::string> passages;
  passages.reserve(beir.corpus.docs.size());
  for (const auto& doc : beir.corpus.docs) passages.push_back(text::document_text(doc));
  const DenseInputs in{corpus_file, queries_file, &passages, &queries.texts, hash_parts(queries.ids)};
  const int64_t depth = o.retriever == RetrieverKind::kDense    ? d.k
                        : o.retriever == RetrieverKind::kHybrid ? d.candidates
                                                                : 0;
  const DenseRetrieval dense = run_dense(in, depth, o.dense, cache, log);
  record_dense(dense, result);
  const auto t_combine = Clock::now();
  HitLists hits;
  if (o.retriever == RetrieverKind::kDense) {
    hits = hit_lists(dense.results);
  } else if (o.retriever == RetrieverKind::kHybrid) {
    hits = fuse_hits(o, queries, hit_lists(dense.results), std::move(sparse), beir, judgments, d, result, log);
  } else {
    hits.resize(queries.scored);
    for (size_t q = 0; q < queries.scored; ++q)
      hits[q] = rescore(sparse[q], dense.query_vectors.row(static_cast<int64_t>(q)), dense.doc_vectors, d.k);
  }
  result.search_seconds += seconds_since(t_combine);
  return hits;
}

// Each scored query's hits, handed out once and let go: a run of string ids beside every query's hits would hold
// k results per query twice. Streamed (BM25 alone, no run kept whole), the queries are searched a chunk at a time as
// they are asked for, so memory holds one chunk's hits instead of k for every query.
class QueryHits {
 public:
  explicit QueryHits(HitLists hits) : hits_(std::move(hits)), searched_(hits_.size()) {}
  QueryHits(const index::Bm25Index& bm25, const std::vector<std::string>& texts, int64_t k, int threads,
            double& search_seconds)
      : hits_(texts.size()), bm25_(&bm25), texts_(&texts), k_(k), threads_(threads), search_seconds_(&search_seconds) {}

  // Query q's list as document ids, best first.
  std::vector<ScoredDoc> take(size_t q, const text::BeirFolder& beir) {
    search_up_to(q);
    std::vector<ScoredDoc> list;
    list.reserve(hits_[q].size());
    for (const index::Hit& h : hits_[q])
      list.push_back(ScoredDoc{beir.corpus.docs[static_cast<size_t>(h.doc)].id, h.score});
    std::vector<index::Hit>().swap(hits_[q]);
    return list;
  }

 private:
  void search_up_to(size_t q) {
    constexpr size_t kChunk = 256;
    while (searched_ <= q) {
      const auto t_search = Clock::now();
      const size_t end = std::min(searched_ + kChunk, texts_->size());
      const std::vector<std::string> chunk(texts_->begin() + static_cast<std::ptrdiff_t>(searched_),
                                           texts_->begin() + static_cast<std::ptrdiff_t>(end));
      HitLists found = bm25_->search_batch(chunk, k_, threads_);
      for (size_t i = 0; i < found.size(); ++i) hits_[searched_ + i] = std::move(found[i]);
      searched_ = end;
      *search_seconds_ += seconds_since(t_search);
    }
  }

  HitLists hits_;
  size_t searched_ = 0;  // hits_[0, searched_) are filled (or already taken)
  const index::Bm25Index* bm25_ = nullptr;
  const std::vector<std::string>* texts_ = nullptr;
  int64_t k_ = 0;
  int threads_ = 0;
  double* search_seconds_ = nullptr;
};

// Scores the scored queries' hits, and writes them to the run file as they are scored. Only a caller that keeps
// the run (mine) has it held whole; otherwise each query's list is scored (and written) and dropped.
void score_queries(const EvalOptions& o, const std::vector<std::string>& query_ids, QueryHits& hits,
                   const text::BeirFolder& beir, const Judgments& judgments, EvalResult& result) {
  std::optional<TrecRunWriter> writer;
  if (!o.run_out.empty()) writer.emplace(o.run_out, o.run_tag);
  if (!o.keep_run) {
    std::unordered_map<std::string, size_t> position;
    for (size_t q = 0; q < query_ids.size(); ++q) position.emplace(query_ids[q], q);
    // Judged queries in id order, as a run file lists them.
    result.report = evaluate_run(
        [&](const std::string& qid) {
          const auto it = position.find(qid);
          std::vector<ScoredDoc> list = it == position.end() ? std::vector<ScoredDoc>{} : hits.take(it->second, beir);
          if (writer) writer->add(qid, list);
          return list;
        },
        judgments, o.metrics, o.metric_options);
  } else {
    TrecRun run;
    for (size_t q = 0; q < query_ids.size(); ++q) run[query_ids[q]] = hits.take(q, beir);
    if (writer)
      for (const auto& [qid, list] : run) writer->add(qid, list);
    result.report = evaluate_run(run, judgments, o.metrics, o.metric_options);
    result.run = std::move(run);
  }
  if (writer) writer->commit();
}

}  // namespace

EvalResult evaluate(const EvalOptions& o, const Log& log_fn) {
  const auto t0 = Clock::now();
  const Log log = [&](const std::string& line) {
    if (log_fn) log_fn(line);
  };
  validate(o);
  EvalResult result;
  result.options = o;
  const EvalCache cache(o.cache_dir);

  log("reading " + o.data_dir);
  const std::string corpus_file = resolve_maybe_gz(o.data_dir + "/corpus.jsonl");
  const std::string queries_file = resolve_maybe_gz(o.data_dir + "/queries.jsonl");
  const bool uses_bm25 = o.retriever != RetrieverKind::kDense;
  const bool uses_dense = o.retriever != RetrieverKind::kBm25;
  std::optional<Bm25Start> bm25_start;
  if (uses_bm25) bm25_start.emplace(start_bm25(corpus_file, o, cache, result));
  index::Bm25Builder* builder = bm25_start ? bm25_start->builder.get() : nullptr;
  const text::BeirFolder beir =
      text::read_beir(o.data_dir, uses_dense ? text::CorpusText::kKeep : text::CorpusText::kDrop,
                      builder ? std::function<void(const text::Document&)>(
                                    [&](const text::Document& d) { builder->add({d.id, d.title, d.text}); })
                              : nullptr);
  const Judgments judgments = judged_queries(o, beir, queries_file, result);
  result.corpus_size = static_cast<int64_t>(beir.corpus.docs.size());
  const QuerySet queries = query_set(o, beir, judgments, result);
  // Reading included the analysis of a BM25 index built on the way: that counts as indexing.
  result.load_seconds =
      seconds_since(t0) - (builder ? builder->busy_seconds() : 0.0) - (bm25_start ? bm25_start->seconds : 0.0);

  const Depths d = depths(o);
  // BM25 alone, and no caller keeping the run whole (a run file is written as it is scored): searched as scored.
  const bool streamed = o.retriever == RetrieverKind::kBm25 && !o.keep_run;
  Bm25Side sparse;
  if (uses_bm25) {
    sparse = run_bm25(std::move(*bm25_start), beir, corpus_file, queries.texts, queries.scored,
                      o.retriever == RetrieverKind::kBm25 ? d.k : d.candidates, !streamed, o, cache, result, log);
    result.queries_without_terms = sparse.without_terms;
    result.index_seconds += sparse.index_seconds;
    result.search_seconds += sparse.search_seconds;
    if (sparse.without_terms > 0)
      result.warnings.push_back(
          std::to_string(sparse.without_terms) +
          " queries have no BM25 terms after analysis (empty or only stop words): BM25 retrieves nothing for them");
  }
  std::optional<QueryHits> hits;
  if (uses_dense) {
    hits.emplace(dense_hits(o, queries, std::move(sparse.hits), beir, corpus_file, queries_file, judgments, d, cache,
                            result, log));
  } else if (!streamed) {
    hits.emplace(std::move(sparse.hits));
  } else {
    log("searching " + std::to_string(queries.scored) + " queries with BM25");
    hits.emplace(*sparse.index, queries.texts, d.k, o.threads, result.search_seconds);
  }
  score_queries(o, queries.scored_ids(), *hits, beir, judgments, result);
  result.seconds = seconds_since(t0);
  return result;
}

nlohmann::json EvalResult::to_json() const {
  nlohmann::json j;
  for (size_t i = 0; i < report.metrics.size(); ++i) j[report.metrics[i].name()] = report.mean[i];
  j["queries"] = report.queries;
  j["seconds"] = seconds;
  j["retriever"] = to_string(options.retriever);
  j["data"] = options.data_dir;
  j["split"] = options.split;
  j["k"] = options.k;
  j["corpus"] = corpus_size;
  if (options.retriever != RetrieverKind::kDense) j["bm25"] = options.bm25_spec;
  if (options.retriever != RetrieverKind::kBm25) {
    j["model"] = options.dense.model_dir;
    j["device"] = device;
    j["precision"] = precision;
    j["precision_reason"] = precision_reason;
    j["prompts"] = {{"query", prompts.query}, {"passage", prompts.passage}};
    if (options.retriever != RetrieverKind::kRerank) j["index"] = options.dense.index_spec;
    if (dimensions > 0) j["dimensions"] = dimensions;
    if (options.retriever == RetrieverKind::kHybrid)
      j["fusion"] = fusion_choice ? index::to_string(fusion_choice->chosen) : options.fusion_spec;
    if (options.retriever != RetrieverKind::kDense) j["candidates"] = options.candidates;
  }
  j["ignore_identical_ids"] = options.metric_options.ignore_identical_ids;
  j["empty_queries"] = empty_queries;
  j["queries_without_terms"] = queries_without_terms;
  j["qrels_unknown_queries"] = qrels_check.unknown_query_rows;
  j["qrels_unknown_documents"] = qrels_check.unknown_doc_rows;
  j["timings"] = {
      {"load", load_seconds}, {"index", index_seconds}, {"embed", embed_seconds}, {"search", search_seconds}};
  nlohmann::json c = nlohmann::json::object();
  for (const auto& use : cache) c[use.what] = use.state;
  j["cache"] = c;
  if (ann) {
    j["ann"] = {{"spec", ann->spec},
                {"k", ann->k},
                {"recall@10_vs_exact", ann->recall_at_10},
                {"recall@" + std::to_string(ann->k) + "_vs_exact", ann->recall_at_k},
                {"queries_per_second", ann->queries_per_second},
                {"exact_queries_per_second", ann->exact_queries_per_second},
                {"exact_device", ann->exact_device},
                {"build_seconds", ann->build_seconds}};
  }
  if (depth) {
    nlohmann::json buckets = nlohmann::json::array(), fixed = nlohmann::json::array();
    for (size_t b = 0; b < depth->rule.bucket_depth.size(); ++b)
      buckets.push_back({{"agreement", agreement_range(static_cast<int64_t>(b))},
                         {"depth", depth->rule.bucket_depth[b]},
                         {"validation_queries", depth->rule.bucket_queries[b]}});
    for (size_t d = 0; d < depth->rule.depths.size(); ++d)
      fixed.push_back({{"depth", depth->rule.depths[d]},
                       {"validation_pool_recall", depth->rule.fixed_recall[d]},
                       {"pool_recall", depth->fixed_recall[d]}});
    j["depth"] = {{"target_recall", depth->rule.target},
                  {"validation_queries", depth->rule.queries},
                  {"validation_held_out_by_training", validation_held_out},
                  {"rule", buckets},
                  {"mean_depth", depth->mean_depth},
                  {"pool_recall", depth->pool_recall},
                  {"fixed", fixed}};
  }
  if (fusion_choice) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& t : fusion_choice->trials)
      trials.push_back({{"fusion", index::to_string(t.spec)}, {fusion_choice->metric, t.score}});
    j["fusion_choice"] = {{"chosen", index::to_string(fusion_choice->chosen)},
                          {"best_on_validation", index::to_string(fusion_choice->best)},
                          {"default", index::to_string(default_fusion())},
                          {"standard_error", fusion_choice->standard_error},
                          {"validation_split", options.fusion_validation_split},
                          {"validation_queries", fusion_choice->queries},
                          {"validation_held_out_by_training", validation_held_out},
                          {"metric", fusion_choice->metric},
                          {"trials", trials}};
  }
  if (!parts.empty()) {
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [name, r] : parts)
      for (size_t i = 0; i < r.metrics.size(); ++i) p[name][r.metrics[i].name()] = r.mean[i];
    j["parts"] = p;
  }
  j["warnings"] = warnings;
  if (!options.run_out.empty()) j["run"] = options.run_out;
  return j;
}

}  // namespace ragmig::eval
