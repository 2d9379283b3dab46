// The tokenizer and the model a training run starts from (see run_model.h).
#include "train/run_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "text/vocab_builder.h"
#include "text/wordpiece.h"

namespace fs = std::filesystem;

namespace ragmig::train {
namespace {

// model.dense_dim's layer after pooling an encoder of `hidden_size` (biased, as sentence-transformers' Dense).
model::DenseConfig dense_config(const ModelConfig& m, int64_t hidden_size) {
  return {hidden_size, m.dense_dim, true, *model::activation_from_string(m.dense_activation), false};
}

model::EncoderSpec spec_from_config(const ModelConfig& m, const text::Tokenizer& tok) {
  model::EncoderSpec spec;
  // ModernBertConfig's defaults (window, bases, its layer pattern for this many layers), these sizes.
  if (m.architecture == "modernbert")
    spec.bert = model::bert_config_from_json({{"model_type", "modernbert"}, {"num_hidden_layers", m.layers},
                                              {"mlp_dropout", m.dropout}, {"attention_dropout", m.dropout}},
                                             "model.architecture");
  spec.bert.vocab_size = tok.vocab_size();
  spec.bert.hidden_size = m.hidden_size;
  spec.bert.num_hidden_layers = m.layers;
  spec.bert.num_attention_heads = m.heads;
  spec.bert.intermediate_size = m.intermediate_size;
  spec.bert.max_position_embeddings = m.max_position;
  spec.bert.hidden_dropout_prob = m.dropout;
  spec.bert.attention_probs_dropout_prob = m.dropout;
  spec.bert.pad_token_id = tok.pad_id();
  spec.pooling = model::parse_pooling(m.pooling.value_or("mean"));
  spec.normalize = m.normalize.value_or(true);
  spec.shared_towers = m.shared_towers;
  if (m.dense_dim > 0) spec.dense = {dense_config(m, m.hidden_size)};
  return spec;
}

model::LoraSpec lora_spec(const LoraOptions& o, const std::string& model_type) {
  model::LoraSpec spec;
  spec.rank = o.rank;
  spec.alpha = o.alpha;
  spec.dropout = o.dropout;
  spec.targets = o.targets.empty() ? model::default_lora_targets(model_type) : o.targets;
  spec.rslora = o.rslora;
  return spec;
}

}  // namespace

text::TokenizerSpec choose_tokenizer(const TrainConfig& cfg, const std::string& run_vocab,
                                     const model::LoadedModel* init, const std::vector<text::TrainingExample>& examples,
                                     const text::BeirFolder* beir, std::string& origin) {
  if (init) {
    origin = cfg.model.init;
    text::TokenizerSpec spec = init->tokenizer;
    if (const auto eos = cfg.model.add_eos_token) {
      const bool decoder_bpe = spec.kind == text::TokenizerKind::kSentencePieceBpe ||
                               (spec.kind == text::TokenizerKind::kByteBpe && spec.bpe_split != text::BpeSplit::kGpt2);
      if (!decoder_bpe)
        throw ConfigError("config key 'model.add_eos_token': " + cfg.model.init +
                          "'s tokenizer is not SentencePiece BPE nor a byte-level BPE split as Qwen's or Llama 3's "
                          "(its folder would not record the framing)");
      spec.sep_last = *eos;  // the sep is the folder's end-of-text token (st_folder.cpp's set_framing)
    }
    return spec;
  }
  if (fs::exists(run_vocab)) {
    origin = "run folder";
    return text::WordPieceTokenizer::from_file(run_vocab).spec();
  }
  if (!cfg.model.vocab.empty()) {
    origin = cfg.model.vocab;
    return text::WordPieceTokenizer::from_file(cfg.model.vocab).spec();
  }
  origin = "built from the training data";
  text::VocabBuilderOptions vo;
  vo.vocab_size = cfg.model.vocab_size;
  return text::word_piece_spec(text::build_wordpiece_vocab(vocabulary_texts(examples, beir), vo));
}

RunModel build_run_model(const TrainConfig& cfg, const model::LoadedModel* init, const text::Tokenizer& tokenizer,
                         const std::string& vocab_origin, bool bf16, const std::string& precision_reason,
                         const torch::Device& device) {
  RunModel out;
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  model::DualEncoder net = init ? init->model : model::DualEncoder(spec_from_config(cfg.model, tokenizer));
  if (init && cfg.model.pooling) net->set_pooling(model::parse_pooling(*cfg.model.pooling));
  if (init && cfg.model.normalize) net->set_normalize(*cfg.model.normalize);
  if (init && cfg.model.dense_dim > 0) {
    if (const auto& own = net->spec().dense; !own.empty())
      throw ConfigError(fmt::format("config key 'model.dense_dim': {} has a Dense module already ({} -> {})",
                                    cfg.model.init, own.front().in_features, own.back().out_features));
    net = model::with_dense_layer(net, dense_config(cfg.model, net->spec().bert.hidden_size));
  }
  const auto& bert = net->spec().bert;
  if (tokenizer.vocab_size() > bert.vocab_size)
    throw DataError(fmt::format("vocabulary and model mismatch: {} has {} tokens, the model embeds {}", vocab_origin,
                                tokenizer.vocab_size(), bert.vocab_size));
  if (bert.max_tokens() < std::max(cfg.data.max_query_tokens, cfg.data.max_passage_tokens))
    throw ConfigError(fmt::format("data.max_passage_tokens / data.max_query_tokens exceed the model's {} positions",
                                  bert.max_tokens()));
  out.lora = lora_spec(cfg.lora, bert.model_type);
  if (cfg.lora.rank > 0) {  // the start event counts the adapters' parameters among the trainable ones
    model::BertModel query = net->query_tower();
    model::attach_lora(query, out.lora);
    if (!net->spec().shared_towers) {
      model::BertModel passage = net->passage_tower();
      model::attach_lora(passage, out.lora);
    }
    // The adapters alone train: a Dense layer after pooling stays the base's, as in peft on the encoder.
    for (const auto& item : net->named_parameters())
      if (!model::is_lora_parameter(item.key())) item.value().requires_grad_(false);
  }
  if (cfg.lora.rank > 0 && cfg.lora.base_precision == "bf16") {
    if (!bf16)
      throw ConfigError("config key 'lora.base_precision': bf16 needs bf16 compute, and train.precision is fp32 here (" +
                        precision_reason + ")");
    torch::NoGradGuard no_grad;
    for (auto& p : net->parameters())
      if (!p.requires_grad()) p.set_data(p.to(torch::kBFloat16));
  }
  if (cfg.model.freeze_embeddings)
    for (const auto& item : net->named_parameters())
      // The embedding tables (word / position / token type; ModernBERT's tok_embeddings), not their LayerNorm.
      if (item.key().find("embeddings.") != std::string::npos && item.key().ends_with("embeddings.weight"))
        item.value().requires_grad_(false);
  net->to(device);
  net->train();
  // Prefixes of normalised embeddings are compared by cosine, as the whole ones are.
  out.loss = LossSpec{cfg.train.matryoshka_dims, net->spec().normalize, loss_terms(cfg.train)};
  for (const int64_t d : out.loss.dims)
    if (d > net->spec().embedding_dim())
      throw ConfigError(fmt::format("config key 'train.matryoshka_dims': {} exceeds the model's {} embedding "
                                    "dimensions", d, net->spec().embedding_dim()));
  if (cfg.eval.dimensions > net->spec().embedding_dim())
    throw ConfigError(fmt::format("config key 'eval.dimensions': {} exceeds the model's {} embedding dimensions",
                                  cfg.eval.dimensions, net->spec().embedding_dim()));
  out.unpad = cfg.train.unpad == "on" || (cfg.train.unpad == "auto" && device.is_cuda());
  net->query_tower()->set_unpad(out.unpad);
  net->passage_tower()->set_unpad(out.unpad);
  net->query_tower()->set_bf16_residual(cfg.train.bf16_residual && bf16);
  net->passage_tower()->set_bf16_residual(cfg.train.bf16_residual && bf16);
  net->query_tower()->set_activation_checkpointing(cfg.train.activation_checkpointing);
  net->passage_tower()->set_activation_checkpointing(cfg.train.activation_checkpointing);
  for (const auto& p : net->parameters())
    if (p.requires_grad()) out.trainable.push_back(p);
  out.net = net;
  return out;
}

}  // namespace ragmig::train
