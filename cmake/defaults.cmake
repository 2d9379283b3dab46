# The language standard and build defaults of every ragmig build: the project's and fuzz/'s own (make fuzz).
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()
# RelWithDebInfo keeps line tables only (-g1: function names and lines, for backtraces and perf): full -g
# made a LibTorch translation unit ~45 % slower to compile (tests/serve/serve_test.cpp: 43.7 s vs 29.8 s) and
# its object 4x larger. RAGMIG_FULL_DEBUG_INFO=ON (or a Debug build) for local variables in a debugger.
option(RAGMIG_FULL_DEBUG_INFO "full -g in RelWithDebInfo builds" OFF)
if(NOT RAGMIG_FULL_DEBUG_INFO)
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
endif()
