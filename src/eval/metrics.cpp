// trec_eval's metrics (see metrics.h for the definitions this file implements).
#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::eval {
namespace {

const char* prefix(MetricKind kind) {
  switch (kind) {
    case MetricKind::kNdcg: return "ndcg";
    case MetricKind::kRecall: return "recall";
    case MetricKind::kPrecision: return "p";
    case MetricKind::kMrr: return "mrr";
    case MetricKind::kMap: return "map";
  }
  return "?";
}

}  // namespace

std::string Metric::name() const { return std::string(prefix(kind)) + "@" + std::to_string(k); }

Metric parse_metric(const std::string& name) {
  const size_t at = name.find('@');
  const std::string head = name.substr(0, at);
  Metric m;
  bool known = false;
  for (MetricKind kind : {MetricKind::kNdcg, MetricKind::kRecall, MetricKind::kPrecision, MetricKind::kMrr, MetricKind::kMap}) {
    if (head == prefix(kind)) {
      m.kind = kind;
      known = true;
    }
  }
  if (!known || at == std::string::npos)
    throw ConfigError("unknown metric '" + name + "' (expected ndcg@K, recall@K, p@K, mrr@K or map@K)");
  const std::string k = name.substr(at + 1);
  const auto cut_off = whole_number(k, 1);
  if (!cut_off || k[0] == '0')
    throw ConfigError("metric '" + name + "': the cut-off after '@' must be a positive integer");
  m.k = *cut_off;
  return m;
}

std::vector<Metric> default_metrics() {
  std::vector<Metric> out;
  for (int64_t k : {1, 3, 5, 10, 100}) out.push_back({MetricKind::kNdcg, k});
  for (int64_t k : {1, 3, 5, 10, 20, 100, 1000}) out.push_back({MetricKind::kRecall, k});
  for (int64_t k : {1, 10}) out.push_back({MetricKind::kPrecision, k});
  for (int64_t k : {10, 100}) out.push_back({MetricKind::kMrr, k});
  for (int64_t k : {10, 100}) out.push_back({MetricKind::kMap, k});
  return out;
}

namespace {

// trec_order's ranking as indices into docs.
std::vector<uint32_t> trec_ranking(const std::vector<ScoredDoc>& docs, const std::string& query_id,
                                   const MetricOptions& opts) {
  std::vector<uint32_t> order;
  order.reserve(docs.size());
  for (uint32_t i = 0; i < static_cast<uint32_t>(docs.size()); ++i)
    if (!opts.ignore_identical_ids || docs[i].doc_id != query_id) order.push_back(i);
  const auto before = [&docs](uint32_t a, uint32_t b) {
    if (docs[a].score != docs[b].score) return docs[a].score > docs[b].score;
    return docs[a].doc_id > docs[b].doc_id;  // trec_eval: strcmp(b, a), i.e. descending ids
  };
  // A retriever's list comes in score order, often without ties: then one pass says so.
  if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  return order;
}

}  // namespace

std::vector<ScoredDoc> trec_order(const std::vector<ScoredDoc>& docs, const std::string& query_id,
                                  const MetricOptions& opts) {
  std::vector<ScoredDoc> ranked;
  for (const uint32_t i : trec_ranking(docs, query_id, opts)) ranked.push_back(docs[i]);
  return ranked;
}

