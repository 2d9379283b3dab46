// See onednn_cache.h.
#include "model/onednn_cache.h"

#include <cstdlib>
#include <string>

namespace ragmig::model {
namespace {

// oneDNN's own order: the ONEDNN_ name wins over the DNNL_ one.
const char* primitive_capacity() {
  if (const char* v = std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY")) return v;
  return std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY");
}

int64_t read(const char* v) { return v ? std::atoi(v) : 1024; }

}  // namespace

void cap_onednn_caches() {
  const std::string cap = std::to_string(kOneDnnCacheCapacity);
  if (!primitive_capacity()) setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", cap.c_str(), 0);
  setenv("LRU_CACHE_CAPACITY", cap.c_str(), 0);  // 0: a value already there stays
}

OneDnnCacheCapacities onednn_cache_capacities() {
  return {read(primitive_capacity()), read(std::getenv("LRU_CACHE_CAPACITY"))};
}

}  // namespace ragmig::model
