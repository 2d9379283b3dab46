// Model folders that Hugging Face tools read: config.json, the vocabulary and model.safetensors (HF names,
// float32), the tokenizer and sentence-transformers files (st_folder.h), so that AutoModel, AutoTokenizer and
// SentenceTransformer load them as they are, plus ragmig.json for what they do not know (shared or separate
// towers). With separate towers the query tower sits at the top, a whole sentence-transformers folder (so HF
// tools load it for queries), and the passage tower in passage/, another whole one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/dual_encoder.h"
#include "model/embedding_sizes.h"
#include "model/st_folder.h"
#include "model/torch_safetensors.h"
#include "model/training_record.h"

namespace ragmig::model {

/// ragmig.json's "format_version" written now; newer versions are refused on load.
inline constexpr int kModelFolderFormatVersion = 1;

/// Writes the folder: every file atomically into `dir` + ".tmp-<pid>", then the whole folder is renamed into
/// place (swapping atomically with an existing folder where the OS allows), so a half-written model folder
/// never appears under `dir`. The tokenizer's files are written beside each tower's weights
/// (write_sentence_transformer_files), and a Dense layer as sentence-transformers' 2_Dense module. Throws
/// DataError if the vocabulary has more tokens than the config's vocab_size (or a token its files cannot hold),
/// IoError if writing fails.
/// What is written beside the weights besides the tokenizer: the longest input (sentence_bert_config.json's
/// max_seq_length; 0 = the model's max_tokens()), the prompts, the training record and the embedding sizes
/// (truncate_dim in config_sentence_transformers.json, matryoshka_dims in ragmig.json).
struct SaveOptions {
  int64_t max_length = 0;
  text::Prompts prompts;  ///< config_sentence_transformers.json's prompts (st_folder.h)
  std::optional<TrainingQueries> training;  ///< ragmig.json's "training" (training_record.h); none = not written
  EmbeddingSizes sizes;                     ///< embedding_sizes.h; {} = neither written
};

void save_model_folder(const std::string& dir, DualEncoder& model, const text::TokenizerSpec& tokenizer,
                       const SaveOptions& options = {});

struct LoadedModel {
  DualEncoder model;
  text::TokenizerSpec tokenizer;  ///< read_folder_tokenizer's
  int64_t max_length = 0;  ///< the folder's longest input in tokens; 0 = not said
  text::Prompts prompts;   ///< put before queries and passages (read_prompts; an adapter folder's own, else its base's)
  EmbeddingSizes sizes;    ///< folder_embedding_sizes': Matryoshka sizes no larger than the model's embeddings
};

/// What writing `loaded` back (with loaded.tokenizer) keeps of its folder: the length, the prompts and the sizes.
SaveOptions save_options_of(const LoadedModel& loaded);

/// Loads a folder written by save_model_folder, a LoRA adapter folder (lora.h: its base model with the adapter
/// merged in), a folder written by transformers' save_pretrained (BertModel, DistilBertModel, RobertaModel,
/// XLMRobertaModel, MPNetModel, ModernBertModel, or a task model XForY whose tensors carry a "bert." /
/// "distilbert." / "roberta." / "mpnet." / "model." prefix: the heads outside it are ignored, as are "pooler.*" and
/// "embeddings.position_ids") or by sentence-transformers' save. Pooling and normalisation
/// come from ragmig.json, else modules.json and its Pooling module, else mean pooling, normalised; a Dense
/// module (LaBSE's, distiluse-base-multilingual's) from modules.json, its weights from its folder's
/// model.safetensors (sentence-transformers' names; a pickled pytorch_model.bin alone is refused by name); the
/// tokenizer from read_folder_tokenizer (of the Transformer module's folder); the prompts from read_prompts.
/// F32, F16, BF16 and F64 tensors are converted to float32. The embedding sizes come from folder_embedding_sizes
/// (a Matryoshka size past the model's embeddings is a DataError naming ragmig.json). Throws DataError naming the
/// file and tensor or key for missing, unexpected or mis-shaped tensors, for a config whose sizes make more weights
/// (BertConfig::minimum_weight_count, a Dense module's in x out) than its weights file holds at 2 bytes each
/// (checked before anything is allocated), and "vocabulary and model mismatch: ..." when vocab.txt has more lines
/// than vocab_size or the word embeddings do not have vocab_size rows; IoError if a file is missing.
/// The model is returned in training mode, as torch modules are built.
LoadedModel load_model_folder(const std::string& dir);

/// The prompts load_model_folder(dir) would give, without reading any weights: an adapter folder's own, else its
/// base's; a model folder's (read_prompts). Throws as those do.
text::Prompts folder_prompts(const std::string& dir);

/// The embedding sizes load_model_folder(dir) would give, without reading any weights: truncate_dim from the
/// folder's config_sentence_transformers.json (an adapter folder's base's: sentence-transformers loads an adapter
/// into its base's configuration), matryoshka_dims from its own ragmig.json (an adapter's training decides what
/// its sizes are worth). Throws as read_truncate_dim and read_matryoshka_dims do.
EmbeddingSizes folder_embedding_sizes(const std::string& dir);

/// The tower's parameters under ragmig's names (HF BertModel's; hf_tensor_name gives MPNet's), float32,
/// contiguous, on the CPU.
std::map<std::string, torch::Tensor> bert_state(BertModel& tower);
/// Copies the tensors of a safetensors file into `tower`, with the name handling of load_model_folder; a
/// DistilBERT checkpoint's names (transformer.layer.N.attention.q_lin, ...) are read as BERT's, and its token
/// type embeddings, which it does not have, are zero.
void load_bert_weights(BertModel& tower, const std::string& safetensors_path);

}  // namespace ragmig::model
