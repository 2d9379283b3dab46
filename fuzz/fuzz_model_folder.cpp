// Fuzzes what ragmig reads from a model folder without LibTorch (model/st_folder.cpp, bert_config.cpp): the
// first input byte picks the file that gets the rest (config.json, vocab.txt, tokenizer.json,
// tokenizer_config.json, sentence_bert_config.json, modules.json, 1_Pooling/config.json,
// config_sentence_transformers.json, special_tokens_map.json, vocab.json, merges.txt, 2_Dense/config.json), the
// others keep small valid
// contents. Then the folder is read as model_folder.cpp reads it and a tokenizer is built from it (WordPiece;
// byte-level BPE for a BPE tokenizer.json, vocab.json or merges.txt; Unigram, with its normaliser and SentencePiece
// charsmap, for a Unigram tokenizer.json; with the folder's special tokens), which tokenises a text with the
// folder's prompts.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_support.h"
#include "model/bert_config.h"
#include "model/st_folder.h"
#include "text/prompts.h"
#include "text/tokenizer.h"

namespace {

const char* const kFiles[] = {"config.json",  "vocab.txt",  "tokenizer.json", "tokenizer_config.json",
                              "sentence_bert_config.json", "modules.json", "1_Pooling/config.json",
                              "config_sentence_transformers.json", "special_tokens_map.json", "vocab.json",
                              "merges.txt", "2_Dense/config.json"};
const char* const kValid[] = {
    R"({"model_type": "bert", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1,
"num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 32, "hidden_act": "gelu"})",
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\na\n<s>\n<pad>\n</s>\n<mask>\n",
    R"({"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}},
"normalizer": {"type": "BertNormalizer", "lowercase": true}})",
    R"({"do_lower_case": true, "model_max_length": 512})",
    R"({"max_seq_length": 128, "do_lower_case": false})",
    R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
{"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
{"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}])",
    R"({"word_embedding_dimension": 8, "pooling_mode_mean_tokens": true})",
    R"({"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": null})",
    R"({"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]"})",
    R"({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4, "a": 5, "b": 6, "ab": 7, "\u0120": 8})",
    "#version: 0.2\na b\n",
    R"({"in_features": 8, "out_features": 4, "bias": true, "activation_function": "torch.nn.modules.activation.Tanh"})",
};
constexpr size_t kCount = sizeof(kFiles) / sizeof(kFiles[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t which = data[0] % kCount;
  const std::filesystem::path dir = ragmig::fuzz::scratch_dir() / "model";
  for (size_t i = 0; i < kCount; ++i)
    if (i == which) ragmig::fuzz::write_input(std::string("model/") + kFiles[i], data + 1, size - 1);
    else ragmig::fuzz::write_input(std::string("model/") + kFiles[i], kValid[i]);
  // Without vocab.txt the vocabulary comes from tokenizer.json: its reader is reached only then; without both,
  // from vocab.json + merges.txt.
  const bool bpe_files = which == 9 || which == 10;
  if (which == 2 || bpe_files) std::filesystem::remove(dir / "vocab.txt");
  if (bpe_files) std::filesystem::remove(dir / "tokenizer.json");
  ragmig::fuzz::expect_typed_errors([&] {
    const std::string config = (dir / "config.json").string();
    ragmig::model::bert_config_from_json(ragmig::model::read_json_file(config), config);
  });
  ragmig::fuzz::expect_typed_errors([&] { ragmig::model::read_sentence_transformer_layout(dir.string()); });
  ragmig::fuzz::expect_typed_errors([&] {
    const auto tok = ragmig::model::read_folder_tokenizer(dir.string());
    const auto tokenizer_ptr = ragmig::text::make_tokenizer(tok.spec);
    const ragmig::text::Tokenizer& tokenizer = *tokenizer_ptr;
    const ragmig::text::Prompts prompts = ragmig::model::read_prompts(dir.string());
    // A fixed sentence, and the input's own bytes as a text (corpus files and serve's request bodies are any text).
    for (const bool queries : {true, false})
      for (const std::string& text : {std::string("The cats sat, naïvely, on 东京's mats."),
                                      std::string(reinterpret_cast<const char*>(data), std::min<size_t>(size, 4096))})
        ragmig::text::encode_with_prompt(tokenizer, prompts.of(queries), text, tok.max_length > 0 ? tok.max_length : 16);
  });
  return 0;
}
