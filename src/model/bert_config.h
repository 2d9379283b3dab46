// The shape of a BERT encoder, with Hugging Face's BertConfig key names and defaults, so that config.json
// files move unchanged between ragmig and Hugging Face tools; MPNet's (BERT plus a relative position bias) too.
// Torch-free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ragmig::model {

/// ModernBERT's keys beyond those it shares with BERT (ModernBertConfig's names and defaults). The shared ones it
/// names differently are read into BertConfig's: hidden_activation -> hidden_act, norm_eps -> layer_norm_eps,
/// attention_dropout -> attention_probs_dropout_prob, mlp_dropout -> hidden_dropout_prob.
struct ModernBertOptions {
  bool norm_bias = false;       ///< LayerNorms with a bias
  bool attention_bias = false;  ///< Wqkv and the attention's Wo with biases
  bool mlp_bias = false;        ///< the MLP's Wi and Wo with biases
  int64_t local_attention = 128;  ///< a sliding layer's token sees the tokens within local_attention / 2 of it
  /// Per layer: sliding-window attention (else global), as layer_types says ("sliding_attention" /
  /// "full_attention"), or global_attn_every_n_layers (3: layers 0, 3, 6, ... global) where it is absent.
  std::vector<bool> sliding_layers;
  double global_rope_theta = 160000.0;  ///< rotary base of the global layers
  double local_rope_theta = 10000.0;    ///< and of the sliding ones
  double embedding_dropout = 0.0;

  bool operator==(const ModernBertOptions&) const = default;
};

/// The keys beyond those it shares with BERT of the decoders read as encoders through Llama's layer: Qwen3
/// (Qwen3-Embedding), Qwen2 (gte-Qwen2, stella), Llama and Mistral (e5-mistral, SFR-Embedding, Linq-Embed); their
/// configs' names and defaults. The shared ones they name differently are read into BertConfig's: rms_norm_eps ->
/// layer_norm_eps, attention_dropout -> attention_probs_dropout_prob; hidden_act is "silu". Which projections carry
/// biases and whether queries and keys are RMS-normed per head follow from the family (and attention_bias, mlp_bias
/// where its config has them).
struct DecoderOptions {
  int64_t num_key_value_heads = 32;  ///< key and value heads, each shared by num_attention_heads / this query heads
  int64_t head_dim = 128;            ///< each head's width: Qwen3 sets it apart; the others' hidden / heads by default
  double rope_theta = 10000.0;       ///< the rotary base
  bool qkv_bias = false;             ///< q, k and v projections with biases (Qwen2's always; attention_bias)
  bool output_bias = false;          ///< o_proj with a bias (attention_bias for Qwen3 and Llama)
  bool mlp_bias = false;             ///< gate, up and down projections with biases (Llama's mlp_bias)
  bool qk_norm = false;              ///< queries and keys RMS-normed per head (Qwen3)
  /// Mistral's causal window (each token sees the sliding_window tokens up to itself); 0: none. Inputs are kept
  /// within it (max_tokens()), so the window never cuts: the attention is plain causal.
  int64_t sliding_window = 0;

  bool operator==(const DecoderOptions&) const = default;
};

/// Gemma 3's text model's keys beyond those it shares with BERT (Gemma3TextConfig's names and defaults;
/// EmbeddingGemma's values in its config.json), read as EmbeddingGemma reads them: bidirectional attention. The
/// shared ones it names differently are read into BertConfig's: hidden_activation -> hidden_act
/// ("gelu_pytorch_tanh"), rms_norm_eps -> layer_norm_eps, attention_dropout -> attention_probs_dropout_prob.
struct Gemma3Options {
  int64_t num_key_value_heads = 4;      ///< key and value heads, each shared by num_attention_heads / this query heads
  int64_t head_dim = 256;               ///< not hidden_size / num_attention_heads: Gemma 3 sets it apart
  bool attention_bias = false;          ///< q, k, v and o projections with biases
  int64_t query_pre_attn_scalar = 256;  ///< scores are scaled by its inverse square root (not head_dim's)
  /// As config.json has it: a sliding layer's token sees the tokens within sliding_window / 2 of it (transformers'
  /// bidirectional window, |i - j| < sliding_window / 2 + 1).
  int64_t sliding_window = 4096;
  /// Per layer: sliding-window attention (else global), as layer_types says, or sliding_window_pattern (6: every
  /// sixth layer global) where it is absent.
  std::vector<bool> sliding_layers;
  double rope_theta = 1000000.0;      ///< rotary base of the global layers
  double rope_local_theta = 10000.0;  ///< and of the sliding ones (rope_local_base_freq)

