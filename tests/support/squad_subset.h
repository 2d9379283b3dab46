// A BEIR folder of real SQuAD data small enough for a sweep test to train and evaluate in seconds, shared by
// the tests that run `ragmig batch` for real.
#pragma once

#include <filesystem>

namespace ragmig::testing {

/// The passages of the first 400 training and 150 test questions of ../shared/data's SQuAD plus 300 others.
void write_squad_subset(const std::filesystem::path& dir);

}  // namespace ragmig::testing
