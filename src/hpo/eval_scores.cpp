// Scores of a sweep's evaluations (see eval_scores.h).
#include "hpo/eval_scores.h"

#include <fmt/format.h>

#include "core/error.h"

namespace ragmig::hpo {
namespace {

double number_at(const nlohmann::json& object, const std::string& key, const std::string& where, const std::string& path) {
  const auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end() || !it->is_number())
    throw DataError(fmt::format("{}: expected a number at {} (the evaluation's result)", path, where));
  return it->get<double>();
}

}  // namespace

EvalScores eval_scores(const nlohmann::json& result, const std::string& metric, const std::string& path) {
  if (!result.is_object()) throw DataError(path + ": expected a JSON object (the evaluation's result)");
  EvalScores s;
  const auto retriever = result.find("retriever");
  if (retriever == result.end() || !retriever->is_string() || retriever->get<std::string>() != "hybrid") {
    s.alone = number_at(result, metric, "\"" + metric + "\"", path);
    return s;
  }
  s.hybrid = number_at(result, metric, "\"" + metric + "\"", path);
  const auto parts = result.find("parts");
  const bool has_parts = parts != result.end() && parts->is_object();
  s.alone = number_at(has_parts ? parts->value("dense", nlohmann::json()) : nlohmann::json(), metric,
                      "\"parts\".\"dense\".\"" + metric + "\"", path);
  const auto fusion = result.find("fusion");
  if (fusion == result.end() || !fusion->is_string())
    throw DataError(path + ": expected a string at \"fusion\" (the evaluation's result)");
  s.fusion = fusion->get<std::string>();
  return s;
}

}  // namespace ragmig::hpo
