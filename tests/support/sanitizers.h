// Whether this build runs under AddressSanitizer or ThreadSanitizer (`make sanitize`, `make tsan`; GCC says
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, Clang __has_feature). Both replace glibc's malloc and map terabytes
// of shadow memory: a test whose subject that replaces (glibc's heap settings, an address-space limit) skips there.
#pragma once

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#define RAGMIG_UNDER_SANITIZER "AddressSanitizer"
#elif defined(__SANITIZE_THREAD__)
#define RAGMIG_UNDER_SANITIZER "ThreadSanitizer"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAGMIG_UNDER_SANITIZER "AddressSanitizer"
#elif __has_feature(thread_sanitizer)
#define RAGMIG_UNDER_SANITIZER "ThreadSanitizer"
#endif
#endif

#ifdef RAGMIG_UNDER_SANITIZER
#define RAGMIG_SKIP_UNDER_SANITIZER(why) GTEST_SKIP() << "under " RAGMIG_UNDER_SANITIZER ": " << (why)
#else
#define RAGMIG_SKIP_UNDER_SANITIZER(why) \
  do {                                   \
  } while (0)
#endif
