// The lookup of packaged pretrained encoders (see packaged_models.h).
#include "model/packaged_models.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "model/bert_config.h"
#include "model/st_folder.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

constexpr const char* kPrefix = "package:";

std::string canonical_name(std::string s) {
  for (char& c : s) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The site-packages folders of one search-path entry.
std::vector<fs::path> site_packages_of(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  std::vector<fs::path> out;
  const fs::path lib = root / "lib";
  if (fs::is_directory(lib, ec))
    for (const auto& e : fs::directory_iterator(lib, ec))
      if (e.path().filename().string().rfind("python3", 0) == 0 && fs::is_directory(e.path() / "site-packages", ec))
        out.push_back(e.path() / "site-packages");
  if (out.empty()) out.push_back(root);
  std::sort(out.begin(), out.end());
  return out;
}

// A BERT folder: config.json says model_type "bert", "distilbert" (read as BERT), "roberta", "xlm-roberta",
// "mpnet" or "modernbert", and a vocabulary is there.
bool describe(const fs::path& folder, PackagedModel& m) {
  std::error_code ec;
  if (!fs::is_regular_file(folder / "config.json", ec)) return false;
  if (!fs::exists(folder / "vocab.txt", ec) && !fs::exists(folder / "tokenizer.json", ec) &&
      !fs::exists(folder / "vocab.json", ec))
    return false;
  try {
    const auto j = read_json_file((folder / "config.json").string());
    if (!j.is_object()) return false;
    m.model_type = j.value("model_type", "");
    static const std::set<std::string> kFamilies = {"bert", "distilbert", "roberta", "xlm-roberta", "mpnet",
                                                     "modernbert"};
    if (!kFamilies.count(m.model_type)) return false;
    const BertConfig config = bert_config_from_json(j, (folder / "config.json").string());
    m.hidden_size = config.hidden_size;
    m.layers = config.num_hidden_layers;
  } catch (const std::exception&) {
    return false;  // not a model folder after all; the listing skips it
  }
  m.path = folder.string();
  m.sentence_transformers = fs::exists(folder / "modules.json", ec);
  return true;
}

}  // namespace

std::vector<std::string> model_search_path() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("RAGMIG_MODEL_PATH")) {
    std::string s = env;
    for (size_t start = 0; start <= s.size();) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
#ifdef RAGMIG_DEFAULT_SITE_PACKAGES
  out.push_back(RAGMIG_DEFAULT_SITE_PACKAGES);
#endif
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) out.push_back(venv);
  return out;
}

std::vector<PackagedModel> find_packaged_models(const std::vector<std::string>& search_path) {
  std::vector<PackagedModel> found;
  std::set<std::string> names;
  for (const auto& root : search_path)
    for (const auto& site : site_packages_of(root)) {
      std::error_code ec;
      std::vector<fs::path> packages;
      for (const auto& e : fs::directory_iterator(site, ec))
        if (e.is_directory(ec) && e.path().extension() != ".dist-info" && e.path().filename().string()[0] != '_')
          packages.push_back(e.path());
      std::sort(packages.begin(), packages.end());
      for (const auto& pkg : packages) {
        const std::string name = canonical_name(pkg.filename().string());
        // The package folder, its children and grandchildren: where such packages keep their model.
        std::vector<fs::path> candidates{pkg};
        for (const auto& c : fs::directory_iterator(pkg, ec))
          if (c.is_directory(ec)) {
            candidates.push_back(c.path());
            for (const auto& g : fs::directory_iterator(c.path(), ec))
              if (g.is_directory(ec)) candidates.push_back(g.path());
          }
        std::sort(candidates.begin(), candidates.end());
        for (const auto& folder : candidates) {
          PackagedModel m;
          if (names.count(name) || !describe(folder, m)) continue;
          m.name = name;
          names.insert(name);
          found.push_back(std::move(m));
        }
      }
    }
  return found;
}

std::string resolve_model_reference(const std::string& reference) {
  if (reference.rfind(kPrefix, 0) != 0) return reference;
  const std::string wanted = canonical_name(reference.substr(std::string(kPrefix).size()));
  const auto path = model_search_path();
  const auto models = find_packaged_models(path);
  for (const auto& m : models)
    if (m.name == wanted) return m.path;
  std::string where, have;
  for (const auto& p : path) where += (where.empty() ? "" : ", ") + p;
  for (const auto& m : models) have += (have.empty() ? "" : ", ") + m.name;
  throw ConfigError("model " + reference + ": no package of that name carries a BERT model folder in " +
                    (where.empty() ? "(no search path)" : where) + " (found: " + (have.empty() ? "none" : have) +
                    "; see `ragmig models`, RAGMIG_MODEL_PATH)");
}

}  // namespace ragmig::model
