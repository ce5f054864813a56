// Private: an operator's inputs and the checks on them — present or omitted, the dtypes an
// implementation accepts, a scalar where one element is wanted. Errors "<op>: <what>".
// Pure functions over the call (op_call.h).
#pragma once

#include <cstddef>
#include <initializer_list>

#include "op_call.h"

namespace npu::ops::detail {

/// Input i, or an error when it is absent.
Expected<const NpyArray*> input(const OpCall& c, size_t i);
/// Input i or nullptr when omitted.
const NpyArray* optional_input(const OpCall& c, size_t i);
/// Error "<op>: <what> dtype X is not supported" unless a.dtype is in `ok` (`what` defaults
/// to nothing, e.g. "x_zero_point").
Expected<void> need_dtype(const OpCall& c, const NpyArray& a, std::initializer_list<DType> ok,
                          const char* what = nullptr);
/// Error unless `a` has exactly one element; `what` names it ("min").
Expected<void> need_scalar(const OpCall& c, const NpyArray& a, const char* what);
/// Error "<op>: inputs have different dtypes X and Y" unless a and b share a dtype.
Expected<void> need_same_dtype(const OpCall& c, const NpyArray& a, const NpyArray& b);
/// Error unless `a` is float32 or float64 (`int_ok`: or any integer dtype, bool excluded).
Expected<void> need_numeric(const OpCall& c, const NpyArray& a, bool int_ok,
                            const char* what = nullptr);

}  // namespace npu::ops::detail
