// Bridges torch tensors and the torch-free safetensors code: conversions of single tensors and whole named
// maps, bit-exact in both directions, for model folders and anyone else who stores tensors by name.
#pragma once

#include <map>
#include <string>
#include <torch/torch.h>

#include "model/safetensors.h"

namespace ragmig::model {

/// The safetensors dtype of a torch dtype; throws DataError for dtypes safetensors cannot hold here.
DType dtype_of(torch::ScalarType type);
torch::ScalarType scalar_type_of(DType dtype);

/// Copies a tensor (any device, any strides) into little-endian row-major bytes.
RawTensor to_raw(const torch::Tensor& tensor);
/// A new CPU tensor holding a copy of the bytes. Throws DataError if the byte count does not fit the shape.
torch::Tensor from_raw(const RawTensor& raw);

/// "[2, 384]": a shape as error messages print it.
std::string shape_text(c10::IntArrayRef shape);

/// Copies a stored weight into the parameter `target` as float32: `raw` must be F32, F16, BF16 or F64, of
/// target's shape, and finite (a NaN weight makes every score NaN, and NaN scores rank arbitrarily: metrics of 0,
/// silently). Throws DataError beginning with `what` (e.g. `FILE: tensor "NAME"`) otherwise.
void copy_weight(torch::Tensor& target, const RawTensor& raw, const std::string& what);

/// Named tensors -> a file's content (metadata empty).
SafetensorsFile to_safetensors(const std::map<std::string, torch::Tensor>& tensors);
/// A file's tensors as CPU torch tensors.
std::map<std::string, torch::Tensor> tensors_from(const SafetensorsFile& file);

/// Convenience: write_safetensors(path, to_safetensors(tensors) + metadata) / tensors_from(read_safetensors(path)).
void save_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const std::map<std::string, std::string>& metadata = {});
std::map<std::string, torch::Tensor> load_tensors(const std::string& path);

}  // namespace ragmig::model
