// dlsym in the global scope gives what a call through the PLT binds to; the handle of the loaded libtorch_cpu.so
// (found from one of its exported functions) gives LibTorch's own definition, if it has one.
#include "model/blas_binding.h"

#include <dlfcn.h>
#include <torch/torch.h>

namespace ragmig::model {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string shared_object_of(const void* address) {
  Dl_info info{};
  if (address == nullptr || ::dladdr(address, &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

BlasBinding blas_binding() {
  BlasBinding out;
  void* bound = ::dlsym(RTLD_DEFAULT, "sgemm_");
  out.library = bound ? base_name(shared_object_of(bound)) : "none";
  const std::string torch_cpu = shared_object_of(reinterpret_cast<const void*>(&at::_ops::matmul::call));  // an operator's entry
  if (torch_cpu.empty()) return out;
  if (void* handle = ::dlopen(torch_cpu.c_str(), RTLD_NOW | RTLD_NOLOAD)) {  // already loaded: no second load
    void* own = ::dlsym(handle, "sgemm_");
    out.libtorch_exports = own != nullptr;
    out.libtorch_own = own != nullptr && own == bound;
    ::dlclose(handle);
  }
  return out;
}

std::string to_string(const BlasBinding& binding) {
  if (binding.libtorch_own) return binding.library + " (LibTorch's own)";
  if (binding.libtorch_exports) return binding.library + " (ahead of LibTorch's own)";
  return binding.library;
}

}  // namespace ragmig::model
