// Private: an operator's attributes (OpCall::attrs, a JSON object): typed reads with a
// default, the row's schema default or none, and an axis attribute made non-negative. Errors
// "<op>: attribute <name> ..." or "<op>: missing attribute '<name>'". Pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "op_call.h"

namespace npu::ops::detail {

Expected<int64_t> int_attr(const OpCall& c, const char* name, int64_t def);
/// An integer attribute without a default: error "<op>: missing attribute '<name>'".
Expected<int64_t> required_int_attr(const OpCall& c, const char* name);
Expected<float> float_attr(const OpCall& c, const char* name, float def);
Expected<std::string> string_attr(const OpCall& c, const char* name, const char* def);
/// The same with the default of the row's attribute schema ("alpha:float=0.01").
Expected<float> float_attr(const OpCall& c, const char* name);
Expected<std::string> string_attr(const OpCall& c, const char* name);
Expected<std::optional<std::vector<int64_t>>> ints_attr(const OpCall& c, const char* name);
/// axis in [-rank, rank) (or [-rank-1, rank] with `inclusive`) made non-negative.
Expected<size_t> norm_axis(const OpCall& c, int64_t axis, size_t rank, bool inclusive = false);

}  // namespace npu::ops::detail
