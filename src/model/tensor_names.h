// The names Hugging Face checkpoints give the tensors (and modules) of ragmig's BERT encoder (bert.h), by model
// family: BERT's are ragmig's own; DistilBERT's (read only: ragmig writes it as BERT) and MPNet's differ in the
// layers' parts. Pure functions on names. Torch-free.
#pragma once

#include <string>

namespace ragmig::model {

/// The prefix a task model (BertForX, DistilBertForX, RobertaForX, MPNetForX, ModernBertForX) puts before its
/// encoder's names: "bert.", "distilbert.", "roberta.", "mpnet." or "model." where `name` starts with one, else "".
std::string hf_model_prefix(const std::string& name);

/// The Hugging Face name of ragmig's tensor or module `name` in a checkpoint of the family `model_type`
/// (config.json's: "bert", "mpnet"): for MPNet encoder.layer.N.attention.self.query ->
/// encoder.layer.N.attention.attn.q (key k, value v, attention.output.dense o, attention.output.LayerNorm ->
/// attention.LayerNorm); every other name as it is.
std::string hf_tensor_name(const std::string& model_type, const std::string& name);

/// The reverse, for a name read from a checkpoint of the family `model_type` ("bert", "mpnet" or "distilbert":
/// transformer.layer.N.attention.q_lin, ...), after any "bert." / "mpnet." / "distilbert." prefix. A name that
/// is not the family's comes back as it is, to be refused by name.
std::string ragmig_tensor_name(const std::string& model_type, const std::string& hf_name);

}  // namespace ragmig::model
