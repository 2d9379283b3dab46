// bench/eval: each ANN index beside exact search on the same embeddings, in the same run: recall@10 and
// recall@100 against exact search, queries per second, and build seconds, for FAISS Flat, HNSW, IVF-PQ and
// LSH, plus the LibTorch exact search and the plain reference loop. Embeddings come from a model folder
// through the eval cache (so a second run embeds nothing).
#include <fmt/format.h>

#include <chrono>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <thread>

#include "core/line_reader.h"
#include "eval/dense_retrieval.h"
#include "eval/encoder.h"
#include "eval/qrels.h"
#include "eval/torch_search.h"
#include "index/dense_index.h"
#include "index/exact_search.h"
#include "index/parallel.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace ragmig;
  CLI::App app{"ANN recall and speed against exact search on embeddings of a BEIR folder"};
  std::string data = RAGMIG_SOURCE_DIR "/../shared/data/beir/squad-train", split = "test", model, cache = ".ragmig/cache";
  std::vector<std::string> specs = {"Flat", "HNSW32", "HNSW32(efSearch=64)", "IVF256,PQ32", "IVF256,PQ32(nprobe=64)", "LSH",
                                    "LSH1024"};
  int64_t max_queries = 2000, passage_tokens = 128, query_tokens = 32;
  int threads = 0;
  app.add_option("--data", data, "BEIR folder")->capture_default_str();
  app.add_option("--split", split, "qrels split whose queries are searched")->capture_default_str();
  app.add_option("--model", model, "model folder from ragmig train")->required();
  app.add_option("--cache", cache, "eval cache folder")->capture_default_str();
  app.add_option("--index", specs, "index specs to measure")->capture_default_str();
  app.add_option("--max-queries", max_queries, "queries searched (0 = all with qrels)")->capture_default_str();
  app.add_option("--max-passage-tokens", passage_tokens)->capture_default_str();
  app.add_option("--max-query-tokens", query_tokens)->capture_default_str();
  app.add_option("--threads", threads, "0 = all cores")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const text::BeirFolder beir = text::read_beir(data);
  const eval::Judgments judged = eval::resolve_judgments(text::read_qrels(text::qrels_path(data, split)), beir, nullptr);
  std::vector<std::string> ids, queries, passages;
  for (const auto& [qid, j] : judged.by_query) {
    if (max_queries > 0 && static_cast<int64_t>(ids.size()) == max_queries) break;
    ids.push_back(qid);
    queries.push_back(beir.queries[static_cast<size_t>(beir.query_index.at(qid))].text);
  }
  for (const auto& d : beir.corpus.docs) passages.push_back(text::document_text(d));
  eval::DenseSetup setup;
  setup.model_dir = model;
  setup.embed.max_passage_tokens = passage_tokens;
  setup.embed.max_query_tokens = query_tokens;
  setup.threads = threads;
  eval::DenseInputs in{resolve_maybe_gz(data + "/corpus.jsonl"), resolve_maybe_gz(data + "/queries.jsonl"), &passages, &queries,
                       eval::hash_parts(ids)};
  const eval::DenseRetrieval emb =
      eval::run_dense(in, 0, setup, eval::EvalCache(cache), [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); });
  const auto& docs = emb.doc_vectors;
  const auto& qs = emb.query_vectors;
  const double nq = static_cast<double>(qs.rows);
  fmt::print("{} documents x {} dims, {} queries; threads {}\n", docs.rows, docs.cols, qs.rows, index::resolve_threads(threads));

  const eval::TorchSearchOptions on{eval::resolve_device("auto"), 1024, 1 << 18};
  const index::SearchResult exact = eval::torch_exact_search(qs, docs, 100, on);
  auto t = Clock::now();
  eval::torch_exact_search(qs, docs, 10, on);
  const double torch_s = since(t);
  const index::SearchResult plain = index::exact_search(qs, docs, 100, threads);
  t = Clock::now();
  index::exact_search(qs, docs, 10, threads);
  const double plain_s = since(t);
  // q/s is measured at k = 10 (the recall@10 search); recall@100 comes from a second search at k = 100.
  fmt::print("{:<26} {:>10} {:>11} {:>10} {:>9}\n", "search", "recall@10", "recall@100", "q/s@10", "build s");
  fmt::print("{:<26} {:>10.4f} {:>11.4f} {:>10.0f} {:>9}\n", fmt::format("exact (LibTorch {}, ref)", on.device), 1.0, 1.0, nq / torch_s, "-");
  fmt::print("{:<26} {:>10.4f} {:>11.4f} {:>10.0f} {:>9}\n", "exact (plain loop)", index::recall_against(plain, exact, 10),
             index::recall_against(plain, exact, 100), nq / plain_s, "-");
  for (const auto& s : specs) {
    const index::DenseSpec spec = index::parse_dense_spec(s);
    t = Clock::now();
    const index::DenseIndex ann = index::DenseIndex::build(spec, docs, threads);
    const double build_s = since(t);
    t = Clock::now();
    const index::SearchResult top10 = ann.search(qs, 10, threads);
    const double search_s = since(t);
    const index::SearchResult top100 = ann.search(qs, 100, threads);
    fmt::print("{:<26} {:>10.4f} {:>11.4f} {:>10.0f} {:>9.1f}\n", s, index::recall_against(top10, exact, 10),
               index::recall_against(top100, exact, 100), nq / search_s, build_s);
  }
  return 0;
}
