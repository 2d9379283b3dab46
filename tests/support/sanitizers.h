// Whether this build runs under AddressSanitizer (`make sanitize`; GCC says __SANITIZE_ADDRESS__, Clang
// __has_feature). A test whose subject ASan replaces (glibc's malloc, an address-space limit) skips there.
#pragma once

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#define RAGMIG_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAGMIG_UNDER_ASAN 1
#endif
#endif

#ifdef RAGMIG_UNDER_ASAN
#define RAGMIG_SKIP_UNDER_ASAN(why) GTEST_SKIP() << "under AddressSanitizer: " << (why)
#else
#define RAGMIG_SKIP_UNDER_ASAN(why) \
  do {                              \
  } while (0)
#endif