  bool operator==(const Gemma3Options&) const = default;
};

struct BertConfig {
  /// "bert"; "roberta" or "xlm-roberta": BERT numbering positions from pad_token_id + 1 (RoBERTa,
  /// all-distilroberta-v1; XLM-R, multilingual-e5, paraphrase-multilingual-*); or "mpnet": MPNet
  /// (all-mpnet-base-v2, multi-qa-mpnet-*) adds a relative position bias, learnt per head and shared by all
  /// layers, to every attention score; numbers positions from 2 (as RoBERTa) and has no token types
  /// (type_vocab_size 0); or "modernbert": ModernBERT (gte-modernbert, modernbert-embed): pre-LN layers
  /// with a gated MLP, rotary positions and sliding-window attention in most layers (`modernbert` holds its
  /// own keys), no token types, hidden states through a final LayerNorm; or "qwen3", "qwen2", "llama", "mistral": a
  /// decoder read as an encoder through Llama's layer (Qwen3-Embedding, gte-Qwen2, e5-mistral): causal attention
  /// with rotary positions and grouped key/value heads, RMSNorm before each sublayer (Qwen3's on each head's queries
  /// and keys too), a SwiGLU MLP, a final RMSNorm (`decoder` holds their own keys); its embedding is usually its
  /// last token's (Pooling::LastToken); or "gemma3_text": Gemma 3's text model read
  /// bidirectionally (EmbeddingGemma): Qwen3's parts but full attention and sliding windows as ModernBERT's, RMSNorm
  /// around each sublayer too, a GeGLU MLP (tanh GELU) and embeddings scaled by sqrt(hidden_size) (`gemma3` holds
  /// its own keys). DistilBERT is read as "bert".
  std::string model_type = "bert";
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  ///< "gelu" (exact, erf) or "relu"
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  double initializer_range = 0.02;
  /// MPNet's rows of relative_attention_bias; HF's MPNet buckets positions into the first 32 whatever this says.
  int64_t relative_attention_num_buckets = 32;
  ModernBertOptions modernbert;  ///< read and written for model_type "modernbert" only
  DecoderOptions decoder;        ///< read and written for the decoders (is_decoder()) only
  Gemma3Options gemma3;          ///< read and written for model_type "gemma3_text" only

  bool mpnet() const { return model_type == "mpnet"; }
  bool is_modernbert() const { return model_type == "modernbert"; }
  /// A decoder read as an encoder through Llama's layer (DecoderOptions): "qwen3", "qwen2", "llama", "mistral".
  bool is_decoder() const {
    return model_type == "qwen3" || model_type == "qwen2" || model_type == "llama" || model_type == "mistral";
  }
  bool is_gemma3() const { return model_type == "gemma3_text"; }
  /// Positions by rotation (ModernBERT, the decoders, Gemma 3): no position embeddings, as many positions as
  /// max_position_embeddings.
  bool rotary() const { return is_modernbert() || is_decoder() || is_gemma3(); }
  /// A gated MLP (three matrices: ModernBERT's, the decoders', Gemma 3's).
  bool gated_mlp() const { return rotary(); }
  /// Heads of their own width with grouped keys and values (the decoders, Gemma 3).
  bool grouped_heads() const { return is_decoder() || is_gemma3(); }
  int64_t head_size() const {
    return is_decoder() ? decoder.head_dim : is_gemma3() ? gemma3.head_dim : hidden_size / num_attention_heads;
  }
  int64_t key_value_heads() const {
    return is_decoder() ? decoder.num_key_value_heads : is_gemma3() ? gemma3.num_key_value_heads : num_attention_heads;
  }
  /// The width of the attention's queries and of its keys (and values): num_attention_heads x head size, and
  /// num_key_value_heads x head size for the decoders and Gemma 3; hidden_size for the others.
  int64_t query_width() const { return grouped_heads() ? num_attention_heads * head_size() : hidden_size; }
  int64_t key_width() const { return grouped_heads() ? key_value_heads() * head_size() : hidden_size; }
  /// Whether layer i attends within a window (ModernBERT's and Gemma 3's sliding layers), and how far each side.
  bool sliding_layer(int64_t i) const;
  int64_t half_window() const { return is_gemma3() ? gemma3.sliding_window / 2 : modernbert.local_attention / 2; }
  bool roberta() const { return model_type == "roberta" || model_type == "xlm-roberta"; }
  /// The position_embeddings row of the first token: 0; pad_token_id + 1 for RoBERTa (HF's
  /// create_position_ids_from_input_ids); 2 for MPNet (HF's MPNetEmbeddings: its padding_idx, 1 whatever
  /// pad_token_id says, + 1).
  int64_t position_offset() const { return mpnet() ? 2 : roberta() ? pad_token_id + 1 : 0; }
  /// The longest input in tokens: max_position_embeddings less position_offset() (MPNet's 514 rows: 512;
  /// ModernBERT's and the decoders' rotary positions: max_position_embeddings; Mistral's no more than its
  /// sliding_window, within which its attention is plain causal).
  int64_t max_tokens() const {
    const int64_t positions = max_position_embeddings - position_offset();
    return is_decoder() && decoder.sliding_window > 0 ? std::min(positions, decoder.sliding_window) : positions;
  }

