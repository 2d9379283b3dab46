// Loading, tokenizing and batching training examples (see training_data.h).
#include "train/training_data.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/splitmix.h"
#include "model/host_copy.h"
#include "text/batch_keys.h"
#include "text/pretrain_pairs.h"
#include "text/query_holdout.h"
#include "text/token_batch.h"

namespace ragmig::train {
namespace {

// Mixed into the seed of the draw of an example's positive, apart from its negatives' draws.
constexpr uint64_t kPositiveDraw = 0x9051f1e5;

// A batch's ids or mask on the host: pinned for a GPU, whose copies from there queue behind the step before
// instead of stopping the host until the device is idle (the pinned block is not reused before they are done).
torch::Tensor host_tensor(std::vector<int64_t>& v, int64_t rows, int64_t cols, const torch::Device& device) {
  const torch::Tensor view = torch::from_blob(v.data(), {rows, cols}, torch::kLong);
  if (!device.is_cuda()) return view.clone();
  torch::Tensor pinned = torch::empty({rows, cols}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(true));
  pinned.copy_(view);
  return pinned;
}

torch::Tensor device_tensor(std::vector<int64_t>& v, int64_t rows, int64_t cols, const torch::Device& device) {
  return model::to_device_without_waiting(host_tensor(v, rows, cols, device), device);
}

}  // namespace

TrainingExamples load_examples(const DataConfig& cfg, const text::BeirFolder* beir, uint64_t seed) {
  std::vector<text::TrainingExample> examples;
  std::string source;
  int64_t blank_skipped = 0;
  if (!cfg.pretrain.empty()) {
    std::vector<std::string> documents;
    if (!cfg.corpus.empty()) {
      source = cfg.corpus;
      documents = text::read_raw_documents(cfg.corpus);
    } else {
      RAGMIG_CHECK(beir != nullptr);
      source = cfg.beir + "/corpus.jsonl";
      for (const auto& d : beir->corpus.docs) documents.push_back(text::document_text(d));
    }
    examples = text::pretrain_examples(documents, text::parse_pretrain_task(cfg.pretrain), seed);
  } else if (!cfg.pairs.empty()) {
    source = cfg.pairs;
    examples = text::read_pairs(cfg.pairs);
  } else {
    RAGMIG_CHECK(beir != nullptr);
    source = text::qrels_path(cfg.beir, cfg.split);
    examples = text::examples_from_beir(*beir, text::read_qrels(source), &blank_skipped);
  }
  if (examples.empty() && !cfg.pretrain.empty())
    throw DataError(source + ": no document long enough for data.pretrain = " + cfg.pretrain);
  if (examples.empty())
    throw DataError(source + ": no training examples" +
                    (blank_skipped ? fmt::format(" ({} rows with a blank query or document left out)", blank_skipped)
                                   : std::string()));
  std::optional<model::TrainingQueries> queries;  // none for raw-text pairs (validate() refuses a hold-out there)
  if (cfg.pretrain.empty() &&
      std::all_of(examples.begin(), examples.end(), [](const auto& e) { return !e.query_id.empty(); }))
    queries = model::TrainingQueries{cfg.split, {}};
  if (cfg.holdout_queries > 0) {
    std::vector<std::string> held = text::hold_out_queries(examples, cfg.holdout_queries, source);  // ids checked
    queries->held_out = std::move(held);
  }
  if (cfg.max_examples > 0 && static_cast<int64_t>(examples.size()) > cfg.max_examples)
    examples.resize(static_cast<size_t>(cfg.max_examples));
  return {std::move(examples), std::move(queries), blank_skipped};
}

std::vector<std::string> vocabulary_texts(const std::vector<text::TrainingExample>& examples,
                                          const text::BeirFolder* beir) {
  std::vector<std::string> texts;
  if (beir) {
    for (const auto& d : beir->corpus.docs) texts.push_back(text::document_text(d));
  } else {
    std::unordered_map<int64_t, bool> seen;
    for (const auto& e : examples)
      if (seen.emplace(e.positive_key, true).second) texts.push_back(e.positive);
  }
  for (const auto& e : examples) {
    texts.push_back(e.query);
    if (beir) continue;
    for (const auto& n : e.negatives) texts.push_back(n);
    for (const auto& m : e.more_positives) texts.push_back(m);
  }
  return texts;
}

TokenizedData tokenize(const std::vector<text::TrainingExample>& examples, const text::Tokenizer& tokenizer,
                       const DataConfig& cfg, const text::Prompts& prompts) {
  TokenizedData data;
  // One row per passage text, positive or negative, so that a hard negative that is another example's positive
  // is that row (assemble_batch never draws a positive of the batch as a negative); positives by key first.
  std::unordered_map<int64_t, int64_t> positive_row;     // positive_key -> passage row
  std::unordered_map<std::string, int64_t> text_row;     // passage text -> passage row
  const auto row_of = [&](const std::string& text) {
    const auto [it, fresh] = text_row.try_emplace(text, static_cast<int64_t>(data.passages.size()));
    if (fresh)
      data.passages.push_back(text::encode_with_prompt(tokenizer, prompts.passage, text, cfg.max_passage_tokens));
    return it->second;
  };
  for (const auto& e : examples) {
    data.queries.push_back(text::encode_with_prompt(tokenizer, prompts.query, e.query, cfg.max_query_tokens));
    const auto [it, fresh] = positive_row.try_emplace(e.positive_key, 0);
    if (fresh) it->second = row_of(e.positive);
    data.positive.push_back(it->second);
    std::vector<int64_t> more;
    for (const auto& m : e.more_positives) more.push_back(row_of(m));
    data.more_positives.push_back(std::move(more));
    std::vector<int64_t> negs;
    for (const auto& n : e.negatives) negs.push_back(row_of(n));
    data.negatives.push_back(std::move(negs));
  }
  data.batch_key = text::batch_keys(examples);
  return data;
}

std::vector<int64_t> grouping_lengths(const TokenizedData& data) {
  std::vector<int64_t> lengths(static_cast<size_t>(data.examples()));
  for (size_t i = 0; i < lengths.size(); ++i) {
    size_t longest = data.passages[static_cast<size_t>(data.positive[i])].size();
    for (int64_t m : data.more_positives[i]) longest = std::max(longest, data.passages[static_cast<size_t>(m)].size());
    lengths[i] = static_cast<int64_t>(data.queries[i].size() + longest);
  }
  return lengths;
}

PairBatch assemble_batch(const TokenizedData& data, std::span<const int64_t> rows, int64_t hard_negatives,
                         int32_t pad_id, uint64_t seed, int64_t step, const torch::Device& device,
                         int64_t first_index, std::span<const int64_t> batch_rows) {
  std::vector<std::vector<int32_t>> q, p, negs;
  // The loss scores every hard negative of the batch against every query: one that is a positive of the batch
  // would be a negative of its own query, so the batch's positives (each example's every positive, the one it
  // trains on this step or not) are never drawn as hard negatives.
  std::unordered_set<int64_t> positives;
  for (int64_t r : batch_rows.empty() ? rows : batch_rows) {
    positives.insert(data.positive[static_cast<size_t>(r)]);
    for (int64_t m : data.more_positives[static_cast<size_t>(r)]) positives.insert(m);
  }
  // Row i's draws (its positive, its negatives) follow the seed, the step and its place in the global batch.
  const auto place = [&](size_t i) {
    return splitmix64(static_cast<uint64_t>(step) * 1000003u + static_cast<uint64_t>(first_index) + i);
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<size_t>(rows[i]);
    q.push_back(data.queries[r]);
    // An example with several positives trains on one drawn at each step.
    int64_t positive = data.positive[r];
    if (const auto& more = data.more_positives[r]; !more.empty()) {
      const uint64_t draw = splitmix64(splitmix64(seed ^ kPositiveDraw) ^ place(i)) % (more.size() + 1);
      if (draw > 0) positive = more[draw - 1];
    }
    p.push_back(data.passages[static_cast<size_t>(positive)]);
  }
  const auto n_passages = static_cast<uint64_t>(data.passages.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& own = data.negatives[static_cast<size_t>(rows[i])];
    uint64_t state = splitmix64(seed ^ place(i));
    // A pool larger than asked for: `hard_negatives` of it by a partial Fisher-Yates shuffle.
    std::vector<int64_t> chosen;
    std::copy_if(own.begin(), own.end(), std::back_inserter(chosen), [&](int64_t n) { return !positives.count(n); });
    if (static_cast<int64_t>(chosen.size()) > hard_negatives) {
      for (size_t j = 0; j < static_cast<size_t>(hard_negatives); ++j) {
        state = splitmix64(state);
        std::swap(chosen[j], chosen[j + state % (chosen.size() - j)]);
      }
      chosen.resize(static_cast<size_t>(hard_negatives));
    }
    for (int64_t j = 0; j < hard_negatives; ++j) {
      if (j < static_cast<int64_t>(chosen.size())) {
        negs.push_back(data.passages[static_cast<size_t>(chosen[static_cast<size_t>(j)])]);
        continue;
      }
      int64_t pick = data.positive[static_cast<size_t>(rows[i])];
      for (int tries = 0; positives.count(pick) && tries < 16 && n_passages > 1; ++tries) {
        state = splitmix64(state);
        pick = static_cast<int64_t>(state % n_passages);
      }
      negs.push_back(data.passages[static_cast<size_t>(pick)]);
    }
  }
  p.insert(p.end(), negs.begin(), negs.end());
  text::TokenBatch qb = text::make_token_batch(q, pad_id);
  text::TokenBatch pb = text::make_token_batch(p, pad_id);
  // The masks stay on the host: the towers make their packing there without waiting for the device.
  PairBatch batch;
  batch.q_ids = device_tensor(qb.ids, qb.rows, qb.cols, device);
  batch.q_mask = host_tensor(qb.mask, qb.rows, qb.cols, device);
  batch.p_ids = device_tensor(pb.ids, pb.rows, pb.cols, device);
  batch.p_mask = host_tensor(pb.mask, pb.rows, pb.cols, device);
  batch.hard_negatives = hard_negatives;
  batch.real_tokens = std::count(qb.mask.begin(), qb.mask.end(), 1) + std::count(pb.mask.begin(), pb.mask.end(), 1);
  return batch;
}

}  // namespace ragmig::train
