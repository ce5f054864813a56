// Private: the limits that keep a hostile model from taking the process down — the most work a
// call may do (OpCall::max_work: multiply-accumulates or window taps) and the largest output
// it may allocate (OpCall::max_output_bytes). Both fail with EFBIG and a message that names
// the amount. Pure functions.
#pragma once

#include <cstdint>

#include "op_call.h"

namespace npu::ops::detail {

/// Fails with EFBIG when outputs × per_output (multiply-accumulates or window taps per output
/// element; both non-negative) exceeds c.max_work, computed without overflow; `what` names
/// the unit ("multiply-accumulates").
Expected<void> check_work(const OpCall& c, int64_t outputs, int64_t per_output, const char* what);

/// Error unless an output of dtype `t` and `shape` has no negative dimension (EINVAL) and
/// fits in the call's max_output_bytes (EFBIG).
Expected<void> check_output(const OpCall& c, DType t, const Shape& shape);
/// A zero-filled output, after check_output().
Expected<NpyArray> alloc_output(const OpCall& c, DType t, Shape shape);

}  // namespace npu::ops::detail
