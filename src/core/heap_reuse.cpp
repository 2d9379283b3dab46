// reuse_freed_heap_memory (see heap_reuse.h).
#include "core/heap_reuse.h"

#include <cstdlib>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ragmig {

bool reuse_freed_heap_memory() {
#if defined(__GLIBC__)
  if (const char* t = std::getenv("GLIBC_TUNABLES"); t && std::string(t).find("glibc.malloc.") != std::string::npos)
    return false;
  // Both succeed on any glibc: mmap off (a request the heaps cannot hold then comes from the main arena's
  // brk), and freed memory at the top of the heap is never given back.
  return ::mallopt(M_MMAP_MAX, 0) == 1 && ::mallopt(M_TRIM_THRESHOLD, -1) == 1;
#else
  return false;
#endif
}

}  // namespace ragmig