  /// The fewest weights a model of this config has: the word, position (all but rotary positions) and token type
  /// embeddings, and each layer's attention (q and o hidden x query_width(), k and v hidden x key_width(): 4
  /// hidden x hidden but for grouped heads) and feed-forward (2 hidden x intermediate; 3 for the gated MLPs)
  /// matrices. A double: a config's sizes may multiply past int64.
  double minimum_weight_count() const;

  /// Throws DataError naming `source` and the offending key: sizes must be positive (type_vocab_size 0 for
  /// MPNet, ModernBERT, the decoders and Gemma 3), hidden_size divisible by num_attention_heads (an even head size for ModernBERT),
  /// dropouts in [0, 1), hidden_act "gelu" or "relu" ("silu" for the decoders), pad_token_id < vocab_size, model_type
  /// "bert", "roberta", "xlm-roberta", "mpnet", "modernbert", a decoder's or "gemma3_text", MPNet's buckets at least 32, the positions
  /// more than position_offset(); ModernBERT's window positive, one layer type per layer and positive rotary bases;
  /// a decoder's head_dim even, num_attention_heads a multiple of num_key_value_heads, a positive rope_theta.
  void validate(const std::string& source = "bert config") const;

  bool operator==(const BertConfig&) const = default;
};

/// config.json content: every BertConfig key plus "model_type": "bert", "architectures": ["BertModel"]
/// and "position_embedding_type": "absolute" (RoBERTa: "roberta", ["RobertaModel"]; XLM-R: "xlm-roberta",
/// ["XLMRobertaModel"]); for MPNet, MPNetConfig's keys and "architectures": ["MPNetModel"]; for ModernBERT,
/// ModernBertConfig's keys as transformers 5 writes them (layer_types, rope_parameters) and as transformers 4
/// reads them (global_attn_every_n_layers where the layers follow such a pattern, global_rope_theta,
/// local_rope_theta), "architectures": ["ModernBertModel"]; for the decoders, their configs' keys (rope_theta, and
/// transformers 5's rope_parameters), "architectures": ["Qwen3Model"] (Qwen2Model, LlamaModel, MistralModel).
nlohmann::json to_json(const BertConfig& config);

/// Reads a config.json object. Missing keys keep their defaults and unknown keys are ignored (HF configs
/// carry many); a key of the wrong type, a "position_embedding_type" other than "absolute", or a config
/// that fails validate() throws DataError naming `source` and the key. "model_type": "distilbert" reads
/// DistilBERT's keys (dim, n_layers, n_heads, hidden_dim, activation, dropout, attention_dropout; its defaults
/// where absent): DistilBERT is BERT without token types, which load_bert_weights gives zero embeddings. Any
/// "model_type": "mpnet" reads MPNetConfig's keys with its defaults (vocab_size 30527, max_position_embeddings
/// 514, pad_token_id 1, relative_attention_num_buckets 32); "roberta" and "xlm-roberta" BertConfig's keys with
/// RobertaConfig's defaults (pad_token_id 1; vocab_size 50265 for RoBERTa). "modernbert" reads ModernBertConfig's
/// keys with its defaults (transformers 5's layer_types and rope_parameters, or transformers 4's
/// global_attn_every_n_layers, global_rope_theta and local_rope_theta; rope types other than "default" and
/// rope_scaling refused by key). "qwen3", "qwen2", "llama" and "mistral" read Qwen3Config's, Qwen2Config's,
/// LlamaConfig's and MistralConfig's keys with their defaults (rope_theta or transformers 5's rope_parameters;
/// rope_scaling, a rope type other than "default", Qwen's sliding-window layers, Llama's pretraining_tp above 1
/// refused by key; Mistral's sliding_window bounds the input instead).
/// Any other model_type than "bert" (or none) is refused by name.
BertConfig bert_config_from_json(const nlohmann::json& json, const std::string& source);

}  // namespace ragmig::model
