// LibTorch's errors in one line. A c10::Error's what() carries LibTorch's C++ stack trace (dozens of frames)
// after its message; users need the message, and the trace only when they debug ragmig (RAGMIG_DEBUG=1).
#pragma once

#include <c10/util/Exception.h>

#include <string>

namespace ragmig::model {

/// "LibTorch: <message>" on one line (its lines joined with "; "), or with `with_backtrace` the whole what().
std::string describe_torch_error(const c10::Error& e, bool with_backtrace);

/// Whether RAGMIG_DEBUG=1 asks for stack traces.
bool debug_requested();

}  // namespace ragmig::model
