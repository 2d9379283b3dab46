// PyTorch's x86 wheels export the MKL inside libtorch_cpu.so (sgemm_, ...). Linked after Debian's OpenBLAS (which
// static FAISS brings), LibTorch's own fp32 products ran on OpenBLAS: its own threads, and on a CPU its tables
// did not know, its generic SSE3 kernel (4.8x slower serving). This binary links LibTorch and FAISS as ragmig does:
// it checks that the BLAS symbols LibTorch exports bind to LibTorch, that FAISS's products through them are right,
// and the order of ragmig-torch's libraries.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "index/dense_index.h"
#include "index/dense_spec.h"
#include "index/exact_search.h"
#include "model/blas_binding.h"

namespace ragmig::model {
namespace {

// The handle of the loaded libtorch_cpu.so (no second load), or null.
void* libtorch_cpu() {
  const std::string path = shared_object_of(reinterpret_cast<const void*>(&at::_ops::matmul::call));  // an operator
  return path.find("libtorch_cpu") == std::string::npos ? nullptr : ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
}

TEST(BlasBinding, LibTorchsOwnBlasServesItsProducts) {
  void* torch_cpu = libtorch_cpu();
  if (torch_cpu == nullptr) GTEST_SKIP() << "LibTorch's functions are not in a libtorch_cpu.so";
  const auto binding = blas_binding();  // what the start event reports
  EXPECT_EQ(binding.libtorch_exports, ::dlsym(torch_cpu, "sgemm_") != nullptr);
  EXPECT_EQ(binding.libtorch_own, binding.libtorch_exports) << to_string(binding);
  for (const char* symbol : {"sgemm_", "dgemm_", "sgemv_"}) {
    void* own = ::dlsym(torch_cpu, symbol);
    if (own == nullptr) continue;  // a LibTorch that uses the system's BLAS (Debian's 1.13) exports none
    void* bound = ::dlsym(RTLD_DEFAULT, symbol);
    EXPECT_EQ(bound, own) << symbol << " binds to " << shared_object_of(bound) << ", LibTorch defines it in "
                          << shared_object_of(own);
  }
  ::dlclose(torch_cpu);
  const auto a = torch::rand({64, 64}), b = torch::rand({64, 64});
  EXPECT_TRUE(torch::allclose(torch::matmul(a, b), (a.unsqueeze(2) * b.unsqueeze(0)).sum(1), 1e-5, 1e-5));
}

TEST(BlasBinding, FaissFlatSearchThroughThatBlasMatchesExactSearch) {
  // FAISS multiplies with sgemm_ from 20 queries on: it links the system's BLAS and now calls LibTorch's.
  torch::manual_seed(3);
  index::FloatMatrix docs(300, 32), queries(40, 32);
  const auto d = torch::randn({300, 32}), q = torch::randn({40, 32});
  std::copy(d.data_ptr<float>(), d.data_ptr<float>() + d.numel(), docs.data.begin());
  std::copy(q.data_ptr<float>(), q.data_ptr<float>() + q.numel(), queries.data.begin());
  const auto flat = index::DenseIndex::build(index::parse_dense_spec("Flat"), docs);
  const auto got = flat.search(queries, 10), want = index::exact_search(queries, docs, 10);
  for (int64_t i = 0; i < queries.rows; ++i)
    for (int64_t j = 0; j < 10; ++j) {
      EXPECT_EQ(got.id(i, j), want.id(i, j)) << "query " << i << " rank " << j;
      EXPECT_NEAR(got.score(i, j), want.score(i, j), 1e-4);
    }
}

// DT_NEEDED of an ELF file, in order (readelf, which every machine that builds ragmig has).
std::vector<std::string> needed_libraries(const std::string& file) {
  std::vector<std::string> out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(("readelf -d '" + file + "' 2>/dev/null").c_str(), "r"),
                                             ::pclose);
  if (!pipe) return out;
  std::array<char, 512> line{};
  while (std::fgets(line.data(), line.size(), pipe.get())) {
    const std::string s = line.data();
    const auto open = s.find("(NEEDED)");
    const auto l = s.find('['), r = s.rfind(']');
    if (open != std::string::npos && l != std::string::npos && r > l) out.push_back(s.substr(l + 1, r - l - 1));
  }
  return out;
}

TEST(BlasBinding, RagmigTorchLinksLibTorchBeforeTheSystemsBlas) {
  const std::string binary = std::string(RAGMIG_BINARY) + "-torch";
  const auto needed = needed_libraries(binary);
  ASSERT_FALSE(needed.empty()) << "readelf -d " << binary << " listed nothing";
  auto position = [&](const std::string& prefix) {
    for (size_t i = 0; i < needed.size(); ++i)
      if (needed[i].rfind(prefix, 0) == 0) return static_cast<long>(i);
    return -1L;
  };
  const long torch_cpu = position("libtorch_cpu.so");
  ASSERT_GE(torch_cpu, 0) << binary << " does not link libtorch_cpu.so";
  for (const char* blas : {"libblas.so", "liblapack.so", "libopenblas.so"}) {
    const long at = position(blas);
    if (at < 0) continue;
    EXPECT_LT(torch_cpu, at) << blas << " comes before libtorch_cpu.so in " << binary << "'s DT_NEEDED";
  }
}

}  // namespace
}  // namespace ragmig::model
