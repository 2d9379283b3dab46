// Cross-checks the C++ BERT forward pass against tests/model/bert_reference.py, an independent plain-torch
// implementation run by RAGMIG_PYTHON (the project venv, with torch). Skips where that Python lacks torch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "core/atomic_file.h"
#include "model/bert.h"
#include "model/model_folder.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"

namespace ragmig::model {
namespace {

const char* kPython = RAGMIG_PYTHON_PATH;

bool python_has_torch() {
  static const bool ok =
      std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
  return ok;
}

void check_against_python(const std::string& act) {
  BertConfig c = testing::tiny_bert_config(50, 32, 4, 16);
  c.hidden_act = act;
  c.layer_norm_eps = 1e-12;
  torch::manual_seed(31);
  BertModel model(c);
  model->eval();
  {
    // Non-trivial biases and LayerNorm affines, so that each of them is exercised.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * 0.3);
  }
  auto ids = torch::randint(0, 50, {3, 10}, torch::kLong);
  auto mask = torch::ones({3, 10}, torch::kLong);
  mask[1].slice(0, 6).fill_(0);
  mask[2].slice(0, 1).fill_(0);

  ragmig::testing::ScratchDir dir;
  auto tensors = bert_state(model);
  tensors["input_ids"] = ids;
  tensors["attention_mask"] = mask;
  save_tensors((dir / "in.safetensors").string(), tensors);
  write_file_atomic(dir / "config.json", to_json(c).dump());
  const std::string cmd = std::string(kPython) + " " RAGMIG_SOURCE_DIR "/tests/model/bert_reference.py " +
                          (dir / "config.json").string() + " " + (dir / "in.safetensors").string() + " " +
                          (dir / "out.safetensors").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto expected = load_tensors((dir / "out.safetensors").string()).at("last_hidden_state");

  torch::NoGradGuard no_grad;
  auto got = model->forward(ids, mask);
  ASSERT_EQ(got.sizes(), expected.sizes());
  const float diff = (got - expected).abs().max().item<float>();
  std::cout << "hidden_act " << act << ": max |C++ - Python| = " << diff << "\n";
  EXPECT_LT(diff, 1e-5f) << "hidden_act " << act;
  EXPECT_GT(got.abs().max().item<float>(), 0.5f);  // a real signal, not two zero tensors
}

TEST(BertPython, MatchesPlainTorchReferenceGelu) {
  if (!python_has_torch()) GTEST_SKIP() << kPython << " cannot import torch";
  check_against_python("gelu");
}

TEST(BertPython, MatchesPlainTorchReferenceRelu) {
  if (!python_has_torch()) GTEST_SKIP() << kPython << " cannot import torch";
  check_against_python("relu");
}

}  // namespace
}  // namespace ragmig::model
