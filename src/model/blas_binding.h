// Which library serves LibTorch's fp32 and fp64 products (sgemm_, dgemm_): the MKL that PyTorch's x86 wheels
// carry inside libtorch_cpu.so, or a system BLAS that came first in a binary's libraries (CMakeLists.txt tells
// what that cost: OpenBLAS's own threads, and its generic kernel on CPUs it does not know). The training start
// event reports it and ragmig-torch warns of the second case (apps/torch_main.cpp), so a slow fp32 run says why.
#pragma once

#include <string>

namespace ragmig::model {

struct BlasBinding {
  std::string library;            ///< file name of the library sgemm_ binds to in this process; "none" if none
  bool libtorch_exports = false;  ///< LibTorch's libtorch_cpu.so defines a sgemm_ of its own
  bool libtorch_own = false;      ///< and that one is bound
};

/// The path of the shared object that defines `address` in this process ("" if none): where a symbol was bound.
std::string shared_object_of(const void* address);

/// Looks the binding up in this process (dlsym, dladdr): cheap, no product is run.
BlasBinding blas_binding();

/// "libtorch_cpu.so (LibTorch's own)", "libblas.so.3 (ahead of LibTorch's own)", or the library's name alone
/// where LibTorch has none (a LibTorch built against the system's BLAS).
std::string to_string(const BlasBinding& binding);

}  // namespace ragmig::model
