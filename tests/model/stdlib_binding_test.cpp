// PyTorch's wheels export libtorch_cpu.so's own copy of std::filesystem (built by an older GCC). Linked
// before libstdc++, that copy served our calls and remove_all crashed on the GPU machine. This binary links
// LibTorch as ragmig does: it checks that the std::filesystem functions bind to libstdc++, then runs every
// filesystem operation ragmig uses, and the ragmig code that removes and replaces folders.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/blas_binding.h"
#include "model/model_folder.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

// The shared object whose definition `fn` was bound to.
template <class Fn>
std::string library_of(Fn* fn) {
  const std::string path = shared_object_of(reinterpret_cast<const void*>(fn));
  return path.empty() ? "(unknown)" : path;
}

TEST(StdlibBinding, FilesystemFunctionsComeFromLibstdcxx) {
  // LibTorch is loaded and in use, as in every torch-linked ragmig binary.
  ASSERT_EQ(torch::ones({2}).sum().item<float>(), 2.0f);
  const std::string libs[] = {
      library_of(static_cast<std::uintmax_t (*)(const fs::path&)>(&fs::remove_all)),
      library_of(static_cast<bool (*)(const fs::path&)>(&fs::remove)),
      library_of(static_cast<bool (*)(const fs::path&)>(&fs::create_directories)),
      library_of(static_cast<void (*)(const fs::path&, const fs::path&)>(&fs::rename)),
      library_of(static_cast<fs::path (*)()>(&fs::temp_directory_path)),
      library_of(static_cast<fs::path (*)(const fs::path&)>(&fs::canonical)),
  };
  for (const auto& lib : libs) EXPECT_NE(lib.find("libstdc++"), std::string::npos) << "bound to " << lib;
}

TEST(StdlibBinding, EveryFilesystemOperationRagmigUsesWorks) {
  ragmig::testing::ScratchDir scratch;
  const fs::path root = scratch / "tree";
  ASSERT_TRUE(fs::create_directories(root / "a" / "b" / "c"));
  ASSERT_TRUE(fs::create_directory(root / "d"));
  for (const char* f : {"a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "d/four.txt"}) std::ofstream(root / f) << f;
  fs::create_symlink(root / "a" / "one.txt", root / "link");
  EXPECT_EQ(fs::read_symlink(root / "link"), root / "a" / "one.txt");
  EXPECT_TRUE(fs::exists(root / "a/b/c/three.txt"));
  EXPECT_TRUE(fs::is_directory(root / "a/b"));
  EXPECT_TRUE(fs::is_regular_file(root / "d/four.txt"));
  EXPECT_EQ(fs::file_size(root / "d/four.txt"), 10u);
  EXPECT_EQ(fs::relative(root / "a/b/two.txt", root), fs::path("a/b/two.txt"));
  EXPECT_EQ(fs::canonical(root / "a/../d"), fs::canonical(root / "d"));
  EXPECT_TRUE(fs::absolute("x").is_absolute());
  EXPECT_FALSE(fs::current_path().empty());
  int top = 0, all = 0;
  for (const auto& e : fs::directory_iterator(root)) top += e.exists() ? 1 : 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) ++all;
  EXPECT_EQ(top, 3);   // a, d, link
  EXPECT_EQ(all, 9);   // a, a/b, a/b/c, d, four files and the link (not followed)
  fs::rename(root / "d", root / "e");
  EXPECT_TRUE(fs::remove(root / "e" / "four.txt"));
  EXPECT_FALSE(fs::remove(root / "e" / "four.txt"));
  EXPECT_EQ(fs::remove_all(root), 9u);  // root, a, a/b, a/b/c, e, three files and the link
  EXPECT_FALSE(fs::exists(root));
  EXPECT_EQ(fs::remove_all(root), 0u);
}

TEST(StdlibBinding, ModelFolderReplacementRemovesTheOldFolder) {
  ragmig::testing::ScratchDir scratch;
  EncoderSpec spec;
  spec.bert = ragmig::testing::tiny_bert_config(8, 16, 2, 16);
  spec.shared_towers = false;
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d"};
  const std::string dir = (scratch / "model").string();
  for (int i = 0; i < 3; ++i) {
    DualEncoder model(spec);
    save_model_folder(dir, model, text::word_piece_spec(vocab));
  }
  int entries = 0;
  for (const auto& e : fs::directory_iterator(scratch.path())) entries += e.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1) << "only the model folder, no .tmp- or .old- folders left behind";
  EXPECT_NO_THROW(load_model_folder(dir));
}

}  // namespace
}  // namespace ragmig::model
