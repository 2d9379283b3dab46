// reuse_freed_heap_memory and heap_allocator (see heap_reuse.h).
#include "core/heap_reuse.h"

#include <sys/types.h>

#include <cstdlib>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// jemalloc reads its settings from this symbol when it starts, before main (MALLOC_CONF in the environment
// wins over it): freed pages are never purged on a timer (the default 10 s decay gives them back between
// steps that take seconds each, and every step faults them in again), and big requests come from the usual
// arenas rather than a dedicated one that purges at once. Without jemalloc nothing reads it.
extern "C" {
const char* malloc_conf = "oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
// jemalloc's control interface: null unless jemalloc serves the process (linked in, or LD_PRELOAD).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen) __attribute__((weak));

namespace ragmig {
namespace {

bool glibc_heap_reuse = false;

bool glibc_tunables_set() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  return t && std::string(t).find("glibc.malloc.") != std::string::npos;
}

std::string jemalloc_option(const char* name) {
  ssize_t value = 0;
  size_t size = sizeof(value);
  return mallctl(name, &value, &size, nullptr, 0) == 0 ? std::to_string(value) : "?";
}

}  // namespace

bool reuse_freed_heap_memory() {
  if (mallctl) return jemalloc_option("opt.dirty_decay_ms") == "-1";
#if defined(__GLIBC__)
  if (glibc_tunables_set()) return false;
  // Both succeed on any glibc: mmap off (a request the heaps cannot hold then comes from the main arena's
  // brk), and freed memory at the top of the heap is never given back.
  glibc_heap_reuse = ::mallopt(M_MMAP_MAX, 0) == 1 && ::mallopt(M_TRIM_THRESHOLD, -1) == 1;
  return glibc_heap_reuse;
#else
  return false;
#endif
}

std::string heap_allocator() {
  if (mallctl) {
    const char* version = nullptr;
    size_t size = sizeof(version);
    std::string v = mallctl("version", &version, &size, nullptr, 0) == 0 && version ? version : "?";
    v = v.substr(0, v.find('-'));  // "5.3.0-0-g54eaed1..." -> "5.3.0"
    return "jemalloc " + v + " (dirty_decay_ms " + jemalloc_option("opt.dirty_decay_ms") + ", muzzy_decay_ms " +
           jemalloc_option("opt.muzzy_decay_ms") + ")";
  }
#if defined(__GLIBC__)
  if (glibc_heap_reuse) return "glibc, heap reuse";
  if (glibc_tunables_set()) return "glibc (GLIBC_TUNABLES)";
  return "glibc";
#else
  return "the C library's malloc";
#endif
}

}  // namespace ragmig
