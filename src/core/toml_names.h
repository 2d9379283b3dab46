// Names of TOML value types for error messages ("expected an integer (got a float 0.5)"), one wording for
// every reader of TOML files. Includes toml++: only the .cpp files that parse TOML include this header.
#pragma once

#include <toml++/toml.h>
#include <string>

namespace ragmig {

/// "a string", "an integer", "a float", "a boolean", "a table", "an array" or "a date/time".
std::string toml_type_name(const toml::node& n);

}  // namespace ragmig
