// The poolings ragmig runs, by sentence-transformers' names, in one list that the model folders, the training
// config and the encoder read. Torch-free; the pooling itself is model::pool (dual_encoder.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ragmig::model {

enum class Pooling { Mean, Cls, Max, MeanSqrtLen, LastToken };

/// "mean" | "cls" | "max" | "mean_sqrt_len_tokens" | "lasttoken" (sentence-transformers' pooling_mode names).
std::string to_string(Pooling pooling);
/// The pooling of that name; nullopt for any other.
std::optional<Pooling> pooling_named(std::string_view name);
/// pooling_named, or DataError naming the text and the choices.
Pooling parse_pooling(const std::string& text);
/// The names, for messages: "mean, cls, max, mean_sqrt_len_tokens or lasttoken".
std::string pooling_choices();

}  // namespace ragmig::model
