// The translation unit that builds the test executables' precompiled <torch/torch.h> (tests/CMakeLists.txt).
