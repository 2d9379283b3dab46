// The g++ build's stand-in for libFuzzer: runs a harness's LLVMFuzzerTestOneInput on every file of its seed
// corpus, then on seeded random mutations of them (tests/support/text_mutation.h) for a bounded count or time,
// then on each seed's structured variants (a JSON or TOML value of every type and edge at each place,
// json_variants.h and toml_variants.h),
// so that `make test` keeps each harness and its corpus honest in a few seconds. A finding aborts after saving
// the input to fuzz-finding-<pid>.bin in the working folder. Usage: harness CORPUS_DIR|FILE... [--mutations=N]
// [--seconds=S] [--seed=N].
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/splitmix.h"
#include "fuzz_support.h"
#include "support/json_variants.h"
#include "support/text_mutation.h"
#include "support/toml_variants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string current;  // the input being run, saved on a finding

void save_current() {
  const std::string name = "fuzz-finding-" + std::to_string(::getpid()) + ".bin";
  std::ofstream(name, std::ios::binary).write(current.data(), static_cast<std::streamsize>(current.size()));
  std::fprintf(stderr, "input saved to %s/%s (%zu bytes)\n", std::filesystem::current_path().c_str(), name.c_str(),
               current.size());
}

void run(const std::string& input) {
  current = input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(current.data()), current.size());
}

// A TOML seed's variants; false when the seed is not TOML or holds no key.
bool for_each_toml_variant(const std::string& seed, const std::function<bool(const std::string&)>& f) {
  toml::table root;
  try {
    root = toml::parse(seed);
  } catch (const toml::parse_error&) {
    return false;
  }
  if (root.empty()) return false;
  ragmig::testing::for_each_toml_variant(root, [&](const std::string& variant, const auto&, const auto&) {
    return f(variant);
  });
  return true;
}

// The structured variants of a seed (tests/support/json_variants.h, toml_variants.h): of a JSON document, after an
// optional first byte (a harness's selector), of each JSON line of a JSONL file, the others kept, or of a TOML
// document with at least one key; none for other seeds.
void for_each_structured_variant(const std::string& seed, const std::function<bool(const std::string&)>& f) {
  for (const size_t skip : {0, 1}) {
    if (seed.size() <= skip) break;
    const auto doc = nlohmann::json::parse(seed.substr(skip), nullptr, false);
    if (doc.is_discarded() || !doc.is_structured()) continue;
    ragmig::testing::for_each_json_variant(doc, [&](const nlohmann::json& variant, const auto&, const auto&) {
      return f(seed.substr(0, skip) + variant.dump());
    });
    return;
  }
  if (for_each_toml_variant(seed, f)) return;
  std::vector<std::string> lines;
  for (size_t at = 0; at <= seed.size();) {
    const size_t end = std::min(seed.find('\n', at), seed.size());
    lines.push_back(seed.substr(at, end - at));
    at = end + 1;
  }
  if (lines.size() < 2) return;
  bool go_on = true;
  for (size_t i = 0; i < lines.size() && go_on; ++i) {
    const auto row = nlohmann::json::parse(lines[i], nullptr, false);
    if (row.is_discarded() || !row.is_structured()) continue;
    ragmig::testing::for_each_json_variant(row, [&](const nlohmann::json& variant, const auto&, const auto&) {
      std::string input;
      for (size_t j = 0; j < lines.size(); ++j) {
        if (j > 0) input += '\n';
        input += j == i ? variant.dump() : lines[j];
      }
      return go_on = f(input);
    });
  }
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t mutations = 2000;
  double seconds = 5;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) mutations = std::stoll(arg.substr(12));
    else if (arg.rfind("--seconds=", 0) == 0) seconds = std::stod(arg.substr(10));
    else if (arg.rfind("--seed=", 0) == 0) seed = std::stoull(arg.substr(7));
    else if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(arg)) files.push_back(arg);
    else {
      std::fprintf(stderr, "%s: no such corpus folder or file\n", arg.c_str());
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR|FILE... [--mutations=N] [--seconds=S] [--seed=N]\n", argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());  // directory order is not stable; replays must be
  ragmig::fuzz::on_finding = save_current;
  std::vector<std::string> seeds;
  for (const auto& f : files) {
    seeds.push_back(read_all(f));
    run(seeds.back());
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t done = 0;
  for (; done < mutations; ++done) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) break;
    uint64_t h = ragmig::splitmix64(seed ^ (static_cast<uint64_t>(done) * 0x9e3779b97f4a7c15ULL));
    std::string input = seeds[h % seeds.size()];
    const int edits = 1 + static_cast<int>(ragmig::splitmix64(h) % 6);
    for (int e = 0; e < edits; ++e) input = ragmig::testing::mutate(std::move(input), h);
    run(input);
  }
  // Then each seed's structured variants, within the same bounds again.
  const auto structured_start = std::chrono::steady_clock::now();
  int64_t structured = 0;
  const auto budget_left = [&] {
    return structured < mutations &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - structured_start).count() <= seconds;
  };
  for (size_t i = 0; i < seeds.size() && budget_left(); ++i)
    for_each_structured_variant(seeds[i], [&](const std::string& input) {
      run(input);
      ++structured;
      return budget_left();
    });
  std::printf("%zu seed files, %lld mutations and %lld structured variants ran without a finding\n", files.size(),
              static_cast<long long>(done), static_cast<long long>(structured));
  return 0;
}
