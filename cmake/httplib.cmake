# cpp-httplib (serve and monitor): Debian's compiled library, built with OpenSSL, zlib and brotli. Its
# pkg-config file where pkg-config finds one; otherwise header and library by name (a GPU machine given
# Debian's files in a relocated prefix through CMAKE_INCLUDE_PATH / CMAKE_LIBRARY_PATH, maybe no pkg-config).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
add_library(ragmig_httplib INTERFACE)
if(TARGET PkgConfig::HTTPLIB)
  target_link_libraries(ragmig_httplib INTERFACE PkgConfig::HTTPLIB)
else()
  find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
  find_library(HTTPLIB_LIBRARY NAMES cpp-httplib REQUIRED)
  target_include_directories(ragmig_httplib SYSTEM INTERFACE "${HTTPLIB_INCLUDE_DIR}")
  target_link_libraries(ragmig_httplib INTERFACE "${HTTPLIB_LIBRARY}")
  target_compile_definitions(ragmig_httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT
                             CPPHTTPLIB_BROTLI_SUPPORT)
endif()