std::vector<double> query_metrics(const std::vector<ScoredDoc>& docs, const QueryJudgments& judged,
                                  const std::string& query_id, const std::vector<Metric>& metrics,
                                  const MetricOptions& opts) {
  // Indices into docs, not copies of them: the ids are strings.
  const std::vector<uint32_t> ranked = trec_ranking(docs, query_id, opts);
  // Grades of the ranked documents (unjudged = 0), and the qrels' positive grades best first.
  std::vector<int32_t> grade(ranked.size(), 0);
  for (size_t i = 0; i < ranked.size(); ++i) {
    auto it = judged.find(docs[ranked[i]].doc_id);
    if (it != judged.end()) grade[i] = it->second;
  }
  std::vector<int32_t> ideal;
  int64_t num_rel = 0;
  for (const auto& [doc, g] : judged) {
    if (g > 0) ideal.push_back(g);
    if (g >= opts.relevance_level) ++num_rel;
  }
  std::sort(ideal.begin(), ideal.end(), std::greater<>());
  const auto relevant = [&](size_t i) { return grade[i] >= opts.relevance_level; };

  std::vector<double> out;
  out.reserve(metrics.size());
  for (const Metric& m : metrics) {
    const size_t cut = static_cast<size_t>(std::min<int64_t>(m.k, static_cast<int64_t>(ranked.size())));
    double value = 0;
    switch (m.kind) {
      case MetricKind::kNdcg: {
        double dcg = 0, idcg = 0;
        for (size_t i = 0; i < cut; ++i)
          if (grade[i] > 0) dcg += grade[i] / std::log2(static_cast<double>(i) + 2.0);
        for (size_t i = 0; i < ideal.size() && static_cast<int64_t>(i) < m.k; ++i)
          idcg += ideal[i] / std::log2(static_cast<double>(i) + 2.0);
        value = idcg > 0 ? dcg / idcg : 0.0;
        break;
      }
      case MetricKind::kRecall:
      case MetricKind::kPrecision: {
        int64_t hits = 0;
        for (size_t i = 0; i < cut; ++i) hits += relevant(i) ? 1 : 0;
        if (m.kind == MetricKind::kPrecision) value = static_cast<double>(hits) / static_cast<double>(m.k);
        else value = num_rel > 0 ? static_cast<double>(hits) / static_cast<double>(num_rel) : 0.0;
        break;
      }
      case MetricKind::kMrr: {
        for (size_t i = 0; i < cut; ++i) {
          if (relevant(i)) {
            value = 1.0 / static_cast<double>(i + 1);
            break;
          }
        }
        break;
      }
      case MetricKind::kMap: {
        double sum = 0;
        int64_t so_far = 0;
        for (size_t i = 0; i < cut; ++i) {
          if (!relevant(i)) continue;
          ++so_far;
          sum += static_cast<double>(so_far) / static_cast<double>(i + 1);
        }
        value = num_rel > 0 ? sum / static_cast<double>(num_rel) : 0.0;
        break;
      }
    }
    out.push_back(value);
  }
  return out;
}

double MetricReport::value(const std::string& name) const {
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].name() == name) return mean[i];
  RAGMIG_CHECK(false, "metric " + name + " was not computed");
  return 0;
}

namespace {

// The report over every judged query, each query's list from list_of(query id) (a reference or a value).
template <typename ListOf>
MetricReport evaluate_lists(const ListOf& list_of, const Judgments& judgments, const std::vector<Metric>& metrics,
                            const MetricOptions& opts) {
  MetricReport report;
  report.metrics = metrics;
  report.mean.assign(metrics.size(), 0.0);
  for (const auto& [qid, judged] : judgments.by_query) {
    std::vector<double> values = query_metrics(list_of(qid), judged, qid, metrics, opts);
    for (size_t i = 0; i < values.size(); ++i) report.mean[i] += values[i];
    report.per_query.emplace(qid, std::move(values));
  }
  report.queries = static_cast<int64_t>(judgments.by_query.size());
  if (report.queries > 0)
    for (double& m : report.mean) m /= static_cast<double>(report.queries);
  return report;
}

}  // namespace

MetricReport evaluate_run(const TrecRun& run, const Judgments& judgments, const std::vector<Metric>& metrics,
                          const MetricOptions& opts) {
  static const std::vector<ScoredDoc> kNone;
  return evaluate_lists(
      [&](const std::string& qid) -> const std::vector<ScoredDoc>& {
        const auto it = run.find(qid);
        return it == run.end() ? kNone : it->second;
      },
      judgments, metrics, opts);
}

MetricReport evaluate_run(const std::function<std::vector<ScoredDoc>(const std::string&)>& run_of,
                          const Judgments& judgments, const std::vector<Metric>& metrics, const MetricOptions& opts) {
  return evaluate_lists(run_of, judgments, metrics, opts);
}

}  // namespace ragmig::eval
