// torch <-> RawTensor. Copies go through a contiguous CPU tensor so that views, transposes and GPU
// tensors all come out in the row-major layout the format requires.
#include "model/torch_safetensors.h"

#include <cstring>

#include "core/error.h"

namespace ragmig::model {

DType dtype_of(torch::ScalarType type) {
  switch (type) {
    case torch::kDouble: return DType::F64;
    case torch::kFloat: return DType::F32;
    case torch::kHalf: return DType::F16;
    case torch::kBFloat16: return DType::BF16;
    case torch::kLong: return DType::I64;
    case torch::kInt: return DType::I32;
    case torch::kShort: return DType::I16;
    case torch::kChar: return DType::I8;
    case torch::kByte: return DType::U8;
    case torch::kBool: return DType::BOOL;
    default: throw DataError(std::string("torch dtype ") + c10::toString(type) + " has no safetensors dtype here");
  }
}

torch::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::F64: return torch::kDouble;
    case DType::F32: return torch::kFloat;
    case DType::F16: return torch::kHalf;
    case DType::BF16: return torch::kBFloat16;
    case DType::I64: return torch::kLong;
    case DType::I32: return torch::kInt;
    case DType::I16: return torch::kShort;
    case DType::I8: return torch::kChar;
    case DType::U8: return torch::kByte;
    case DType::BOOL: return torch::kBool;
  }
  RAGMIG_CHECK(false, "unknown DType");
  return torch::kFloat;
}

std::string shape_text(c10::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void copy_weight(torch::Tensor& target, const RawTensor& raw, const std::string& what) {
  if (raw.dtype != DType::F32 && raw.dtype != DType::F16 && raw.dtype != DType::BF16 && raw.dtype != DType::F64)
    throw DataError(what + " has dtype " + to_string(raw.dtype) + " (expected F32, F16, BF16 or F64)");
  if (c10::IntArrayRef(raw.shape) != target.sizes())
    throw DataError(what + " has shape " + shape_text(raw.shape) + ", the model expects " + shape_text(target.sizes()));
  torch::NoGradGuard no_grad;
  target.copy_(from_raw(raw).to(torch::kFloat));
  if (!torch::isfinite(target).all().item<bool>()) throw DataError(what + " holds NaN or infinite values");
}

RawTensor to_raw(const torch::Tensor& tensor) {
  RawTensor raw;
  raw.dtype = dtype_of(tensor.scalar_type());
  auto cpu = tensor.detach().to(torch::kCPU).contiguous();
  raw.shape.assign(cpu.sizes().begin(), cpu.sizes().end());
  raw.bytes.assign(static_cast<const char*>(cpu.data_ptr()), cpu.numel() * cpu.element_size());
  return raw;
}

torch::Tensor from_raw(const RawTensor& raw) {
  const int64_t numel = element_count(raw.shape);
  if (static_cast<int64_t>(raw.bytes.size()) != numel * item_size(raw.dtype))
    throw DataError("tensor bytes (" + std::to_string(raw.bytes.size()) + ") do not fit its shape and dtype " +
                    to_string(raw.dtype));
  auto t = torch::empty(raw.shape, torch::TensorOptions().dtype(scalar_type_of(raw.dtype)));
  if (!raw.bytes.empty()) std::memcpy(t.data_ptr(), raw.bytes.data(), raw.bytes.size());
  return t;
}

SafetensorsFile to_safetensors(const std::map<std::string, torch::Tensor>& tensors) {
  SafetensorsFile file;
  for (const auto& [name, t] : tensors) file.tensors.emplace(name, to_raw(t));
  return file;
}

std::map<std::string, torch::Tensor> tensors_from(const SafetensorsFile& file) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, raw] : file.tensors) out.emplace(name, from_raw(raw));
  return out;
}

void save_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const std::map<std::string, std::string>& metadata) {
  auto file = to_safetensors(tensors);
  file.metadata = metadata;
  write_safetensors(path, file);
}

std::map<std::string, torch::Tensor> load_tensors(const std::string& path) {
  return tensors_from(read_safetensors(path));
}

}  // namespace ragmig::model
